"""OpenAI Realtime over WebSocket: `GET /v1/realtime?model=M` (protocols §2.8), proxied.

- Auth: `Authorization: Bearer KEY`, or the browser form `Sec-WebSocket-Protocol: realtime,
  openai-insecure-api-key.KEY` (then accepted with the subprotocol `realtime`).
- Refused before the handshake completes (HTTP 401/402/403/404 with an OpenAI error body
  when the server supports the denial-response extension, else close code 1008) for a bad
  key, an unknown model, or a balance that cannot cover one response's hold.
- The upstream is the model's first reachable OpenAI channel: `ws(s)://{base}/realtime?model=
  UPSTREAM_MODEL` with the channel key; `OpenAI-Beta` is forwarded when the client sent it.
  Frames are relayed both ways unchanged; either side closing closes the other.
- Billing: a fixed worst-case hold (SESSION_HOLD_INPUT_TOKENS at the input price plus the
  default output hold at the output price, see billing/realtime.py) is reserved at connect.
  Each `response.done` is charged from its `usage` as it arrives (settle), logged as one
  request record, and the hold is taken again; when the balance cannot cover it, the client
  gets an `error` event and the session is closed (code 1000).
- Input-audio transcription: each `conversation.item.input_audio_transcription.completed`
  is charged the same way (settle, one record with endpoint `realtime.transcription`, hold
  again) at the transcription model's price; see relay/realtime_transcription.py.
"""

import asyncio
import logging
import re
import time
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs, quote

from switchgate import jsonutil
from switchgate.accounts.auth import Principal
from switchgate.billing.holds import Hold
from switchgate.billing.pricing import Price
from switchgate.billing.realtime import realtime_cost, realtime_hold, realtime_usage
from switchgate.billing.realtime_transcription import COMPLETED
from switchgate.core.usage import Usage
from switchgate.dialects.openai_chat.errors import openai_error_body, render_openai_error
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.relay import policy
from switchgate.relay.asgi import Receive, Scope, Send, client_ip, header_map
from switchgate.relay.attempt import Candidate, record_failure, target_for
from switchgate.relay.gate import admit, bearer_token, new_request_id
from switchgate.relay.outcome import Outcome
from switchgate.relay.realtime_transcription import ENDPOINT, TranscriptionMeter
from switchgate.routing.channels import Channel
from switchgate.routing.health import channel_subject, model_subject
from switchgate.routing.selector import plan
from switchgate.state import AppState
from switchgate.storage.db import now_ms

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger("switchgate.realtime")

PATH: Final = "/v1/realtime"
SESSION_HOLD_INPUT_TOKENS: Final = 16_384
_KEY_PROTOCOL: Final = "openai-insecure-api-key."
# The upstream events the gateway reads (one scan of each text frame); anything else is
# only relayed. Matched as a quoted JSON string, then checked on the parsed event's type.
_WATCHED: Final = re.compile(
    r'"(?:response\.done|session\.(?:created|updated)|'
    r'conversation\.item\.input_audio_transcription\.completed)"'
)


def subprotocol_token(offered: list[str]) -> str | None:
    for protocol in offered:
        if protocol.startswith(_KEY_PROTOCOL):
            return protocol[len(_KEY_PROTOCOL) :]
    return None


def realtime_url(base_url: str, upstream_model: str) -> str:
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        base = "wss://" + base[len("https://") :]
    elif base.startswith("http://"):
        base = "ws://" + base[len("http://") :]
    return f"{base}/realtime?model={quote(upstream_model, safe='')}"


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


async def _connect_upstream(
    state: AppState, model: str, headers: dict[str, str]
) -> tuple["aiohttp.ClientWebSocketResponse", Channel, str]:
    channels = [c for c in state.catalog.channels_by_model.get(model, ()) if c.kind == "openai"]
    last_error: GatewayError | None = None
    for channel in plan(tuple(channels), state.health, state.rng, model):
        target = target_for(channel, model)
        upstream_headers = {"authorization": f"Bearer {target.api_key}", **target.extra_headers}
        if "openai-beta" in headers:
            upstream_headers["openai-beta"] = headers["openai-beta"]
        try:
            ws = await state.upstream.ws_connect(
                realtime_url(target.base_url, target.upstream_model), upstream_headers
            )
        except GatewayError as err:
            record_failure(state.health, Candidate(channel, target), model, err)
            last_error = err
            continue
        state.health.success(channel_subject(channel.id), model_subject(channel.id, model))
        return ws, channel, target.upstream_model
    if last_error is not None:
        raise last_error
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
        principal = await admit(state, bearer_token(headers) or subprotocol_token(offered), ip)
        if not model:
            raise invalid(
                "Missing required parameter: 'model'.", "model", "missing_required_parameter"
            )
        policy.check_model(principal, model, state.catalog)
        price = policy.price_of(model, state.catalog)
        hold = session_hold(state, price)
        reservation = Hold(state.book, state.recorder.token_spend, principal)
        await reservation.take(hold)  # against the balance and the token's limit
    except GatewayError as err:
        await _deny(scope, send, err)
        return
    try:
        upstream, channel, upstream_model = await _connect_upstream(state, model, headers)
    except GatewayError as err:
        reservation.settle(0)
        await _deny(scope, send, err)
        return
    session = _Session(state, principal, price, hold, reservation, receive, send)
    session.model, session.upstream_model, session.channel, session.ip = (
        model,
        upstream_model,
        channel,
        ip,
    )
    try:
        subprotocol = "realtime" if "realtime" in offered else None
        await send({"type": "websocket.accept", "subprotocol": subprotocol})
        await session.run(upstream)
    finally:
        await upstream.close()
        reservation.settle(0)  # what is still held for the next response


class _Session:
    """One proxied connection: two pumps, and billing on every `response.done` and every
    completed input-audio transcription."""

    def __init__(
        self,
        state: AppState,
        principal: Principal,
        price: Price,
        hold: int,
        reservation: Hold,
        receive: Receive,
        send: Send,
    ) -> None:
        self.state, self.principal, self.price = state, principal, price
        self.hold = hold  # reserved for each response in turn
        self.reservation = reservation  # what is reserved right now
        self._receive, self._send = receive, send
        self.model = self.upstream_model = ""
        self.channel: Channel | None = None
        self.ip: str | None = None
        self.client_open = True
        self.transcription = TranscriptionMeter(
            f"user {principal.user_id}, token {principal.token_id}"
        )
        self._since = time.perf_counter()
        self._since_ms = now_ms()

    async def run(self, upstream: "aiohttp.ClientWebSocketResponse") -> None:
        tasks = {
            asyncio.create_task(self._from_client(upstream)),
            asyncio.create_task(self._from_upstream(upstream)),
        }
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.client_open:
                self.client_open = False
                try:
                    await self._send({"type": "websocket.close", "code": 1000})
                except Exception:  # the client may already be gone
                    pass

    async def _from_client(self, upstream: "aiohttp.ClientWebSocketResponse") -> None:
        while True:
            message = await self._receive()
            kind = message["type"]
            if kind == "websocket.disconnect":
                self.client_open = False
                return
            if kind != "websocket.receive":
                continue
            text = message.get("text")
            if text is not None:
                if "response.create" in text:
                    self._since, self._since_ms = time.perf_counter(), now_ms()
                if '"session.update"' in text:
                    self.transcription.learn_from_client(text)
                await upstream.send_str(text)
            elif message.get("bytes") is not None:
                await upstream.send_bytes(message["bytes"])

    async def _from_upstream(self, upstream: "aiohttp.ClientWebSocketResponse") -> None:
        from aiohttp import WSMsgType  # loaded once a session runs, not at start-up

        async for message in upstream:
            if message.type == WSMsgType.TEXT:
                text: str = message.data
                await self._send({"type": "websocket.send", "text": text})
                if _WATCHED.search(text) is not None and not await self._on_event(text):
                    return
            elif message.type == WSMsgType.BINARY:
                await self._send({"type": "websocket.send", "bytes": message.data})
            else:
                return

    async def _on_event(self, text: str) -> bool:
        """Read one watched upstream event; False when the session must end (balance gone)."""
        try:
            event = jsonutil.loads(text)
        except jsonutil.JSONDecodeError:
            return True
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "response.done":
            response = event.get("response")
            usage = realtime_usage(response.get("usage") if isinstance(response, dict) else None)
            if usage is None:
                log.warning("realtime response.done without usage (model %s)", self.model)
            cost = realtime_cost(self.price, usage) if usage is not None else 0
            outcome = self._outcome(usage.usage if usage is not None else None, cost)
            outcome.started, outcome.started_ms = self._since, self._since_ms
            return await self._charge(outcome)
        if kind in ("session.created", "session.updated"):
            self.transcription.learn(event.get("session"))
        elif kind == COMPLETED:
            state = self.state
            charge = self.transcription.charge(event, state.catalog, self.channel, state.tokenizer)
            if charge is not None:
                outcome = self._outcome(charge.usage, charge.cost, ENDPOINT)
                outcome.model, outcome.upstream_model = charge.model, charge.upstream_model
                return await self._charge(outcome)
        return True

    async def _charge(self, outcome: Outcome) -> bool:
        """Settle one charge against the hold, record it, and hold again for the next one."""
        outcome.cost = self.reservation.settle(outcome.cost)
        self.state.recorder.add(outcome.record())
        try:
            policy.check_principal(self.principal, self.ip, self.state.recorder.token_spend)
            await self.reservation.take(self.hold)
        except GatewayError as err:
            await self._error(err)
            return False
        return True

    def _outcome(self, usage: Usage | None, cost: int, endpoint: str = "realtime") -> Outcome:
        """A record of one charge, started now (response.done's start is set by the caller)."""
        return Outcome(
            request_id=new_request_id(),
            dialect="realtime",
            endpoint=endpoint,
            started=time.perf_counter(),
            started_ms=now_ms(),
            client_ip=self.ip,
            user_id=self.principal.user_id,
            token_id=self.principal.token_id,
            model=self.model,
            upstream_model=self.upstream_model,
            channel=self.channel,
            stream=True,
            usage=usage,
            cost=cost,
        )

    async def _error(self, err: GatewayError) -> None:
        body = openai_error_body(err)["error"]
        event = {
            "type": "error",
            "event_id": "event_" + new_request_id().removeprefix("req_"),
            "error": {**body, "event_id": None},
        }
        await self._send({"type": "websocket.send", "text": jsonutil.dumps_str(event)})
