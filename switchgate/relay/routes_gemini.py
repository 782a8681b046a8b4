"""Gemini-dialect endpoints under /v1beta (and /v1): models/{model}:{action}, model list."""

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs

from switchgate import jsonutil
from switchgate.core.request import ChatRequest
from switchgate.dialects.base import ChatDialect
from switchgate.dialects.gemini_generate.decode import gemini_count_tokens_request
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.embeddings import GEMINI_ACTIONS
from switchgate.providers.gemini_stream import GeminiSseToArray
from switchgate.relay import policy, routes_gemini_embed
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
from switchgate.relay.chat_call import PassFilter
from switchgate.relay.chat_route import ChatEndpoint, handle_chat, render_error
from switchgate.relay.count_tokens import upstream_count
from switchgate.relay.gate import admit, new_request_id, parse_json_object
from switchgate.state import AppState

PREFIXES = ("/v1beta/models", "/v1/models")


def _query(scope: Scope) -> dict[str, list[str]]:
    return parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def api_key(headers: Mapping[str, str], scope: Scope) -> str | None:
    """`x-goog-api-key` (the SDK's choice) or `?key=`."""
    if "x-goog-api-key" in headers:
        return headers["x-goog-api-key"]
    keys = _query(scope).get("key")
    return keys[0] if keys else None


def _decode(stream: bool) -> Callable[[ChatDialect, dict[str, Any], dict[str, str]], ChatRequest]:
    def decode(dialect: ChatDialect, body: dict[str, Any], headers: dict[str, str]) -> ChatRequest:
        return replace(dialect.decode_request(body, headers), stream=stream)

    return decode


def _is_sse(headers: Mapping[str, str]) -> bool:
    return headers.get(":alt") == "sse"


def _array_filter(body: dict[str, Any], headers: dict[str, str]) -> Callable[[], PassFilter] | None:
    return None if _is_sse(headers) else GeminiSseToArray


def _stream_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]] | None:
    return None if _is_sse(headers) else [(b"content-type", b"application/json")]


def _endpoint(action: str, model: str, alt: str | None) -> ChatEndpoint:
    def extra(scope: Scope) -> dict[str, str]:
        values = {":model": model, ":action": action}
        if alt:
            values[":alt"] = alt
        return values

    return ChatEndpoint(
        dialect=lambda state: state.dialects.gemini,
        name=action,
        token=api_key,
        decode=_decode(action == "streamGenerateContent"),
        pass_filter=_array_filter,
        stream_headers=_stream_headers,
        extra_headers=extra,
    )


async def dispatch(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    path: str = scope["path"]
    prefix = next(p for p in PREFIXES if path.startswith(p))
    rest = path[len(prefix) :].lstrip("/")
    method = scope["method"]
    if method == "GET":
        await _models(state, scope, send, rest or None)
        return
    model, _, action = rest.partition(":")
    alts = _query(scope).get("alt")
    alt = alts[0] if alts else None
    if method == "POST" and action in ("generateContent", "streamGenerateContent"):
        await handle_chat(_endpoint(action, model, alt), state, scope, receive, send)
    elif method == "POST" and action == "countTokens":
        await _count_tokens(state, scope, receive, send, model)
    elif method == "POST" and action in GEMINI_ACTIONS:
        await routes_gemini_embed.embed(
            state, scope, receive, send, model=model, action=action, token=api_key
        )
    else:
        err = GatewayError(ErrorKind.NOT_FOUND, f"Unknown endpoint: {method} {path}")
        await render_error(Responder(send, new_request_id()), state.dialects.gemini, err)


async def _count_tokens(
    state: AppState, scope: Scope, receive: Receive, send: Send, model: str
) -> None:
    responder = Responder(send, new_request_id())
    headers = header_map(scope)
    try:
        principal = await admit(state, api_key(headers, scope), client_ip(scope))
        body = parse_json_object(await read_body(receive, state.settings.max_body_bytes))
        request = gemini_count_tokens_request(body, model)
        policy.check_model(principal, request.model, state.catalog)
        count = await upstream_count(
            state, request.model, "gemini", body, {":action": "countTokens"}, field="totalTokens"
        )
        if count is None:
            count = state.tokenizer.count_request(request)
    except GatewayError as err:
        await render_error(responder, state.dialects.gemini, err)
        return
    await responder.whole(200, JSON_HEADERS, jsonutil.dumps({"totalTokens": count}))


def _model_entry(model: str) -> dict[str, Any]:
    return {
        "name": f"models/{model}",
        "baseModelId": model,
        "version": "switchgate",
        "displayName": model,
        "description": f"{model} via switchgate",
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
    }


async def _models(state: AppState, scope: Scope, send: Send, model: str | None) -> None:
    responder = Responder(send, new_request_id())
    headers = header_map(scope)
    try:
        principal = await admit(state, api_key(headers, scope), client_ip(scope))
        if model is not None:
            model = model.removeprefix("models/")
            policy.check_model(principal, model, state.catalog)
            await responder.whole(200, JSON_HEADERS, jsonutil.dumps(_model_entry(model)))
            return
    except GatewayError as err:
        await render_error(responder, state.dialects.gemini, err)
        return
    names = [m for m in state.catalog.models() if policy.may_use(principal, m)]
    payload = {"models": [_model_entry(m) for m in names]}
    await responder.whole(200, JSON_HEADERS, jsonutil.dumps(payload))
