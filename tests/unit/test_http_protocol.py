"""The server protocol sends a response's head with its body in one write
(switchgate/cli/http_protocol.py), without holding back anything else."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest
import uvicorn
import uvloop
from uvicorn.config import Config
from uvicorn.server import ServerState

from switchgate.cli.http_protocol import HeadJoiningHttpToolsProtocol

LOOPS = ["asyncio", "uvloop"]
App = Callable[[Any, Any, Any], Awaitable[None]]


def run(loop_kind: str, coro: Coroutine[Any, Any, None]) -> None:
    factory = uvloop.new_event_loop if loop_kind == "uvloop" else asyncio.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(asyncio.wait_for(coro, 20))


class RecordingTransport(asyncio.Transport):
    """Each write or writelines call is one entry: what one system call would send."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def writelines(self, list_of_data: Any) -> None:
        self.writes.append(b"".join(list_of_data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def connect(app: App) -> tuple[HeadJoiningHttpToolsProtocol, RecordingTransport]:
    config = Config(app=app, lifespan="off", log_level="warning")
    config.load()
    protocol = HeadJoiningHttpToolsProtocol(config=config, server_state=ServerState(), app_state={})
    transport = RecordingTransport()
    protocol.connection_made(transport)
    return protocol, transport


def whole(body: bytes) -> App:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return app


def streamed(chunks: list[bytes], pause_before: set[int]) -> App:
    """Sends the head, then each chunk; sleeps 10 ms before the chunks in pause_before."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, chunk in enumerate(chunks):
            if i in pause_before:
                await asyncio.sleep(0.01)
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


GET = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_a_whole_response_goes_out_in_one_write(loop_kind: str) -> None:
    async def main() -> None:
        protocol, transport = connect(whole(b"hello"))
        protocol.data_received(GET)
        await asyncio.sleep(0.02)
        assert len(transport.writes) == 1
        head, body = transport.writes[0].split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n")
        assert b"content-length: 5" in head
        assert body == b"hello"

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_every_response_on_a_keep_alive_connection_is_joined(loop_kind: str) -> None:
    async def main() -> None:
        protocol, transport = connect(whole(b"ok"))
        for _ in range(3):
            protocol.data_received(GET)
            await asyncio.sleep(0.01)
        assert len(transport.writes) == 3
        assert all(w.startswith(b"HTTP/1.1 200") and w.endswith(b"ok") for w in transport.writes)

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_a_head_is_not_held_while_the_app_waits_for_its_first_chunk(loop_kind: str) -> None:
    async def main() -> None:
        protocol, transport = connect(streamed([b"data: 1\n\n", b"data: 2\n\n"], {0, 1}))
        protocol.data_received(GET)
        await asyncio.sleep(0.005)  # the app is sleeping before its first chunk
        assert len(transport.writes) == 1
        assert transport.writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
        assert transport.writes[0].endswith(b"\r\n\r\n")
        await asyncio.sleep(0.05)
        # then one write per chunk, and the terminating chunk: nothing coalesced
        assert transport.writes[1:] == [
            b"9\r\ndata: 1\n\n\r\n",
            b"9\r\ndata: 2\n\n\r\n",
            b"0\r\n\r\n",
        ]

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_only_the_head_joins_a_chunk_the_rest_stay_one_write_each(loop_kind: str) -> None:
    async def main() -> None:
        chunks = [b"a", b"b", b"c"]
        protocol, transport = connect(streamed(chunks, pause_before=set()))
        protocol.data_received(GET)
        await asyncio.sleep(0.02)
        assert len(transport.writes) == 4
        assert transport.writes[0].endswith(b"\r\n\r\n1\r\na\r\n")
        assert transport.writes[1:] == [b"1\r\nb\r\n", b"1\r\nc\r\n", b"0\r\n\r\n"]

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_a_closing_connection_gets_its_response_first(loop_kind: str) -> None:
    async def main() -> None:
        protocol, transport = connect(whole(b"bye"))
        protocol.data_received(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        await asyncio.sleep(0.02)
        assert transport.closed
        assert b"".join(transport.writes).endswith(b"\r\n\r\nbye")

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_a_malformed_request_gets_400_and_is_closed(loop_kind: str) -> None:
    async def main() -> None:
        protocol, transport = connect(whole(b"never"))
        protocol.data_received(b"NOT HTTP\r\n\r\n")
        await asyncio.sleep(0.01)
        assert transport.closed
        assert b"".join(transport.writes).startswith(b"HTTP/1.1 400")

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_over_a_real_socket_whole_and_streamed(loop_kind: str) -> None:
    """The protocol under a real uvicorn server: responses arrive complete and in order."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/stream":
            await streamed([b"x" * 10, b"y" * 70_000], {1})(scope, receive, send)
        else:
            await whole(b"z" * 200_000)(scope, receive, send)

    async def main() -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen()  # connections wait in the backlog until the server accepts
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            app, http=HeadJoiningHttpToolsProtocol, lifespan="off", log_level="warning"
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve(sockets=[sock]))
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"GET /whole HTTP/1.1\r\nHost: x\r\n\r\nGET /stream HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"content-length: 200000" in head
        assert await reader.readexactly(200_000) == b"z" * 200_000
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"transfer-encoding: chunked" in head
        expected = b"a\r\n" + b"x" * 10 + b"\r\n11170\r\n" + b"y" * 70_000 + b"\r\n0\r\n\r\n"
        assert await reader.readexactly(len(expected)) == expected
        writer.close()
        server.should_exit = True
        await task

    run(loop_kind, main())
