"""OpenAI Realtime over WebSocket: `GET /v1/realtime?model=M` (protocols §2.8), proxied.

- Auth: `Authorization: Bearer KEY`, or the browser form `Sec-WebSocket-Protocol: realtime,
  openai-insecure-api-key.KEY` (then accepted with the subprotocol `realtime`).
- Refused before the handshake completes (HTTP 401/402/403/404 with an OpenAI error body
  when the server supports the denial-response extension, else close code 1008) for a bad
  key, an unknown model, or a balance that cannot cover one response's hold.
- The upstream is the model's first reachable OpenAI channel: `ws(s)://{base}/realtime?model=
  UPSTREAM_MODEL` with the channel key; `OpenAI-Beta` is forwarded when the client sent it.
  Frames are relayed both ways unchanged; either side closing closes the other.
- Billing: a worst-case hold (SESSION_HOLD_INPUT_TOKENS at the input price plus the
  default output hold at the output price, see billing/realtime.py) is reserved at connect,
  and grown before each `response.create` to cover the conversation so far; responses
  without usage, or left unfinished, are billed estimated (billing/realtime_estimate.py).
  Each `response.done` is charged from its `usage` as it arrives (settle), logged as one
  request record, and the hold is taken again; when the balance cannot cover it, the client
  gets an `error` event and the session is closed (code 1000).
- Revocation and limits during the session: relay/realtime_session.py (every
  `response.create` admitted again; a revoked key closes the session with code 1008).
- Input-audio transcription: each `conversation.item.input_audio_transcription.completed`
  is charged the same way (settle, one record with endpoint `realtime.transcription`, hold
  again) at the transcription model's price; see relay/realtime_transcription.py.
"""

import logging
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs

from switchgate.billing.holds import Hold
from switchgate.billing.pricing import Price
from switchgate.billing.realtime import realtime_hold
from switchgate.dialects.openai_chat.errors import render_openai_error
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.providers.capabilities import RealtimeProvider
from switchgate.relay import policy
from switchgate.relay.asgi import Receive, Scope, Send, client_ip, header_map
from switchgate.relay.attempt import Candidate, record_failure, target_for
from switchgate.relay.authorize import authorized
from switchgate.relay.gate import admit, bearer_token
from switchgate.relay.realtime_session import RealtimeSession
from switchgate.routing.channels import Channel
from switchgate.routing.failures import key_refused
from switchgate.routing.health import channel_subject, model_subject
from switchgate.routing.key_caps import AtCap, Slot, all_capped, take_capped
from switchgate.routing.selector import plan
from switchgate.state import AppState

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger("switchgate.realtime")

PATH: Final = "/v1/realtime"
SESSION_HOLD_INPUT_TOKENS: Final = 16_384
_KEY_PROTOCOL: Final = "openai-insecure-api-key."


def subprotocol_token(offered: list[str]) -> str | None:
    for protocol in offered:
        if protocol.startswith(_KEY_PROTOCOL):
            return protocol[len(_KEY_PROTOCOL) :]
    return None


def session_hold(state: AppState, price: Price) -> int:
    return realtime_hold(
        price, SESSION_HOLD_INPUT_TOKENS, state.settings.default_hold_output_tokens
    )


async def _deny(scope: Scope, send: Send, err: GatewayError) -> None:
    status, headers, body = render_openai_error(err)
    if "websocket.http.response" in scope.get("extensions", {}):
        raw_headers = [(k.encode(), v.encode()) for k, v in headers.items()]
        await send(
            {"type": "websocket.http.response.start", "status": status, "headers": raw_headers}
        )
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": err.message[:120]})


# How long a session's slot on a capped key is leased in Redis (released when the session
# ends; this bounds only a slot left behind by a process that died). Upstream realtime
# sessions end within an hour.
SESSION_SLOT_SECONDS: Final = 3600.0


async def _connect_upstream(
    state: AppState, model: str, headers: dict[str, str]
) -> tuple["aiohttp.ClientWebSocketResponse", Channel, str, Slot | None]:
    """The upstream WebSocket, its channel and model, and the slot the session holds on
    a capped key (release it when the session ends)."""
    apis: dict[str, RealtimeProvider] = {}
    for name, kind in state.kinds.items():
        api = kind.realtime()
        if api is not None:
            apis[name] = api
    channels = [c for c in state.catalog.channels_by_model.get(model, ()) if c.kind in apis]
    last_error: GatewayError | None = None
    at_cap: float | None = None
    for channel in plan(tuple(channels), state.health, state.rng, model):
        key = state.keys.pick(channel.id, channel.key_list(), state.health)
        if key is None:
            continue  # every key of the channel is disabled
        slot = None
        if key.capped:  # a session counts as one call in flight for its whole length
            taken = await take_capped(
                state.keys,
                state.key_caps,
                channel.id,
                channel.key_list(),
                state.health,
                key,
                SESSION_SLOT_SECONDS,
            )
            if isinstance(taken, AtCap):
                at_cap = taken.wait if at_cap is None else min(at_cap, taken.wait)
                continue
            key, slot = taken
        target = target_for(channel, model, key.key)
        api = apis[channel.kind]
        try:
            target = await authorized(state.kinds, channel.kind, target)
            upstream_headers = api.realtime_headers(target)
            if "openai-beta" in headers:
                upstream_headers["openai-beta"] = headers["openai-beta"]
            ws = await state.upstream.ws_connect(api.realtime_url(target), upstream_headers)
        except BaseException as err:
            if slot is not None:
                slot.release()
            if not isinstance(err, GatewayError):
                raise
            record_failure(state.health, Candidate(channel, target, key.position), model, err)
            if key_refused(err):
                reason = f"HTTP {err.upstream_status}: {err.message}"
                state.keys.refuse(state.db, channel.id, key.position, reason)
            last_error = err
            continue
        state.health.success(channel_subject(channel.id), model_subject(channel.id, model))
        return ws, channel, target.upstream_model, slot
    if last_error is not None:
        raise last_error
    if at_cap is not None:
        state.metrics.rate_limited.labels("key_cap").inc()
        raise all_capped(model, at_cap)
    raise GatewayError(
        ErrorKind.NOT_FOUND,
        f"The model '{model}' is not available over the Realtime API.",
        param="model",
        code="model_not_found",
    )


async def serve(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI `websocket` handler for /v1/realtime."""
    if (await receive())["type"] != "websocket.connect":
        return
    headers = header_map(scope)
    offered = [str(p) for p in scope.get("subprotocols") or ()]
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    model = (query.get("model") or [""])[0]
    ip = client_ip(scope)
    try:
        token = bearer_token(headers) or subprotocol_token(offered)
        principal = await admit(state, token, ip)
        if not model:
            raise invalid(
                "Missing required parameter: 'model'.", "model", "missing_required_parameter"
            )
        policy.check_model(principal, model, state.catalog)
        price = policy.price_of(model, state.catalog)
        hold = session_hold(state, price)
    except GatewayError as err:
        await _deny(scope, send, err)
        return
    reservation = Hold(state.book, state.recorder.token_spend, principal)
    accepted = False
    try:
        # Held against the balance and the token's limit for the whole session; the
        # session settles each response's charge and holds again; what is still held
        # when it ends is given back here, however it ends.
        async with reservation.reserve(hold):
            upstream, channel, upstream_model, slot = await _connect_upstream(state, model, headers)
            try:
                session = RealtimeSession(state, principal, price, hold, reservation, receive, send)
                session.model, session.upstream_model, session.channel, session.ip = (
                    model,
                    upstream_model,
                    channel,
                    ip,
                )
                session.token = token
                session.minimum_hold_tokens = SESSION_HOLD_INPUT_TOKENS
                subprotocol = "realtime" if "realtime" in offered else None
                accepted = True
                await send({"type": "websocket.accept", "subprotocol": subprotocol})
                await session.run(upstream)
            finally:
                try:
                    await upstream.close()
                finally:  # even when cancelled while closing: never leak the key's slot
                    if slot is not None:
                        slot.release()
    except GatewayError as err:  # before the accept: the balance or every upstream refused
        if accepted:
            raise
        await _deny(scope, send, err)
