"""Bedrock Converse answers -> canonical form: the response body, usage, stop reasons
and errors (HTTP errors and the exception events of a ConverseStream). Pure.

Errors: the exception's name says the kind when it is known, else the status
(ValidationException 400, AccessDeniedException 403, ResourceNotFoundException 404,
ModelTimeoutException 408, ModelErrorException 424, ThrottlingException 429,
InternalServerException 500, ServiceUnavailableException 503). The name travels in the
`x-amzn-errortype` header and the body is `{"message": "..."}` (some front ends write
`Message`, or add `__type`), so the relay hands the headers in
(`BedrockProvider.classify_error_with_headers`): ServiceQuotaExceededException is a 400
that is a rate limit, ModelNotReadyException a 429 that is an overloaded model. A
ValidationException (or an unnamed 400) whose message says the prompt does not fit the
model's window is the context-length error (code `context_length_exceeded`); a quota's
wording ("Too many tokens per day") never is.
"""

import re
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage, reported_count
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.anthropic_stream import scrub
from switchgate.providers.bedrock_content import SIGNATURE_PREFIX

FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP_SEQUENCE,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "tool_use": FinishReason.TOOL_CALLS,
    "guardrail_intervened": FinishReason.CONTENT_FILTER,
    "content_filtered": FinishReason.CONTENT_FILTER,
    "malformed_model_output": FinishReason.ERROR,
    "malformed_tool_use": FinishReason.ERROR,
}
CONTEXT_LENGTH_CODE: Final = "context_length_exceeded"
# How Bedrock and the models behind it word a prompt that does not fit.
_CONTEXT: Final = re.compile(
    r"input is too long|prompt is too long|too many (?:input )?tokens|context window|"
    r"context length|maximum (?:context|input) length|exceeds? the max(?:imum)? "
    r"(?:number of )?(?:input )?tokens",
    re.IGNORECASE,
)
# A quota or throttle worded like a size ("Too many tokens per day"): never context length.
_QUOTA: Final = re.compile(r"\bper (?:day|hour|minute|second)\b|\bquota\b|\bthrottl", re.IGNORECASE)
# Exception name (header, body `__type`, or a stream's `:exception-type`) -> kind.
EXCEPTIONS: Final[dict[str, tuple[ErrorKind, int]]] = {
    "validationexception": (ErrorKind.INVALID_REQUEST, 400),
    "servicequotaexceededexception": (ErrorKind.RATE_LIMITED, 400),
    "accessdeniedexception": (ErrorKind.UPSTREAM_ERROR, 403),
    "unrecognizedclientexception": (ErrorKind.UPSTREAM_ERROR, 403),
    "invalidsignatureexception": (ErrorKind.UPSTREAM_ERROR, 403),
    "resourcenotfoundexception": (ErrorKind.UPSTREAM_ERROR, 404),
    "modeltimeoutexception": (ErrorKind.UPSTREAM_TIMEOUT, 408),
    "modelerrorexception": (ErrorKind.UPSTREAM_ERROR, 424),
    "modelstreamerrorexception": (ErrorKind.UPSTREAM_ERROR, 424),
    "throttlingexception": (ErrorKind.RATE_LIMITED, 429),
    "modelnotreadyexception": (ErrorKind.UPSTREAM_OVERLOADED, 429),
    "internalserverexception": (ErrorKind.UPSTREAM_ERROR, 500),
    "serviceunavailableexception": (ErrorKind.UPSTREAM_OVERLOADED, 503),
}
_STATUS_KINDS: Final[dict[int, ErrorKind]] = {
    400: ErrorKind.INVALID_REQUEST,
    408: ErrorKind.UPSTREAM_TIMEOUT,
    413: ErrorKind.INVALID_REQUEST,
    429: ErrorKind.RATE_LIMITED,
    503: ErrorKind.UPSTREAM_OVERLOADED,
    504: ErrorKind.UPSTREAM_TIMEOUT,
}
_DEFAULTS: Final[dict[ErrorKind, str]] = {
    ErrorKind.INVALID_REQUEST: "invalid request",
    ErrorKind.RATE_LIMITED: "upstream rate limit reached",
    ErrorKind.UPSTREAM_OVERLOADED: "upstream overloaded",
    ErrorKind.UPSTREAM_TIMEOUT: "upstream timed out",
}


def finish_reason(stop_reason: Any) -> FinishReason:
    if not isinstance(stop_reason, str):
        return FinishReason.STOP
    return FINISH_REASONS.get(stop_reason, FinishReason.STOP)


def to_usage(usage: Any) -> Usage | None:
    """Converse `usage` -> the IR's. Bedrock's `inputTokens` leaves out cache reads and
    writes (as Anthropic's `input_tokens` does): the IR's whole prompt adds them."""
    if not isinstance(usage, dict):
        return None
    read = reported_count(usage.get("cacheReadInputTokens", 0), "cacheReadInputTokens")
    write = reported_count(usage.get("cacheWriteInputTokens", 0), "cacheWriteInputTokens")
    return Usage(
        input_tokens=reported_count(usage.get("inputTokens", 0), "inputTokens") + read + write,
        output_tokens=reported_count(usage.get("outputTokens", 0), "outputTokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def _output_part(block: Any) -> OutputPart | None:
    if not isinstance(block, dict):
        return None
    if isinstance(block.get("text"), str):
        return TextPart(block["text"])
    tool = block.get("toolUse")
    if isinstance(tool, dict):
        args = tool.get("input")
        return ToolCallPart(
            str(tool.get("toolUseId", "")),
            str(tool.get("name", "")),
            jsonutil.dumps_str(args if isinstance(args, dict) else {}),
        )
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        text = reasoning.get("reasoningText")
        if isinstance(text, dict):
            signature = text.get("signature")
            return ThinkingPart(
                str(text.get("text", "")),
                signature=SIGNATURE_PREFIX + signature if signature else None,
            )
        if isinstance(reasoning.get("redactedContent"), str):
            return ThinkingPart(redacted=SIGNATURE_PREFIX + reasoning["redactedContent"])
    return None  # citations, images... have no IR form


def parse_converse(body: bytes, model: str) -> ChatResponse:
    try:
        data = jsonutil.loads(body)
    except jsonutil.JSONDecodeError as exc:
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned invalid JSON") from exc
    output = data.get("output") if isinstance(data, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned an unexpected body")
    parts = [p for p in (_output_part(b) for b in content) if p is not None]
    return ChatResponse(
        id="",  # Converse answers carry no id: the dialect makes one
        model=model,
        parts=tuple(parts),
        finish_reason=finish_reason(data.get("stopReason")),
        usage=to_usage(data.get("usage")) or Usage(),
    )


def _message(body: bytes) -> tuple[str | None, str | None]:
    """(message, exception name from the body) of an error body, if it has them."""
    try:
        data = jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    message = data.get("message", data.get("Message"))
    name = data.get("__type") or data.get("code")
    text = scrub(message) if isinstance(message, str) and message.strip() else None
    return text, exception_name(name) if isinstance(name, str) else None


def exception_name(raw: str) -> str:
    """`ValidationException:http://internal.amazon.com/coral/...` or
    `com.amazon.coral.service#ValidationException` -> `validationexception`."""
    return raw.split(":", 1)[0].rsplit("#", 1)[-1].strip().lower()


def classify(status: int, body: bytes, error_type: str | None = None) -> GatewayError:
    """An HTTP error answer (or, with status 200, a stream's exception event).
    `error_type` is the exception's name from the `x-amzn-errortype` header (or the
    stream's `:exception-type`); it wins over a `__type` in the body."""
    message, named = _message(body)
    name = exception_name(error_type) if error_type else named
    kind, code_status = EXCEPTIONS.get(name or "", (None, status))
    if kind is None:
        kind = _STATUS_KINDS.get(status, ErrorKind.UPSTREAM_ERROR)
    status = status if status >= 400 else code_status
    if kind is ErrorKind.INVALID_REQUEST:
        text = message or _DEFAULTS[kind]
        fits = name in (None, "", "validationexception") and not _QUOTA.search(text)
        code = CONTEXT_LENGTH_CODE if fits and _CONTEXT.search(text) else None
        return GatewayError(kind, text, code=code, upstream_status=status, status_override=status)
    if status in (401, 403):
        return GatewayError(kind, "upstream authentication failed", upstream_status=status)
    if status == 404:
        return GatewayError(
            kind,
            "upstream model not found" + (f": {message}" if message else ""),
            upstream_status=status,
        )
    if kind is ErrorKind.UPSTREAM_ERROR:
        detail = f"upstream error (HTTP {status})" + (f": {message}" if message else "")
        return GatewayError(kind, detail, upstream_status=status)
    return GatewayError(kind, message or _DEFAULTS[kind], upstream_status=status)
