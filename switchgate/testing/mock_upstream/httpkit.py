"""Small HTTP helpers shared by the dialect modules: JSON bodies, SSE framing, stream sending."""

import asyncio
from typing import Any, Final

from aiohttp import web

from switchgate import jsonutil

JSON_TYPE: Final = "application/json"
SSE_TYPE: Final = "text/event-stream"
NOT_JSON: Final = object()  # marker: the body was not valid JSON


def json_response(
    value: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=jsonutil.dumps(value), status=status, headers=headers, content_type=JSON_TYPE
    )


def parse_json(body: bytes) -> Any:
    """The parsed body, or NOT_JSON."""
    if not body:
        return NOT_JSON
    try:
        return jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        return NOT_JSON


STREAM_FAULTS: Final = "switchgate_mock_stream_faults"  # set by faults.py


async def _stall(
    request: web.Request, events: list[bytes], content_type: str, headers: dict[str, str] | None
) -> web.StreamResponse:
    """Send `events`, then keep the connection open and silent (a stalled upstream)."""
    resp = web.StreamResponse(headers=headers)
    resp.content_type = content_type
    await resp.prepare(request)
    for event in events:
        await resp.write(event)
    await asyncio.sleep(3600)
    return resp


def sse(payload: bytes, event: str | None = None) -> bytes:
    """One SSE event (`data: ` with exactly one space, blank line after)."""
    if event is None:
        return b"data: " + payload + b"\n\n"
    return b"event: " + event.encode() + b"\ndata: " + payload + b"\n\n"


async def pause(ms: float) -> None:
    if ms > 0:
        await asyncio.sleep(ms / 1000)


def arrange(
    events: list[bytes], error_event: bytes | None, drop_after: int | None
) -> tuple[list[bytes], bool]:
    """Apply the midstream-error and drop-after directives; returns (events, cut)."""
    if error_event is not None:
        events = [*events[: max(1, len(events) // 2)], error_event]
    if drop_after is not None and drop_after < len(events):
        return events[:drop_after], True
    return events, False


async def send_stream(
    request: web.Request,
    events: list[bytes],
    *,
    content_type: str = SSE_TYPE,
    headers: dict[str, str] | None = None,
    interval_ms: float = 0,
    drop_after: int | None = None,
    error_event: bytes | None = None,
    tail: tuple[int, float] | None = None,
) -> web.StreamResponse:
    """Send pre-encoded events. Without pauses or a cut the whole stream goes out in one write
    (cheapest); with `interval_ms` every event is written (flushed) separately; with a cut the
    TCP connection is closed after the last event, without any terminator. `tail` =
    (N, ms): everything but the last N events goes out at once, then a pause of `ms`."""
    faults = request.get(STREAM_FAULTS) or (None, None, None, None)
    stall_after, cut_after, invalid_after, end_after = faults
    if end_after is not None:  # a clean end (final chunk sent), without the terminator
        events = events[:end_after]
    if cut_after is not None:
        drop_after = cut_after if drop_after is None else min(drop_after, cut_after)
    if invalid_after is not None:
        events = [*events[:invalid_after], b"data: {not json\n\n"]
    if stall_after is not None:
        return await _stall(request, events[:stall_after], content_type, headers)
    events, cut = arrange(events, error_event, drop_after)
    if tail is not None and len(events) > tail[0]:
        resp = web.StreamResponse(headers=headers)
        resp.content_type = content_type
        await resp.prepare(request)
        await resp.write(b"".join(events[: -tail[0]]))
        await asyncio.sleep(tail[1] / 1000)
        events = events[-tail[0] :]
    elif not cut and interval_ms <= 0:
        return web.Response(body=b"".join(events), headers=headers, content_type=content_type)
    else:
        resp = web.StreamResponse(headers=headers)
        resp.content_type = content_type
        await resp.prepare(request)
    if interval_ms > 0:
        for i, event in enumerate(events):
            if i:
                await asyncio.sleep(interval_ms / 1000)
            await resp.write(event)
    elif events:
        await resp.write(b"".join(events))
    if cut:
        transport = request.transport
        if transport is not None:
            transport.close()  # flushes what was written, then closes: no final chunk
    else:
        await resp.write_eof()
    return resp
