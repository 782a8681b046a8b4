"""A minimal, fast fake upstream for benchmarks (raw asyncio protocol on uvloop).

Speaks just enough HTTP/1.1 (keep-alive, Content-Length or chunked request bodies) to
answer OpenAI `.../chat/completions` and Anthropic `.../v1/messages`, whole or streamed,
from responses encoded once at start-up. Its behaviour is chosen by an optional path
prefix, so one server can back every model of a benchmark:

    /u/<latency_ms>/<chunks>/<pace_ms>/v1/chat/completions

`latency_ms` delays the response headers, `chunks` is the number of content chunks a
stream carries (then a usage chunk and `[DONE]` for OpenAI), `pace_ms` is the gap between
stream chunks (0: the whole stream goes out in one write). Without a prefix: 0/20/0.

    python -m bench.upstream --port 9100
"""

import argparse
import asyncio
import json
from functools import lru_cache
from typing import Any, cast

OPENAI_TEXT = "Hello from the bench upstream, one token at a time."
MODEL = "bench-model"
USAGE_IN, USAGE_OUT = 12, 20


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _whole(body: bytes) -> bytes:
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    return head + body


STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
CHUNKED_END = b"0\r\n\r\n"


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def openai_whole() -> bytes:
    return _whole(
        _dumps(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 1700000000,
                "model": MODEL,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": OPENAI_TEXT},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": USAGE_IN,
                    "completion_tokens": USAGE_OUT,
                    "total_tokens": USAGE_IN + USAGE_OUT,
                },
            }
        )
    )


def openai_events(chunks: int) -> list[bytes]:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1700000000}
    events = []
    for i in range(chunks):
        delta: dict[str, Any] = {"content": f"tok{i} "}
        if i == 0:
            delta["role"] = "assistant"
        last = i == chunks - 1
        choice = {"index": 0, "delta": delta, "finish_reason": "stop" if last else None}
        events.append({**base, "model": MODEL, "choices": [choice]})
    usage = {"prompt_tokens": USAGE_IN, "completion_tokens": chunks, "total_tokens": 12 + chunks}
    events.append({**base, "model": MODEL, "choices": [], "usage": usage})
    return [b"data: " + _dumps(e) + b"\n\n" for e in events] + [b"data: [DONE]\n\n"]


def anthropic_whole() -> bytes:
    return _whole(
        _dumps(
            {
                "id": "msg_bench",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [{"type": "text", "text": OPENAI_TEXT}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT},
            }
        )
    )


def anthropic_events(chunks: int) -> list[bytes]:
    def ev(name: str, data: dict[str, Any]) -> bytes:
        return b"event: " + name.encode() + b"\ndata: " + _dumps(data) + b"\n\n"

    message = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": USAGE_IN, "output_tokens": 1},
    }
    out = [
        ev("message_start", {"type": "message_start", "message": message}),
        ev(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    for i in range(chunks):
        delta = {"type": "text_delta", "text": f"tok{i} "}
        out.append(
            ev("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    out.append(ev("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(
        ev(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": chunks},
            },
        )
    )
    out.append(ev("message_stop", {"type": "message_stop"}))
    return out


@lru_cache(maxsize=64)
def response_parts(kind: str, stream: bool, chunks: int) -> tuple[bytes, ...]:
    """(headers+whole body,) or (stream head, chunk 1, ..., chunk end), HTTP-framed."""
    if not stream:
        return (openai_whole() if kind == "openai" else anthropic_whole(),)
    events = openai_events(chunks) if kind == "openai" else anthropic_events(chunks)
    return (STREAM_HEAD, *(_chunk(e) for e in events), CHUNKED_END)


@lru_cache(maxsize=64)
def _joined(parts: tuple[bytes, ...]) -> bytes:
    return b"".join(parts)


NOT_FOUND = (
    b"HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: 9\r\n\r\nnot found"
)


def _wants_stream(body: bytes) -> bool:
    at = body.find(b'"stream"')
    if at < 0:
        return False
    rest = body[at + 8 : at + 24].lstrip()
    return rest.startswith(b":") and rest[1:].lstrip().startswith(b"true")


def _shape(path: str) -> tuple[int, int, int, str]:
    """(latency ms, chunks, pace ms, the rest of the path)."""
    if path.startswith("/u/"):
        parts = path.split("/", 5)
        return int(parts[2]), int(parts[3]), int(parts[4]), "/" + parts[5]
    return 0, 20, 0, path


class Stats:
    requests = 0
    unknown: dict[str, int] = {}


class UpstreamProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False
        self.handles: list[asyncio.TimerHandle] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def connection_lost(self, exc: Exception | None) -> None:
        for handle in self.handles:
            handle.cancel()
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        buf = self.buf
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(buf[:end]).lower()
        start = end + 4
        length = 0
        at = head.find(b"\ncontent-length:")
        if at >= 0:
            eol = head.find(b"\r", at + 16)
            length = int(head[at + 16 : eol if eol >= 0 else len(head)].strip())
            if len(buf) < start + length:
                return
            body = bytes(buf[start : start + length])
            del buf[: start + length]
        elif b"\ntransfer-encoding: chunked" in head:
            decoded = _dechunk(buf, start)
            if decoded is None:
                return
            body, used = decoded
            del buf[:used]
        else:
            body = b""
            del buf[:start]
        line = head[: head.find(b"\r\n")] if b"\r\n" in head else head
        path = line.split(b" ")[1].decode() if line.count(b" ") >= 2 else "/"
        self._answer(path, body)

    def _answer(self, path: str, body: bytes) -> None:
        transport = self.transport
        if transport is None:
            return
        Stats.requests += 1
        if path.startswith("/_stats"):
            transport.write(_whole(_dumps({"requests": Stats.requests, "unknown": Stats.unknown})))
            return self._done()
        if path.startswith("/health"):
            transport.write(_whole(b'{"ok":true}'))
            return self._done()
        latency, chunks, pace, rest = _shape(path.split("?", 1)[0])
        if rest.endswith("/chat/completions"):
            kind = "openai"
        elif rest.endswith("/v1/messages"):
            kind = "anthropic"
        else:
            Stats.unknown[rest] = Stats.unknown.get(rest, 0) + 1
            transport.write(NOT_FOUND)
            return self._done()
        parts = response_parts(kind, _wants_stream(body), chunks)
        self.busy = True
        loop = asyncio.get_running_loop()
        if pace == 0 or len(parts) == 1:
            if latency:
                self.handles = [loop.call_later(latency / 1000, self._write_all, parts)]
            else:
                self._write_all(parts)
            return None
        # One timer at a time, each scheduling the next: timers due in the same loop
        # iteration could otherwise run out of order on a busy loop.
        self._paced(list(parts), loop.time() + latency / 1000, pace / 1000, 0)
        return None

    def _paced(self, parts: list[bytes], start: float, pace: float, sent: int) -> None:
        loop = asyncio.get_running_loop()
        if sent == 0:
            parts[:2] = [parts[0] + parts[1]]  # headers go out with the first chunk
            parts[-2:] = [parts[-2] + parts[-1]]  # and the end marker with the last
            delay = start - loop.time()
            if delay > 0:
                self.handles = [loop.call_later(delay, self._paced, parts, start, pace, 1)]
                return
            sent = 1
        last = sent == len(parts)
        self._write(parts[sent - 1], last)
        if not last:
            due = start + sent * pace - loop.time()
            self.handles = [
                loop.call_later(max(0.0, due), self._paced, parts, start, pace, sent + 1)
            ]

    def _write_all(self, parts: tuple[bytes, ...]) -> None:
        self._write(_joined(parts), True)

    def _write(self, data: bytes, last: bool) -> None:
        if self.transport is not None:
            self.transport.write(data)
        if last:
            self.handles = []
            self._done()

    def _done(self) -> None:
        self.busy = False
        if self.buf:
            self._next()


def _dechunk(buf: bytearray, start: int) -> tuple[bytes, int] | None:
    out = bytearray()
    pos = start
    while True:
        eol = buf.find(b"\r\n", pos)
        if eol < 0:
            return None
        size = int(bytes(buf[pos:eol]).split(b";")[0], 16)
        if size == 0:
            end = buf.find(b"\r\n", eol + 2)
            return (bytes(out), end + 2) if end >= 0 else None
        if len(buf) < eol + 2 + size + 2:
            return None
        out += buf[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2


async def serve(host: str, port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(UpstreamProtocol, host, port, backlog=4096)
    print(f"bench upstream on http://{host}:{port}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    args = parser.parse_args()
    try:
        run(serve(args.host, args.port))
    except KeyboardInterrupt:
        pass


def run(main: Any) -> None:
    """Run a coroutine on uvloop when it is installed."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


if __name__ == "__main__":
    main()
