"""Per-key concurrency and requests-per-minute caps (routing/key_caps.py): the picker
skips a key at its cap, a channel whose keys are all at their caps is skipped, and the
Redis counts (SWITCHGATE_TEST_REDIS_URL) give the same answers across two clients."""

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from switchgate.routing.breaker import Ladder
from switchgate.routing.health import Health, key_subject
from switchgate.routing.key_caps import AtCap, KeyCaps, MemoryKeyCaps, Slot, take_capped
from switchgate.routing.keys import ChannelKey, KeyPicker
from tests.support import IN_CI, REDIS_URL


class Clock:
    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


def test_memory_concurrency_cap_holds_and_frees_on_release() -> None:
    caps = MemoryKeyCaps()
    key = ChannelKey(0, "k", max_concurrency=2)
    first, second = caps.take(1, key), caps.take(1, key)
    assert isinstance(first, Slot) and isinstance(second, Slot)
    assert caps.take(1, key) == AtCap(1.0)
    assert isinstance(caps.take(2, key), Slot)  # another channel's key 0 is another key
    first.release()
    first.release()  # idempotent: frees one slot only
    assert caps.inflight(1, 0) == 1
    third = caps.take(1, key)
    assert isinstance(third, Slot)
    assert isinstance(caps.take(1, key), AtCap)
    second.release()
    third.release()
    assert caps.inflight(1, 0) == 0


def test_memory_rpm_is_a_sliding_minute() -> None:
    clock = Clock()
    caps = MemoryKeyCaps(clock)
    key = ChannelKey(0, "k", rpm=3)
    for step in range(3):
        assert isinstance(caps.take(1, key), Slot)
        clock.now += 10 * step
    # sends at 0, 0 (+0), 10 (+10): the 4th waits until the first is 60 s old
    refused = caps.take(1, key)
    assert isinstance(refused, AtCap) and refused.wait == pytest.approx(60 - 30)
    clock.now += 30.0  # the two sends at 0 leave the minute; the one at 10 stays
    assert isinstance(caps.take(1, key), Slot)
    assert isinstance(caps.take(1, key), Slot)
    assert isinstance(caps.take(1, key), AtCap)


async def test_the_picker_skips_a_key_at_its_cap_then_the_whole_channel() -> None:
    health, picker, caps = Health(Ladder(threshold=1)), KeyPicker(), KeyCaps()
    keys = (
        ChannelKey(0, "a", max_concurrency=1),
        ChannelKey(1, "b", max_concurrency=1),
        ChannelKey(2, "c", 1, "disabled"),
    )
    held = []
    for expected in (0, 1):  # turns: a then b; both have room
        first = picker.pick(7, keys, health)
        assert first is not None
        taken = await take_capped(picker, caps, 7, keys, health, first, 30.0)
        assert isinstance(taken, tuple) and taken[0].position == expected
        held.append(taken[1])
    # a's turn again, but a is at its cap: b too, and c is disabled: the channel is full
    first = picker.pick(7, keys, health)
    assert first is not None and first.position == 0
    assert await take_capped(picker, caps, 7, keys, health, first, 30.0) == AtCap(1.0)
    held[1].release()  # b frees: a's turn falls over to b
    first = picker.pick(7, keys, health)
    taken = await take_capped(picker, caps, 7, keys, health, first, 30.0)  # type: ignore[arg-type]
    assert isinstance(taken, tuple) and taken[0].position == 1


async def test_an_uncapped_key_takes_over_and_an_open_breaker_key_is_passed_over() -> None:
    health, picker, caps = Health(Ladder(threshold=1)), KeyPicker(), KeyCaps()
    keys = (ChannelKey(0, "a", rpm=1), ChannelKey(1, "b"), ChannelKey(2, "c", rpm=5))
    taken = await take_capped(picker, caps, 3, keys, health, keys[0], 30.0)
    assert isinstance(taken, tuple) and taken[0].position == 0
    taken = await take_capped(picker, caps, 3, keys, health, keys[0], 30.0)
    assert isinstance(taken, tuple) and taken[0].position == 1 and taken[1] is None
    health.failure(key_subject(3, 1))  # b's breaker opens: c (capped, with room) serves
    taken = await take_capped(picker, caps, 3, keys, health, keys[0], 30.0)
    assert isinstance(taken, tuple) and taken[0].position == 2


@pytest.fixture
async def redis_client() -> AsyncIterator[Redis]:
    client = Redis.from_url(REDIS_URL, socket_connect_timeout=0.5)
    try:
        await client.ping()
    except (RedisError, OSError):
        await client.aclose()
        if IN_CI:
            pytest.fail(f"Redis is required in CI but {REDIS_URL} is not reachable")
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    yield client
    await client.aclose()


async def test_redis_caps_are_shared_by_two_processes(redis_client: Redis) -> None:
    prefix = f"sg:test:kc:{secrets.token_hex(6)}:"
    other = Redis.from_url(REDIS_URL)
    try:
        a, b = KeyCaps(redis_client, prefix), KeyCaps(other, prefix)
        key = ChannelKey(0, "k", max_concurrency=3)
        results = await asyncio.gather(*(c.take(1, key, 30.0) for c in (a, b) * 10))
        slots = [r for r in results if isinstance(r, Slot)]
        assert len(slots) == 3  # 20 concurrent takes through two clients, cap 3
        slots[0].release()
        await asyncio.sleep(0.1)  # the release is a background ZREM
        assert isinstance(await b.take(1, key, 30.0), Slot)
        assert isinstance(await a.take(1, key, 30.0), AtCap)

        rpm = ChannelKey(1, "r", rpm=5)
        results = await asyncio.gather(*(c.take(1, rpm, 30.0) for c in (a, b) * 6))
        assert sum(isinstance(r, Slot) for r in results) == 5
        refused = [r for r in results if isinstance(r, AtCap)]
        assert refused and all(55 < r.wait <= 60 for r in refused)
    finally:
        keys = await redis_client.keys(prefix + "*")
        if keys:
            await redis_client.delete(*keys)
        await other.aclose()


async def test_a_lost_lease_expires_after_the_hold(redis_client: Redis) -> None:
    prefix = f"sg:test:kc:{secrets.token_hex(6)}:"
    caps = KeyCaps(redis_client, prefix)
    key = ChannelKey(0, "k", max_concurrency=1)
    try:
        assert isinstance(await caps.take(1, key, -9.8), Slot)  # held 0.2 s, never released
        assert isinstance(await caps.take(1, key, 30.0), AtCap)
        await asyncio.sleep(0.3)
        assert isinstance(await caps.take(1, key, 30.0), Slot)
    finally:
        keys = await redis_client.keys(prefix + "*")
        if keys:
            await redis_client.delete(*keys)


async def test_unreachable_redis_falls_back_to_this_process() -> None:
    dead = Redis.from_url("redis://127.0.0.1:9/0", socket_connect_timeout=0.2)
    try:
        caps = KeyCaps(dead)
        key = ChannelKey(0, "k", max_concurrency=1)
        assert isinstance(await caps.take(1, key, 30.0), Slot)
        assert isinstance(await caps.take(1, key, 30.0), AtCap)
    finally:
        await dead.aclose()


async def test_a_take_cancelled_after_the_script_ran_gives_back_its_lease_and_send(
    redis_client: Redis,
) -> None:
    """Cancelled while the script's answer is on its way: the slot (and the rpm send)
    the script granted are given back, not held for the hold + 10 s."""
    prefix = f"sg:test:kc:{secrets.token_hex(6)}:"
    caps = KeyCaps(redis_client, prefix)
    ran, script = asyncio.Event(), caps._script
    assert script is not None

    async def slow_reply(**kwargs: object) -> object:
        found = await script(**kwargs)  # the script runs and grants the slot ...
        ran.set()
        await asyncio.sleep(0.2)  # ... and its answer is slow to arrive
        return found

    caps._script = slow_reply  # type: ignore[assignment]
    key = ChannelKey(0, "k", max_concurrency=1, rpm=10)
    try:
        taking = asyncio.create_task(caps.take(1, key, 30.0))
        await asyncio.wait_for(ran.wait(), 5)
        assert await redis_client.zcard(f"{prefix}1:0:c") == 1
        taking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await taking
        await asyncio.sleep(0.5)  # the answer arrives, the undo is a background ZREM
        assert await redis_client.zcard(f"{prefix}1:0:c") == 0
        assert await redis_client.zcard(f"{prefix}1:0:r") == 0
        caps._script = script
        assert isinstance(await caps.take(1, key, 30.0), Slot)
    finally:
        keys = await redis_client.keys(prefix + "*")
        if keys:
            await redis_client.delete(*keys)
