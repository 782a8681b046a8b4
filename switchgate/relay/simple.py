"""The pipeline every non-chat endpoint shares (completions, embeddings, images, audio,
rerank, Gemini embeddings):

    admit -> read body -> endpoint.prepare (validate, 400s) -> model allowed and served
    -> channels of a kind that can serve this operation (else 404) -> hold the worst case
    -> the attempt pipeline (relay/attempt.py): per candidate build, send; fail over on
       connect errors / timeouts / 429 / 5xx before the first byte -> exchange.relay
       (whole or streamed; sets usage and cost)
    -> settle the hold, record the outcome (ledger row + request log, batched)

An endpoint supplies a MediaEndpoint (how to find the token, which dialect renders its
errors, how to turn the body into an Exchange); the Exchange says which channel kinds
can serve it (by the capabilities of their adapters, providers/registry.py), how to
reach one for this call and how to relay and bill the answer.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from switchgate.accounts.auth import Principal
from switchgate.billing.holds import Hold
from switchgate.billing.output_guard import OutputGuard, ends_event
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage
from switchgate.dialects.base import ChatDialect
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import ErrorClassifier, OpenAIShaped, classify_response
from switchgate.providers.openai_response import classify_openai_error
from switchgate.providers.registry import ProviderKind
from switchgate.relay import policy
from switchgate.relay.asgi import (
    ClientGone,
    Receive,
    Responder,
    Scope,
    Send,
    client_ip,
    header_map,
    read_body,
)
from switchgate.relay.attempt import Candidate, attempt
from switchgate.relay.chat_call import PassFilter
from switchgate.relay.chat_route import finishing
from switchgate.relay.disconnect import cancel_on_disconnect
from switchgate.relay.gate import admit, bearer_token
from switchgate.relay.outcome import Outcome
from switchgate.relay.stream_check import (
    End,
    EventCheck,
    unfinished_stream,
    unreadable_event,
)
from switchgate.relay.upstream import UpstreamResponse, iter_body
from switchgate.routing.channels import Channel
from switchgate.routing.key_caps import Slot
from switchgate.routing.keys import ChannelKey
from switchgate.state import AppState


@dataclass(slots=True)
class Delivery:
    """What an Exchange needs to answer the client and bill the call."""

    state: AppState
    outcome: Outcome
    responder: Responder
    dialect: ChatDialect
    price: Price
    channel: Channel
    kind: ProviderKind  # the channel's kind (its adapter)
    target: Target  # the channel's address and key this call went to
    hold: Hold
    key_index: int = 0  # that key's position in the channel (health subjects)
    key: ChannelKey | None = None  # that key, for its caps (routing/key_caps.py)
    slot: Slot | None = None  # the key's cap slot the first send holds

    def bill(self, cost: int, usage: Usage | None = None) -> None:
        self.outcome.cost = cost
        if usage is not None:
            self.outcome.usage = usage

    async def whole(self, body: bytes, content_type: str = "application/json") -> None:
        self.outcome.first_byte()
        await self.responder.whole(200, [(b"content-type", content_type.encode())], body)

    async def stream(
        self,
        response: UpstreamResponse,
        headers: list[tuple[bytes, bytes]],
        *,
        meter: Callable[[bytes], None] | None = None,
        pass_filter: PassFilter | None = None,
        in_band_errors: bool = False,
        guard: OutputGuard | None = None,
        end: End | None = None,
    ) -> None:
        """Relay the upstream body chunk by chunk as it arrives. A failure after the start
        ends the response (with the dialect's in-band error event when `in_band_errors`);
        the caller bills in a `finally`. A `guard` (SSE streams only) stops an answer that
        outgrows what its hold can grow to (billing/output_guard.py). With `end` (SSE
        streams only) whole lines are forwarded and a stream that ends without its end
        event, or with a garbled one, is an error (relay/stream_check.py)."""
        await self.responder.start(200, headers)
        sent = b"\n\n"
        check = EventCheck(end) if end is not None else None
        try:
            async for received in iter_body(response):
                chunk = received
                if check is not None:
                    chunk, fine = check.feed(received)
                    if not fine:
                        await self._pass(chunk, meter, pass_filter)
                        raise unreadable_event()
                    if not chunk:
                        continue  # a line not finished yet
                if meter is not None:
                    meter(chunk)
                if guard is not None and guard.due(len(chunk)) and ends_event(sent):
                    await guard.check()
                sent = chunk
                out = pass_filter.feed(chunk) if pass_filter is not None else chunk
                if out:
                    self.outcome.first_byte()
                    await self.responder.chunk(out)
            if check is not None:
                rest = check.rest()
                if not check.ended:
                    raise unfinished_stream()
                await self._pass(rest, meter, pass_filter)
            await self.responder.end(pass_filter.close() if pass_filter is not None else b"")
        except GatewayError as err:
            self.outcome.error = err
            tail = self.dialect.render_stream_error(err) if in_band_errors else b""
            try:
                await self.responder.end(tail)
            except ClientGone:
                pass

    async def _pass(
        self, chunk: bytes, meter: Callable[[bytes], None] | None, pass_filter: PassFilter | None
    ) -> None:
        if not chunk:
            return
        if meter is not None:
            meter(chunk)
        out = pass_filter.feed(chunk) if pass_filter is not None else chunk
        if out:
            self.outcome.first_byte()
            await self.responder.chunk(out)


class Exchange:
    """One validated non-chat call. Subclasses set `endpoint` (the registry's name for
    what they serve) and implement `hold`, `build` and `relay`; `accepts` says which
    kinds can serve the call (by default: those that pass OpenAI's own endpoint through)."""

    endpoint: str = ""

    def __init__(self, model: str, *, stream: bool = False) -> None:
        self.model = model
        self.stream = stream

    def accepts(self, kind: ProviderKind) -> bool:
        return kind.openai_shaped(self.endpoint) is not None

    def hold(self, price: Price) -> int:
        """The most this call can cost (reserved before any upstream call)."""
        raise NotImplementedError

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        raise NotImplementedError

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        """Answer the client from a successful upstream response and call delivery.bill()
        (in a `finally` when streaming, so a cut stream is still billed)."""
        raise NotImplementedError


def openai_shaped(kind: ProviderKind, endpoint: str) -> OpenAIShaped:
    """The kind's adapter for OpenAI's own `endpoint` (only kinds that `accepts` it get
    here)."""
    api = kind.openai_shaped(endpoint)
    if api is None:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, f"{kind.name} channels do not serve {endpoint}"
        )
    return api


@dataclass(frozen=True)
class MediaEndpoint:
    name: str  # for logs, e.g. "embeddings"
    what: str  # for the 404, e.g. "embeddings"
    prepare: Callable[[AppState, bytes, Mapping[str, str]], Exchange]
    dialect: Callable[[AppState], ChatDialect] = lambda state: state.dialects.openai
    token: Callable[[Mapping[str, str], Scope], str | None] = lambda headers, scope: bearer_token(
        headers
    )


def classify(
    kind: ProviderKind | None, status: int, headers: Mapping[str, str], body: bytes
) -> GatewayError:
    """An upstream error answer, as the kind's adapter reads it (OpenAI's shape, which
    also reads Cohere's and Jina's `{message}`, when it has no reader of its own)."""
    adapter = kind.adapter if kind is not None else None
    if isinstance(adapter, ErrorClassifier):
        return classify_response(adapter, status, headers, body)
    return classify_openai_error(status, body)


def serves(state: AppState, exchange: Exchange, channel: Channel) -> bool:
    """Whether `channel`'s kind can serve this operation (for the model's own channels
    and, in the attempt pipeline, a fallback model's)."""
    kind = state.kinds.get(channel.kind)
    return kind is not None and exchange.accepts(kind)


def serving_channels(state: AppState, exchange: Exchange, what: str) -> list[Channel]:
    channels = state.catalog.channels_by_model.get(exchange.model, ())
    usable = [c for c in channels if serves(state, exchange, c)]
    if not usable:
        raise GatewayError(
            ErrorKind.NOT_FOUND,
            f"The model '{exchange.model}' is not available for {what}.",
            param="model",
            code="model_not_found",
        )
    return usable


async def handle_media(
    endpoint: MediaEndpoint, state: AppState, scope: Scope, receive: Receive, send: Send
) -> None:
    dialect = endpoint.dialect(state)
    headers = header_map(scope)
    request_id = state.tracing.new_request_id(headers)
    responder = Responder(send, request_id)
    outcome = Outcome.begin(request_id, dialect.name, endpoint.name, client_ip(scope))
    async with finishing(state, responder, dialect, outcome):
        with state.tracing.span("auth"):
            principal = await admit(state, endpoint.token(headers, scope), outcome.client_ip)
        outcome.user_id, outcome.token_id = principal.user_id, principal.token_id
        raw = await read_body(receive, state.settings.max_body_bytes)
        exchange = endpoint.prepare(state, raw, headers)
        outcome.model, outcome.stream = exchange.model, exchange.stream
        policy.check_model(principal, exchange.model, state.catalog)
        channels = serving_channels(state, exchange, endpoint.what)
        async with cancel_on_disconnect(receive):
            await _run(state, exchange, channels, principal, outcome, responder, dialect)


async def _run(
    state: AppState,
    exchange: Exchange,
    channels: list[Channel],
    principal: Principal,
    outcome: Outcome,
    responder: Responder,
    dialect: ChatDialect,
) -> None:
    price = policy.price_of(exchange.model, state.catalog)
    hold = Hold(state.book, state.recorder.token_spend, principal)
    # settled once, however it ends, with the cost the delivery set
    async with hold.reserve(exchange.hold(price), lambda: outcome.cost, outcome):
        route = _ExchangeRoute(state, exchange, price, outcome, responder, dialect, hold)
        await attempt(state, exchange.model, channels, route, outcome, stream=exchange.stream)


@dataclass(slots=True)
class _ExchangeRoute:
    """A non-chat call as the attempt pipeline sees it (relay/attempt.py)."""

    state: AppState
    exchange: Exchange
    price: Price
    outcome: Outcome
    responder: Responder
    dialect: ChatDialect
    hold: Hold

    def serves(self, channel: Channel) -> bool:
        return serves(self.state, self.exchange, channel)

    def build(self, channel: Channel, target: Target) -> UpstreamRequest | None:
        if not self.serves(channel):
            return None  # a kind that cannot serve this operation: the next candidate
        return self.exchange.build(self.state.kinds[channel.kind], target)

    def classify(
        self, channel: Channel, status: int, headers: Mapping[str, str], body: bytes
    ) -> GatewayError:
        return classify(self.state.kinds.get(channel.kind), status, headers, body)

    async def deliver(self, candidate: Candidate, response: UpstreamResponse) -> None:
        channel = candidate.channel
        delivery = Delivery(
            self.state,
            self.outcome,
            self.responder,
            self.dialect,
            self.price,
            channel,
            self.state.kinds[channel.kind],
            candidate.target,
            self.hold,
            candidate.key_index,
            candidate.key,
            candidate.slot,
        )
        await self.exchange.relay(delivery, response)


def unreadable(exc: Exception) -> GatewayError:
    return GatewayError(
        ErrorKind.UPSTREAM_ERROR,
        f"The upstream sent a response the gateway could not read ({type(exc).__name__}).",
    )
