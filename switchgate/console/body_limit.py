"""A small body limit for everything that is not the relay (console forms, `/api`).

The relay streams bodies up to `max_body_bytes` (32 MiB) for prompts and uploads; the
console's JSON and forms are tiny, so a signed-in user must not be able to post hundreds
of MB of JSON for the server to buffer and parse. The body is read (up to the limit)
before the app sees the request: over it, 413 and the app is never called."""

from switchgate import jsonutil
from switchgate.relay.asgi import Message, Receive, Scope, Send

_BODYLESS = frozenset(("GET", "HEAD", "OPTIONS"))


async def _too_large(path: str, limit: int, send: Send) -> None:
    text = f"the request body is over the limit of {limit} bytes"
    if path.startswith("/api/"):
        body = jsonutil.dumps({"error": {"message": text, "code": "too_large"}})
        kind = b"application/json"
    else:
        body, kind = text.encode(), b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def read_limited(scope: Scope, receive: Receive, send: Send, limit: int) -> Receive | None:
    """A `receive` that replays the whole body, or None after answering 413."""
    if scope["method"] in _BODYLESS:
        return receive
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                declared = 0
            if declared > limit:
                await _too_large(scope["path"], limit, send)
                return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            chunks.clear()
            break  # the client left: let the app see an empty body and the disconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            await _too_large(scope["path"], limit, send)
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    replay: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

    async def replaying() -> Message:
        return replay.pop() if replay else await receive()

    return replaying
