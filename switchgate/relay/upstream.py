"""All network calls to upstreams go through here: one pooled keep-alive client,
deadlines on connect, first byte, idle gaps and the whole call."""

import asyncio
from collections.abc import AsyncIterator

import aiohttp

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import UpstreamRequest
from switchgate.settings import Timeouts


class UpstreamClient:
    def __init__(self, timeouts: Timeouts) -> None:
        self._timeouts = timeouts
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        connector = aiohttp.TCPConnector(
            limit=0, ttl_dns_cache=300, keepalive_timeout=75, enable_cleanup_closed=True
        )
        timeout = aiohttp.ClientTimeout(
            total=self._timeouts.total,
            sock_connect=self._timeouts.connect,
            sock_read=self._timeouts.idle,
        )
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=timeout, auto_decompress=True, trust_env=False
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def send(self, request: UpstreamRequest) -> aiohttp.ClientResponse:
        """Send and wait for the response headers (the first-byte deadline)."""
        assert self._session is not None, "UpstreamClient.start() was not called"
        try:
            async with asyncio.timeout(self._timeouts.first_byte):
                return await self._session.request(
                    request.method, request.url, headers=request.headers, data=request.body
                )
        except TimeoutError as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_TIMEOUT, "The upstream did not answer in time."
            ) from exc
        except aiohttp.ClientError as exc:
            raise GatewayError(
                ErrorKind.UPSTREAM_ERROR, f"Could not reach the upstream ({type(exc).__name__})."
            ) from exc

    async def ws_connect(
        self, url: str, headers: dict[str, str]
    ) -> aiohttp.ClientWebSocketResponse:
        """Open a WebSocket to an upstream (Realtime). The handshake has the first-byte
        deadline; the open socket has no idle deadline (sessions may be quiet for long)."""
        assert self._session is not None, "UpstreamClient.start() was not called"
        try:
            async with asyncio.timeout(self._timeouts.first_byte):
                return await self._session.ws_connect(
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


async def iter_body(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    """Chunks as they arrive; an upstream cut or idle timeout becomes a GatewayError."""
    try:
        async for chunk in response.content.iter_any():
            yield chunk
    except TimeoutError as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_TIMEOUT, "The upstream stopped sending (idle timeout)."
        ) from exc
    except aiohttp.ClientError as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, "The upstream connection was interrupted."
        ) from exc


async def read_all(response: aiohttp.ClientResponse) -> bytes:
    try:
        return await response.read()
    except TimeoutError as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_TIMEOUT, "The upstream did not finish in time."
        ) from exc
    except aiohttp.ClientError as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, "The upstream connection was interrupted."
        ) from exc
