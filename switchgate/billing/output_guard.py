"""Bounds what a streamed chat answer can cost by what the request could reserve.

The hold covers `max_tokens` (or the default) per choice. An upstream that ignores the
limit (reasoning models do) would otherwise be served without bound. While the stream
runs, the relay tells the guard the size of every chunk (`due`: two integer operations);
only when the bytes since the last check could carry more output tokens than the hold
has left (a token is at least one byte of text, and text is never longer than the
stream carrying it) does the guard look at the answer (`check`): it counts the text
delivered since the last check with the tokenizer, takes the larger of that and the
upstream's own running count (Gemini reports usage in every chunk), and, when the
answer has outgrown the hold, grows the hold from the balance and the token's limit.
If that fails the relay stops the stream with the dialect's error event, before
forwarding the chunk, and the request is charged at most what it held.

Checks are at least `MIN_CHECK_BYTES` of stream apart, so a stream running past its hold
can deliver, between two checks, at most that many bytes, hence at most that many tokens,
beyond what was reserved; in practice a few dozen (an SSE event carries ~100 bytes of
framing per token or two).
"""

from collections.abc import Callable
from typing import Final

from switchgate.billing.holds import Hold
from switchgate.core.request import ChatRequest
from switchgate.core.usage import Usage
from switchgate.errors import ErrorKind, GatewayError
from switchgate.money import format_usd

MIN_CHECK_BYTES: Final = 4096
NEVER: Final = 1 << 62


def output_hold_tokens(request: ChatRequest, default: int) -> int:
    """Output tokens a chat request may produce: its limit (else `default`) for each
    choice it asks for (`n`, Gemini's `candidateCount`)."""
    return (request.sampling.max_tokens or default) * (request.sampling.n or 1)


def ends_event(chunk: bytes) -> bool:
    """Whether a passed-through SSE stream that ended with `chunk` is between two events
    (an error event appended there reaches the client whole)."""
    return chunk.endswith(b"\n\n") or chunk.endswith(b"\r\n\r\n")


class OutputGuard:
    __slots__ = (
        "_allowed",
        "_count",
        "_counted_chars",
        "_gap",
        "_hold",
        "_price",
        "_reported",
        "_seen",
        "_step",
        "_text",
        "_tokens",
    )

    def __init__(
        self,
        hold: Hold,
        output_price: int,
        held_tokens: int,
        count: Callable[[str], int],
        text: Callable[[], str],
        reported: Callable[[], Usage | None],
    ) -> None:
        self._hold = hold
        self._price = output_price
        self._allowed = held_tokens  # output tokens the hold covers
        self._step = max(held_tokens, 1)
        self._count = count
        self._text = text
        self._reported = reported
        self._counted_chars = 0
        self._tokens = 0
        self._seen = 0  # stream bytes since the last check
        self._gap = max(held_tokens, MIN_CHECK_BYTES) if output_price > 0 else NEVER

    def due(self, size: int) -> bool:
        """Count `size` more bytes of stream; True when `check` must run before they go out."""
        self._seen += size
        return self._seen >= self._gap

    @property
    def delivered_tokens(self) -> int:
        return self._tokens

    async def check(self) -> None:
        """Grow the hold to the answer so far, or raise the error that ends the stream."""
        self._seen = 0
        text = self._text()
        if len(text) > self._counted_chars:
            self._tokens += self._count(text[self._counted_chars :])
            self._counted_chars = len(text)
        produced = self._tokens
        usage = self._reported()
        if usage is not None and usage.output_tokens > produced:
            produced = usage.output_tokens
        if produced > self._allowed:
            need = produced - self._allowed
            grown = await self._grow(max(need, self._step)) or await self._grow(need)
            if not grown:
                self._hold.capped = True
                raise GatewayError(
                    ErrorKind.INSUFFICIENT_BALANCE,
                    "Insufficient balance: the answer was stopped after about "
                    f"{produced} output tokens. The upstream went past the output limit and"
                    f" the answer would cost more than the ${format_usd(self._hold.amount)}"
                    " held for it plus the available balance (or the key's spending limit)."
                    " Top up, or set a lower max_tokens.",
                    code="insufficient_quota",
                )
        self._gap = max(self._allowed - produced, MIN_CHECK_BYTES)

    async def _grow(self, tokens: int) -> bool:
        if not await self._hold.extend(tokens * self._price):
            return False
        self._allowed += tokens
        self._step = max(self._step, tokens)
        return True
