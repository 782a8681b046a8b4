"""One HTTP/1.1 keep-alive connection to an upstream, as an asyncio protocol.

The relay's hot path needs little of a general HTTP client: send one request whose body
is already in memory, get the status and headers, then take the body as it arrives.
This does exactly that on a bare `asyncio.Protocol` with `httptools` (llhttp) parsing,
which costs a fraction of a general-purpose client per request. Body chunks are handed
over the moment they arrive (never coalesced by the client), reading pauses when the
consumer falls behind, and gzip/deflate bodies are decoded on the fly.
"""

import asyncio
import zlib
from collections import deque
from collections.abc import Callable, Hashable
from typing import cast

import httptools

# Reading from the upstream pauses while this much body is waiting for the consumer.
HIGH_WATER = 1 << 20
LOW_WATER = 1 << 18


class UpstreamConnectionError(Exception):
    """The connection failed or broke before the response was complete."""


class UpstreamProtocolError(UpstreamConnectionError):
    """The upstream sent something that is not valid HTTP/1.1 (or an undecodable body)."""


class TotalTimeout(TimeoutError):
    """The whole call (headers and body) took longer than allowed."""


class UpstreamResponse:
    """The response to one request: status and headers now, the body as it arrives.

    `headers` has lower-cased names; repeated headers are joined with ", ".
    Call `release()` when done: it returns a fully read connection to the pool and
    closes one that still has unread body.
    """

    __slots__ = (
        "_buffered",
        "_chunks",
        "_conn",
        "_deadline",
        "_decoder",
        "_done",
        "_error",
        "_header_list",
        "_header_waiter",
        "_idle_timeout",
        "_released",
        "_waiter",
        "headers",
        "received",
        "status",
    )

    def __init__(self, conn: "Http1Connection", idle_timeout: float) -> None:
        self._conn = conn
        self._idle_timeout = idle_timeout
        self.status = 0
        self.headers: dict[str, str] = {}
        self.received = False  # any byte of the response arrived
        self._header_list: list[tuple[bytes, bytes]] = []
        self._header_waiter: asyncio.Future[None] | None = None
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._done = False
        self._error: BaseException | None = None
        self._decoder: zlib._Decompress | None = None
        self._released = False
        self._deadline: asyncio.TimerHandle | None = None

    @property
    def complete(self) -> bool:
        return self._done and self._error is None

    async def wait_headers(self, timeout: float) -> None:
        if self.status or self._error is not None:
            self._raise_if_failed()
            return
        loop = self._conn.loop
        waiter = self._header_waiter = loop.create_future()
        timer = loop.call_later(timeout, _expire, waiter, "first byte")
        try:
            await waiter
        finally:
            timer.cancel()
            self._header_waiter = None

    async def wait_body(self, timeout: float) -> None:
        """Return once a piece of the body is waiting or the body ended (raising its
        error); TimeoutError when neither happened within `timeout`. Takes nothing."""
        if self._chunks or self._done:
            self._raise_if_failed()
            return
        loop = self._conn.loop
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(timeout, _expire, waiter, "first byte")
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    async def next_chunk(self) -> bytes:
        """The next piece of the body as it arrived, or b"" at its end."""
        while True:
            chunks = self._chunks
            if chunks:
                chunk = chunks.popleft()
                self._buffered -= len(chunk)
                if self._buffered < LOW_WATER:
                    self._conn.resume()
                return chunk
            self._raise_if_failed()
            if self._done:
                return b""
            loop = self._conn.loop
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(self._idle_timeout, _expire, waiter, "idle")
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None

    async def next_chunks(self) -> list[bytes]:
        """Every piece of the body that has arrived (at least one: waits like
        `next_chunk`), or [] at its end. For consumers that re-encode what they get and
        gain nothing by taking pieces one at a time."""
        if not self._chunks:
            first = await self.next_chunk()
            if not first:
                return []
            if not self._chunks:
                return [first]
            taken = [first, *self._chunks]
        else:
            taken = list(self._chunks)
        self._chunks.clear()
        self._buffered = 0
        self._conn.resume()
        return taken

    async def read(self) -> bytes:
        """The whole (rest of the) body."""
        if self._done and self._error is None:  # the usual case: it came with the headers
            body = b"".join(self._chunks)
            self._chunks.clear()
            self._buffered = 0
            return body
        parts: list[bytes] = []
        while chunk := await self.next_chunk():
            parts.append(chunk)
        return b"".join(parts)

    def release(self) -> None:
        if not self._released:
            self._released = True
            if self._deadline is not None:
                self._deadline.cancel()
            self._conn.finished(self)

    def _total_expired(self) -> None:
        if not self._done:  # a complete response may still be waiting for its consumer
            self._fail(TotalTimeout("upstream total timeout"))
            self._conn.close()

    # -- fed by the connection ------------------------------------------------

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    def _wake(self, waiter: asyncio.Future[None] | None) -> None:
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _headers_complete(self, status: int) -> None:
        headers: dict[str, str] = {}
        for raw_name, raw_value in self._header_list:
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        self._header_list = []
        self.status, self.headers = status, headers
        encoding = headers.get("content-encoding", "").strip().lower()
        if encoding in ("gzip", "x-gzip"):
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib or gzip header
        self._wake(self._header_waiter)

    def _body(self, data: bytes) -> None:
        if self._decoder is not None:
            try:
                data = self._decoder.decompress(data)
            except zlib.error as exc:
                self._fail(UpstreamProtocolError(f"undecodable body: {exc}"))
                return
            if not data:
                return
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered > HIGH_WATER:
            self._conn.pause()
        self._wake(self._waiter)

    def _finish(self) -> None:
        if self._decoder is not None:
            try:
                tail = self._decoder.flush()
            except zlib.error as exc:
                self._fail(UpstreamProtocolError(f"undecodable body: {exc}"))
                return
            if tail:
                self._chunks.append(tail)
                self._buffered += len(tail)
        self._done = True
        self._wake(self._waiter)

    def _fail(self, error: BaseException) -> None:
        if self._done:
            return
        self._done = True
        self._error = error
        for waiter in (self._header_waiter, self._waiter):
            if waiter is not None and not waiter.done():
                waiter.set_exception(error)


def _expire(waiter: asyncio.Future[None], what: str) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError(f"upstream {what} timeout"))


class Http1Connection(asyncio.Protocol):
    """Carries one request at a time; `on_free(conn)` is called when the connection can
    take the next request and `on_close(conn)` once it is gone."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        origin: Hashable,
        on_free: Callable[["Http1Connection"], None],
        on_close: Callable[["Http1Connection"], None],
    ) -> None:
        self.loop = loop
        self.origin = origin
        self.closed = False
        self.idle_since = 0.0
        self._on_free = on_free
        self._on_close = on_close
        self._transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._response: UpstreamResponse | None = None
        self._keep_alive = False
        self._until_close = False  # the body ends when the connection does
        self._paused = False

    # -- used by the pool -------------------------------------------------------

    def send(
        self, head: bytes, body: bytes, idle_timeout: float, total_timeout: float
    ) -> UpstreamResponse:
        assert self._response is None and self._transport is not None
        response = self._response = UpstreamResponse(self, idle_timeout)
        response._deadline = self.loop.call_later(total_timeout, response._total_expired)
        if len(body) <= 65536:
            self._transport.write(head + body)
        else:  # don't copy a large body just to save a write
            self._transport.write(head)
            self._transport.write(body)
        return response

    def close(self) -> None:
        if self._transport is not None and not self.closed:
            self.closed = True  # at once: the pool must not hand it out before it is gone
            self._transport.abort()

    def pause(self) -> None:
        if not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()

    def resume(self) -> None:
        if self._paused and self._transport is not None and not self.closed:
            self._paused = False
            self._transport.resume_reading()

    def finished(self, response: UpstreamResponse) -> None:
        """The consumer is done with `response`: keep the connection if it is clean."""
        if response is not self._response:
            return
        self._response = None
        if response.complete and self._keep_alive and not self.closed:
            self.idle_since = self.loop.time()
            self._on_free(self)
        else:
            self.close()

    # -- asyncio.Protocol ---------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's isn't a subclass

    def data_received(self, data: bytes) -> None:
        response = self._response
        if response is None or response._done:  # bytes nobody asked for: unusable
            self.close()
            return
        response.received = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            response._fail(UpstreamProtocolError(f"invalid HTTP response: {exc}"))
            self.close()

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        response = self._response
        if response is not None and not response._done:
            if self._until_close and response.status:
                response._finish()
            else:
                reason = f" ({exc})" if exc else ""
                response._fail(UpstreamConnectionError(f"connection closed{reason}"))
        self._on_close(self)

    # -- httptools callbacks ------------------------------------------------------

    def on_message_begin(self) -> None:
        response = self._response
        if response is None or response._done:  # a second answer to one request
            raise UpstreamProtocolError("unexpected data after the response")
        response._header_list = []

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._response is not None:
            self._response._header_list.append((name, value))

    def on_headers_complete(self) -> None:
        response = self._response
        status = self._parser.get_status_code()
        if response is None or 100 <= status < 200:  # informational: wait for the real one
            return
        self._keep_alive = self._parser.should_keep_alive()
        response._headers_complete(status)
        headers = response.headers
        self._until_close = (
            "content-length" not in headers
            and "transfer-encoding" not in headers
            and status not in (204, 304)
        )

    def on_body(self, body: bytes) -> None:
        if self._response is not None:
            self._response._body(body)

    def on_message_complete(self) -> None:
        response = self._response
        if response is not None and response.status:
            response._finish()
