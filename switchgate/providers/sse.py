"""Incremental server-sent-events framing, shared by every stream decoder and meter.

Accepts `\\n`, `\\r\\n` and `\\r` line endings and input split at any byte boundary.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str | None
    data: str


class SSEParser:
    __slots__ = ("_buffer", "_data", "_event")

    def __init__(self) -> None:
        self._buffer = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buffer = self._buffer + chunk if self._buffer else chunk
        events: list[SSEEvent] = []
        start = 0
        length = len(buffer)
        while start < length:
            nl = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start)
            if cr != -1 and (nl == -1 or cr < nl):
                if cr + 1 == length:  # a lone \r at the end may be half of \r\n
                    break
                end, nxt = cr, cr + 2 if buffer[cr + 1 : cr + 2] == b"\n" else cr + 1
            elif nl != -1:
                end, nxt = nl, nl + 1
            else:
                break
            self._line(buffer[start:end].decode("utf-8", "replace"), events)
            start = nxt
        self._buffer = buffer[start:]
        return events

    def flush(self) -> list[SSEEvent]:
        """End of input: dispatch a final event that lacked its blank line."""
        events: list[SSEEvent] = []
        if self._buffer:
            self._line(self._buffer.decode("utf-8", "replace").rstrip("\r"), events)
            self._buffer = b""
        self._line("", events)
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                events.append(SSEEvent(self._event, "\n".join(self._data)))
            self._event, self._data = None, []
            return
        if line[0] == ":":
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value


def format_event(data: bytes, event: str | None = None) -> bytes:
    """One SSE event: an optional `event:` line, one `data: ` line, a blank line."""
    if event is None:
        return b"data: " + data + b"\n\n"
    return b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"
