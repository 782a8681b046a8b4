"""Incremental server-sent-events framing, shared by every stream decoder and meter.

Accepts `\\n`, `\\r\\n` and `\\r` line endings and input split at any byte boundary.
"""

from switchgate.wire.sse_blocks import SSEBlockSplitter, SSEEvent, parse_block

__all__ = ["UNFINISHED", "SSEEvent", "SSEParser", "format_event"]

# A stream the upstream closed cleanly without its end event (issue 14 #5).
UNFINISHED = "The upstream's stream ended before the answer was finished (no end event)."


class SSEParser:
    """Events out of a byte stream split at any boundary: whole events are cut out with
    C-level searches (`SSEBlockSplitter`) and each block is parsed at once
    (`parse_block`), instead of line by line."""

    __slots__ = ("_splitter",)

    def __init__(self) -> None:
        self._splitter = SSEBlockSplitter()

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        block = self._splitter.feed(chunk)
        return parse_block(block) if block else []

    def flush(self) -> list[SSEEvent]:
        """End of input: dispatch a final event that lacked its blank line."""
        rest = self._splitter.take_pending()
        return parse_block(rest + b"\n\n") if rest else []


def format_event(data: bytes, event: str | None = None) -> bytes:
    """One SSE event: an optional `event:` line, one `data: ` line, a blank line."""
    if event is None:
        return b"data: " + data + b"\n\n"
    return b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"
