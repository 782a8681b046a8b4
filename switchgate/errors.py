"""One error taxonomy for the whole gateway; each dialect renders it in its own shape.

    GatewayError
      kind: ErrorKind          what went wrong, independent of any wire format
      message                  safe to show the client (never an upstream key or URL)
      param, code              optional detail (OpenAI's `param` / `code`)
      retry_after              seconds, for 429 / 503
      upstream_status          status the upstream returned, if any (for logs)

Domain code raises GatewayError; only dialects turn it into HTTP.
"""

from dataclasses import dataclass
from enum import StrEnum


class ErrorKind(StrEnum):
    INVALID_REQUEST = "invalid_request"
    AUTHENTICATION = "authentication"
    PERMISSION = "permission"
    NOT_FOUND = "not_found"
    INSUFFICIENT_BALANCE = "insufficient_balance"
    RATE_LIMITED = "rate_limited"
    REQUEST_TOO_LARGE = "request_too_large"
    UPSTREAM_ERROR = "upstream_error"
    UPSTREAM_OVERLOADED = "upstream_overloaded"
    UPSTREAM_TIMEOUT = "upstream_timeout"
    INTERNAL = "internal"


# The status a kind has when no dialect-specific rule overrides it.
DEFAULT_STATUS: dict[ErrorKind, int] = {
    ErrorKind.INVALID_REQUEST: 400,
    ErrorKind.AUTHENTICATION: 401,
    ErrorKind.PERMISSION: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.INSUFFICIENT_BALANCE: 402,
    ErrorKind.RATE_LIMITED: 429,
    ErrorKind.REQUEST_TOO_LARGE: 413,
    ErrorKind.UPSTREAM_ERROR: 502,
    ErrorKind.UPSTREAM_OVERLOADED: 503,
    ErrorKind.UPSTREAM_TIMEOUT: 504,
    ErrorKind.INTERNAL: 500,
}

# Kinds after which the relay may try the next channel (only before the first byte).
RETRYABLE: frozenset[ErrorKind] = frozenset(
    {
        ErrorKind.UPSTREAM_ERROR,
        ErrorKind.UPSTREAM_OVERLOADED,
        ErrorKind.UPSTREAM_TIMEOUT,
        ErrorKind.RATE_LIMITED,
    }
)


@dataclass(eq=False)
class GatewayError(Exception):
    kind: ErrorKind
    message: str
    param: str | None = None
    code: str | None = None
    retry_after: int | None = None
    upstream_status: int | None = None
    # Upstream 4xx errors that are the client's fault keep the upstream's status.
    status_override: int | None = None

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)

    @property
    def status(self) -> int:
        return self.status_override or DEFAULT_STATUS[self.kind]

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


def invalid(message: str, param: str | None = None, code: str | None = None) -> GatewayError:
    return GatewayError(ErrorKind.INVALID_REQUEST, message, param=param, code=code)
