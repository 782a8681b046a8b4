"""Cheap server-sent-events framing (used by `sse.SSEParser` and the usage meters).

`SSEBlockSplitter` cuts a byte stream (split at any byte boundary) into blocks of whole
events with a few C-level searches per chunk, without looking at the lines inside;
`parse_block` turns such a block into events exactly as a line-by-line parser would.

A blank line (the end of an event) is a line terminator (`\\n`, `\\r\\n` or `\\r`) right
after another one. The first terminator ends in `\\n` or `\\r` and the second starts with
one of them; `\\r` then `\\n` is a single terminator, so every blank line holds one of
`\\n\\n`, `\\n\\r` or `\\r\\r`, and each of those always is one.
"""

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str | None
    data: str


_CR: Final = 13  # b"\r"[0]
_LF: Final = 10  # b"\n"[0]
# Endings that close a blank line for sure (the usual chunk ends in one of them).
_CLOSED: Final = (b"\n\n", b"\n\r\n", b"\r\r\n")


def last_event_end(buffer: bytes, start: int = 0) -> int:
    """The end of the last blank line in `buffer` that starts at or after `start`, or -1.

    A `\\r` as the very last byte may be half of a `\\r\\n`, so a blank line it would end
    is left for later (as `SSEParser` does): the caller feeds more bytes first.
    """
    limit = len(buffer)
    if limit and buffer[-1] == _CR:
        limit -= 1
    found = buffer.rfind(b"\n\n", start, limit)
    after = found + 1 if found >= 0 else start  # neither \r pattern can start at `found`
    found = max(found, buffer.rfind(b"\n\r", after, limit), buffer.rfind(b"\r\r", after, limit))
    if found < 0:
        return -1
    end = found + 2
    if buffer[end - 1] == _CR and end < len(buffer) and buffer[end] == _LF:
        end += 1  # the blank line ended with \r\n
    return end


class SSEBlockSplitter:
    """Feeds arbitrary chunks of an SSE stream, hands back whole events as one block.

    Keeps only the unfinished tail (as a list of the chunks it came in, so a long event
    split into many chunks is not copied over and over).
    """

    __slots__ = ("_edge", "_tail")

    def __init__(self) -> None:
        self._tail: list[bytes] = []
        self._edge = b""  # the tail's last two bytes: a blank line may straddle chunks

    def feed(self, chunk: bytes) -> bytes:
        """Every event completed by `chunk` (with the tail before it), or b"" if none."""
        if not chunk:
            return b""
        if chunk.endswith(_CLOSED):  # fast path: the chunk ends where an event does
            if not self._tail:
                return chunk
            self._tail.append(chunk)
            block = b"".join(self._tail)
            self._tail, self._edge = [], b""
            return block
        edge = self._edge
        window = edge + chunk if edge else chunk
        end = last_event_end(window)
        if end < 0:
            self._tail.append(chunk)
            self._edge = window[-2:]
            return b""
        cut = end - len(edge)  # >= 0: the tail held no blank line it could decide on
        rest = chunk[cut:]
        if self._tail:
            self._tail.append(chunk[:cut])
            block = b"".join(self._tail)
        else:
            block = chunk[:cut] if rest else chunk
        self._tail = [rest] if rest else []
        self._edge = rest[-2:]
        return block

    def take_pending(self) -> bytes:
        """The unfinished tail, handed over and forgotten (end of input)."""
        rest = b"".join(self._tail)
        self._tail, self._edge = [], b""
        return rest

    def pending(self) -> int:
        """How many bytes of an unfinished event are held."""
        return sum(len(part) for part in self._tail)


def parse_block(block: bytes) -> list[SSEEvent]:
    """The events of `block`, which holds whole lines (as the splitter hands them back).

    Same result as `SSEParser().feed(block)` for such a block, except that a block may end
    in a lone `\\r` (known to be a whole terminator). Bytes after the last line terminator
    are ignored. Decoding the whole block at once equals decoding line by line: an invalid
    UTF-8 sequence never swallows a `\\r` or `\\n`.
    """
    text = block.decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    lines.pop()  # what follows the last terminator: nothing, or an unfinished line
    events: list[SSEEvent] = []
    event: str | None = None
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                events.append(SSEEvent(event, "\n".join(data)))
            event, data = None, []
        elif line[0] != ":":
            name, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
    return events
