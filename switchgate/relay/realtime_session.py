"""One proxied Realtime session (relay/realtime.py accepts it): two pumps, billing on
every `response.done` and every completed input-audio transcription, and the caller
checked again during the session (issue 20 #5):

- every client `response.create` admits the token again (status, expiry, IPs, spending
  limit, and the requests-per-minute limit, counted per response): a rate-limited one is
  answered with an `error` event and not forwarded, any other refusal ends the session;
- a watcher re-reads the token from the cache every REVOCATION_CHECK_SECONDS (the cache
  follows the database's config version, so within about a second of a change): a token
  or user disabled, deleted or expired meanwhile gets an `error` event and the session is
  closed with code 1008, even when idle.
"""

import asyncio
import logging
import re
import time
from typing import TYPE_CHECKING, Final

from switchgate import jsonutil
from switchgate.accounts.auth import Principal
from switchgate.billing.holds import Hold
from switchgate.billing.pricing import Price
from switchgate.billing.realtime import realtime_cost, realtime_hold, realtime_usage
from switchgate.billing.realtime_estimate import (
    AUDIO_DELTA_MARKERS,
    TEXT_DELTAS,
    ResponseMeter,
    client_frame_tokens,
    context_hold_tokens,
)
from switchgate.billing.realtime_transcription import COMPLETED
from switchgate.core.usage import Usage
from switchgate.dialects.openai_chat.errors import openai_error_body
from switchgate.errors import ErrorKind, GatewayError
from switchgate.relay import policy
from switchgate.relay.asgi import Receive, Send
from switchgate.relay.gate import admit, new_request_id
from switchgate.relay.outcome import Outcome
from switchgate.relay.realtime_transcription import ENDPOINT, TranscriptionMeter
from switchgate.routing.channels import Channel
from switchgate.state import AppState
from switchgate.storage.db import now_ms

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger("switchgate.realtime")

REVOCATION_CHECK_SECONDS: Final = 1.0
# The upstream events the gateway reads (one scan of each text frame); anything else is
# only relayed. Matched as a quoted JSON string, then checked on the parsed event's type.
_WATCHED: Final = re.compile(
    r'"(?:response\.done|response\.created|session\.(?:created|updated)|'
    r"response\.(?:output_)?(?:text|audio_transcript)\.delta|"
    r'conversation\.item\.input_audio_transcription\.completed)"'
)
_RESPONSE_CREATE: Final = re.compile(r'"type"\s*:\s*"response\.create"')


class RealtimeSession:
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
        self.token: str | None = None  # the key the client connected with (re-checked)
        self.close_code = 1000
        self.context_tokens = 0  # the conversation so far (estimated, see realtime_estimate)
        self.pending: ResponseMeter | None = None  # the response in flight, if any
        self.minimum_hold_tokens = 0  # set by realtime.serve: the fixed minimum input hold

    async def run(self, upstream: "aiohttp.ClientWebSocketResponse") -> None:
        tasks = {
            asyncio.create_task(self._from_client(upstream)),
            asyncio.create_task(self._from_upstream(upstream)),
            asyncio.create_task(self._watch()),
        }
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.bill_abandoned()
            if self.client_open:
                self.client_open = False
                try:
                    await self._send({"type": "websocket.close", "code": self.close_code})
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
                if "response.create" in text and _RESPONSE_CREATE.search(text) is not None:
                    refused = await self._recheck(per_response=True)
                    if refused is not None:
                        await self._error(refused)
                        if refused.kind == ErrorKind.RATE_LIMITED:
                            continue  # this response is not asked for; the session goes on
                        self.close_code = 1008
                        return
                    if self.pending is not None and not await self._bill_unfinished():
                        return
                    if not await self._hold_for_conversation():
                        continue  # not forwarded: the balance cannot cover the conversation
                    self._since, self._since_ms = time.perf_counter(), now_ms()
                    self.pending = ResponseMeter()
                else:
                    self.context_tokens += client_frame_tokens(text)
                if '"session.update"' in text:
                    self.transcription.learn_from_client(text)
                await upstream.send_str(text)
            elif message.get("bytes") is not None:
                await upstream.send_bytes(message["bytes"])

    async def _hold_for_conversation(self) -> bool:
        """Before a response: hold for the conversation as it is now (at least the fixed
        minimum); False (and an error event) when the balance cannot cover it."""
        tokens = context_hold_tokens(self.context_tokens, self.minimum_hold_tokens)
        out = self.state.settings.default_hold_output_tokens
        needed = realtime_hold(self.price, tokens, out)
        if needed <= self.reservation.amount:
            return True
        try:
            await self.reservation.take(needed - self.reservation.amount)
        except GatewayError as err:
            await self._error(err)
            return False
        return True

    async def _bill_unfinished(self) -> bool:
        """The previous response never got its `response.done` (the upstream failed it):
        charged, estimated, before the next one; False when the session must end."""
        pending, self.pending = self.pending, None
        assert pending is not None
        usage = pending.usage(self.context_tokens, self.state.tokenizer.count)
        outcome = self._outcome(usage.usage, realtime_cost(self.price, usage))
        outcome.started, outcome.started_ms = self._since, self._since_ms
        return await self._charge(outcome)

    def bill_abandoned(self) -> None:
        """A response still in flight when the session ends (the client left before its
        `response.done`): charged what it delivered, estimated, from what is held."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        usage = pending.usage(self.context_tokens, self.state.tokenizer.count)
        outcome = self._outcome(usage.usage, realtime_cost(self.price, usage))
        outcome.started, outcome.started_ms = self._since, self._since_ms
        outcome.cost = self.reservation.settle(outcome.cost)
        self.state.recorder.add(outcome.record())

    async def _recheck(self, *, per_response: bool) -> GatewayError | None:
        """Admit the session's key again (None: still fine). `per_response` also counts
        one request against the token's and the user's requests-per-minute limits."""
        state = self.state
        try:
            if per_response:
                principal = await admit(state, self.token, self.ip)
            else:
                resolved = await state.tokens.resolve(policy.require_token(self.token))
                principal = policy.check_principal(resolved, self.ip, state.recorder.token_spend)
        except GatewayError as err:
            return err
        self.principal = principal  # its limits as they are now
        return None

    async def _watch(self) -> None:
        """End the session (1008) once its key or account no longer passes."""
        while True:
            await asyncio.sleep(REVOCATION_CHECK_SECONDS)
            refused = await self._recheck(per_response=False)
            if refused is not None:
                log.info("realtime session closed: %s", refused.message)
                self.close_code = 1008
                try:
                    await self._error(refused)
                except Exception:  # the client may already be gone
                    pass
                return

    async def _from_upstream(self, upstream: "aiohttp.ClientWebSocketResponse") -> None:
        from aiohttp import WSMsgType  # loaded once a session runs, not at start-up

        async for message in upstream:
            if message.type == WSMsgType.TEXT:
                text: str = message.data
                await self._send({"type": "websocket.send", "text": text})
                head = text[:80]
                if self.pending is not None and any(m in head for m in AUDIO_DELTA_MARKERS):
                    self.pending.feed_audio_frame(len(text))  # not parsed: only its size
                elif _WATCHED.search(text) is not None and not await self._on_event(text):
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
        if kind in TEXT_DELTAS or kind == "response.created":
            if self.pending is not None:
                self.pending.feed_event(event)
            return True
        if kind == "response.done":
            response = event.get("response")
            usage = realtime_usage(response.get("usage") if isinstance(response, dict) else None)
            if usage is None:
                log.warning("realtime response.done without usage (model %s)", self.model)
                usage = (self.pending or ResponseMeter()).usage(
                    self.context_tokens, self.state.tokenizer.count
                )
            self.pending = None
            self.context_tokens = max(self.context_tokens, usage.usage.total_tokens)
            cost = realtime_cost(self.price, usage)
            outcome = self._outcome(usage.usage, cost)
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
