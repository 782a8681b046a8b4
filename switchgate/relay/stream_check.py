"""A passed-through SSE stream, checked event by event at almost no cost: every `data:`
payload must look like one whole JSON value (`{...}` / `[...]`, or `[DONE]`). An
upstream that sends a truncated or garbled event then ends the client's stream with a
well-formed error event in its dialect instead of passing the garbage on (issue 14 #5).
The check is by the payload's first and last byte only: it never parses."""

from switchgate.errors import ErrorKind, GatewayError

_OPEN = (b"{", b"[")
_CLOSE = (b"}", b"]")


def unreadable_event() -> GatewayError:
    return GatewayError(
        ErrorKind.UPSTREAM_ERROR, "The upstream sent a stream event that is not valid JSON."
    )


def _json_shaped(payload: bytes) -> bool:
    return not payload or payload == b"[DONE]" or (payload[:1] in _OPEN and payload[-1:] in _CLOSE)


class EventCheck:
    """Forwards whole lines only (a line split across reads waits for its end, which
    upstreams rarely do) and stops at the first `data:` line that is not JSON-shaped."""

    __slots__ = ("_tail",)

    def __init__(self) -> None:
        self._tail = b""  # an incomplete last line, waiting for the rest

    def feed(self, chunk: bytes) -> tuple[bytes, bool]:
        """(what may go to the client now, False when a bad event follows it)."""
        if not self._tail and chunk.find(b"\n") == len(chunk) - 2 and chunk[-1:] == b"\n":
            # the usual chunk: one whole `data:` event (or one other line) and its blank line
            if chunk.startswith(b"data:"):
                return (chunk, True) if _json_shaped(chunk[5:-2].strip()) else (b"", False)
            return chunk, True
        data = self._tail + chunk if self._tail else chunk
        end = data.rfind(b"\n") + 1
        self._tail = data[end:]
        if b"data:" not in data:
            return data[:end], True
        start = 0
        while start < end:
            stop = data.index(b"\n", start) + 1
            if data.startswith(b"data:", start) and not _json_shaped(
                data[start + 5 : stop].strip()
            ):
                self._tail = b""
                return data[:start], False
            start = stop
        return data[:end], True

    def rest(self) -> bytes:
        """What is left at the end of the stream (a last line without its newline)."""
        tail, self._tail = self._tail, b""
        return tail
