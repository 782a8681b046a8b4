"""GatewayError -> OpenAI error responses (protocols §1.6, §5.9 O column).

Body: `{"error": {"message", "type", "param", "code"}}`; the SDK picks its exception by
status alone, so the status is what matters most.

    kind                                    status       type                   code (default)
    invalid_request, not_found, too_large   400/404/413  invalid_request_error  -
    authentication                          401          invalid_request_error  invalid_api_key
    permission                              403          permission_error       -
    insufficient_balance                    402          insufficient_quota     insufficient_quota
    rate_limited                            429          requests               rate_limit_exceeded
    upstream_*, internal                    5xx          server_error           -

Choices:
- Out of balance is 402, not OpenAI's 429 `insufficient_quota`: the SDK retries every 429
  (futile here), and 402 makes it raise at once. Type and code still say `insufficient_quota`
  so clients that look at them recognise the condition.
- Rate limits use OpenAI's own type (`requests`) and code `rate_limit_exceeded`.
- `err.status_override` wins (an upstream 4xx keeps its status), except that 529 is never
  sent to O clients (becomes 503). `err.code` replaces the default code.
- `Retry-After` is set whenever `err.retry_after` is known.
"""

from typing import Any, Final

from switchgate.errors import ErrorKind, GatewayError
from switchgate.jsonutil import dumps
from switchgate.wire.sse import format_event

_TYPES: Final[dict[ErrorKind, tuple[str, str | None]]] = {
    ErrorKind.INVALID_REQUEST: ("invalid_request_error", None),
    ErrorKind.NOT_FOUND: ("invalid_request_error", None),
    ErrorKind.REQUEST_TOO_LARGE: ("invalid_request_error", None),
    ErrorKind.AUTHENTICATION: ("invalid_request_error", "invalid_api_key"),
    ErrorKind.PERMISSION: ("permission_error", None),
    ErrorKind.INSUFFICIENT_BALANCE: ("insufficient_quota", "insufficient_quota"),
    ErrorKind.RATE_LIMITED: ("requests", "rate_limit_exceeded"),
    ErrorKind.UPSTREAM_ERROR: ("server_error", None),
    ErrorKind.UPSTREAM_OVERLOADED: ("server_error", None),
    ErrorKind.UPSTREAM_TIMEOUT: ("server_error", None),
    ErrorKind.INTERNAL: ("server_error", None),
}


def openai_error_status(err: GatewayError) -> int:
    status = err.status
    return 503 if status == 529 else status


def openai_error_body(err: GatewayError) -> dict[str, Any]:
    kind, code = _TYPES[err.kind]
    return {
        "error": {
            "message": err.message,
            "type": kind,
            "param": err.param,
            "code": err.code or code,
        }
    }


def render_openai_error(err: GatewayError) -> tuple[int, dict[str, str], bytes]:
    headers = {"content-type": "application/json"}
    if err.retry_after is not None:
        headers["retry-after"] = str(err.retry_after)
    return openai_error_status(err), headers, dumps(openai_error_body(err))


def render_openai_stream_error(err: GatewayError) -> bytes:
    """`data: {"error": {...}}` — the in-band error that ends an O stream."""
    return format_event(dumps(openai_error_body(err)))
