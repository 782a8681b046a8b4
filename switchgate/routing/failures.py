"""What a failed attempt means for routing (pure functions).

blame(error)        which health subject the failure counts against
fails_over(error)   whether the next candidate may be tried (before the first byte)
retry_after(...)    the upstream's Retry-After / retry-after-ms, in seconds
context_overflow    a 400 that says the prompt does not fit the model's window
"""

import email.utils
import re
import time
from collections.abc import Mapping
from enum import Enum

from switchgate.errors import ErrorKind, GatewayError


class Blame(Enum):
    CHANNEL = "channel"  # no usable HTTP answer: connect errors, resets, timeouts
    KEY = "key"  # the channel's key was refused: 401 / 403
    MODEL = "model"  # this model on this channel: 404 model-not-found, 429, 5xx
    NONE = "none"  # the client's own fault (400, 413, 422 ...): not held against anyone


# Context-window overflows as the providers word them (OpenAI's code, Anthropic's and
# Gemini's messages, and the usual OpenAI-compatible servers' wording).
_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|context window|maximum context length|"
    r"prompt is too long|too many tokens|input token count.*exceeds|"
    r"exceeds the (?:maximum|context)|string_above_max_length",
    re.IGNORECASE,
)
# Content-policy refusals: returned to the client, never routed around.
_POLICY = re.compile(r"content[_ ]policy|content[_ ]filter|safety|moderation", re.IGNORECASE)


def context_overflow(error: GatewayError) -> bool:
    if error.upstream_status not in (400, 413, 422) or error.kind is not ErrorKind.INVALID_REQUEST:
        return False
    text = f"{error.code or ''} {error.message}"
    return bool(_OVERFLOW.search(text)) and not _POLICY.search(text)


def model_missing(error: GatewayError) -> bool:
    """The upstream does not know the model the channel says it serves."""
    return error.upstream_status == 404 and (
        error.code == "model_not_found" or "model" in error.message.lower()
    )


def key_refused(error: GatewayError) -> bool:
    """The upstream refused the channel's key: 401 / 403, or Gemini's 400
    API_KEY_INVALID (which its classifier words as an authentication failure)."""
    return error.upstream_status in (401, 403) or (
        error.upstream_status == 400 and error.message == "upstream authentication failed"
    )


def blame(error: GatewayError) -> Blame:
    status = error.upstream_status
    if status is None:
        return Blame.CHANNEL if error.retryable else Blame.NONE
    if key_refused(error):
        return Blame.KEY
    if status == 429 or status >= 500 or status == 408 or model_missing(error):
        return Blame.MODEL
    if status == 402:  # quota exhausted: the key's account
        return Blame.KEY
    return Blame.NONE


def fails_over(error: GatewayError) -> bool:
    """Whether another candidate may serve the call (never for the client's own errors)."""
    return error.retryable or model_missing(error)


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds from `retry-after-ms`, or `retry-after` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    raw = raw.strip()
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
