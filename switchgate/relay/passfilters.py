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
