"""The relay's own HTTP/1.1 client (`relay/http1.py`, `relay/http_pool.py`, and the
GatewayError mapping in `relay/upstream.py`) against a scripted raw-socket server, on
both event loops the gateway can run on (asyncio's and uvloop's)."""

import asyncio
import datetime
import gzip
import ipaddress
import ssl
import zlib
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import uvloop
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import UpstreamRequest
from switchgate.relay.http1 import HIGH_WATER, UpstreamConnectionError
from switchgate.relay.http_pool import ConnectionPool, HeaderInjection, parse_url, request_head
from switchgate.relay.upstream import UpstreamClient, iter_batches, iter_body, read_all
from switchgate.settings import Timeouts

LOOPS = ["asyncio", "uvloop"]


def run(loop_kind: str, coro: Coroutine[Any, Any, None]) -> None:
    factory = uvloop.new_event_loop if loop_kind == "uvloop" else asyncio.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(asyncio.wait_for(coro, 20))


@dataclass
class Seen:
    heads: list[bytes] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    connections: int = 0


Script = Callable[[asyncio.StreamWriter, int], Awaitable[None]]


async def serve(script: Script, tls: ssl.SSLContext | None = None) -> tuple[str, Seen, Any]:
    """A server that reads each request on a connection and answers it with
    `script(writer, n)` (n: the request's index on that connection)."""
    seen = Seen()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.connections += 1
        n = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                seen.heads.append(head)
                seen.bodies.append(await reader.readexactly(length))
                await script(writer, n)
                n += 1
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    scheme = "https" if tls else "http"
    return f"{scheme}://127.0.0.1:{port}/v1/chat?x=1", seen, server


def fixed(body: bytes, extra: bytes = b"") -> Script:
    async def script(writer: asyncio.StreamWriter, n: int) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            + extra
            + b"content-length: %d\r\n\r\n" % len(body)
            + body
        )
        await writer.drain()

    return script


def client(**timeouts: float) -> UpstreamClient:
    return UpstreamClient(Timeouts(**timeouts))


def post(url: str, body: bytes = b'{"a":1}', **headers: str) -> UpstreamRequest:
    return UpstreamRequest("POST", url, {"content-type": "application/json", **headers}, body)


async def fetch(c: UpstreamClient, request: UpstreamRequest) -> tuple[int, bytes]:
    response = await c.send(request)
    try:
        return response.status, await read_all(response)
    finally:
        response.release()


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_content_length_keep_alive_and_request_bytes(loop_kind: str) -> None:
    async def main() -> None:
        url, seen, server = await serve(fixed(b'{"ok":true}', b"x-thing: a\r\nX-Thing: b\r\n"))
        c = client()
        await c.start()
        for _ in range(3):
            response = await c.send(post(url, authorization="Bearer k"))
            assert response.status == 200
            assert response.headers["x-thing"] == "a, b"
            assert await read_all(response) == b'{"ok":true}'
            response.release()
        assert seen.connections == 1  # reused
        head = seen.heads[0].decode()
        assert head.startswith("POST /v1/chat?x=1 HTTP/1.1\r\n")
        assert f"host: {url.split('/')[2]}\r\n" in head
        assert "authorization: Bearer k\r\n" in head and "content-length: 7\r\n" in head
        assert "user-agent: switchgate/" in head
        assert seen.bodies == [b'{"a":1}'] * 3
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_chunked_body_arrives_chunk_by_chunk(loop_kind: str) -> None:
    async def main() -> None:
        go = asyncio.Event()

        async def script(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            writer.write(b"5\r\nfirst\r\n")
            await writer.drain()
            await go.wait()  # the client must see "first" before "second" is sent
            writer.write(b"6\r\nsecond\r\n0\r\n\r\n")
            await writer.drain()

        url, seen, server = await serve(script)
        c = client()
        await c.start()
        response = await c.send(post(url))
        chunks = []
        async for chunk in iter_body(response):
            chunks.append(chunk)
            go.set()
        response.release()
        assert chunks == [b"first", b"second"]
        assert await fetch(c, post(url)) == (200, b"firstsecond")
        assert seen.connections == 1
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_body_until_close_and_connection_close_not_reused(loop_kind: str) -> None:
    async def main() -> None:
        async def script(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of it")
            await writer.drain()
            writer.close()

        url, seen, server = await serve(script)
        c = client()
        await c.start()
        assert await fetch(c, post(url)) == (200, b"all of it")
        assert await fetch(c, post(url)) == (200, b"all of it")
        assert seen.connections == 2
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_gzip_and_deflate_bodies_are_decoded(loop_kind: str) -> None:
    payload = b'{"text":"' + b"hello " * 2000 + b'"}'

    async def main() -> None:
        async def script(writer: asyncio.StreamWriter, n: int) -> None:
            if n == 0:
                encoded, name = gzip.compress(payload), b"gzip"
            else:
                encoded, name = zlib.compress(payload), b"deflate"
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-encoding: %s\r\ncontent-length: %d\r\n\r\n"
                % (name, len(encoded))
            )
            for i in range(0, len(encoded), 7):  # split everywhere
                writer.write(encoded[i : i + 7])
            await writer.drain()

        url, seen, server = await serve(script)
        c = client()
        await c.start()
        assert await fetch(c, post(url)) == (200, payload)
        assert await fetch(c, post(url)) == (200, payload)
        assert b"accept-encoding: gzip, deflate" in seen.heads[0]
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_informational_response_is_skipped(loop_kind: str) -> None:
    async def main() -> None:
        async def script(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n")
            writer.write(b"HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()

        url, _, server = await serve(script)
        c = client()
        await c.start()
        response = await c.send(post(url))
        assert response.status == 201 and "link" not in response.headers
        assert await read_all(response) == b"ok"
        response.release()
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_server_closing_an_idle_connection_is_noticed(loop_kind: str) -> None:
    async def main() -> None:
        async def script(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
            await asyncio.sleep(0.05)
            writer.close()  # a keep-alive timeout on the server's side

        url, seen, server = await serve(script)
        c = client()
        await c.start()
        assert await fetch(c, post(url)) == (200, b"ok")
        await asyncio.sleep(0.2)
        assert await fetch(c, post(url)) == (200, b"ok")  # a new connection, no error
        assert seen.connections == 2
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_errors_become_gateway_errors(loop_kind: str) -> None:
    async def main() -> None:
        async def silent(writer: asyncio.StreamWriter, n: int) -> None:
            await asyncio.sleep(5)

        async def stalls(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n")
            await writer.drain()
            await asyncio.sleep(5)

        async def cut(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
            await writer.drain()
            writer.close()

        async def garbage(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"NOT HTTP AT ALL\r\n\r\n")
            await writer.drain()

        c = client(first_byte=0.2, idle=0.2, connect=1.0)
        await c.start()
        url, _, s1 = await serve(silent)
        with pytest.raises(GatewayError) as err:
            await c.send(post(url))
        assert err.value.kind == ErrorKind.UPSTREAM_TIMEOUT

        url, _, s2 = await serve(stalls)
        response = await c.send(post(url))
        with pytest.raises(GatewayError) as err:
            async for _ in iter_body(response):
                pass
        assert err.value.kind == ErrorKind.UPSTREAM_TIMEOUT
        assert "idle" in err.value.message
        response.release()

        url, _, s3 = await serve(cut)
        response = await c.send(post(url))
        with pytest.raises(GatewayError) as err:
            await read_all(response)
        assert err.value.kind == ErrorKind.UPSTREAM_ERROR
        response.release()

        url, _, s4 = await serve(garbage)
        with pytest.raises(GatewayError) as err:
            await c.send(post(url))
        assert err.value.kind == ErrorKind.UPSTREAM_ERROR

        s4.close()
        await s4.wait_closed()
        with pytest.raises(GatewayError) as err:  # connection refused
            await c.send(post(url))
        assert err.value.kind == ErrorKind.UPSTREAM_ERROR
        assert "127.0.0.1" not in err.value.message

        with pytest.raises(GatewayError) as err:
            await c.send(post(url, **{"anthropic-beta": "x\r\nevil: 1"}))
        assert err.value.kind == ErrorKind.INVALID_REQUEST

        with pytest.raises(GatewayError) as err:
            await c.send(post("ftp://example.com/x"))
        assert err.value.kind == ErrorKind.UPSTREAM_ERROR
        await c.close()
        for s in (s1, s2, s3):
            s.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_total_deadline_covers_the_body(loop_kind: str) -> None:
    async def main() -> None:
        async def trickle(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            for _ in range(100):
                writer.write(b"1\r\nx\r\n")
                await writer.drain()
                await asyncio.sleep(0.02)

        url, _, server = await serve(trickle)
        c = client(idle=1.0, total=0.3)
        await c.start()
        response = await c.send(post(url))
        with pytest.raises(GatewayError) as err:
            await read_all(response)
        assert err.value.kind == ErrorKind.UPSTREAM_TIMEOUT
        assert "time limit" in err.value.message
        response.release()
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_slow_consumer_pauses_reading_and_loses_nothing(loop_kind: str) -> None:
    size = HIGH_WATER * 3

    async def main() -> None:
        async def big(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size)
            block = bytes(range(256)) * 256
            for _ in range(size // len(block)):
                writer.write(block)
                await writer.drain()

        url, _, server = await serve(big)
        c = client()
        await c.start()
        response = await c.send(post(url))
        await asyncio.sleep(0.3)  # let it fill the buffer: reading must be paused
        assert response._buffered <= HIGH_WATER + (1 << 18)
        total, digest = 0, 0
        async for chunk in iter_body(response):
            total += len(chunk)
            digest = zlib.crc32(chunk, digest)
        response.release()
        assert total == size
        assert digest == zlib.crc32((bytes(range(256)) * 256) * (size // 65536))
        assert await fetch(c, post(url)) == (200, (bytes(range(256)) * 256) * (size // 65536))
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_abandoned_response_closes_its_connection(loop_kind: str) -> None:
    async def main() -> None:
        async def endless(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n")
            await writer.drain()
            await asyncio.sleep(0.3)
            writer.write(b"0\r\n\r\n")

        url, seen, server = await serve(endless)
        c = client()
        await c.start()
        response = await c.send(post(url))
        assert await response.next_chunk() == b"hi"
        response.release()  # a client went away mid-stream
        assert await fetch(c, post(url)) == (200, b"hi")
        assert seen.connections == 2
        await c.close()
        server.close()

    run(loop_kind, main())


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_https_verifies_the_certificate(loop_kind: str, tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)

    async def main() -> None:
        url, _, server = await serve(fixed(b"secure"), tls=server_tls)
        untrusting = ConnectionPool(connect_timeout=2.0)
        with pytest.raises(UpstreamConnectionError):
            await untrusting.request(
                "POST", url, {}, b"", first_byte_timeout=2, idle_timeout=2, total_timeout=5
            )
        trusting = ConnectionPool(connect_timeout=2.0, tls=ssl.create_default_context(cafile=cert))
        for _ in range(2):
            response = await trusting.request(
                "POST", url, {}, b"x", first_byte_timeout=2, idle_timeout=2, total_timeout=5
            )
            assert (response.status, await response.read()) == (200, b"secure")
            response.release()
        assert trusting.open_connections == 1
        await trusting.close()
        await untrusting.close()
        server.close()

    run(loop_kind, main())


def test_request_head_and_url_parsing() -> None:
    url = parse_url("http://user:pw@Example.com:8080/a/b?c=d&e=f")
    assert (url.origin.scheme, url.origin.host, url.origin.port) == ("http", "example.com", 8080)
    assert url.target == "/a/b?c=d&e=f" and url.host_header == "Example.com:8080"
    assert parse_url("https://api.openai.com").target == "/"
    assert parse_url("https://api.openai.com").origin.port == 443
    head = request_head("POST", url, {"Host": "evil", "X-A": "1"}, 3)
    assert head == (
        b"POST /a/b?c=d&e=f HTTP/1.1\r\nhost: Example.com:8080\r\nX-A: 1\r\n"
        b"user-agent: switchgate/0.1.0\r\naccept-encoding: gzip, deflate\r\n"
        b"content-length: 3\r\n\r\n"
    ).replace(b"0.1.0", __import__("switchgate").__version__.encode())
    for bad in ({"x": "a\nb"}, {"x\r": "a"}, {"x:y": "a"}, {"x": "caf\u20ac"}):
        with pytest.raises(HeaderInjection):
            request_head("GET", url, bad, 0)


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_extra_bytes_after_a_response_retire_the_connection(loop_kind: str) -> None:
    async def main() -> None:
        async def chatty(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nextra")
            await writer.drain()

        url, seen, server = await serve(chatty)
        c = client()
        await c.start()
        assert await fetch(c, post(url)) == (200, b"ok")
        assert await fetch(c, post(url)) == (200, b"ok")
        assert seen.connections == 2  # the first connection was not reused
        await c.close()
        server.close()

    run(loop_kind, main())


@pytest.mark.parametrize("loop_kind", LOOPS)
def test_next_chunks_hands_over_everything_that_arrived(loop_kind: str) -> None:
    async def main() -> None:
        go = asyncio.Event()

        async def burst(writer: asyncio.StreamWriter, n: int) -> None:
            writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
            writer.write(b"1\r\na\r\n1\r\nb\r\n1\r\nc\r\n")  # three chunks in one write
            await writer.drain()
            await go.wait()
            writer.write(b"1\r\nd\r\n0\r\n\r\n")
            await writer.drain()

        url, _, server = await serve(burst)
        c = client()
        await c.start()
        response = await c.send(post(url))
        batches = []
        async for chunks in iter_batches(response):
            batches.append(chunks)
            go.set()
        response.release()
        assert batches == [[b"a", b"b", b"c"], [b"d"]]
        await c.close()
        server.close()

    run(loop_kind, main())
