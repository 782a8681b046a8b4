"""GatewayError -> Gemini error body `{"error": {"code", "message", "status"}}` (§4.5, §5.9)."""

from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError

_KIND_STATUS: Final[dict[ErrorKind, int]] = {
    ErrorKind.INVALID_REQUEST: 400,
    ErrorKind.AUTHENTICATION: 401,
    ErrorKind.PERMISSION: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.INSUFFICIENT_BALANCE: 429,
    ErrorKind.RATE_LIMITED: 429,
    ErrorKind.REQUEST_TOO_LARGE: 400,
    ErrorKind.UPSTREAM_ERROR: 500,
    ErrorKind.UPSTREAM_OVERLOADED: 503,
    ErrorKind.UPSTREAM_TIMEOUT: 504,
    ErrorKind.INTERNAL: 500,
}

# google.rpc canonical status names by HTTP status.
_STATUS_NAMES: Final[dict[int, str]] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

# Statuses a G client never sees: too-large is 400, a payment failure is a quota error,
# Anthropic's 529 is 503 (§5.9).
_REMAP: Final[dict[int, int]] = {413: 400, 402: 429, 529: 503, 502: 500}


def gemini_status(err: GatewayError) -> tuple[int, str]:
    """(HTTP code, canonical status name) for an error; status_override wins over the kind."""
    code = err.status_override or _KIND_STATUS[err.kind]
    code = _REMAP.get(code, code)
    name = _STATUS_NAMES.get(code)
    if name is None:
        name = "INVALID_ARGUMENT" if 400 <= code < 500 else "UNKNOWN"
    return code, name


def gemini_error_object(err: GatewayError) -> dict[str, Any]:
    code, status = gemini_status(err)
    error: dict[str, Any] = {"code": code, "message": err.message, "status": status}
    if err.retry_after is not None and code in (429, 503):
        # gemini-cli reads RetryInfo to pace its retries.
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": f"{err.retry_after}s",
            }
        ]
    return {"error": error}


def render_gemini_error(err: GatewayError) -> tuple[int, dict[str, str], bytes]:
    code, _ = gemini_status(err)
    headers = {"content-type": "application/json; charset=UTF-8"}
    if err.retry_after is not None and code in (429, 503):
        headers["retry-after"] = str(err.retry_after)
    return code, headers, jsonutil.dumps(gemini_error_object(err))


def render_gemini_stream_error(err: GatewayError) -> bytes:
    """The in-band SSE error event (`?alt=sse` streams); array-mode streams use the encoder."""
    return b"data: " + jsonutil.dumps(gemini_error_object(err)) + b"\n\n"
