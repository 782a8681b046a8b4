"""The shape every chat endpoint shares, whatever its dialect: admit, read, decode,
check the model, run the pipeline, render errors in the dialect, record the outcome."""

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from switchgate.core.request import ChatRequest
from switchgate.dialects.base import ChatDialect
from switchgate.errors import GatewayError
from switchgate.observability.tracing import describe_request
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
from switchgate.relay.chat import run_chat
from switchgate.relay.chat_call import ChatCall, PassFilter
from switchgate.relay.disconnect import cancel_on_disconnect
from switchgate.relay.gate import admit, parse_json_object
from switchgate.relay.outcome import Outcome
from switchgate.state import AppState


@dataclass
class ChatEndpoint:
    """How one endpoint differs: where its token is, how its body decodes, and any
    stream framing it needs on passthrough."""

    dialect: Callable[[AppState], ChatDialect]
    name: str  # for logs, e.g. "chat.completions"
    token: Callable[[Mapping[str, str], Scope], str | None]
    decode: Callable[[ChatDialect, dict[str, Any], dict[str, str]], ChatRequest]
    pass_filter: Callable[[dict[str, Any], dict[str, str]], Callable[[], PassFilter] | None] = (
        lambda body, headers: None
    )
    stream_headers: Callable[[dict[str, str]], list[tuple[bytes, bytes]] | None] = lambda headers: (
        None
    )
    extra_headers: Callable[[Scope], dict[str, str]] = field(default=lambda scope: {})


def encode_headers(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.encode(), v.encode()) for k, v in headers.items()]


async def render_error(responder: Responder, dialect: ChatDialect, err: GatewayError) -> int:
    status, extra, payload = dialect.render_error(err)
    if err.retry_after is not None and not any(k.lower() == "retry-after" for k in extra):
        extra = {**extra, "retry-after": str(err.retry_after)}
    await responder.whole(status, encode_headers(extra), payload)
    return status


@asynccontextmanager
async def finishing(
    state: AppState, responder: Responder, dialect: ChatDialect, outcome: Outcome
) -> AsyncIterator[None]:
    """The end every relayed call shares: a GatewayError is rendered in the client's
    dialect if nothing was sent yet, a client that left is noted (499), and the outcome
    of an authenticated call is recorded (charge and log)."""
    tracing = state.tracing
    with tracing.request_span(outcome.request_id, outcome.endpoint, outcome.dialect) as span:
        try:
            yield
        except GatewayError as err:
            outcome.error = err
            if not responder.started:
                outcome.status = await render_error(responder, dialect, err)
        except ClientGone:
            outcome.status = 499
        finally:
            with tracing.span("billing"):
                record = outcome.record()
                if outcome.user_id is not None:
                    state.recorder.add(record)
                else:
                    state.recorder.observe_only(record)
            if span is not None:
                describe_request(span, record, outcome)


async def handle_chat(
    endpoint: ChatEndpoint, state: AppState, scope: Scope, receive: Receive, send: Send
) -> None:
    dialect = endpoint.dialect(state)
    headers = header_map(scope)
    request_id = state.tracing.new_request_id(headers)
    responder = Responder(send, request_id)
    headers.update(endpoint.extra_headers(scope))
    outcome = Outcome.begin(request_id, dialect.name, endpoint.name, client_ip(scope))
    async with finishing(state, responder, dialect, outcome):
        with state.tracing.span("auth"):
            principal = await admit(state, endpoint.token(headers, scope), outcome.client_ip)
        outcome.user_id, outcome.token_id = principal.user_id, principal.token_id
        raw = await read_body(receive, state.settings.max_body_bytes)
        body = parse_json_object(raw)
        request = endpoint.decode(dialect, body, headers)
        outcome.model, outcome.stream = request.model, request.stream
        policy.check_model(principal, request.model, state.catalog)
        call = ChatCall(
            dialect=dialect,
            request=request,
            body=body,
            raw=raw,
            headers=headers,
            principal=principal,
            outcome=outcome,
            stream_headers=endpoint.stream_headers(headers),
            pass_filter=endpoint.pass_filter(body, headers),
        )
        async with cancel_on_disconnect(receive):
            await run_chat(state, call, responder)
