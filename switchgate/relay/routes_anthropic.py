"""Anthropic-dialect endpoints: POST /v1/messages and /v1/messages/count_tokens."""

from collections.abc import Mapping

from switchgate import jsonutil
from switchgate.dialects.anthropic_messages.decode import anthropic_count_tokens_request
from switchgate.errors import GatewayError
from switchgate.relay import policy
from switchgate.relay.asgi import (
    JSON_HEADERS,
    Receive,
    Responder,
    Scope,
    Send,
    client_ip,
    header_map,
    read_body,
)
from switchgate.relay.chat_route import ChatEndpoint, handle_chat, render_error
from switchgate.relay.count_tokens import upstream_count
from switchgate.relay.gate import admit, bearer_token, new_request_id, parse_json_object
from switchgate.state import AppState


def api_key(headers: Mapping[str, str], scope: Scope) -> str | None:
    """`x-api-key`, or `Authorization: Bearer` (SDK >= 2 and Claude Code send that)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    return bearer_token(headers)


MESSAGES = ChatEndpoint(
    dialect=lambda state: state.dialects.anthropic,
    name="messages",
    token=api_key,
    decode=lambda dialect, body, headers: dialect.decode_request(body, headers),
)


async def messages(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_chat(MESSAGES, state, scope, receive, send)


async def count_tokens(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """Asked of the Anthropic channel serving the model (exact); for models on other
    channels, counted by the gateway's offline tokenizer (an estimate)."""
    dialect = state.dialects.anthropic
    responder = Responder(send, new_request_id())
    headers = header_map(scope)
    try:
        principal = await admit(state, api_key(headers, scope), client_ip(scope))
        body = parse_json_object(await read_body(receive, state.settings.max_body_bytes))
        request = anthropic_count_tokens_request(body, headers)
        policy.check_model(principal, request.model, state.catalog)
        count = await upstream_count(
            state,
            request.model,
            "anthropic",
            body,
            headers,
            url_suffix="/count_tokens",
            field="input_tokens",
        )
        if count is None:
            count = state.tokenizer.count_request(request)
    except GatewayError as err:
        await render_error(responder, dialect, err)
        return
    await responder.whole(200, JSON_HEADERS, jsonutil.dumps({"input_tokens": count}))
