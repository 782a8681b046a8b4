"""Provider-neutral reply logic: what the fake model "says" for a request, and its token counts.

Each dialect module boils its request down to an `Ask`; `plan_reply` turns that into a `Plan`,
which the dialect module renders in its own wire format. Everything here is deterministic:

- reply text: `[[mock:words=N]]` (N words), else `[[mock:text=...]]`, else
  "Tool result received: ..." after tool results, else `MockConfig.reply_text`, else
  "Hello from mock! You said: " + the last user text (200 chars);
- a token is a whitespace-separated word; prompt tokens = words of all message/system texts
  (at least 1); completion tokens = words of the reply (tool calls: words of the JSON arguments,
  at least 1) plus the reasoning words; the reply is cut at the request's output limit
  unless `[[mock:ignore_max_tokens]]`.
"""

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Any, Final

from switchgate import jsonutil

from .config import MockConfig
from .directives import Directives

GREETING: Final = "Hello from mock! You said: "
TOOL_ACK: Final = "Tool result received: "
REASONING_PREFIX: Final = "Let me think about this step by step. The user said: "
ECHO_LIMIT: Final = 200
ARG_PIECES: Final = 3  # tool-call arguments are streamed in this many fragments


@dataclass(slots=True)
class Ask:
    """What a request asks for, independent of the dialect."""

    last_user_text: str = ""
    prompt_words: int = 0
    tool_results: list[str] | None = None  # texts of the trailing tool results, if any
    tools: list[tuple[str, Any]] = field(default_factory=list)  # (name, JSON schema or None)
    tool_required: bool = False  # tool_choice demands a call
    tool_forced: str | None = None  # tool_choice names this tool
    tool_disabled: bool = False  # tool_choice "none"
    reasoning: bool = False
    cache_hint: bool = False  # e.g. Anthropic cache_control somewhere in the request
    max_tokens: int | None = None


@dataclass(slots=True)
class ToolCall:
    id: str  # opaque suffix; dialects add their prefix ("call_", "toolu_", ...)
    name: str
    args: dict[str, Any]
    arguments: str  # args as compact JSON text


@dataclass(slots=True)
class Plan:
    text: str
    reasoning: str
    tool_calls: list[ToolCall]
    prompt_tokens: int
    completion_tokens: int  # includes reasoning_tokens
    reasoning_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    truncated: bool  # the text was cut at the request's output limit
    chunks: int  # how many pieces to stream the text in
    signature: str  # base64 signature for reasoning (Anthropic thinking, Gemini thoughts)
    directives: Directives


def count_words(text: str) -> int:
    return len(text.split())


def split_text(text: str, pieces: int) -> list[str]:
    """Split into `pieces` nearly equal non-empty parts (fewer if the text is short)."""
    if not text:
        return []
    n = max(1, min(pieces, len(text)))
    if n == 1:
        return [text]
    size, extra = divmod(len(text), n)
    out: list[str] = []
    pos = 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(text[pos : pos + step])
        pos += step
    return out


def first_words(text: str, limit: int) -> str:
    """The text up to the end of its `limit`-th word (original spacing kept)."""
    words = 0
    in_word = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if in_word:
                words += 1
                if words == limit:
                    return text[:i]
            in_word = False
        else:
            in_word = True
    return text


def sample_value(schema: Any, depth: int = 0) -> Any:
    """A value that fits a JSON (or Gemini upper-case) schema: "Oslo", 1, true, ..."""
    if not isinstance(schema, dict) or depth > 8:
        return "Oslo"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return sample_value(options[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    kind = kind.lower() if isinstance(kind, str) else ("object" if "properties" in schema else "")
    if kind == "object":
        return sample_args(schema, depth + 1)
    if kind == "array":
        return [sample_value(schema.get("items"), depth + 1)]
    return _SCALARS.get(kind, "Oslo")


_SCALARS: Final[dict[str, Any]] = {"number": 1, "integer": 1, "boolean": True, "null": None}


def sample_args(schema: Any, depth: int = 0) -> dict[str, Any]:
    if not isinstance(schema, dict):
        return {}
    props = schema.get("properties")
    if not isinstance(props, dict):
        return {}
    return {str(name): sample_value(sub, depth + 1) for name, sub in props.items()}


def _tool_calls(ask: Ask, d: Directives) -> list[ToolCall]:
    """Calls to the forced (else first) tool and the ones after it; ids derive from a hash of
    the last user text, so a repeated request gets the same ids."""
    id_seed = hashlib.blake2b(ask.last_user_text.encode(), digest_size=11).hexdigest()
    names = [name for name, _ in ask.tools]
    start = names.index(ask.tool_forced) if ask.tool_forced in names else 0
    calls: list[ToolCall] = []
    for i in range(max(1, d.tools)):
        name, schema = ask.tools[(start + i) % len(ask.tools)]
        args = sample_args(schema)
        calls.append(ToolCall(f"{id_seed}{i:02d}", name, args, jsonutil.dumps_str(args)))
    return calls


def _wants_tool(ask: Ask, d: Directives) -> bool:
    if not ask.tools or ask.tool_disabled or ask.tool_results is not None:
        return False
    return ask.tool_required or ask.tool_forced is not None or d.tool or d.tools > 0


def plan_reply(ask: Ask, d: Directives, config: MockConfig) -> Plan:
    last = ask.last_user_text
    if d.call is not None:
        from .scripted import scripted_calls  # a scripted tool round-trip

        calls = scripted_calls(ask, d)
    else:
        calls = _tool_calls(ask, d) if _wants_tool(ask, d) else []
    text = ""
    if d.text is not None and not calls:
        text = d.text
    elif ask.tool_results is not None:
        text = TOOL_ACK + "\n".join(ask.tool_results)
    elif not calls:
        text = config.reply_text if config.reply_text is not None else GREETING + last[:ECHO_LIMIT]
    if d.words is not None and not calls:
        text = " ".join(f"w{i}" for i in range(1, d.words + 1))
    truncated = False
    if d.ignore_max_tokens:
        pass
    elif ask.max_tokens is not None and text and count_words(text) > ask.max_tokens:
        text, truncated = first_words(text, max(1, ask.max_tokens)), True
    reasoning = REASONING_PREFIX + last[:80] if ask.reasoning else ""
    reasoning_tokens = count_words(reasoning)
    output = max(1, sum(count_words(c.arguments) for c in calls)) if calls else count_words(text)
    prompt = max(1, ask.prompt_words)
    signature = ""
    if reasoning:
        digest = hashlib.blake2b(reasoning.encode(), digest_size=24).digest()
        signature = base64.b64encode(b"mock-signature:" + digest).decode()
    if d.usage_input is not None:
        prompt = d.usage_input
    return Plan(
        text=text,
        reasoning=reasoning,
        tool_calls=calls,
        prompt_tokens=prompt,
        completion_tokens=(output + reasoning_tokens if d.usage_output is None else d.usage_output),
        reasoning_tokens=reasoning_tokens,
        cached_tokens=prompt // 2 if (d.cached or ask.cache_hint) else 0,
        cache_write_tokens=prompt // 4 if d.cache_write else 0,
        truncated=truncated,
        chunks=d.chunks if d.chunks is not None else config.chunk_count,
        signature=signature,
        directives=d,
    )


def content_text(content: Any, types: tuple[str, ...] = ("text",)) -> str:
    """Text of an OpenAI/Anthropic-style content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") in types and isinstance(p.get("text"), str)
        ]
        return "\n".join(texts)
    return ""
