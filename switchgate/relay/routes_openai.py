"""OpenAI-dialect endpoints under /v1 (chat completions and the model list)."""

import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError
from switchgate.relay import policy
from switchgate.relay.asgi import (
    JSON_HEADERS,
    Receive,
    Responder,
    Scope,
    Send,
    client_ip,
    header_map,
)
from switchgate.relay.chat_call import PassFilter
from switchgate.relay.chat_route import ChatEndpoint, handle_chat, render_error
from switchgate.relay.gate import admit, bearer_token, new_request_id
from switchgate.relay.model_details import DETAIL_VALUES, model_details
from switchgate.relay.passfilters import OpenAIUsageStripper
from switchgate.state import AppState

_STARTED = int(time.time())


def _usage_filter(body: dict[str, Any], headers: dict[str, str]) -> Callable[[], PassFilter] | None:
    """The gateway always asks OpenAI upstreams for usage; hide it if the client didn't."""
    options = body.get("stream_options")
    wants_usage = isinstance(options, dict) and options.get("include_usage") is True
    return None if wants_usage else OpenAIUsageStripper


def _bearer(headers: Mapping[str, str], scope: Scope) -> str | None:
    return bearer_token(headers)


CHAT = ChatEndpoint(
    dialect=lambda state: state.dialects.openai,
    name="chat.completions",
    token=_bearer,
    decode=lambda dialect, body, headers: dialect.decode_request(body, headers),
    pass_filter=_usage_filter,
)


async def chat_completions(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_chat(CHAT, state, scope, receive, send)


async def list_models(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """GET /v1/models (list) and GET /v1/models/{id} (one), in the OpenAI shape, or in
    the Anthropic shape when the client sends `anthropic-version`."""
    responder = Responder(send, new_request_id())
    headers = header_map(scope)
    anthropic_client = "anthropic-version" in headers
    dialect = state.dialects.anthropic if anthropic_client else state.dialects.openai
    token = (
        headers.get("x-api-key")
        if anthropic_client and "x-api-key" in headers
        else bearer_token(headers)
    )
    wanted = scope["path"].removeprefix("/v1/models").strip("/") or None
    try:
        principal = await admit(state, token, client_ip(scope))
        if wanted is not None:
            policy.check_model(principal, wanted, state.catalog)
    except GatewayError as err:
        await render_error(responder, dialect, err)
        return
    catalog = state.catalog
    models = [wanted] if wanted else [m for m in catalog.models() if policy.may_use(principal, m)]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_STARTED))
    if anthropic_client:
        entries = [
            {"type": "model", "id": m, "display_name": m, "created_at": stamp} for m in models
        ]
        data: Any = (
            entries[0]
            if wanted
            else {
                "data": entries,
                "has_more": False,
                "first_id": models[0] if models else None,
                "last_id": models[-1] if models else None,
            }
        )
    else:
        items = [
            {"id": m, "object": "model", "created": _STARTED, "owned_by": catalog.owner(m)}
            for m in models
        ]
        if _wants_details(scope):
            for item in items:
                item.update(model_details(str(item["id"]), catalog))
        data = items[0] if wanted else {"object": "list", "data": items}
    await responder.whole(200, JSON_HEADERS, jsonutil.dumps(data))


def _wants_details(scope: Scope) -> bool:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return any(v.lower() in DETAIL_VALUES for v in query.get("details", ()))


async def not_found(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    err = GatewayError(ErrorKind.NOT_FOUND, f"Unknown endpoint: {scope['method']} {scope['path']}")
    await render_error(Responder(send, new_request_id()), state.dialects.openai, err)
