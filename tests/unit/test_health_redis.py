"""Routing health shared through Redis (SWITCHGATE_TEST_REDIS_URL; skipped when absent,
required when CI=true): two Health copies, as two processes would hold them."""

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from switchgate.routing.breaker import Ladder, Phase
from switchgate.routing.health import Health, model_subject
from switchgate.routing.health_redis import RedisHealthSync
from tests.support import IN_CI, REDIS_URL


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


async def until(check: Callable[[], bool], timeout: float = 1.0) -> float:
    """Seconds until `check()` held (fails after `timeout`)."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not check():
        assert loop.time() - started < timeout, "not shared within the bound"
        await asyncio.sleep(0.01)
    return loop.time() - started


async def test_a_breaker_opened_in_one_process_is_open_in_the_other(redis_client: Redis) -> None:
    namespace = f"sg:test:{secrets.token_hex(6)}"
    a, b = Health(Ladder(threshold=3, base=1)), Health(Ladder(threshold=3, base=1))
    syncs = [
        RedisHealthSync(redis_client, health, origin, namespace=namespace)
        for health, origin in ((a, "a"), (b, "b"))
    ]
    for health, sync in zip((a, b), syncs, strict=True):
        health.sync = sync
    tasks = [asyncio.create_task(sync.run()) for sync in syncs]
    try:
        await asyncio.sleep(0.2)  # both subscribed
        subject = model_subject(7, "m")
        for _ in range(3):
            a.failure(subject, reason="HTTP 500")
        assert a.blocked(7, "m") is Phase.OPEN
        await until(lambda: b.blocked(7, "m") is Phase.OPEN)
        assert b.snapshot()[subject]["reason"] == "HTTP 500"
        await until(lambda: b.blocked(7, "m") is Phase.HALF_OPEN, timeout=2.0)
        # exactly one process gets the trial slot
        won = await asyncio.gather(a.claim_probe(subject), b.claim_probe(subject))
        assert sorted(won) == [False, True]
        b.success(subject)
        await until(lambda: a.blocked(7, "m") is Phase.CLOSED)
        assert not a.any_failing
        # a process that starts later reads the shared state
        a.failure(subject, retry_after=30)
        await until(lambda: b.blocked(7, "m") is Phase.OPEN)
        late = Health()
        late_sync = RedisHealthSync(redis_client, late, "late", namespace=namespace)
        await late_sync.load()
        assert late.blocked(7, "m") is Phase.OPEN
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for sync in syncs:
            await sync.close()
        keys = [k async for k in redis_client.scan_iter(match=f"{namespace}*")]
        if keys:
            await redis_client.delete(*keys)


async def test_failures_seen_by_two_processes_add_up(redis_client: Redis) -> None:
    namespace = f"sg:test:{secrets.token_hex(6)}"
    a, b = Health(Ladder(threshold=3)), Health(Ladder(threshold=3))
    syncs = [RedisHealthSync(redis_client, a, "a", namespace=namespace)]
    syncs.append(RedisHealthSync(redis_client, b, "b", namespace=namespace))
    a.sync, b.sync = syncs
    tasks = [asyncio.create_task(sync.run()) for sync in syncs]
    try:
        await asyncio.sleep(0.2)
        a.failure("c:1")
        await until(lambda: b.snapshot().get("c:1", {}).get("failures") == 1)
        b.failure("c:1")
        await until(lambda: a.snapshot().get("c:1", {}).get("failures") == 2)
        a.failure("c:1")
        await until(lambda: b.phase("c:1") is Phase.OPEN)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        keys = [k async for k in redis_client.scan_iter(match=f"{namespace}*")]
        if keys:
            await redis_client.delete(*keys)
