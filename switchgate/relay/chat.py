"""The chat pipeline: hold -> route -> call upstream (passthrough or translated) ->
relay the answer -> settle and record. Shared by every chat dialect."""

from collections.abc import Mapping, Sequence
from dataclasses import replace

from switchgate.billing.holds import Hold
from switchgate.billing.output_guard import output_hold_tokens
from switchgate.billing.pricing import estimate_input_tokens, token_cost, token_hold
from switchgate.catalogue.limits import check_request
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import (
    ChatProvider,
    NativeDialect,
    classify_response,
)
from switchgate.providers.hosted_tools import dropped_header, without_hosted, without_hosted_tools
from switchgate.relay import paid_options, policy
from switchgate.relay.asgi import Responder
from switchgate.relay.attempt import Candidate, attempt
from switchgate.relay.chat_call import ChatCall
from switchgate.relay.chat_stream import relay_stream
from switchgate.relay.chat_usage import complete_usage, response_text
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.routing.channels import Channel
from switchgate.state import AppState


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
    route = _ChatRoute(state, call, responder, wanted)
    await attempt(state, model, channels, route, call.outcome, stream=call.request.stream)


class _ChatRoute:
    """The chat call as the attempt pipeline sees it (relay/attempt.py)."""

    def __init__(
        self, state: AppState, call: ChatCall, responder: Responder, wanted: Sequence[str] = ()
    ) -> None:
        self.state, self.call, self.responder = state, call, responder
        self.wanted = wanted  # the call's paid options (relay/paid_options.py)
        self.provider: ChatProvider | None = None
        self.native: NativeDialect | None = None  # set when the call is passed through
        self.dropped: list[tuple[bytes, bytes]] = []  # x-switchgate-dropped-tools

    def serves(self, channel: Channel) -> bool:
        """A channel that allows the call's paid options (as for the model's own)."""
        if not self.wanted:
            return True
        kinds = self.state.kinds
        return paid_options.allows(channel, self.wanted, self.call.dialect.name, kinds)

    def build(self, channel: Channel, target: Target) -> UpstreamRequest | None:
        call = self.call
        kind = self.state.kinds.get(channel.kind)
        if kind is None:
            return None
        own = call.native(channel) if call.native is not None else None
        native: NativeDialect | None
        if own is not None:  # the Responses passthrough's own adapter
            provider: ChatProvider | None = own
            native = own if isinstance(own, NativeDialect) else None
        else:
            provider, native = kind.chat(), kind.native()
        if provider is None:
            return None
        self.provider = provider
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
        hosted = kind.hosted_tools(target) if request.hosted_tools else None
        self.dropped = dropped_header(request, hosted, mapped=paid)
        if not paid:
            request = without_hosted(request)
        return provider.build_chat_request(request, target)

    def classify(
        self, channel: Channel, status: int, headers: Mapping[str, str], body: bytes
    ) -> GatewayError:
        assert self.provider is not None
        return classify_response(self.provider, status, headers, body)

    async def deliver(self, candidate: Candidate, response: UpstreamResponse) -> None:
        assert self.provider is not None
        state, call, provider = self.state, self.call, self.provider
        native, responder = self.native, self.responder
        dropped = self.dropped
        if call.request.stream:
            await relay_stream(state, call, provider, native, response, responder, dropped)
        else:
            await _relay_whole(state, call, provider, native, response, responder, dropped)


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
                usage = complete_usage(state, call.request, usage, lambda: response_text(parsed))
        else:
            parsed = provider.parse_chat_response(data, call.request)
            reported = parsed.usage if parsed.usage.total_tokens else None
            usage = complete_usage(state, call.request, reported, lambda: response_text(parsed))
            body = call.dialect.encode_response(replace(parsed, usage=usage), call.request)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _unreadable(exc) from exc
    call.outcome.usage = usage
    assert call.hold is not None and call.price is not None
    await call.hold.cover(token_cost(call.price, usage))  # an upstream past max_tokens
    call.outcome.first_byte()
    await responder.whole(200, [(b"content-type", b"application/json"), *extra_headers], body)
