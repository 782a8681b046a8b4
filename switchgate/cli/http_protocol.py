"""uvicorn's httptools protocol, sending a response's head together with its body.

uvicorn writes the head of a response (status line and headers) as soon as the app sends
`http.response.start`, and the body in a second write: two system calls and two TCP
segments for every whole response. Here the first write after a request's headers have
arrived (the head of its response) is held until the next write, and both go out in one
`writelines` (one `writev` on uvloop), or until the end of the current event-loop
iteration, whichever comes first. Nothing waits on the app: a streamed response whose
first chunk is not ready in the same iteration gets its head at the end of it, as before.
Only that one write is ever held, so stream chunks still go out one write each.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HeadJoiningTransport:
    """Wraps a connection's transport; everything but `write`, `writelines` and `close`
    goes straight to it."""

    __slots__ = ("_flush_handle", "_held", "_hold_next", "_loop", "raw")

    def __init__(self, raw: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.raw = raw
        self._loop = loop
        self._hold_next = False
        self._held: bytes | None = None
        self._flush_handle: asyncio.Handle | None = None

    def hold_next_write(self) -> None:
        self._hold_next = True

    def write(self, data: bytes) -> None:
        if self._hold_next:
            self._hold_next = False
            self.flush()  # never more than one held write
            self._held = data
            self._flush_handle = self._loop.call_soon(self.flush)
            return
        held = self._held
        if held is None:
            self.raw.write(data)
            return
        self._held = None
        self._cancel_flush()
        self.raw.writelines((held, data))

    def writelines(self, chunks: Any) -> None:
        self.flush()
        self.raw.writelines(chunks)

    def flush(self) -> None:
        """Write the held data now (no-op when there is none)."""
        held = self._held
        if held is None:
            return
        self._held = None
        self._cancel_flush()
        if not self.raw.is_closing():
            self.raw.write(held)

    def close(self) -> None:
        self.flush()
        self.raw.close()

    def _cancel_flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class HeadJoiningHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's HttpToolsProtocol whose responses go out head and body in one write."""

    _joiner: HeadJoiningTransport | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._joiner = HeadJoiningTransport(transport, self.loop)
        # Duck-typed: the joiner passes everything else through to the real transport.
        self.transport = cast(asyncio.Transport, self._joiner)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        if self._joiner is not None:
            self._joiner.hold_next_write()

    def handle_websocket_upgrade(self) -> None:
        # A WebSocket protocol takes the connection over: it gets the real transport.
        if self._joiner is not None:
            self._joiner.flush()
            self.transport = self._joiner.raw
            self._joiner = None
        super().handle_websocket_upgrade()
