"""The one attempt pipeline: every surface (chat in each dialect, Responses, embeddings,
images, audio, rerank) reaches upstreams through `attempt()`:

    plan the candidates (routing/selector.py: priority, weight, health)
    per candidate, at most `max_attempts` sends in all:
        half-open breaker? take its one trial slot, else try it last
        build the request (the surface's Route), send with the channel's time limits
        error status -> classify; the client's own error (400, content policy ...) is
            returned at once; a short Retry-After (<= 2 s) retries the same channel once;
            otherwise record the failure against what failed (routing/failures.py) and
            move on
        streamed call -> wait for the first body bytes within the first-byte limit
            (headers alone are not an answer), so a silent upstream still fails over
        success -> close the breakers, hand the response to the Route to deliver
    a delivery that ended in an upstream failure mid-stream counts against the model

Nothing is retried once a byte reached the client (the Route's delivery owns that).
"""

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from switchgate.errors import ErrorKind, GatewayError
from switchgate.observability.tracing import describe_attempt
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.relay.authorize import authorized
from switchgate.relay.gate import admit_model
from switchgate.relay.outcome import Outcome
from switchgate.relay.upstream import UpstreamResponse, read_all, wait_body
from switchgate.routing.channels import Channel
from switchgate.routing.failures import (
    Blame,
    blame,
    context_overflow,
    fails_over,
    key_refused,
    retry_after,
)
from switchgate.routing.health import Health, channel_subject, key_subject, model_subject
from switchgate.routing.key_caps import AtCap, Slot, all_capped, take_capped
from switchgate.routing.keys import ChannelKey
from switchgate.routing.limits import channel_limits
from switchgate.routing.selector import admitted, larger_windows, plan
from switchgate.state import AppState


def target_for(channel: Channel, model: str, key: str | None = None) -> Target:
    extra = channel.extra
    return Target(
        base_url=channel.base_url,
        api_key=key if key is not None else channel.api_key,
        upstream_model=channel.upstream_model(model),
        extra_headers=extra.get("headers", {}),
        api_version=extra.get("api_version"),
        options=extra,
    )


class Route(Protocol):
    """What one call tells the attempt pipeline."""

    def serves(self, channel: Channel) -> bool:
        """Whether `channel` may carry this call at all (its kind serves the operation,
        it allows the call's paid options): the filter the caller applied to the model's
        own channels, applied to each fallback model's."""
        ...

    def build(self, channel: Channel, target: Target) -> UpstreamRequest | None:
        """The upstream request for this candidate (None: this channel can't serve it)."""
        ...

    def classify(
        self, channel: Channel, status: int, headers: Mapping[str, str], body: bytes
    ) -> GatewayError:
        """An upstream error answer (`headers` lower-cased) as the gateway's error."""
        ...

    async def deliver(self, candidate: "Candidate", response: UpstreamResponse) -> None:
        """Answer the client from a successful response (sets outcome.error on a
        failure after the first byte)."""
        ...


@dataclass(slots=True)
class Candidate:
    channel: Channel
    target: Target
    key_index: int = 0  # the key's position in the channel (routing/keys.py)
    key: ChannelKey | None = None  # the key itself, for its caps (None: the channel's own)
    slot: Slot | None = None  # the key's cap slot this send holds (routing/key_caps.py)

    def subject(self, what: Blame, model: str) -> str | None:
        if what is Blame.CHANNEL:
            return channel_subject(self.channel.id)
        if what is Blame.MODEL:
            return model_subject(self.channel.id, model)
        if what is Blame.KEY:
            return key_subject(self.channel.id, self.key_index)
        return None


def record_failure(
    health: Health,
    candidate: Candidate,
    model: str,
    error: GatewayError,
    wait: float | None = None,
) -> None:
    subject = candidate.subject(blame(error), model)
    if subject is not None:
        health.failure(subject, wait, error.message[:200])


async def attempt(
    state: AppState,
    model: str,
    channels: Sequence[Channel],
    route: Route,
    outcome: Outcome,
    *,
    stream: bool,
    no_channel: Callable[[], GatewayError] | None = None,
) -> None:
    """Serve the call from `model`'s channels, then from the operator's fallback models
    for it (catalog.fallbacks, routing/fallbacks.py) when every candidate failed or none
    could take the prompt's length; a fallback model's channels pass `route.serves` as
    the caller's filter let `channels` through."""
    if state.model_rates:  # SWITCHGATE_MODEL_LIMITS (scale-out, docs/scaling.md)
        await admit_model(state, model)
    run = _Run(state, route, model, stream)
    if await _serve_model(run, model, channels, outcome):
        return
    for fallback in state.catalog.fallbacks.get(model, ()):
        fallback_channels = [
            c for c in state.catalog.channels_by_model.get(fallback, ()) if route.serves(c)
        ]
        if fallback_channels and run.tries < state.settings.routing.max_attempts:
            run.model, run.overflow = fallback, None
            if await _serve_model(run, fallback, fallback_channels, outcome):
                return
    if run.overflow is not None:
        raise run.overflow  # no candidate could take it: the client's 400
    if run.last_error is not None:
        raise run.last_error
    if run.at_cap is not None:  # every candidate's keys were at their caps
        state.metrics.rate_limited.labels("key_cap").inc()
        raise all_capped(model, run.at_cap)
    raise (no_channel or _no_channel(model))()


async def _serve_model(
    run: "_Run", model: str, channels: Sequence[Channel], outcome: Outcome
) -> bool:
    """True once a candidate answered (delivered); False when every one failed."""
    state, route = run.state, run.route
    health = state.health
    with state.tracing.span("route", **{"switchgate.model": model}):
        queue = plan(channels, health, state.rng, model)
    deferred: set[int] = set()
    i = 0
    while i < len(queue) and run.tries < state.settings.routing.max_attempts:
        channel = queue[i]
        i += 1
        trials: list[str] = []
        if channel.id not in deferred and not await admitted(health, channel, model, trials):
            deferred.add(channel.id)  # another call holds its trial slot: try it last
            queue.append(channel)
            continue
        key = state.keys.pick(channel.id, channel.key_list(), health)
        if key is None:
            continue  # every key of the channel is disabled
        slot = None
        if key.capped:  # only keys with a cap pay for counting (routing/key_caps.py)
            capped = await run.take_capped(channel, key)
            if capped is None:
                continue  # every usable key of the channel is at its cap
            key, slot = capped
        try:
            target = target_for(channel, model, key.key)
            candidate = Candidate(channel, target, key.position, key, slot)
            if not await run.authorize(candidate, trials):
                continue
            request = route.build(channel, candidate.target)
            if request is None:
                continue
            outcome.channel, outcome.upstream_model = channel, candidate.target.upstream_model
            try:
                response = await run.send(candidate, request, trials)
            finally:
                outcome.upstream_attempts = run.tries  # for the request log's detail view
            if response is None:
                if run.overflow is not None:  # only a larger window can take this prompt
                    upstream = candidate.target.upstream_model
                    queue[i:] = larger_windows(queue[i:], model, upstream)
                elif run.key_refused and len(channel.key_list()) > 1:
                    queue.insert(i, channel)  # the same channel again, with its next key
                continue
            await _deliver(run, channel, candidate, response, outcome)
            return True
        finally:
            if slot is not None:
                slot.release()  # the call on this key is over (delivered or failed)
    return False


async def _deliver(
    run: "_Run",
    channel: Channel,
    candidate: Candidate,
    response: UpstreamResponse,
    outcome: Outcome,
) -> None:
    state, model, health = run.state, run.model, run.state.health
    try:
        health.success(channel_subject(channel.id), model_subject(channel.id, model))
        await run.route.deliver(candidate, response)
    finally:
        response.release()
    failed = outcome.error
    if failed is not None and failed.kind in (
        ErrorKind.UPSTREAM_ERROR,
        ErrorKind.UPSTREAM_TIMEOUT,
    ):
        health.failure(model_subject(channel.id, model), None, failed.message[:200])
        state.channel_errors.record(channel.id, failed.message)


class _Run:
    """The sends of one call: counts them, retries a short Retry-After once, records
    what failed."""

    def __init__(self, state: AppState, route: Route, model: str, stream: bool) -> None:
        self.state, self.route, self.model, self.stream = state, route, model, stream
        self.tries = 0
        self.last_error: GatewayError | None = None
        self.key_refused = False
        self.overflow: GatewayError | None = None  # a context-length 400 (try larger)
        self.last_failed: tuple[int, str] | None = None  # (channel id, reason), for metrics
        self.at_cap: float | None = None  # shortest wait of a candidate whose keys were capped

    async def take_capped(
        self, channel: Channel, first: ChannelKey
    ) -> tuple[ChannelKey, Slot | None] | None:
        """`first` (a capped key whose turn it is) with its slot, or the channel's next
        usable key with room; None when every one is at its cap."""
        state = self.state
        hold = self._hold(channel)
        taken = await take_capped(
            state.keys, state.key_caps, channel.id, channel.key_list(), state.health, first, hold
        )
        if isinstance(taken, AtCap):
            self.at_cap = taken.wait if self.at_cap is None else min(self.at_cap, taken.wait)
            return None
        return taken

    def _hold(self, channel: Channel) -> float:
        """The longest a call can keep its key's slot: one send's total time limit, or
        two and the short Retry-After wait between them when it may resend on the same
        key (`send`), so a Redis lease does not expire mid-call."""
        state = self.state
        total = channel_limits(channel, state.settings.timeouts, self.stream)[3]
        routing = state.settings.routing
        if routing.max_attempts < 2 or routing.short_retry_after <= 0:
            return total
        return 2 * total + routing.short_retry_after

    async def _may_resend(self, candidate: Candidate) -> bool:
        """A resend on the same key counts against its rpm like any send; False when the
        key's minute has no room for it (the call moves on instead)."""
        key = candidate.key
        if key is None or key.rpm is None:
            return True
        channel = candidate.channel
        refused = await self.state.key_caps.count_send(channel.id, key, self._hold(channel))
        return refused is None

    async def authorize(self, candidate: Candidate, trials: list[str]) -> bool:
        """Fetch the candidate's credentials when its kind needs that (Authorizer, e.g. an
        OAuth token); a failure counts against the channel, and the call fails over."""
        try:
            candidate.target = await authorized(
                self.state.kinds, candidate.channel.kind, candidate.target
            )
            return True
        except GatewayError as error:
            self.last_error = error
            subject = channel_subject(candidate.channel.id)
            self.state.health.failure(subject, None, error.message[:200])
            for other in trials:  # a failed trial re-opens what it was probing
                if other != subject:
                    self.state.health.failure(other, None, error.message[:200])
            self.state.channel_errors.record(candidate.channel.id, error.message)
            return False

    async def send(
        self, candidate: Candidate, request: UpstreamRequest, trials: list[str]
    ) -> UpstreamResponse | None:
        """The response from this candidate, or None after recording why not. Raises
        the client's own errors."""
        state, settings, health = self.state, self.state.settings.routing, self.state.health
        channel, model = candidate.channel, self.model
        limits = channel_limits(channel, state.settings.timeouts, self.stream)
        retried = self.key_refused = False
        metrics = state.metrics
        while True:
            self.tries += 1
            retry_of = None
            if self.last_failed is not None:  # this send retries an attempt that failed
                metrics.retried(self.last_failed[0], self.last_failed[1], channel.id)
                retry_of = self.last_failed[1]
            with state.tracing.span("upstream", **{"switchgate.channel": channel.name}) as span:
                error, wait, response = await _send(
                    state, self.route, candidate, request, limits, self.stream
                )
                if span is not None:
                    describe_attempt(span, response, error, retry_of)
            if response is not None:
                metrics.attempt_ok(channel.id)
                self.last_failed = None
                return response
            assert error is not None
            self.last_failed = (channel.id, metrics.attempt_failed(channel.id, error))
            self.last_error = error
            if not fails_over(error):
                health.success(*trials)  # it answered: the client's error, not its own
                if context_overflow(error):
                    self.overflow = error
                    return None
                raise error
            short = wait is not None and wait <= settings.short_retry_after
            if short and not retried and self.tries < settings.max_attempts:
                retried = True
                await asyncio.sleep(wait or 0.0)
                if await self._may_resend(candidate):
                    continue
            record_failure(health, candidate, model, error, wait)
            if key_refused(error):
                reason = f"HTTP {error.upstream_status}: {error.message}"
                state.keys.refuse(state.db, channel.id, candidate.key_index, reason)
                self.key_refused = True
            for subject in trials:  # a failed trial re-opens what it was probing
                if subject != candidate.subject(blame(error), model):
                    health.failure(subject, None, error.message[:200])
            state.channel_errors.record(channel.id, error.message)
            return None


def _no_channel(model: str) -> Callable[[], GatewayError]:
    return lambda: GatewayError(
        ErrorKind.UPSTREAM_ERROR, f"No channel is available for the model '{model}'."
    )


async def _send(
    state: AppState,
    route: Route,
    candidate: Candidate,
    request: UpstreamRequest,
    limits: tuple[float, float, float, float],
    stream: bool,
) -> tuple[GatewayError | None, float | None, UpstreamResponse | None]:
    """One send: (error, Retry-After seconds, None) or (None, None, response)."""
    try:
        response = await state.upstream.send(request, limits)
    except GatewayError as err:
        return err, None, None
    try:
        if response.status >= 400:
            body = await read_all(response)
            error = route.classify(candidate.channel, response.status, response.headers, body)
            wait = retry_after(response.headers)
            if wait is None and error.retry_after is not None:
                wait = float(error.retry_after)
            if error.retry_after is None and wait is not None:
                error.retry_after = math.ceil(wait)
            response.release()
            return error, wait, None
        if stream:
            await wait_body(response, limits[1])
    except GatewayError as err:
        response.release()
        return err, None, None
    except BaseException:
        response.release()
        raise
    return None, None, response
