"""All network calls to upstreams go through here: pooled keep-alive HTTP/1.1
connections (`http_pool.py`), deadlines on connect, first byte, idle gaps and the whole
call, and every failure turned into a GatewayError. WebSockets (Realtime) use aiohttp,
imported only when a Realtime session first opens."""

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import UpstreamRequest
from switchgate.relay.http1 import TotalTimeout, UpstreamConnectionError, UpstreamResponse
from switchgate.relay.http_pool import BadUpstreamURL, ConnectionPool, HeaderInjection
from switchgate.settings import Timeouts

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "UpstreamClient",
    "UpstreamResponse",
    "iter_batches",
    "iter_body",
    "read_all",
    "wait_body",
]


class UpstreamClient:
    def __init__(self, timeouts: Timeouts) -> None:
        self._timeouts = timeouts
        self._pool: ConnectionPool | None = None
        self._ws_session: aiohttp.ClientSession | None = None
        # Tracing on: `traceparent` and `x-request-id` for every call (observability/tracing.py)
        self.trace_headers: Callable[[], dict[str, str] | None] | None = None

    async def start(self) -> None:
        self._pool = ConnectionPool(self._timeouts.connect)

    @property
    def open_connections(self) -> int:
        return self._pool.open_connections if self._pool is not None else 0

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        if self._ws_session is not None:
            await self._ws_session.close()
            self._ws_session = None

    async def send(
        self, request: UpstreamRequest, limits: tuple[float, float, float, float] | None = None
    ) -> UpstreamResponse:
        """Send and wait for the response headers (the first-byte deadline, which also
        covers connecting). The whole call, body included, has the total deadline.
        `limits` is (connect, first byte, idle, total), e.g. a channel's for a stream;
        default: the non-streamed limits from the settings."""
        assert self._pool is not None, "UpstreamClient.start() was not called"
        connect, first_byte, idle, total = limits or self._timeouts.for_call(False)
        headers = request.headers
        if self.trace_headers is not None and (traced := self.trace_headers()):
            headers = {**headers, **traced}
        try:
            response = await self._pool.request(
                request.method,
                request.url,
                headers,
                request.body,
                first_byte_timeout=first_byte,
                idle_timeout=idle,
                total_timeout=total,
                connect_timeout=connect,
            )
        except TimeoutError as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_TIMEOUT, "The upstream did not answer in time."
            ) from exc
        except UpstreamConnectionError as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_ERROR, f"Could not reach the upstream ({exc})."
            ) from exc
        except BadUpstreamURL as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_ERROR, "The channel's base URL is not a valid http(s) URL."
            ) from exc
        except HeaderInjection as exc:
            raise GatewayError(
                ErrorKind.INVALID_REQUEST, "A forwarded header contains a line break."
            ) from exc
        return response

    async def ws_connect(
        self, url: str, headers: dict[str, str]
    ) -> "aiohttp.ClientWebSocketResponse":
        """Open a WebSocket to an upstream (Realtime). The handshake has the first-byte
        deadline; the open socket has no idle deadline (sessions may be quiet for long)."""
        import aiohttp

        if self._ws_session is None:
            self._ws_session = aiohttp.ClientSession(trust_env=False)
        try:
            async with asyncio.timeout(self._timeouts.first_byte):
                return await self._ws_session.ws_connect(
                    url,
                    headers=headers,
                    max_msg_size=0,
                    timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=10.0),
                )
        except TimeoutError as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_TIMEOUT, "The upstream did not answer in time."
            ) from exc
        except aiohttp.WSServerHandshakeError as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_ERROR,
                f"The upstream refused the WebSocket connection (status {exc.status}).",
                upstream_status=exc.status,
            ) from exc
        except aiohttp.ClientError as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_ERROR, f"Could not reach the upstream ({type(exc).__name__})."
            ) from exc


def _body_error(exc: Exception, timeout_message: str) -> GatewayError:
    if isinstance(exc, TotalTimeout):
        return GatewayError(
            ErrorKind.UPSTREAM_TIMEOUT, "The upstream did not finish within the time limit."
        )
    if isinstance(exc, TimeoutError):
        return GatewayError(ErrorKind.UPSTREAM_TIMEOUT, timeout_message)
    return GatewayError(ErrorKind.UPSTREAM_ERROR, "The upstream connection was interrupted.")


async def iter_body(response: UpstreamResponse) -> AsyncIterator[bytes]:
    """Chunks as they arrive; an upstream cut or idle timeout becomes a GatewayError."""
    while True:
        try:
            chunk = await response.next_chunk()
        except (TimeoutError, UpstreamConnectionError) as exc:
            raise _body_error(exc, "The upstream stopped sending (idle timeout).") from exc
        if not chunk:
            return
        yield chunk


async def iter_batches(response: UpstreamResponse) -> AsyncIterator[list[bytes]]:
    """Like iter_body, but everything that has arrived at once: a burst of events read in
    one go is handed over together (and can be answered with one write)."""
    while True:
        try:
            chunks = await response.next_chunks()
        except (TimeoutError, UpstreamConnectionError) as exc:
            raise _body_error(exc, "The upstream stopped sending (idle timeout).") from exc
        if not chunks:
            return
        yield chunks


async def wait_body(response: UpstreamResponse, timeout: float) -> None:
    """Wait until the first piece of the body arrived (or the body ended) without taking
    it: a stream that sends headers and then nothing can still fail over."""
    try:
        await response.wait_body(timeout)
    except (TimeoutError, UpstreamConnectionError) as exc:
        raise _body_error(exc, "The upstream did not start its answer in time.") from exc


async def read_all(response: UpstreamResponse) -> bytes:
    try:
        return await response.read()
    except (TimeoutError, UpstreamConnectionError) as exc:
        raise _body_error(exc, "The upstream did not finish in time.") from exc
