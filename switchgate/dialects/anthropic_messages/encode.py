"""Canonical ChatResponse -> Anthropic Messages response body (protocols §3.3, §5.6, §5.7)."""

import re
import uuid
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage

STOP_REASONS: Final[dict[FinishReason, str]] = {
    FinishReason.STOP: "end_turn",
    FinishReason.STOP_SEQUENCE: "stop_sequence",
    FinishReason.LENGTH: "max_tokens",
    FinishReason.TOOL_CALLS: "tool_use",
    FinishReason.CONTENT_FILTER: "refusal",
    FinishReason.PAUSE: "pause_turn",
    FinishReason.ERROR: "end_turn",
}
_ID_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_-]")


def message_id(raw: str) -> str:
    """An Anthropic-looking message id (`msg_...`) for whatever id the upstream gave."""
    if raw.startswith("msg_"):
        return raw
    safe = _ID_UNSAFE.sub("", raw)
    return "msg_" + (safe or uuid.uuid4().hex[:24])


def stop_reason(reason: FinishReason, saw_tool_call: bool) -> str:
    """A `stop_reason`; a plain stop after tool calls means tool use (§5.6)."""
    if reason is FinishReason.STOP and saw_tool_call:
        return "tool_use"
    return STOP_REASONS[reason]


def stop_sequence(reason: FinishReason, sequence: str | None) -> str | None:
    return sequence if reason is FinishReason.STOP_SEQUENCE else None


def usage_body(usage: Usage) -> dict[str, int]:
    """A's usage convention: `input_tokens` excludes cache reads and writes (§5.7)."""
    return {
        "input_tokens": usage.uncached_input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
    }


def tool_input(arguments: str) -> dict[str, Any]:
    """A tool call's JSON arguments as an object; anything else is wrapped as `_raw`."""
    if not arguments.strip():
        return {}
    try:
        value = jsonutil.loads(arguments)
    except jsonutil.JSONDecodeError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def content_block(part: OutputPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, ToolCallPart):
        args = tool_input(part.arguments)
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": args}
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    return {"type": "thinking", "thinking": part.text, "signature": part.signature or ""}


def late_signature(part: OutputPart, said: bool) -> bool:
    """A bare signature after text or a tool call (Gemini signs its last text part) has no
    place in an Anthropic message: thinking comes first, and a trailing thinking block
    hides the answer from clients that show the last block (Claude Code's `-p`). Dropped;
    Gemini does not require text-part signatures back."""
    return said and isinstance(part, ThinkingPart) and not part.text and part.redacted is None


def core_to_anthropic_response(resp: ChatResponse, request: ChatRequest) -> bytes:
    blocks: list[dict[str, Any]] = []
    said = False
    for part in resp.parts:
        block = None if late_signature(part, said) else content_block(part)
        if block is not None:
            blocks.append(block)
            said = said or block["type"] in ("text", "tool_use")
    saw_tool = any(isinstance(p, ToolCallPart) for p in resp.parts)
    body: dict[str, Any] = {
        "id": message_id(resp.id),
        "type": "message",
        "role": "assistant",
        "model": resp.model or request.model,
        "content": blocks,
        "stop_reason": stop_reason(resp.finish_reason, saw_tool),
        "stop_sequence": stop_sequence(resp.finish_reason, resp.stop_sequence),
        "usage": usage_body(resp.usage),
    }
    return jsonutil.dumps(body)
