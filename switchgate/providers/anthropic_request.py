"""Canonical ChatRequest -> Anthropic Messages request body (protocols §5.1-§5.5, §5.10 "->A").

Policy choices: `max_tokens` defaults to 4096 (plus the thinking budget when thinking is
on); same-role runs are merged, tool results go first in their user turn, a leading
assistant turn gets a placeholder user turn before it; empty text is dropped; thinking
is turned off (never failed) when a forced tool choice or an unsigned tool loop makes
Anthropic reject it. Body fields only an Anthropic client can send come back from
`extras["anthropic"]` (see dialects/anthropic_messages/decode.py).
"""

import base64
import binascii
import re
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import (
    AudioPart,
    FilePart,
    ImagePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
)
from switchgate.core.request import ChatRequest, Message, Reasoning, ToolChoice
from switchgate.errors import invalid
from switchgate.providers.hosted_tools import ANTHROPIC_TOOLS, upstream_tools
from switchgate.providers.system_messages import hoist_system

DEFAULT_MAX_TOKENS: Final = 4096
MIN_THINKING_BUDGET: Final = 1024
DEFAULT_THINKING_BUDGET: Final = 8192
EFFORT_BUDGETS: Final[dict[str, int]] = {
    "minimal": 1024,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 32768,
    "max": 32768,
}
PLACEHOLDER_TEXT: Final = "(no content)"
IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
EXTRA_BETA: Final = "anthropic-beta"  # same key as the dialect's decode.EXTRA_BETA
_ID_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]")
_THINKING_TYPES: Final = ("thinking", "redacted_thinking")

Block = dict[str, Any]
Turn = dict[str, Any]  # {"role": ..., "content": [Block, ...]}


def core_to_anthropic_body(request: ChatRequest, model: str) -> dict[str, Any]:
    """The Messages body for `request`, addressed to the upstream `model`."""
    if request.sampling.n is not None and request.sampling.n > 1:
        raise invalid("n > 1 is not supported by Anthropic models", param="n")
    extras = request.extras.get("anthropic", {})
    system_parts, messages = hoist_system(request)
    turns = _turns(messages)
    thinking, max_tokens = _thinking(request, turns, extras.get("thinking"))
    if thinking is None or thinking["type"] == "disabled":
        _strip_prefill_thinking(turns)
    _trim_prefill(turns)
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": turns}
    system = _system(system_parts)
    if system:
        body["system"] = system
    if thinking is not None:
        body["thinking"] = thinking
    _sampling(request, body, thinking_on=thinking is not None and thinking["type"] != "disabled")
    _tools(request, body, extras.get("tools"))
    if request.user:
        body["metadata"] = {"user_id": request.user}
    if request.stream:
        body["stream"] = True
    _merge_extras(body, extras)
    return body


def _merge_extras(body: dict[str, Any], extras: dict[str, Any]) -> None:
    for key, value in extras.items():
        if key in (EXTRA_BETA, "thinking", "tools"):
            continue
        if key == "metadata" and isinstance(value, dict):
            body["metadata"] = {**value, **body.get("metadata", {})}
        elif key not in body:
            body[key] = value


def _sampling(request: ChatRequest, body: dict[str, Any], *, thinking_on: bool) -> None:
    sampling = request.sampling
    if sampling.stop:
        body["stop_sequences"] = list(sampling.stop)
    # With thinking on, Anthropic rejects temperature/top_k and a top_p below 0.95.
    if thinking_on:
        if sampling.top_p is not None and sampling.top_p >= 0.95:
            body["top_p"] = sampling.top_p
        return
    if sampling.temperature is not None:
        body["temperature"] = min(max(sampling.temperature, 0.0), 1.0)
    if sampling.top_p is not None:
        body["top_p"] = sampling.top_p
    if sampling.top_k is not None:
        body["top_k"] = sampling.top_k


def _system(system: tuple[TextPart, ...]) -> str | list[Block]:
    parts = [p for p in system if p.text.strip()]
    if any(p.cache_control for p in parts):
        return [_text_block(p) for p in parts]
    return "\n\n".join(p.text for p in parts)


def _tools(request: ChatRequest, body: dict[str, Any], server_tools: Any) -> None:
    tools: list[Block] = []
    for spec in request.tools:
        schema = dict(spec.parameters) if spec.parameters else {"properties": {}}
        schema.setdefault("type", "object")
        tool: Block = {"name": spec.name}
        if spec.description:
            tool["description"] = spec.description
        tool["input_schema"] = schema
        if spec.cache_control:
            tool["cache_control"] = spec.cache_control
        tools.append(tool)
    if isinstance(server_tools, list):
        tools.extend(server_tools)
    tools.extend(upstream_tools(request, ANTHROPIC_TOOLS))  # other dialects' hosted tools
    if not tools:
        return
    body["tools"] = tools
    choice = _tool_choice(request.tool_choice)
    if request.parallel_tool_calls is False and (choice is None or choice["type"] != "none"):
        choice = choice or {"type": "auto"}
        choice["disable_parallel_tool_use"] = True
    if choice is not None:
        body["tool_choice"] = choice


def _tool_choice(choice: ToolChoice | None) -> Block | None:
    if choice is None:
        return None
    if choice.mode == "tool" and choice.name:
        return {"type": "tool", "name": choice.name}
    return {"type": {"auto": "auto", "none": "none"}.get(choice.mode, "any")}


def _thinking_wanted(reasoning: Reasoning | None) -> bool | None:
    """True / False when the request turns thinking on / off; None when it doesn't say."""
    if reasoning is None:
        return None
    if reasoning.enabled is False or reasoning.effort == "none" or reasoning.budget_tokens == 0:
        return False
    if reasoning.enabled or reasoning.budget_tokens or reasoning.effort:
        return True
    return None


def _thinking(request: ChatRequest, turns: list[Turn], raw: Any) -> tuple[Block | None, int]:
    """The `thinking` field (None = leave it out) and the `max_tokens` that goes with it."""
    max_tokens = request.sampling.max_tokens
    wanted = _thinking_wanted(request.reasoning)
    forced = request.tool_choice is not None and request.tool_choice.mode in ("required", "tool")
    if wanted is False:
        return {"type": "disabled"}, max_tokens or DEFAULT_MAX_TOKENS
    if not wanted or forced or not _signed_loop(turns):
        return None, max_tokens or DEFAULT_MAX_TOKENS
    if isinstance(raw, dict) and raw.get("type") == "adaptive":
        return raw, max_tokens or DEFAULT_MAX_TOKENS
    reasoning = request.reasoning
    assert reasoning is not None
    budget = reasoning.budget_tokens or EFFORT_BUDGETS.get(reasoning.effort or "", 0)
    budget = max(budget or DEFAULT_THINKING_BUDGET, MIN_THINKING_BUDGET)
    if max_tokens is None:
        max_tokens = budget + DEFAULT_MAX_TOKENS
    elif max_tokens <= budget:
        budget = max_tokens - 1  # the client's limit covers reasoning too
        if budget < MIN_THINKING_BUDGET:
            return None, max_tokens
    thinking: Block = dict(raw) if isinstance(raw, dict) and raw.get("type") == "enabled" else {}
    thinking.update({"type": "enabled", "budget_tokens": budget})
    return thinking, max_tokens


def _signed_loop(turns: list[Turn]) -> bool:
    """Whether the current tool loop (and a final prefill) starts with signed thinking (§5.5)."""
    start = 0
    for i in range(len(turns) - 1, -1, -1):
        blocks = turns[i]["content"]
        if turns[i]["role"] == "user" and not any(b.get("type") == "tool_result" for b in blocks):
            start = i + 1
            break
    for i, turn in enumerate(turns[start:], start):
        if turn["role"] != "assistant":
            continue
        blocks = turn["content"]
        needs = i == len(turns) - 1 or any(b.get("type") == "tool_use" for b in blocks)
        if needs and blocks[0].get("type") not in _THINKING_TYPES:
            return False
    return True


def _strip_prefill_thinking(turns: list[Turn]) -> None:
    """With thinking off, a final assistant message may not contain thinking."""
    if turns[-1]["role"] == "assistant":
        turns[-1]["content"] = [
            b for b in turns[-1]["content"] if b.get("type") not in _THINKING_TYPES
        ]
        if not turns[-1]["content"]:
            turns.pop()


def _trim_prefill(turns: list[Turn]) -> None:
    """A final assistant message may not end with whitespace."""
    last = turns[-1]
    if last["role"] != "assistant" or last["content"][-1].get("type") != "text":
        return
    text = last["content"][-1]["text"].rstrip()
    if text:
        last["content"][-1] = {**last["content"][-1], "text": text}
    else:
        last["content"].pop()
        if not last["content"]:
            turns.pop()


def _turns(messages: tuple[Message, ...]) -> list[Turn]:
    turns: list[Turn] = []
    for message in messages:
        blocks = [b for b in (_block(p) for p in message.parts) if b is not None]
        if not blocks:
            continue
        if turns and turns[-1]["role"] == message.role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": message.role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            turn["content"].sort(key=lambda b: b.get("type") != "tool_result")
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": PLACEHOLDER_TEXT}]})
    return turns


def _text_block(part: TextPart) -> Block:
    block: Block = {"type": "text", "text": part.text}
    if part.cache_control:
        block["cache_control"] = part.cache_control
    return block


def _block(part: Part) -> Block | None:
    if isinstance(part, TextPart):
        return _text_block(part) if part.text.strip() else None
    if isinstance(part, ImagePart):
        return _image(part)
    if isinstance(part, FilePart):
        return _document(part)
    if isinstance(part, AudioPart):
        raise invalid("audio input is not supported by Anthropic models", param="messages")
    if isinstance(part, ToolCallPart):
        return {
            "type": "tool_use",
            "id": _tool_id(part.id),
            "name": part.name,
            "input": tool_input(part),
        }
    if isinstance(part, ToolResultPart):
        return _tool_result(part)
    if isinstance(part, ThinkingPart):
        return _thinking_block(part)
    assert isinstance(part, UnknownPart)
    return part.raw if part.dialect == "anthropic" else None


def _tool_id(raw: str) -> str:
    return _ID_UNSAFE.sub("_", raw) or "toolu_"


def tool_input(part: ToolCallPart) -> dict[str, Any]:
    """A tool call's JSON arguments as an object (text that is not one: `{"_raw": text}`)."""
    if not part.arguments.strip():
        return {}
    try:
        value = jsonutil.loads(part.arguments)
    except jsonutil.JSONDecodeError:
        return {"_raw": part.arguments}
    return value if isinstance(value, dict) else {"_raw": part.arguments}


def _tool_result(part: ToolResultPart) -> Block:
    block: Block = {"type": "tool_result", "tool_use_id": _tool_id(part.tool_call_id)}
    content = [b for b in (_block(p) for p in part.content) if b is not None]
    if content:
        block["content"] = content
    if part.is_error:
        block["is_error"] = True
    return block


def _thinking_block(part: ThinkingPart) -> Block | None:
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    signature = part.signature or ""
    if ":" in signature:  # vendor-prefixed (base64 has no colon): unwrap only our own
        vendor, _, signature = signature.partition(":")
        if vendor != "anthropic":
            return None
    if not signature:
        return None  # Anthropic rejects unsigned thinking
    return {"type": "thinking", "thinking": part.text, "signature": signature}


def data_url(url: str) -> tuple[str, str]:
    """(media type, base64 data) of a `data:...;base64,` URL; 400 for any other."""
    header, sep, data = url[5:].partition(",")
    if not sep or not header.endswith(";base64"):
        raise invalid("only base64 data URLs are supported", param="messages")
    return header.removesuffix(";base64").split(";")[0], data


def _image(part: ImagePart) -> Block:
    if part.data is not None:
        media_type, data = part.media_type or "", part.data
    elif part.url and part.url.startswith("data:"):
        media_type, data = data_url(part.url)
    elif part.url:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    else:
        raise invalid("image: data or url required", param="messages")
    media_type = "image/jpeg" if media_type == "image/jpg" else media_type
    if media_type not in IMAGE_TYPES:
        raise invalid(
            f"image type {media_type or 'unknown'!r} is not supported (jpeg, png, gif or webp)",
            param="messages",
        )
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _document(part: FilePart) -> Block:
    media_type, data = part.media_type, part.data
    if part.url and part.url.startswith("data:"):
        media_type, data = data_url(part.url)
    source: Block
    if part.file_id:
        source = {"type": "file", "file_id": part.file_id}
    elif data is not None and (media_type or "application/pdf") == "application/pdf":
        source = {"type": "base64", "media_type": "application/pdf", "data": data}
    elif data is not None and media_type and media_type.startswith("text/"):
        try:
            text = base64.b64decode(data, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as exc:
            raise invalid("document: text data must be base64 UTF-8", param="messages") from exc
        source = {"type": "text", "media_type": "text/plain", "data": text}
    elif part.url:
        source = {"type": "url", "url": part.url}
    else:
        raise invalid(
            f"document type {media_type or 'unknown'!r} is not supported (PDF or plain text)",
            param="messages",
        )
    block: Block = {"type": "document", "source": source}
    if part.title or part.filename:
        block["title"] = part.title or part.filename
    return block
