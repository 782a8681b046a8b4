"""GatewayError -> Anthropic error responses (protocols §3.5, §5.9 column A)."""

from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError
from switchgate.wire.sse import format_event

# (status, error.type) per kind; a status_override replaces the status only.
_KINDS: Final[dict[ErrorKind, tuple[int, str]]] = {
    ErrorKind.INVALID_REQUEST: (400, "invalid_request_error"),
    ErrorKind.AUTHENTICATION: (401, "authentication_error"),
    ErrorKind.INSUFFICIENT_BALANCE: (402, "billing_error"),
    ErrorKind.PERMISSION: (403, "permission_error"),
    ErrorKind.NOT_FOUND: (404, "not_found_error"),
    ErrorKind.REQUEST_TOO_LARGE: (413, "request_too_large"),
    ErrorKind.RATE_LIMITED: (429, "rate_limit_error"),
    ErrorKind.UPSTREAM_ERROR: (500, "api_error"),
    ErrorKind.INTERNAL: (500, "api_error"),
    ErrorKind.UPSTREAM_OVERLOADED: (529, "overloaded_error"),
    ErrorKind.UPSTREAM_TIMEOUT: (504, "timeout_error"),
}
# An upstream client error keeps its status; these statuses have their own A type.
_INVALID_BY_STATUS: Final[dict[int, str]] = {
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
}
_RETRY_AFTER_STATUSES: Final = frozenset({429, 503, 529})


def _status_and_type(err: GatewayError) -> tuple[int, str]:
    status, error_type = _KINDS[err.kind]
    if err.status_override is not None:
        status = err.status_override
        if err.kind is ErrorKind.INVALID_REQUEST:
            error_type = _INVALID_BY_STATUS.get(status, error_type)
    return status, error_type


def error_payload(err: GatewayError) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _status_and_type(err)[1], "message": err.message}}


def render_anthropic_error(err: GatewayError) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) for an error returned before the first byte."""
    status, _ = _status_and_type(err)
    headers = {"content-type": "application/json"}
    if err.retry_after is not None and status in _RETRY_AFTER_STATUSES:
        headers["retry-after"] = str(err.retry_after)
    return status, headers, jsonutil.dumps(error_payload(err))


def render_anthropic_stream_error(err: GatewayError) -> bytes:
    """The `event: error` that ends a stream already under way."""
    return format_event(jsonutil.dumps(error_payload(err)), "error")
