"""The quirks of OpenAI-compatible servers, as pure passes over the O wire format.

A preset (providers/openai_compatible.py) names the quirks of its vendor with flags; the
functions here apply them:

- `quirk_body` rewrites a Chat Completions body that providers/openai_request.py built
  (fields dropped, renamed or clamped; the vendor's own thinking switch; tool-call ids
  made acceptable), returning the body and the id map to undo on the way back;
- `Normalizer` rewrites a parsed reply or stream chunk into the O shape the shared
  decoder reads (reasoning under another key, usage under another key, Mistral's
  thinking content chunks, rewritten tool-call ids mapped back).

Nothing here knows a vendor by name: the flags say what to do, the presets say who
needs it and why (with a source note per quirk).
"""

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from switchgate.core.content import ToolCallPart, ToolResultPart
from switchgate.core.request import ChatRequest
from switchgate.errors import invalid

_ALNUM: Final = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_NINE_ALNUM: Final = re.compile(r"[A-Za-z0-9]{9}")


@dataclass(frozen=True, slots=True)
class RequestQuirks:
    """What to change in a Chat Completions body before it goes to the vendor."""

    drop_fields: tuple[str, ...] = ()  # removed from every body
    # (substring of the lower-cased upstream model, fields removed for such models)
    model_drop_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # (field, substrings of the lower-cased upstream model): the field is sent only to the
    # models whose name holds one of them (the only ones known to accept it)
    model_only_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    allowed_fields: frozenset[str] | None = None  # a strict vendor: everything else goes
    renames: tuple[tuple[str, str], ...] = ()  # (O name, vendor name)
    stream_options: bool = True  # False: never send it (usage comes anyway)
    temperature_max: float | None = None  # clamp to [0, max]
    single_choice: bool = False  # n > 1 is refused before any upstream call
    history_reasoning: bool = True  # False: strip `reasoning_content` from past turns
    tool_ids: str = "any"  # "alnum9": ids must be 9 chars [A-Za-z0-9]
    # "deepseek": {"thinking": {"type"}}; "qwen": enable_thinking; "openrouter": reasoning{}
    thinking: str | None = None
    # thinking only in streams: an unstreamed body gets thinking off (Qwen: a 400 otherwise)
    stream_only_thinking: bool = False
    body_options: tuple[str, ...] = ()  # channel options copied into the body as they are


@dataclass(frozen=True, slots=True)
class ReplyQuirks:
    """Where the vendor's replies differ from the O shape the decoder reads."""

    reasoning_keys: tuple[str, ...] = ()  # other keys holding reasoning text ("reasoning")
    usage_paths: tuple[tuple[str, ...], ...] = ()  # other places usage comes, e.g. x_groq.usage
    content_chunks: bool = False  # `content` may be a list with "thinking" chunks


def short_id(original: str) -> str:
    """A stable 9-character [A-Za-z0-9] id for any tool-call id: the same id always maps to
    the same short id (in every request), so a call and its result stay paired."""
    number = int.from_bytes(hashlib.sha256(original.encode()).digest()[:8], "big")
    out = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALNUM))
        out.append(_ALNUM[digit])
    return "".join(out)


def quirk_body(
    body: dict[str, Any],
    quirks: RequestQuirks,
    request: ChatRequest,
    options: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The body with the vendor's quirks applied, and {vendor id: original id} for the
    tool-call ids that were rewritten. `body` is the builder's fresh dict: changed in place."""
    _drop(body, quirks)
    for old, new in quirks.renames:
        if old in body:
            body[new] = body.pop(old)
    _choices(body, quirks)
    _temperature(body, quirks.temperature_max)
    _thinking(body, quirks.thinking, request)
    if quirks.stream_only_thinking:
        _stream_only_thinking(body)
    for name in quirks.body_options:
        if name in options:
            body[name] = _option(options[name])
    messages = body.get("messages")
    if not quirks.history_reasoning and isinstance(messages, list):
        for message in messages:
            message.pop("reasoning_content", None)
    ids = _rewrite_ids(messages) if quirks.tool_ids == "alnum9" else {}
    if quirks.allowed_fields is not None:
        for name in [k for k in body if k not in quirks.allowed_fields]:
            del body[name]
    return body, ids


def _drop(body: dict[str, Any], quirks: RequestQuirks) -> None:
    """The fields the vendor refuses: always, for some models, or for all but some."""
    model = str(body.get("model") or "").lower()
    for name in quirks.drop_fields:
        body.pop(name, None)
    for marker, names in quirks.model_drop_fields:
        if marker in model:
            for name in names:
                body.pop(name, None)
    for name, markers in quirks.model_only_fields:
        if name in body and not any(marker in model for marker in markers):
            del body[name]
    if not quirks.stream_options:
        body.pop("stream_options", None)


def _option(value: Any) -> Any:
    """Channel options are text (`--option safe_prompt=true`): "true"/"false" are booleans."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return value


def _choices(body: dict[str, Any], quirks: RequestQuirks) -> None:
    n = body.get("n")
    if quirks.single_choice and isinstance(n, int) and n > 1:
        raise invalid("This provider returns one choice per request: 'n' must be 1.", "n")


def _temperature(body: dict[str, Any], high: float | None) -> None:
    value = body.get("temperature")
    if high is not None and isinstance(value, int | float) and value > high:
        body["temperature"] = high


def _thinking(body: dict[str, Any], style: str | None, request: ChatRequest) -> None:
    reasoning = request.reasoning
    if style is None or reasoning is None:
        return
    off = reasoning.enabled is False or reasoning.effort == "none"
    if style == "deepseek":
        body["thinking"] = {"type": "disabled" if off else "enabled"}
        if off:
            body.pop("reasoning_effort", None)
    elif style == "openrouter":  # its `reasoning` object: an effort, or a token budget
        if off:
            body.pop("reasoning_effort", None)
            body["reasoning"] = {"effort": "none"}
        elif reasoning.effort is None and reasoning.budget_tokens is not None:
            body.pop("reasoning_effort", None)
            body["reasoning"] = {"max_tokens": reasoning.budget_tokens}
    elif style == "qwen":
        body.pop("reasoning_effort", None)
        body["enable_thinking"] = not off
        if not off and reasoning.budget_tokens is not None:
            body["thinking_budget"] = reasoning.budget_tokens


def _stream_only_thinking(body: dict[str, Any]) -> None:
    """Qwen (DashScope): thinking is refused on an unstreamed call, and some models think
    by default, so an unstreamed body always says it off."""
    if body.get("stream") is not True:
        body["enable_thinking"] = False
        body.pop("thinking_budget", None)


def _conforms(call_id: str) -> bool:
    return _NINE_ALNUM.fullmatch(call_id) is not None


def rewritten_ids(request: ChatRequest) -> dict[str, str]:
    """{short id: original} for the request's tool-call ids that "alnum9" rewrites: what
    maps the vendor's echo of them back (the same ids `quirk_body` produced)."""
    back: dict[str, str] = {}
    for message in request.messages:
        for part in message.parts:
            call_id = part.id if isinstance(part, ToolCallPart) else None
            if isinstance(part, ToolResultPart):
                call_id = part.tool_call_id
            if call_id and not _conforms(call_id):
                back[short_id(call_id)] = call_id
    return back


def _rewrite_ids(messages: Any) -> dict[str, str]:
    """Tool-call ids made 9 alphanumerics, the same way in assistant calls and in tool
    results; returns {short id: original} for the ids that changed."""
    back: dict[str, str] = {}
    if not isinstance(messages, list):
        return back

    def conform(original: Any) -> Any:
        if not isinstance(original, str) or not original or _conforms(original):
            return original
        short = short_id(original)
        back[short] = original
        return short

    for message in messages:
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            if isinstance(call, dict) and "id" in call:
                call["id"] = conform(call["id"])
        if message.get("role") == "tool" and "tool_call_id" in message:
            message["tool_call_id"] = conform(message["tool_call_id"])
    return back


@dataclass(slots=True)
class Normalizer:
    """Rewrites one request's replies (a whole body or each stream chunk) into the O shape.
    Call it on freshly parsed JSON only: it changes the dict it is given."""

    quirks: ReplyQuirks
    ids_back: dict[str, str] = field(default_factory=dict)

    def __call__(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("usage") is None:
            for path in self.quirks.usage_paths:
                usage = _dig(data, path)
                if isinstance(usage, dict):
                    data["usage"] = usage
                    break
        choices = data.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict):
                for key in ("message", "delta"):
                    part = choice.get(key)
                    if isinstance(part, dict):
                        self._message(part)
        return data

    def _message(self, message: dict[str, Any]) -> None:
        if self.quirks.content_chunks and isinstance(message.get("content"), list):
            _split_chunks(message)
        if not message.get("reasoning_content"):
            for key in self.quirks.reasoning_keys:
                text = message.get(key)
                if isinstance(text, str) and text:
                    message["reasoning_content"] = text
                    break
        calls = message.get("tool_calls")
        if self.ids_back and isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict) and call.get("id") in self.ids_back:
                    call["id"] = self.ids_back[call["id"]]


def _dig(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = data
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _split_chunks(message: dict[str, Any]) -> None:
    """Mistral's reasoning models answer `content` as a list of chunks: {"type": "text"}
    and {"type": "thinking", "thinking": [text chunks]}. Text goes to `content`, thinking
    to `reasoning_content`."""
    texts: list[str] = []
    thoughts: list[str] = []
    for chunk in message["content"]:
        if not isinstance(chunk, dict):
            continue
        if chunk.get("type") == "thinking":
            inner = chunk.get("thinking")
            for piece in inner if isinstance(inner, list) else ():
                if isinstance(piece, dict) and isinstance(piece.get("text"), str):
                    thoughts.append(piece["text"])
        elif isinstance(chunk.get("text"), str):
            texts.append(chunk["text"])
    message["content"] = "".join(texts)
    if thoughts and not message.get("reasoning_content"):
        message["reasoning_content"] = "".join(thoughts)
