"""Who may read /metrics, and the optional separate metrics listener.

- `SWITCHGATE_METRICS_TOKEN`: scrapers send `Authorization: Bearer <token>`.
- `SWITCHGATE_METRICS_ADDRESS=HOST:PORT`: /metrics is served there only (its own socket,
  e.g. an internal interface), and the public port answers 404 for it. Every worker binds
  the address with SO_REUSEPORT; in multi-process mode any of them returns the sum.
- Neither: only loopback clients may read it on the public port.
A token, when set, is required on either listener.
"""

import asyncio
import hmac
import logging
from typing import TYPE_CHECKING

from switchgate.settings import Settings

if TYPE_CHECKING:
    from switchgate.observability.metrics import Metrics

log = logging.getLogger("switchgate.metrics")
CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
LOOPBACK = frozenset(("127.0.0.1", "::1"))


def token_ok(settings: Settings, authorization: str | None) -> bool:
    token = settings.metrics_token
    if token is None:
        return True
    return authorization is not None and hmac.compare_digest(
        authorization.encode(), f"Bearer {token}".encode()
    )


def allowed_on_main_port(settings: Settings, authorization: str | None, client: str | None) -> bool:
    if settings.metrics_address:
        return False  # served on its own address only
    if settings.metrics_token is not None:
        return token_ok(settings, authorization)
    return client in LOOPBACK


def split_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"SWITCHGATE_METRICS_ADDRESS must be HOST:PORT, got {address!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


async def start_listener(settings: Settings, metrics: "Metrics") -> asyncio.Server | None:
    if not settings.metrics_address:
        return None
    host, port = split_address(settings.metrics_address)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
            status, body = _answer(settings, metrics, head)
            writer.write(
                b"HTTP/1.1 " + status + b"\r\ncontent-type: " + CONTENT_TYPE
                + b"\r\ncontent-length: " + str(len(body)).encode()
                + b"\r\nconnection: close\r\n\r\n" + body
            )  # fmt: skip
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, host, port, reuse_port=True)
    log.info("metrics on http://%s:%d/metrics", host, port)
    return server


def _answer(settings: Settings, metrics: "Metrics", head: bytes) -> tuple[bytes, bytes]:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 2 or parts[0] != "GET" or parts[1].split("?")[0] != "/metrics":
        return b"404 Not Found", b"not found\n"
    authorization = None
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "authorization":
            authorization = value.strip()
    if not token_ok(settings, authorization):
        return b"403 Forbidden", b"forbidden\n"
    return b"200 OK", metrics.render()
