"""Keep-alive connections to upstreams, pooled per origin, and the request line and
headers written on them. See `http1.py` for the connection itself."""

import asyncio
import os
import ssl
from collections.abc import Hashable
from dataclasses import dataclass
from urllib.parse import urlsplit

from switchgate import __version__
from switchgate.relay.http1 import Http1Connection, UpstreamConnectionError, UpstreamResponse

USER_AGENT = f"switchgate/{__version__}"
_URL_CACHE_SIZE = 4096


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str
    port: int


@dataclass(frozen=True, slots=True)
class ParsedURL:
    origin: Origin
    target: str  # path and query, as written on the request line
    host_header: str


class BadUpstreamURL(ValueError):
    pass


def parse_url(url: str) -> ParsedURL:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadUpstreamURL(f"not an http(s) URL: {parts.scheme}://{parts.hostname or ''}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise BadUpstreamURL(str(exc)) from exc
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    host_header = parts.netloc.rpartition("@")[2]
    return ParsedURL(Origin(parts.scheme, parts.hostname, port), target, host_header)


class HeaderInjection(ValueError):
    pass


def request_head(
    method: str, url: ParsedURL, headers: dict[str, str], content_length: int
) -> bytes:
    """The request line and headers. Names and values must not break lines."""
    lines = [f"{method} {url.target} HTTP/1.1", f"host: {url.host_header}"]
    lowered = set()
    for name, value in headers.items():
        if "\n" in value or "\r" in value or "\n" in name or "\r" in name or ":" in name:
            raise HeaderInjection(f"header {name!r} contains a line break or colon")
        lower = name.lower()
        if lower == "host":
            continue
        lowered.add(lower)
        lines.append(f"{name}: {value}")
    if "user-agent" not in lowered:
        lines.append(f"user-agent: {USER_AGENT}")
    if "accept-encoding" not in lowered:
        lines.append("accept-encoding: gzip, deflate")
    lines.append(f"content-length: {content_length}")
    lines.append("\r\n")
    try:
        return "\r\n".join(lines).encode("latin-1")
    except UnicodeEncodeError as exc:
        raise HeaderInjection("a header is not Latin-1 text") from exc


class ConnectionPool:
    """Idle keep-alive connections per origin, most recently used first."""

    def __init__(
        self,
        connect_timeout: float,
        keepalive_seconds: float = 60.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._connect_timeout = connect_timeout
        self._keepalive = keepalive_seconds
        self._idle: dict[Hashable, list[Http1Connection]] = {}
        self._all: set[Http1Connection] = set()
        self._urls: dict[str, ParsedURL] = {}
        self._tls = tls  # default: the system's trust store, created when first needed

    def parse(self, url: str) -> ParsedURL:
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = parse_url(url)
            if len(self._urls) >= _URL_CACHE_SIZE:
                self._urls.clear()
            self._urls[url] = parsed
        return parsed

    async def request(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes,
        *,
        first_byte_timeout: float,
        idle_timeout: float,
        total_timeout: float,
        connect_timeout: float | None = None,
    ) -> UpstreamResponse:
        """Send one request and wait for the response's status and headers."""
        parsed = self.parse(url)
        head = request_head(method, parsed, headers, len(body))
        conn = await self._acquire(parsed.origin, connect_timeout)
        response = conn.send(head, body, idle_timeout, total_timeout)
        try:
            await response.wait_headers(first_byte_timeout)
        except BaseException:
            response.release()
            raise
        return response

    async def close(self) -> None:
        for conn in list(self._all):
            conn.close()
        self._idle.clear()
        self._all.clear()
        await asyncio.sleep(0)  # let the transports finish closing

    @property
    def open_connections(self) -> int:
        return len(self._all)

    async def _acquire(self, origin: Origin, connect_timeout: float | None) -> Http1Connection:
        idle = self._idle.get(origin)
        if idle:
            now = asyncio.get_running_loop().time()
            while idle:
                conn = idle.pop()
                if conn.closed:
                    continue
                if now - conn.idle_since > self._keepalive:
                    conn.close()
                    continue
                return conn
        return await self._connect(origin, connect_timeout or self._connect_timeout)

    async def _connect(self, origin: Origin, connect_timeout: float) -> Http1Connection:
        loop = asyncio.get_running_loop()
        tls = self._tls_context() if origin.scheme == "https" else None

        def factory() -> Http1Connection:
            return Http1Connection(loop, origin, self._free, self._closed)

        try:
            async with asyncio.timeout(connect_timeout):
                _, conn = await loop.create_connection(
                    factory,
                    origin.host,
                    origin.port,
                    ssl=tls,
                    server_hostname=origin.host if tls else None,
                )
        except OSError as exc:
            raise UpstreamConnectionError(
                f"connect failed: {os.strerror(exc.errno) if exc.errno else type(exc).__name__}"
            ) from exc
        except ssl.SSLError as exc:
            raise UpstreamConnectionError(f"TLS failed: {exc.reason}") from exc
        self._all.add(conn)
        return conn

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
        return self._tls

    def _free(self, conn: Http1Connection) -> None:
        self._idle.setdefault(conn.origin, []).append(conn)

    def _closed(self, conn: Http1Connection) -> None:
        self._all.discard(conn)
        idle = self._idle.get(conn.origin)
        if idle and conn in idle:
            idle.remove(conn)
