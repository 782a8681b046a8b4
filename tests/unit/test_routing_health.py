"""The breaker state machine, the health component and failure classification (pure)."""

import asyncio
import random

from switchgate.errors import ErrorKind, GatewayError
from switchgate.routing.breaker import Breaker, Ladder, Phase
from switchgate.routing.channels import Channel
from switchgate.routing.failures import Blame, blame, context_overflow, fails_over, retry_after
from switchgate.routing.health import Health, channel_subject, model_subject
from switchgate.routing.selector import plan


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_ladder_opens_after_threshold_and_doubles_on_failed_trials() -> None:
    ladder = Ladder(threshold=3, base=10, max=300, retry_after_max=300)
    b = Breaker()
    for _ in range(2):
        b = b.failed(0, ladder)
        assert b.phase(0) is Phase.CLOSED
    b = b.failed(0, ladder)
    assert b.phase(0) is Phase.OPEN and b.until == 10
    assert b.phase(10) is Phase.HALF_OPEN
    b = b.failed(10, ladder)  # the trial failed: open again, twice as long
    assert b.phase(10) is Phase.OPEN and b.until == 30
    b = b.failed(30, ladder)
    assert b.until == 70
    for _ in range(10):
        b = b.failed(b.until, ladder)
    assert b.until - b.updated == 300, "capped at the maximum"


def test_retry_after_opens_at_once_for_that_long_capped() -> None:
    ladder = Ladder(max=30, retry_after_max=300)
    b = Breaker().failed(0, ladder, retry_after=42)
    assert b.phase(41) is Phase.OPEN and b.phase(42) is Phase.HALF_OPEN
    assert Breaker().failed(0, ladder, retry_after=10_000).until == 300


def test_health_half_open_admits_one_trial_and_success_closes() -> None:
    async def run() -> None:
        clock = Clock()
        health = Health(Ladder(threshold=1, base=5), clock)
        subject = model_subject(1, "m")
        health.failure(subject, reason="boom")
        assert health.blocked(1, "m") is Phase.OPEN
        assert health.blocked(1, "other") is Phase.CLOSED, "another model is not affected"
        assert health.blocked(2, "m") is Phase.CLOSED
        clock.now += 5
        assert health.blocked(1, "m") is Phase.HALF_OPEN
        assert await health.claim_probe(subject)
        assert not await health.claim_probe(subject), "only one trial at a time"
        health.success(channel_subject(1), subject)
        assert not health.any_failing and health.blocked(1, "m") is Phase.CLOSED

    asyncio.run(run())


def test_plan_puts_open_channels_last_and_keeps_priority() -> None:
    clock = Clock()
    health = Health(Ladder(threshold=1), clock)
    a = Channel(1, "a", "openai", "http://a", "k", ("m", "n"), priority=10)
    b = Channel(2, "b", "openai", "http://b", "k", ("m", "n"), priority=0)
    rng = random.Random(1)
    assert [c.id for c in plan([b, a], health, rng, "m")] == [1, 2]
    health.failure(model_subject(1, "m"))
    assert [c.id for c in plan([b, a], health, rng, "m")] == [2, 1]
    assert [c.id for c in plan([b, a], health, rng, "n")] == [1, 2]
    health.failure(channel_subject(1))
    assert [c.id for c in plan([b, a], health, rng, "n")] == [2, 1]


def test_apply_ignores_older_states_from_other_processes() -> None:
    clock = Clock()
    health = Health(Ladder(threshold=1), clock)
    health.failure("c:1")
    newer = health.snapshot()
    health.apply("c:1", Breaker(updated=clock.now - 5))  # an old "closed"
    assert health.snapshot() == newer
    health.apply("c:1", Breaker(updated=clock.now + 1))
    assert not health.any_failing


def err(
    status: int | None, kind: ErrorKind, message: str = "x", code: str | None = None
) -> GatewayError:
    return GatewayError(kind, message, code=code, upstream_status=status)


def test_blame_by_what_failed() -> None:
    assert blame(err(None, ErrorKind.UPSTREAM_TIMEOUT)) is Blame.CHANNEL
    assert blame(err(None, ErrorKind.UPSTREAM_ERROR)) is Blame.CHANNEL
    assert blame(err(401, ErrorKind.UPSTREAM_ERROR)) is Blame.KEY
    assert blame(err(403, ErrorKind.UPSTREAM_ERROR)) is Blame.KEY
    assert blame(err(429, ErrorKind.RATE_LIMITED)) is Blame.MODEL
    assert blame(err(503, ErrorKind.UPSTREAM_OVERLOADED)) is Blame.MODEL
    missing = err(404, ErrorKind.INVALID_REQUEST, "The model does not exist", "model_not_found")
    assert blame(missing) is Blame.MODEL and fails_over(missing)
    bad = err(400, ErrorKind.INVALID_REQUEST, "Invalid temperature")
    assert blame(bad) is Blame.NONE and not fails_over(bad)


def test_context_overflow_is_recognised_and_content_policy_is_not() -> None:
    assert context_overflow(
        err(400, ErrorKind.INVALID_REQUEST, "This model's maximum context length is 8192 tokens")
    )
    assert context_overflow(err(400, ErrorKind.INVALID_REQUEST, "prompt is too long: 250000"))
    assert not context_overflow(
        err(400, ErrorKind.INVALID_REQUEST, "Rejected by the content policy (too many tokens)")
    )
    assert not context_overflow(err(500, ErrorKind.UPSTREAM_ERROR, "context window"))


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=1445412500.0) == 10
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None


def test_keys_are_used_in_weighted_turns_skipping_disabled_and_open_ones() -> None:
    from switchgate.routing.health import key_subject
    from switchgate.routing.keys import ChannelKey, KeyPicker, parse_keys

    health = Health(Ladder(threshold=1), Clock())
    picker = KeyPicker()
    keys = (ChannelKey(0, "a", 1), ChannelKey(1, "b", 3), ChannelKey(2, "c", 1, "disabled"))
    picked = [picker.pick(9, keys, health).position for _ in range(8)]  # type: ignore[union-attr]
    assert picked == [0, 1, 1, 1, 0, 1, 1, 1]
    health.failure(key_subject(9, 1))
    assert {picker.pick(9, keys, health).position for _ in range(4)} == {0}  # type: ignore[union-attr]
    assert picker.pick(9, (ChannelKey(0, "x", 1, "disabled"),), health) is None
    parsed = parse_keys(["k1", {"key": "k2", "weight": 2}])
    assert parsed == [("k1", 1, None, None), ("k2", 2, None, None)]
    assert parse_keys([{"key": "k3", "max_concurrency": 4, "rpm": 0}]) == [("k3", 1, 4, None)]
    for bad in (
        ["k", "k"],
        [""],
        [{"key": "k", "weight": 0}],
        [3],
        [{"key": "k", "rpm": -1}],
        [{"key": "k", "rpm": 10**10}],
        [{"key": "k", "weight": 10**10}],
        [{"key": "k", "max_concurrency": True}],
        [{"key": "k", "burst": 3}],
    ):
        try:
            parse_keys(bad)
        except ValueError:
            continue
        raise AssertionError(bad)
