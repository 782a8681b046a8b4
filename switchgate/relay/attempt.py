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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.relay.gate import admit_model
from switchgate.relay.outcome import Outcome
from switchgate.relay.upstream import UpstreamResponse, read_all, wait_body
from switchgate.routing.breaker import Phase
from switchgate.routing.channels import Channel
from switchgate.routing.failures import Blame, blame, fails_over, retry_after
from switchgate.routing.health import Health, channel_subject, key_subject, model_subject
from switchgate.routing.limits import channel_limits
from switchgate.routing.selector import plan
from switchgate.state import AppState


def target_for(channel: Channel, model: str) -> Target:
    extra = channel.extra
    return Target(
        base_url=channel.base_url,
        api_key=channel.api_key,
        upstream_model=channel.upstream_model(model),
        extra_headers=extra.get("headers", {}),
        api_version=extra.get("api_version"),
    )


class Route(Protocol):
    """What one call tells the attempt pipeline."""

    def build(self, channel: Channel, target: Target) -> UpstreamRequest | None:
        """The upstream request for this candidate (None: this channel can't serve it)."""
        ...

    def classify(self, channel: Channel, status: int, body: bytes) -> GatewayError: ...

    async def deliver(self, channel: Channel, target: Target, response: UpstreamResponse) -> None:
        """Answer the client from a successful response (sets outcome.error on a
        failure after the first byte)."""
        ...


@dataclass(slots=True)
class Candidate:
    channel: Channel
    target: Target
    key_index: int = 0

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
    if state.model_rates:  # SWITCHGATE_MODEL_LIMITS (scale-out, docs/scaling.md)
        await admit_model(state, model)
    health = state.health
    settings = state.settings.routing
    tries = 0
    last_error: GatewayError | None = None
    metrics = state.metrics
    last_failed: tuple[int, str] | None = None  # (channel id, reason) of the last failed send
    queue = plan(channels, health, state.rng, model)
    deferred: set[int] = set()
    i = 0
    while i < len(queue) and tries < settings.max_attempts:
        channel = queue[i]
        i += 1
        if channel.id not in deferred and not await _admitted(health, channel, model):
            deferred.add(channel.id)  # another call holds its trial slot: try it last
            queue.append(channel)
            continue
        candidate = Candidate(channel, target_for(channel, model))
        request = route.build(channel, candidate.target)
        if request is None:
            continue
        outcome.channel, outcome.upstream_model = channel, candidate.target.upstream_model
        limits = channel_limits(channel, state.settings.timeouts, stream)
        retried = False
        while True:
            tries += 1
            if last_failed is not None:  # this send retries an attempt that failed
                metrics.retried(last_failed[0], last_failed[1], channel.id)
            error, wait, response = await _send(state, route, candidate, request, limits, stream)
            if response is not None:
                metrics.attempt_ok(channel.id)
                last_failed = None
                break
            assert error is not None
            last_failed = (channel.id, metrics.attempt_failed(channel.id, error))
            last_error = error
            if not fails_over(error):
                raise error
            if (
                wait is not None
                and wait <= settings.short_retry_after
                and not retried
                and tries < settings.max_attempts
            ):
                retried = True
                await asyncio.sleep(wait)
                continue
            record_failure(health, candidate, model, error, wait)
            state.channel_errors.record(channel.id, error.message)
            break
        if response is None:
            continue
        try:
            health.success(channel_subject(channel.id), model_subject(channel.id, model))
            await route.deliver(channel, candidate.target, response)
        finally:
            response.release()
        failed = outcome.error
        if failed is not None and failed.kind in (
            ErrorKind.UPSTREAM_ERROR,
            ErrorKind.UPSTREAM_TIMEOUT,
        ):
            health.failure(model_subject(channel.id, model), None, failed.message[:200])
            state.channel_errors.record(channel.id, failed.message)
        return
    if last_error is not None:
        raise last_error
    raise (no_channel or _no_channel(model))()


def _no_channel(model: str) -> Callable[[], GatewayError]:
    return lambda: GatewayError(
        ErrorKind.UPSTREAM_ERROR, f"No channel is available for the model '{model}'."
    )


async def _admitted(health: Health, channel: Channel, model: str) -> bool:
    """A closed or open candidate goes (open ones only come last, from the plan); a
    half-open one goes only as the trial request."""
    if not health.any_failing or health.blocked(channel.id, model) is not Phase.HALF_OPEN:
        return True
    for subject in health.half_open(channel.id, model):
        if not await health.claim_probe(subject):
            return False
    return True


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
            error = route.classify(candidate.channel, response.status, await read_all(response))
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
