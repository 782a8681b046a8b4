"""The chat pipeline: hold -> route -> call upstream (passthrough or translated) ->
relay the answer -> settle and record. Shared by every chat dialect."""

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from switchgate.accounts.auth import Principal
from switchgate.billing.pricing import Price, estimate_input_tokens, token_cost, token_hold
from switchgate.core.accumulate import Accumulator
from switchgate.core.events import StreamError
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.dialects.base import ChatDialect
from switchgate.errors import ErrorKind, GatewayError
from switchgate.observability.attempts import attempt_failed
from switchgate.providers.base import ChatProvider, Target
from switchgate.relay import policy
from switchgate.relay.asgi import SSE_HEADERS, ClientGone, Responder
from switchgate.relay.outcome import Outcome
from switchgate.relay.upstream import UpstreamResponse, iter_batches, iter_body, read_all
from switchgate.routing.channels import Channel
from switchgate.routing.selector import plan
from switchgate.state import AppState


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


def target_for(channel: Channel, model: str) -> Target:
    extra = channel.extra
    return Target(
        base_url=channel.base_url,
        api_key=channel.api_key,
        upstream_model=channel.upstream_model(model),
        extra_headers=extra.get("headers", {}),
        api_version=extra.get("api_version"),
    )


def _unreadable(exc: Exception) -> GatewayError:
    return GatewayError(
        ErrorKind.UPSTREAM_ERROR,
        f"The upstream sent a response the gateway could not read ({type(exc).__name__}).",
    )


async def run_chat(state: AppState, call: ChatCall, responder: Responder) -> None:
    """Serve one admitted chat call. Raises GatewayError only before any byte was sent."""
    price = policy.price_of(call.request.model, state.catalog)
    user_id = call.principal.user_id
    max_out = call.request.sampling.max_tokens or state.settings.default_hold_output_tokens
    max_out *= call.request.sampling.n or 1  # every choice / candidate is a whole answer
    hold = token_hold(price, estimate_input_tokens(len(call.raw)), max_out)
    await state.book.hold(user_id, hold)
    try:
        await _attempt_channels(state, call, responder)
    finally:
        cost = _settle(state, call, price)
        state.book.settle(user_id, hold, cost)


def _settle(state: AppState, call: ChatCall, price: Price) -> int:
    outcome = call.outcome
    cost = token_cost(price, outcome.usage) if outcome.usage is not None else 0
    outcome.cost = cost
    return cost


async def _attempt_channels(state: AppState, call: ChatCall, responder: Responder) -> None:
    model = call.request.model
    candidates = plan(state.catalog.channels_by_model.get(model, ()), state.health, state.rng)
    last_error: GatewayError | None = None
    failed: tuple[int, str] | None = None
    for channel in candidates:
        if failed is not None:
            state.metrics.retried(failed[0], failed[1], channel.id)
        native = call.native(channel) if call.native is not None else None
        provider = native or state.providers.get(channel.kind)
        if provider is None:
            continue
        target = target_for(channel, model)
        passthrough = provider.dialect == call.dialect.name
        if passthrough:
            upstream_request = provider.build_passthrough(call.body, target, call.headers, call.raw)
        else:
            upstream_request = provider.build_chat_request(
                replace(call.request, model=target.upstream_model), target
            )
        call.outcome.channel, call.outcome.upstream_model = channel, target.upstream_model
        try:
            response = await state.upstream.send(upstream_request)
        except GatewayError as err:
            state.health.failure(channel.id)
            failed = (channel.id, attempt_failed(state, channel.id, err))
            last_error = err
            continue
        try:
            if response.status >= 400:
                error = provider.classify_error(response.status, await read_all(response))
                retry_after = response.headers.get("retry-after", "")
                if error.retry_after is None and retry_after.isdigit():
                    error.retry_after = int(retry_after)
                reason = attempt_failed(state, channel.id, error)
                if error.retryable:
                    state.health.failure(channel.id)
                    failed = (channel.id, reason)
                    last_error = error
                    continue
                raise error
            state.health.success(channel.id)
            state.metrics.attempt_ok(channel.id)
            if call.request.stream:
                await _relay_stream(state, call, provider, response, responder, passthrough)
            else:
                await _relay_whole(state, call, provider, response, responder, passthrough)
            return
        finally:
            response.release()
    raise last_error or GatewayError(
        ErrorKind.UPSTREAM_ERROR, f"No channel is available for the model '{model}'."
    )


def _complete_usage(
    state: AppState, request: ChatRequest, usage: Usage | None, output_text: Callable[[], str]
) -> Usage:
    """Usage as reported, with whatever the upstream left out counted by the tokenizer."""
    if usage is not None and usage.input_tokens and usage.output_tokens:
        return usage
    text = output_text()
    base = usage or Usage()
    return replace(
        base,
        input_tokens=base.input_tokens or state.tokenizer.count_request(request),
        output_tokens=base.output_tokens or state.tokenizer.count(text),
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
    response: UpstreamResponse,
    responder: Responder,
    passthrough: bool,
) -> None:
    data = await read_all(response)
    try:
        if passthrough:
            usage = provider.usage_from_body(data)
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
    call.outcome.first_byte()
    await responder.whole(200, [(b"content-type", b"application/json")], body)


async def _relay_stream(
    state: AppState,
    call: ChatCall,
    provider: ChatProvider,
    response: UpstreamResponse,
    responder: Responder,
    passthrough: bool,
) -> None:
    await responder.start(200, call.stream_headers or SSE_HEADERS)
    metrics = state.metrics
    metrics.streams_open += 1
    try:
        if passthrough:
            await _pass_stream(state, call, provider, response, responder)
        else:
            await _translate_stream(state, call, provider, response, responder)
    finally:
        metrics.streams_open -= 1


async def _pass_stream(
    state: AppState,
    call: ChatCall,
    provider: ChatProvider,
    response: UpstreamResponse,
    responder: Responder,
) -> None:
    meter = provider.usage_meter()
    pass_filter = call.pass_filter() if call.pass_filter else None
    outcome = call.outcome
    try:
        async for chunk in iter_body(response):
            meter.feed(chunk)
            out = pass_filter.feed(chunk) if pass_filter else chunk
            if out:
                outcome.first_byte()
                await responder.chunk(out)
        await responder.end(pass_filter.close() if pass_filter else b"")
    except GatewayError as err:
        outcome.error = err
        event = call.dialect.render_stream_error(err)
        if pass_filter is not None:  # the error is framed like the rest of the stream
            event = pass_filter.feed(event) + pass_filter.close()
        await _end_with_error(call, responder, event)
    finally:
        outcome.usage = _complete_usage(state, call.request, meter.usage(), meter.output_text)


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
    keepalive = _KeepAlive(responder, getattr(encoder, "ping", None))
    try:
        # Events that arrived together leave together: one write per burst, not per event
        # (passed-through streams, by contrast, are forwarded chunk for chunk).
        async for chunks in iter_batches(response):
            out = []
            for chunk in chunks:
                for event in decoder.feed(chunk):
                    accumulator.add(event)
                    out.append(encoder.encode(event))
            data = b"".join(out)
            if data:
                outcome.first_byte()
                keepalive.sent()
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
        await _end_with_error(call, responder, encoder.encode(StreamError(err)))
    finally:
        keepalive.stop()
        reported = (
            accumulator.usage if accumulator.usage and accumulator.usage.total_tokens else None
        )
        outcome.usage = _complete_usage(state, call.request, reported, accumulator.text)


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
