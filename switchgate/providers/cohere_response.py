"""Cohere chat v2 answers -> canonical form (pure): the non-streamed body, usage, finish
reasons and error bodies.

- `message.content` text items -> TextPart, `thinking` items -> ThinkingPart (unsigned);
  `message.tool_plan` (the text a model writes before calling tools) -> TextPart;
  `message.tool_calls` -> ToolCallPart. Citations have no IR form and are dropped.
- Usage: `usage.billed_units` (what Cohere bills), else `usage.tokens` (what the model
  saw, prompt template included). `cached_tokens` is not a discount on Cohere, so it is
  not reported as cache reads.
- finish_reason: COMPLETE -> stop, STOP_SEQUENCE -> stop_sequence, MAX_TOKENS -> length,
  TOOL_CALL -> tool_calls, ERROR / TIMEOUT -> error.
- Errors are `{"message": ...}` bodies (some carry an `id` too); messages are scrubbed of
  key-like strings and URLs before a client sees them. A 400 about the prompt's length
  gets the code `context_length_exceeded` (routing then tries a larger model).
"""

import re
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage, reported_count
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.anthropic_stream import scrub

FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "COMPLETE": FinishReason.STOP,
    "STOP_SEQUENCE": FinishReason.STOP_SEQUENCE,
    "MAX_TOKENS": FinishReason.LENGTH,
    "TOOL_CALL": FinishReason.TOOL_CALLS,
    "ERROR": FinishReason.ERROR,
    "TIMEOUT": FinishReason.ERROR,
}
_CONTEXT: Final = re.compile(
    r"too many tokens|context (?:length|window)|prompt is too long|"
    r"exceeds? the (?:maximum|context)|maximum (?:number of )?tokens",
    re.IGNORECASE,
)
# Cohere keys are 40 letters and digits with no prefix: redact long mixed tokens too.
_BEARER: Final = re.compile(r"(?i)\bbearer\s+[^\s\"',;]+")
_LONG_TOKEN: Final = re.compile(
    r"\b(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{30,}\b"
)
_CLIENT_STATUSES: Final = frozenset({400, 404, 409, 413, 422})
_MAX_MESSAGE: Final = 500


def scrub_message(message: str) -> str:
    """An upstream message safe to show a client: no key-like strings, no URLs."""
    message = _BEARER.sub("Bearer [redacted]", message)
    return _LONG_TOKEN.sub("[redacted]", scrub(message))


def finish_reason(raw: Any) -> FinishReason:
    return FINISH_REASONS.get(raw, FinishReason.STOP) if isinstance(raw, str) else FinishReason.STOP


def count(value: Any, name: str) -> int:
    """A token count; Cohere's schema types them as numbers, so a whole float counts too."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return reported_count(value, name)


def usage_from_cohere(raw: Any) -> Usage | None:
    """Usage from a Cohere `usage` object: billed units first, else the raw token counts."""
    if not isinstance(raw, dict):
        return None
    for key in ("billed_units", "tokens"):
        counts = raw.get(key)
        if not isinstance(counts, dict):
            continue
        found = {
            name: count(counts[name], name)
            for name in ("input_tokens", "output_tokens")
            if name in counts
        }
        if any(found.values()):
            return Usage(
                input_tokens=found.get("input_tokens", 0),
                output_tokens=found.get("output_tokens", 0),
            )
    return None


def call_part(call: Any) -> ToolCallPart | None:
    if not isinstance(call, dict):
        return None
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    assert isinstance(function, dict)
    name, arguments, call_id = function.get("name"), function.get("arguments"), call.get("id")
    if not isinstance(name, str):
        return None
    if isinstance(arguments, dict):
        arguments = jsonutil.dumps_str(arguments)
    return ToolCallPart(
        call_id if isinstance(call_id, str) and call_id else f"call_{name}",
        name,
        arguments if isinstance(arguments, str) else "",
    )


def message_parts(message: dict[str, Any]) -> tuple[OutputPart, ...]:
    thinking: list[OutputPart] = []
    texts: list[OutputPart] = []
    plan = message.get("tool_plan")
    if isinstance(plan, str) and plan:
        texts.append(TextPart(plan))
    content = message.get("content")
    if isinstance(content, str) and content:
        texts.append(TextPart(content))
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "thinking" and isinstance(item.get("thinking"), str):
            thinking.append(ThinkingPart(item["thinking"]))
        elif item.get("type") == "text" and isinstance(item.get("text"), str) and item["text"]:
            texts.append(TextPart(item["text"]))
    calls = message.get("tool_calls")
    tools = [p for p in (call_part(c) for c in (calls if isinstance(calls, list) else [])) if p]
    return (*thinking, *texts, *tools)


def parse_cohere_response(body: bytes, request: ChatRequest) -> ChatResponse:
    try:
        data = jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned invalid JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned an unexpected body")
    reason = finish_reason(data.get("finish_reason"))
    if reason is FinishReason.ERROR:  # a 200 whose generation failed: nothing to deliver
        raise stream_error(f"generation failed (finish_reason {data.get('finish_reason')})")
    response_id = data.get("id")
    return ChatResponse(
        id=response_id if isinstance(response_id, str) else "",
        model=request.model,
        parts=message_parts(data["message"]),
        finish_reason=reason,
        usage=usage_from_cohere(data.get("usage")) or Usage(),
    )


def usage_from_body(body: bytes) -> Usage | None:
    try:
        data = jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        return None
    return usage_from_cohere(data.get("usage")) if isinstance(data, dict) else None


def _message(status: int, body: bytes) -> str | None:
    try:
        data = jsonutil.loads(body) if body else None
    except jsonutil.JSONDecodeError:
        data = None
    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(message, str) or not message:
        text = body[:_MAX_MESSAGE].decode("utf-8", "replace").strip()
        message = text if text and not text.startswith("<") and data is None else None
    return scrub_message(message[:_MAX_MESSAGE]) if message else None


def classify_cohere_error(status: int, body: bytes) -> GatewayError:
    """A GatewayError for a non-2xx Cohere answer (400/401/402/404/429/499/500/503...)."""
    message = _message(status, body)
    if status in (401, 403):
        return GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream authentication failed", upstream_status=status
        )
    if status == 402:
        return GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream quota exhausted", upstream_status=status
        )
    if status in _CLIENT_STATUSES:
        text = message or ("not found" if status == 404 else "invalid request")
        code = "context_length_exceeded" if status == 400 and _CONTEXT.search(text) else None
        return GatewayError(
            ErrorKind.INVALID_REQUEST,
            text,
            code=code,
            upstream_status=status,
            status_override=status,
        )
    kind = ErrorKind.UPSTREAM_ERROR
    if status == 429:
        kind, text = ErrorKind.RATE_LIMITED, message or "upstream rate limit reached"
    elif status == 503:
        kind, text = ErrorKind.UPSTREAM_OVERLOADED, message or "upstream overloaded"
    elif status in (408, 504):
        kind, text = ErrorKind.UPSTREAM_TIMEOUT, message or "upstream timed out"
    elif status == 499:
        text = "upstream cancelled the request" + (f": {message}" if message else "")
    else:
        text = f"upstream error (HTTP {status})" + (f": {message}" if message else "")
    return GatewayError(kind, text, upstream_status=status)


def stream_error(message: Any) -> GatewayError:
    """The error a stream reports in its `message-end` (finish_reason ERROR)."""
    text = scrub_message(message) if isinstance(message, str) and message else "generation failed"
    return GatewayError(ErrorKind.UPSTREAM_ERROR, f"upstream error: {text}")
