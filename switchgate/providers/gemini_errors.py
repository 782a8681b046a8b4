"""Gemini errors -> GatewayError (§4.5): the HTTP status and the `error` object's
status, reasons and retry delay decide the kind; messages are scrubbed of key-like
strings and of URLs other than Google's documentation before they reach a client."""

import math
import re
from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError

_KEY_PATTERNS: Final = (
    (re.compile(r"AIza[0-9A-Za-z_\-]{20,}"), "[redacted]"),
    (re.compile(r"(?i)\b(key|api_key|access_token)=[^&\s\"']+"), r"\1=[redacted]"),
    (re.compile(r"(?i)bearer\s+[^\s\"']+"), "Bearer [redacted]"),
    (re.compile(r"\bya29\.[0-9A-Za-z_.\-]+"), "[redacted]"),
    (re.compile(r"\bsk-[0-9A-Za-z_\-]{16,}"), "[redacted]"),
)
_URL: Final = re.compile(r"https?://[^\s\"'<>)]+")
_DOC_HOSTS: Final = ("ai.google.dev", "cloud.google.com", "developers.google.com")


def scrub(message: str) -> str:
    """Remove key-like strings and non-documentation URLs from an upstream message."""
    for pattern, replacement in _KEY_PATTERNS:
        message = pattern.sub(replacement, message)

    def url(match: re.Match[str]) -> str:
        host = match.group(0).split("/")[2].split(":")[0].lower()
        return match.group(0) if host.endswith(_DOC_HOSTS) else "[url]"

    return _URL.sub(url, message)


def _retry_seconds(details: Any) -> int | None:
    for detail in details if isinstance(details, list) else []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        match = re.fullmatch(r"(\d+(?:\.\d+)?)s", delay) if isinstance(delay, str) else None
        if match:
            return max(1, math.ceil(float(match.group(1))))
    return None


def _reasons(details: Any) -> set[str]:
    items = details if isinstance(details, list) else []
    return {d["reason"] for d in items if isinstance(d, dict) and isinstance(d.get("reason"), str)}


def gemini_error(error: dict[str, Any], status: int) -> GatewayError:
    """A Gemini `error` object (with the HTTP status it came with) -> GatewayError."""
    message = scrub(str(error.get("message") or "")) or f"upstream returned HTTP {status}"
    g_status = str(error.get("status") or "")
    details = error.get("details")
    kind, override = ErrorKind.UPSTREAM_ERROR, None
    retry = None
    if status == 400:
        if "API_KEY_INVALID" in _reasons(details) or "API key not valid" in message:
            message = "upstream authentication failed"
        elif g_status != "FAILED_PRECONDITION":  # billing / region: the channel's problem
            kind, override = ErrorKind.INVALID_REQUEST, 400
    elif status in (401, 403):
        message = f"upstream rejected the channel's credentials: {message}"
    elif status == 404:
        kind, override = ErrorKind.INVALID_REQUEST, 404
    elif status == 413:
        kind = ErrorKind.REQUEST_TOO_LARGE
    elif status == 429:
        kind, retry = ErrorKind.RATE_LIMITED, _retry_seconds(details)
    elif status == 503:
        kind, retry = ErrorKind.UPSTREAM_OVERLOADED, _retry_seconds(details)
    elif status == 504:
        kind = ErrorKind.UPSTREAM_TIMEOUT
    elif 400 <= status < 500:
        kind, override = ErrorKind.INVALID_REQUEST, status
    return GatewayError(
        kind, message, retry_after=retry, upstream_status=status, status_override=override
    )


def classify_gemini_error(status: int, body: bytes) -> GatewayError:
    try:
        data: Any = jsonutil.loads(body) if body else None
    except jsonutil.JSONDecodeError:
        data = None
    if isinstance(data, list) and data:  # the array framing wraps errors too
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    return gemini_error(error if isinstance(error, dict) else {}, status)


def inband_error(error: Any) -> GatewayError:
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    return gemini_error(error, code if isinstance(code, int) and code >= 400 else 500)
