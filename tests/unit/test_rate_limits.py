"""Requests and tokens per minute, per token and per user: the in-process limiter and the
Redis one give the same answers, and the Redis one is exact across clients."""

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from switchgate.ratelimit.memory import MemoryRateLimiter
from switchgate.ratelimit.rates import Rate
from switchgate.ratelimit.redis import RedisRateLimiter
from tests.support import IN_CI, REDIS_URL, free_port


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_040.0  # 20 s into a minute window

    def __call__(self) -> float:
        return self.now


Limiter = MemoryRateLimiter | RedisRateLimiter


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def limiters(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Clock, Limiter, Limiter]]:
    clock = Clock()
    if request.param == "memory":
        one = MemoryRateLimiter(clock)
        yield clock, one, one
        return
    clients = [Redis.from_url(REDIS_URL), Redis.from_url(REDIS_URL)]
    try:
        await clients[0].ping()
    except OSError:
        await asyncio.gather(*(c.aclose() for c in clients))
        if IN_CI:
            pytest.fail(f"Redis is required in CI but {REDIS_URL} is not reachable")
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    prefix = f"sg:test:{id(clock)}:"
    a, b = (RedisRateLimiter(c, prefix=prefix, clock=clock) for c in clients)
    yield clock, a, b  # two clients: two replicas
    async for key in clients[0].scan_iter(prefix + "*"):
        await clients[0].delete(key)
    await asyncio.gather(*(c.aclose() for c in clients))


async def test_requests_per_minute(limiters: tuple[Clock, Limiter, Limiter]) -> None:
    clock, a, b = limiters
    token = [Rate("t:1", 3, None)]
    answers = [await (a if i % 2 else b).admit(token) for i in range(5)]
    assert answers[:3] == [None, None, None]
    refused = answers[3]
    assert refused is not None and refused.unit == "requests" and refused.wait == 40
    clock.now += 40  # the next window
    assert await a.admit(token) is None


async def test_a_request_refused_by_one_limit_uses_none_of_the_others(
    limiters: tuple[Clock, Limiter, Limiter],
) -> None:
    _, a, b = limiters
    user = Rate("u:7", 2, None)
    first, second = [Rate("t:1", 5, None), user], [Rate("t:2", 5, None), user]
    assert await a.admit(first) is None
    assert await b.admit(second) is None
    refused = await a.admit(first)  # the user's 2 are used up, across both tokens
    assert refused is not None and refused.rate == user
    for _ in range(3):
        assert await b.admit([Rate("t:1", 5, None)]) is None  # 1 + 3 + 1 more = 5
    assert await a.admit([Rate("t:1", 5, None)]) is None
    assert await a.admit([Rate("t:1", 5, None)]) is not None


async def test_tokens_per_minute(limiters: tuple[Clock, Limiter, Limiter]) -> None:
    clock, a, b = limiters
    rates = [Rate("t:1", None, 100), Rate("u:1", None, 1000)]
    assert await a.admit(rates) is None
    await a.add_tokens(["t:1", "u:1"], 60)
    assert await b.admit(rates) is None  # 60 < 100: room left, so admitted
    await b.add_tokens(["t:1", "u:1"], 60)  # 120: over, by what was in flight
    refused = await a.admit(rates)
    assert refused is not None and (refused.rate.key, refused.unit) == ("t:1", "tokens")
    clock.now += 60
    assert await a.admit(rates) is None


async def test_concurrent_admits_are_exact(limiters: tuple[Clock, Limiter, Limiter]) -> None:
    _, a, b = limiters
    rates = [Rate("t:9", 10, None)]
    answers = await asyncio.gather(*((a if i % 2 else b).admit(rates) for i in range(50)))
    assert sum(answer is None for answer in answers) == 10


async def test_redis_outage_falls_back_to_this_process() -> None:
    client = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.2)
    limiter = RedisRateLimiter(client, clock=Clock())
    try:
        rates = [Rate("t:1", 2, None)]
        assert [await limiter.admit(rates) is None for _ in range(3)] == [True, True, False]
        await limiter.add_tokens(["t:1"], 5)  # no error either
    finally:
        await client.aclose()


def test_model_limits_setting() -> None:
    from switchgate.settings import parse_model_limits

    assert parse_model_limits(" gpt-4o=600/200000, o3=60/ ,x=/5") == {
        "gpt-4o": (600, 200000),
        "o3": (60, None),
        "x": (None, 5),
    }
    for bad in ("gpt-4o=600", "=1/2", "m=0/", "m=a/b"):
        with pytest.raises(ValueError, match="MODEL=RPM/TPM"):
            parse_model_limits(bad)
