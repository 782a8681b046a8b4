"""A short Retry-After resend on the same key (relay/attempt.py) goes through the key's
caps like any send: it counts against the key's rpm (and does not go when the minute
has no room: the call moves on), and the slot's lease is sized for both sends and the
wait between them, so a Redis lease cannot expire while the call still runs."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.relay.attempt import Candidate, attempt
from switchgate.relay.outcome import Outcome
from switchgate.relay.upstream import UpstreamResponse
from switchgate.routing.channels import Channel
from switchgate.routing.key_caps import AtCap, Slot
from switchgate.routing.keys import ChannelKey
from switchgate.settings import Settings
from switchgate.state import AppState


class _Response:
    def __init__(self, status: int) -> None:
        self.status = status
        self.headers = {"retry-after-ms": "10"} if status == 429 else {}

    async def read(self) -> bytes:
        return b'{"error": {"message": "slow down", "type": "rate_limit"}}'

    def release(self) -> None:
        pass


class _Upstream:
    """429 with a short Retry-After first, then 200."""

    def __init__(self) -> None:
        self.sent = 0

    async def send(self, request: UpstreamRequest, limits: object = None) -> _Response:
        self.sent += 1
        return _Response(429 if self.sent == 1 else 200)


class _Route:
    def __init__(self) -> None:
        self.delivered = 0

    def serves(self, channel: Channel) -> bool:
        return True

    def build(self, channel: Channel, target: Target) -> UpstreamRequest:
        return UpstreamRequest("POST", f"{target.base_url}/chat/completions", {}, b"{}")

    def classify(self, channel: Channel, status: int, headers: object, body: bytes) -> GatewayError:
        from switchgate.providers.openai_response import classify_openai_error

        return classify_openai_error(status, body)

    async def deliver(self, candidate: Candidate, response: UpstreamResponse) -> None:
        self.delivered += 1


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[AppState]:
    s = AppState.create(Settings(data_dir=tmp_path))
    yield s
    await s.db.dispose()


def _channel(key: ChannelKey) -> Channel:
    return Channel(1, "capped", "openai", "http://up.invalid/v1", "", ("m",), keys=(key,))


async def _call(state: AppState, key: ChannelKey) -> tuple[_Upstream, _Route, list[float]]:
    upstream, route, holds = _Upstream(), _Route(), []
    state.upstream = upstream  # type: ignore[assignment]
    take = state.key_caps.take

    async def spying(channel_id: int, key: ChannelKey, hold: float) -> Slot | AtCap:
        holds.append(hold)
        return await take(channel_id, key, hold)

    state.key_caps.take = spying  # type: ignore[method-assign]
    outcome = Outcome.begin("r", "openai", "chat", None)
    try:
        await attempt(state, "m", [_channel(key)], route, outcome, stream=False)  # type: ignore[arg-type]
    finally:
        state.key_caps.take = take  # type: ignore[method-assign]
    return upstream, route, holds


async def test_the_resend_counts_against_rpm_and_the_lease_covers_both_sends(
    state: AppState,
) -> None:
    key = ChannelKey(0, "k", max_concurrency=1, rpm=5)
    upstream, route, holds = await _call(state, key)
    assert upstream.sent == 2 and route.delivered == 1
    assert len(state.key_caps.local._sent[(1, 0)]) == 2  # both sends in the minute
    total = state.settings.timeouts.total
    assert holds and all(h >= 2 * total for h in holds)  # a lease for the resend too
    assert state.key_caps.local.inflight(1, 0) == 0  # one slot, given back


async def test_no_resend_when_the_keys_minute_is_full(state: AppState) -> None:
    key = ChannelKey(0, "k", rpm=1)
    with pytest.raises(GatewayError):
        await _call(state, key)
    assert len(state.key_caps.local._sent[(1, 0)]) == 1
