"""Small, fast ASGI helpers for the relay's hot path (no framework objects per request)."""

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from switchgate.errors import ErrorKind, GatewayError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class ClientGone(Exception):
    """The client disconnected."""


def header_map(scope: Scope) -> dict[str, str]:
    """Request headers, names lower-cased (ASGI already does), values decoded as latin-1."""
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}


def client_ip(scope: Scope) -> str | None:
    client = scope.get("client")
    return client[0] if client else None


async def read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone()
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise GatewayError(
                    ErrorKind.REQUEST_TOO_LARGE,
                    f"Request body is larger than the limit of {limit} bytes.",
                )
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class Responder:
    """Sends one HTTP response, whole or streamed; remembers whether bytes went out."""

    __slots__ = ("_send", "request_id", "started", "status")

    def __init__(self, send: Send, request_id: str) -> None:
        self._send = send
        self.request_id = request_id
        self.started = False
        self.status = 0

    async def start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        self.started = True
        self.status = status
        await self._send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [*headers, (b"x-request-id", self.request_id.encode())],
            }
        )

    async def chunk(self, data: bytes) -> None:
        try:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})
        except OSError as exc:
            raise ClientGone() from exc

    async def end(self, data: bytes = b"") -> None:
        try:
            await self._send({"type": "http.response.body", "body": data, "more_body": False})
        except OSError as exc:
            raise ClientGone() from exc

    async def whole(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        await self.start(status, [*headers, (b"content-length", str(len(body)).encode())])
        await self.end(body)
