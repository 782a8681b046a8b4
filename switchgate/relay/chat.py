"""The chat pipeline: hold -> route -> call upstream (passthrough or translated) ->
relay the answer -> settle and record. Shared by every chat dialect."""

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from switchgate.accounts.auth import Principal
from switchgate.billing.holds import Hold
from switchgate.billing.output_guard import OutputGuard, ends_event, output_hold_tokens
from switchgate.billing.pricing import Price, estimate_input_tokens, token_cost, token_hold
from switchgate.catalogue.limits import check_request
from switchgate.core.accumulate import Accumulator
from switchgate.core.events import StreamError
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.dialects.base import ChatDialect, KeepAlive
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import ChatProvider, NativeDialect
from switchgate.providers.hosted_tools import dropped_header, without_hosted_tools
from switchgate.relay import paid_options, policy
from switchgate.relay.asgi import SSE_HEADERS, ClientGone, Responder
from switchgate.relay.attempt import attempt
from switchgate.relay.outcome import Outcome
from switchgate.relay.stream_check import (
    EventCheck,
    stream_end,
    unfinished_stream,
    unreadable_event,
)
from switchgate.relay.upstream import UpstreamResponse, iter_batches, iter_body, read_all
from switchgate.routing.channels import Channel
from switchgate.state import AppState
from switchgate.tokenizer import Tokenizer


class PassFilter(Protocol):
    """Rewrites a passed-through stream's framing (bytes in, bytes out)."""

    def feed(self, data: bytes) -> bytes: ...

    def close(self) -> bytes: ...


@dataclass(slots=True)
class ChatCall:
    dialect: ChatDialect
    request: ChatRequest  # validated, canonical
    body: dict[str, Any]  # the client's parsed body, for passthrough
    raw: bytes  # the bytes it was parsed from
    headers: Mapping[str, str]
    principal: Principal
    outcome: Outcome
    stream_headers: list[tuple[bytes, bytes]] | None = None
    pass_filter: Callable[[], PassFilter] | None = None
    # A per-channel override of the channel kind's provider (e.g. a native Responses
    # upstream); passthrough still means "the provider's dialect is the client's".
    native: Callable[[Channel], ChatProvider | None] | None = None
    # Set by run_chat: the price, the request's hold, and the output tokens it covers.
    price: Price | None = None
    hold: Hold | None = None
    held_output: int = 0

    def output_guard(
        self, tokenizer: Tokenizer, text: Callable[[], str], reported: Callable[[], Usage | None]
    ) -> OutputGuard:
        assert self.hold is not None and self.price is not None
        return OutputGuard(
            self.hold, self.price.output, self.held_output, tokenizer.count, text, reported
        )


def _unreadable(exc: Exception) -> GatewayError:
    return GatewayError(
        ErrorKind.UPSTREAM_ERROR,
        f"The upstream sent a response the gateway could not read ({type(exc).__name__}).",
    )


async def run_chat(state: AppState, call: ChatCall, responder: Responder) -> None:
    """Serve one admitted chat call. Raises GatewayError only before any byte was sent."""
    price = call.price = policy.price_of(call.request.model, state.catalog)
    check_request(call.request, len(call.raw), state.catalog.limits, state.tokenizer)
    call.held_output = output_hold_tokens(call.request, state.settings.default_hold_output_tokens)
    hold = call.hold = Hold(state.book, state.recorder.token_spend, call.principal)
    amount = token_hold(price, estimate_input_tokens(len(call.raw)), call.held_output)
    outcome = call.outcome

    def cost() -> int:
        return token_cost(price, outcome.usage) if outcome.usage is not None else 0

    async with hold.reserve(amount, cost, outcome):  # settled once, however it ends
        await _attempt_channels(state, call, responder)


async def _attempt_channels(state: AppState, call: ChatCall, responder: Responder) -> None:
    model = call.request.model
    channels = state.catalog.channels_by_model.get(model, ())
    wanted = paid_options.paid_options(call.dialect.name, call.body, call.headers)
    if wanted:
        channels = tuple(
            paid_options.usable(channels, wanted, model, call.dialect.name, state.kinds)
        )
    route = _ChatRoute(state, call, responder)
    await attempt(state, model, channels, route, call.outcome, stream=call.request.stream)


class _ChatRoute:
    """The chat call as the attempt pipeline sees it (relay/attempt.py)."""

    def __init__(self, state: AppState, call: ChatCall, responder: Responder) -> None:
        self.state, self.call, self.responder = state, call, responder
        self.provider: ChatProvider | None = None
        self.native: NativeDialect | None = None  # set when the call is passed through
        self.dropped: list[tuple[bytes, bytes]] = []  # x-switchgate-dropped-tools

    def build(self, channel: Channel, target: Target) -> UpstreamRequest | None:
        call = self.call
        native = call.native(channel) if call.native is not None else None
        if native is not None:
            provider: ChatProvider | None = native
        else:
            kind = self.state.kinds.get(channel.kind)
            provider = kind.chat() if kind is not None else None
        if provider is None:
            return None
        self.provider = provider
        native = provider if isinstance(provider, NativeDialect) else None
        same = native is not None and native.dialect == call.dialect.name
        self.native = native if same else None
        if self.native is not None:
            body, self.dropped = call.body, []
            raw: bytes | None = call.raw
            # Codex sends web_search with every turn: where the operator hasn't allowed paid
            # hosted tools, a native Responses channel gets the body without them.
            if (
                call.dialect.name == "responses"
                and call.request.hosted_tools
                and not paid_options.allows_hosted_tools(channel)
            ):
                body, self.dropped = without_hosted_tools(body)
                raw = None
            return self.native.build_passthrough(body, target, call.headers, raw)
        request = replace(call.request, model=target.upstream_model)
        # Hosted tools: mapped to the vendor's own (paid) tool where the channel allows it,
        # else dropped; either way what was left out is named in a response header.
        paid = not request.hosted_tools or paid_options.allows_hosted_tools(channel)
        self.dropped = dropped_header(request, provider.kind, mapped=paid)
        if not paid:
            request = replace(request, hosted_tools=())
        return provider.build_chat_request(request, target)

    def classify(self, channel: Channel, status: int, body: bytes) -> GatewayError:
        assert self.provider is not None
        return self.provider.classify_error(status, body)

    async def deliver(self, channel: Channel, target: Target, response: UpstreamResponse) -> None:
        assert self.provider is not None
        state, call, provider = self.state, self.call, self.provider
        native, responder = self.native, self.responder
        dropped = self.dropped
        if call.request.stream:
            await _relay_stream(state, call, provider, native, response, responder, dropped)
        else:
            await _relay_whole(state, call, provider, native, response, responder, dropped)


def _complete_usage(
    state: AppState,
    request: ChatRequest,
    usage: Usage | None,
    output_text: Callable[[], str],
    final: bool = True,
) -> Usage:
    """Usage as reported, with whatever the upstream left out counted by the tokenizer.

    `final=False`: the stream ended before the upstream's final count (an Anthropic
    stream cut before `message_delta` has only `message_start`'s `output_tokens: 1`), so
    the output is the larger of the reported count and the tokenizer's count of the text
    delivered, and the usage is marked estimated."""
    if final and usage is not None and usage.input_tokens and usage.output_tokens:
        return usage
    base = usage or Usage()
    if final and base.output_tokens:
        output = base.output_tokens
    else:
        output = max(base.output_tokens, state.tokenizer.count(output_text()))
    return replace(
        base,
        input_tokens=base.input_tokens or state.tokenizer.count_request(request),
        output_tokens=output,
        estimated=True,
    )


def _response_text(response: ChatResponse) -> str:
    out: list[str] = []
    for part in response.parts:
        if hasattr(part, "text"):
            out.append(part.text)
        elif hasattr(part, "arguments"):
            out.append(part.name + part.arguments)
    return "".join(out)


async def _relay_whole(
    state: AppState,
    call: ChatCall,
    provider: ChatProvider,
    native: NativeDialect | None,
    response: UpstreamResponse,
    responder: Responder,
    extra_headers: list[tuple[bytes, bytes]],
) -> None:
    """`native`: the call was passed through (the body goes back as it is)."""
    data = await read_all(response)
    try:
        if native is not None:
            usage = native.usage_from_body(data)
            body = data
            if usage is None or not usage.output_tokens:
                parsed = provider.parse_chat_response(data, call.request)
                usage = _complete_usage(state, call.request, usage, lambda: _response_text(parsed))
        else:
            parsed = provider.parse_chat_response(data, call.request)
            reported = parsed.usage if parsed.usage.total_tokens else None
            usage = _complete_usage(state, call.request, reported, lambda: _response_text(parsed))
            body = call.dialect.encode_response(replace(parsed, usage=usage), call.request)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _unreadable(exc) from exc
    call.outcome.usage = usage
    assert call.hold is not None and call.price is not None
    await call.hold.cover(token_cost(call.price, usage))  # an upstream past max_tokens
    call.outcome.first_byte()
    await responder.whole(200, [(b"content-type", b"application/json"), *extra_headers], body)


async def _relay_stream(
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
        outcome.usage = _complete_usage(
            state, call.request, meter.usage(), meter.output_text, final
        )


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
        outcome.usage = _complete_usage(state, call.request, reported, accumulator.text, final)


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


def elapsed_ms(since: float) -> int:
    return int((time.perf_counter() - since) * 1000)
