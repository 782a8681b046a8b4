"""Relaying a streamed chat answer: passed through as the upstream framed it (metered,
checked for a proper end), or decoded and re-encoded in the client's dialect (with
keep-alive pings). Errors after the first byte end the stream with the dialect's
error event."""

import asyncio
import time
from collections.abc import Callable

from switchgate.billing.output_guard import ends_event
from switchgate.core.accumulate import Accumulator
from switchgate.core.events import StreamError
from switchgate.dialects.base import KeepAlive
from switchgate.errors import GatewayError
from switchgate.providers.capabilities import ChatProvider, NativeDialect
from switchgate.relay.asgi import SSE_HEADERS, ClientGone, Responder
from switchgate.relay.chat_call import ChatCall
from switchgate.relay.chat_usage import complete_usage
from switchgate.relay.stream_check import (
    EventCheck,
    stream_end,
    unfinished_stream,
    unreadable_event,
)
from switchgate.relay.upstream import UpstreamResponse, iter_batches, iter_body
from switchgate.state import AppState


async def relay_stream(
    state: AppState,
    call: ChatCall,
    provider: ChatProvider,
    native: NativeDialect | None,
    response: UpstreamResponse,
    responder: Responder,
    extra_headers: list[tuple[bytes, bytes]],
) -> None:
    headers = call.stream_headers or SSE_HEADERS
    await responder.start(200, [*headers, *extra_headers] if extra_headers else headers)
    metrics = state.metrics
    metrics.streams_open += 1
    try:
        if native is not None:
            await _pass_stream(state, call, native, response, responder)
        else:
            await _translate_stream(state, call, provider, response, responder)
    finally:
        metrics.streams_open -= 1


async def _pass_stream(
    state: AppState,
    call: ChatCall,
    native: NativeDialect,
    response: UpstreamResponse,
    responder: Responder,
) -> None:
    meter = native.usage_meter()
    pass_filter = call.pass_filter() if call.pass_filter else None
    outcome = call.outcome
    guard = call.output_guard(state.tokenizer, meter.output_text, meter.usage)
    sent = b"\n\n"  # the last chunk forwarded: the guard stops only between events
    check = EventCheck(stream_end(call.dialect.name))
    try:
        async for received in iter_body(response):
            chunk, fine = check.feed(received)
            if not fine:
                if chunk:
                    meter.feed(chunk)
                    await responder.chunk(pass_filter.feed(chunk) if pass_filter else chunk)
                raise unreadable_event()  # never passed on: the client gets an error event
            if not chunk:
                continue
            meter.feed(chunk)
            if guard.due(len(chunk)) and ends_event(sent):
                await guard.check()  # raises when the answer outgrows what can be held
            sent = chunk
            out = pass_filter.feed(chunk) if pass_filter else chunk
            if out:
                outcome.first_byte()
                await responder.chunk(out)
        rest = check.rest()
        if not check.ended:  # a clean close without the stream's end: not an answer
            raise unfinished_stream()  # (an incomplete last line is dropped, as SSE does)
        meter.feed(rest)
        rest = pass_filter.feed(rest) + pass_filter.close() if pass_filter else rest
        await responder.end(rest)
    except GatewayError as err:
        outcome.error = err
        event = call.dialect.render_stream_error(err)
        if pass_filter is not None:  # the error is framed like the rest of the stream
            event = pass_filter.feed(event) + pass_filter.close()
        await _end_with_error(call, responder, event)
    finally:
        final = check.ended and meter.usage_final()
        outcome.usage = complete_usage(state, call.request, meter.usage(), meter.output_text, final)


async def _translate_stream(
    state: AppState,
    call: ChatCall,
    provider: ChatProvider,
    response: UpstreamResponse,
    responder: Responder,
) -> None:
    decoder = provider.chat_stream_decoder(call.request)
    encoder = call.dialect.stream_encoder(call.request)
    accumulator = Accumulator()
    outcome = call.outcome
    keepalive = _KeepAlive(responder, encoder.ping if isinstance(encoder, KeepAlive) else None)
    guard = call.output_guard(state.tokenizer, accumulator.text, lambda: accumulator.usage)
    delivered = False
    try:
        # Events that arrived together leave together: one write per burst, not per event
        # (passed-through streams, by contrast, are forwarded chunk for chunk).
        async for chunks in iter_batches(response):
            out = []
            size = 0
            for chunk in chunks:
                size += len(chunk)
                for event in decoder.feed(chunk):
                    accumulator.add(event)
                    out.append(encoder.encode(event))
            if guard.due(size):
                await guard.check()  # raises when the answer outgrows what can be held
            data = b"".join(out)
            if data:
                outcome.first_byte()
                keepalive.sent()
                delivered = True
                await responder.chunk(data)
        tail = []
        for event in decoder.finish():
            accumulator.add(event)
            tail.append(encoder.encode(event))
        tail.append(encoder.close())
        await responder.end(b"".join(tail))
        outcome.error = accumulator.error
    except GatewayError as err:
        outcome.error = err
        # When nothing reached the client, the encoder's state (a JSON array's opening `[`,
        # already encoded into a withheld batch) is not what the client saw: start afresh.
        if not delivered:
            encoder = call.dialect.stream_encoder(call.request)
        # close() after an error only ends the framing (a JSON-array stream's `]`)
        await _end_with_error(call, responder, encoder.encode(StreamError(err)) + encoder.close())
    finally:
        keepalive.stop()
        reported = (
            accumulator.usage if accumulator.usage and accumulator.usage.total_tokens else None
        )
        # The upstream's count is final once the answer finished (Anthropic: message_delta
        # carries both; OpenAI and Gemini report usage with or after the finish).
        final = accumulator.finish is not None
        outcome.usage = complete_usage(state, call.request, reported, accumulator.text, final)


class _KeepAlive:
    """Sends the dialect's ping event (Anthropic's `event: ping`) whenever the stream has
    been quiet for `interval` seconds, so clients with idle timeouts keep waiting.
    Only for translated streams, whose chunks are whole events."""

    def __init__(
        self, responder: Responder, ping: Callable[[], bytes] | None, interval: float = 10.0
    ) -> None:
        self._responder = responder
        self._ping = ping
        self._interval = interval
        self._last = time.monotonic()
        self._task = asyncio.create_task(self._run()) if ping is not None else None

    def sent(self) -> None:
        self._last = time.monotonic()

    async def _run(self) -> None:
        assert self._ping is not None
        while True:
            await asyncio.sleep(self._interval - (time.monotonic() - self._last))
            if time.monotonic() - self._last >= self._interval:
                self._last = time.monotonic()
                try:
                    await self._responder.chunk(self._ping())
                except ClientGone:
                    return

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def _end_with_error(call: ChatCall, responder: Responder, event: bytes) -> None:
    try:
        await responder.end(event)
    except ClientGone:
        pass
