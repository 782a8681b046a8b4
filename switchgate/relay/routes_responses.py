"""OpenAI Responses API endpoints: POST /v1/responses, GET and DELETE /v1/responses/{id}
(its sub-resources, `input_items` and `cancel`, are in routes_responses_items.py).

POST runs the shared chat pipeline (relay/chat.py `run_chat`) with the Responses dialect:
- on OpenAI channels declaring `responses = true` the body is passed through natively to
  `{base}/responses` (see responses_passthrough.py); everywhere else it is translated
  through the IR to the channel's chat API and rendered back as a Response;
- `previous_response_id` is resolved here, from this user's store only: the stored
  conversation (input + output items) is put in front of `input`, and the upstream never
  sees the id (so any channel, native or not, can continue any stored response);
- with `store` not false, the final Response object, the whole conversation and the input
  items (the full input context, listed by `GET .../input_items`) are saved once the answer
  is complete, just before the last bytes go out (so a client that continues at once
  always finds it), never inside the streaming loop;
- `background: true` is refused (400) on every channel: the gateway runs no background
  responses, and a passed-through one would be billed and stored before it had run.
"""

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from switchgate import jsonutil
from switchgate.dialects.openai_chat.validate import type_error
from switchgate.dialects.openai_responses.decode import EXTRAS_KEY
from switchgate.dialects.openai_responses.decode_items import input_items
from switchgate.dialects.openai_responses.dialect import OpenAIResponsesDialect
from switchgate.dialects.openai_responses.errors import render_responses_stream_error
from switchgate.errors import ErrorKind, GatewayError, invalid
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
from switchgate.relay.chat import run_chat
from switchgate.relay.chat_call import ChatCall
from switchgate.relay.chat_route import finishing, render_error
from switchgate.relay.disconnect import cancel_on_disconnect
from switchgate.relay.gate import admit, bearer_token, new_request_id, parse_json_object
from switchgate.relay.outcome import Outcome
from switchgate.relay.responses_passthrough import ResponsesNative, serves_responses
from switchgate.relay.routes_responses_items import SUB_RESOURCES
from switchgate.state import AppState
from switchgate.storage.responses_store import (
    delete_response,
    load_response,
    response_model,
    save_response,
)

log = logging.getLogger("switchgate.responses")
PREFIX = "/v1/responses/"


class _RequestDialect(OpenAIResponsesDialect):
    """The Responses dialect for one request: keeps the final Response it rendered, and
    numbers an in-band error after the events a passed-through stream already sent."""

    def __init__(self, native: ResponsesNative) -> None:
        super().__init__(on_final=self._keep)
        self.final: dict[str, Any] | None = None
        self._native = native

    def _keep(self, response: dict[str, Any]) -> None:
        self.final = response

    def render_stream_error(self, error: GatewayError) -> bytes:
        return render_responses_stream_error(error, self._native.sequence + 1)


class _StoringResponder(Responder):
    """Runs `before_end` (once) just before the last bytes of the response go out."""

    __slots__ = ("before_end",)

    def __init__(self, send: Send, request_id: str) -> None:
        super().__init__(send, request_id)
        self.before_end: Callable[[], Awaitable[None]] | None = None

    async def _run_hook(self) -> None:
        hook, self.before_end = self.before_end, None
        if hook is not None:
            await hook()

    async def end(self, data: bytes = b"") -> None:
        await self._run_hook()
        await super().end(data)

    async def whole(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        await self._run_hook()
        await super().whole(status, headers, body)


def _not_found(response_id: str, param: str | None = None) -> GatewayError:
    if param is not None:
        return invalid(
            f"Previous response with id '{response_id}' not found.",
            param=param,
            code="previous_response_not_found",
        )
    return GatewayError(
        ErrorKind.NOT_FOUND, f"No response found with id '{response_id}'.", code="not_found"
    )


async def create(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    native = ResponsesNative(state.kinds)
    dialect = _RequestDialect(native)
    request_id = new_request_id()
    responder = _StoringResponder(send, request_id)
    headers = header_map(scope)
    outcome = Outcome.begin(request_id, dialect.name, "responses", client_ip(scope))
    async with finishing(state, responder, dialect, outcome):
        principal = await admit(state, bearer_token(headers), outcome.client_ip)
        outcome.user_id, outcome.token_id = principal.user_id, principal.token_id
        raw = await read_body(receive, state.settings.max_body_bytes)
        body = parsed = parse_json_object(raw)
        if body.get("background") is True:
            raise invalid(
                "Unsupported value: 'background' does not support true with this gateway "
                "(it runs no background responses). Supported values are: false.",
                param="background",
                code="unsupported_value",
            )
        items = input_items(body)
        listed: list[Any] = items  # the input context as GET .../input_items lists it
        previous = body.get("previous_response_id")
        if previous is not None:
            if not isinstance(previous, str):
                raise type_error("previous_response_id", "a string", previous)
            stored = await load_response(state.db, principal.user_id, previous)
            if stored is None or not policy.may_use(principal, stored.model):
                raise _not_found(previous, "previous_response_id")
            listed = [*stored.input_items, *stored.output, *items]
            items = [*stored.conversation, *items]
            body = {**body, "input": items}
        request = dialect.decode_request(body, headers)
        outcome.model, outcome.stream = request.model, request.stream
        policy.check_model(principal, request.model, state.catalog)
        extras = request.extras.get(EXTRAS_KEY, {})
        channels = state.catalog.channels_by_model.get(request.model, ())
        if extras.get("native_only") and not any(
            serves_responses(c, state.kinds) for c in channels
        ):
            raise invalid(
                f"{extras['native_only'][0]} is not supported for the model "
                f"'{request.model}': none of its channels speaks the Responses API natively."
            )
        upstream_body = {k: v for k, v in body.items() if k != "previous_response_id"}
        if extras.get("store") is not False:

            async def store() -> None:
                final = dialect.final or native.final_response()
                if final is None or not isinstance(final.get("id"), str):
                    return
                output = final.get("output")
                conversation = [*items, *(output if isinstance(output, list) else ())]
                try:
                    await save_response(
                        state.db,
                        user_id=principal.user_id,
                        response=final,
                        conversation=conversation,
                        input_items=listed,
                        passthrough=dialect.final is None,
                    )
                except Exception:
                    log.exception("storing response %s failed", final.get("id"))

            responder.before_end = store
        call = ChatCall(
            dialect=dialect,
            request=request,
            body=upstream_body,
            raw=raw if upstream_body == parsed else jsonutil.dumps(upstream_body),
            headers=headers,
            principal=principal,
            outcome=outcome,
            native=native.for_channel,
        )
        async with cancel_on_disconnect(receive):
            await run_chat(state, call, responder)


async def by_id(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """GET /v1/responses/{id} (the stored Response), DELETE /v1/responses/{id}, and the
    sub-resources /v1/responses/{id}/{name} listed in routes_responses_items.SUB_RESOURCES."""
    dialect = OpenAIResponsesDialect()
    responder = Responder(send, new_request_id())
    response_id, _, sub = scope["path"][len(PREFIX) :].partition("/")
    method = scope["method"]
    try:
        principal = await admit(state, bearer_token(header_map(scope)), client_ip(scope))
        if principal.allowed_models is not None and response_id:
            # A token limited to some models sees only the stored responses of those
            # models, even when another token of the same user made others.
            model = await response_model(state.db, principal.user_id, response_id)
            if model is not None and not policy.may_use(principal, model):
                raise _not_found(response_id)
        handler = SUB_RESOURCES.get((method, sub))
        if response_id and handler is not None:
            body = await handler(state, principal.user_id, response_id, scope)
        elif not response_id or sub or method not in ("GET", "DELETE"):
            raise GatewayError(ErrorKind.NOT_FOUND, f"Unknown endpoint: {method} {scope['path']}")
        elif method == "GET":
            stored = await load_response(state.db, principal.user_id, response_id)
            if stored is None:
                raise _not_found(response_id)
            body = jsonutil.dumps(stored.response)
        else:
            if not await delete_response(state.db, principal.user_id, response_id):
                raise _not_found(response_id)
            body = jsonutil.dumps({"id": response_id, "object": "response", "deleted": True})
    except GatewayError as err:
        await render_error(responder, dialect, err)
        return
    await responder.whole(200, JSON_HEADERS, body)
