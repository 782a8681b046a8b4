"""Framing filters for passed-through streams (bytes in, bytes out; no JSON parsing)."""

import re
from typing import Final

# An SSE event ends at a blank line; upstreams use \n or \r\n line endings.
_BOUNDARY: Final = re.compile(rb"\r?\n\r?\n")
_USAGE_ONLY: Final = re.compile(rb'"choices"\s*:\s*\[\s*\]')


class OpenAIUsageStripper:
    """Drops the usage-only chunk (`"choices":[]`) that the gateway asked for on the
    client's behalf when the client itself did not ask for usage. Each event is
    forwarded as soon as it is complete; every other byte passes unchanged."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> bytes:
        buffer = self._buffer + data if self._buffer else data
        out: list[bytes] = []
        start = 0
        for match in _BOUNDARY.finditer(buffer):
            event = buffer[start : match.end()]
            if not _USAGE_ONLY.search(event):
                out.append(event)
            start = match.end()
        self._buffer = buffer[start:]
        return b"".join(out)

    def close(self) -> bytes:
        rest, self._buffer = self._buffer, b""
        return b"" if _USAGE_ONLY.search(rest) else rest


class SSEToJSONArray:
    """Re-frames a Gemini SSE stream (`data: {...}` events) as the progressive JSON array
    that `:streamGenerateContent` without `?alt=sse` returns: `[{..},\\r\\n{..}]`."""

    __slots__ = ("_buffer", "_count")

    def __init__(self) -> None:
        self._buffer = b""
        self._count = 0

    def feed(self, data: bytes) -> bytes:
        buffer = self._buffer + data if self._buffer else data
        out: list[bytes] = []
        start = 0
        for match in _BOUNDARY.finditer(buffer):
            out.extend(self._element(buffer[start : match.start()]))
            start = match.end()
        self._buffer = buffer[start:]
        return b"".join(out)

    def _element(self, event: bytes) -> list[bytes]:
        payload = b"\n".join(
            line[5:].lstrip(b" ") for line in event.splitlines() if line.startswith(b"data:")
        )
        if not payload:
            return []
        self._count += 1
        return [(b"[" if self._count == 1 else b",\r\n") + payload]

    def close(self) -> bytes:
        tail = self._element(self._buffer) if self._buffer.strip() else []
        self._buffer = b""
        return b"".join(tail) + (b"]" if self._count else b"[]")
