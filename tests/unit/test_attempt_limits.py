"""The account-flow limits (sign-in, sign-up, e-mails): the sliding-window logic on both
stores (in memory, and Redis at SWITCHGATE_TEST_REDIS_URL: skipped when absent, required
when CI=true), sharing through Redis, and failing open when Redis is unreachable."""

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Callable

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from switchgate.accounts.attempt_limits import (
    AttemptStore,
    Check,
    Limit,
    MemoryAttempts,
    RedisAttempts,
)
from switchgate.accounts.signin_limit import AccountLimits
from switchgate.settings import Settings
from tests.support import IN_CI, REDIS_URL, free_port


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


StoreFactory = Callable[[Clock], AttemptStore]


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


@pytest.fixture
async def redis_prefix(redis_client: Redis) -> AsyncIterator[str]:
    """A key prefix of this test's own; its keys are deleted afterwards."""
    prefix = f"sg:test:{secrets.token_hex(6)}:"
    yield prefix
    keys = [key async for key in redis_client.scan_iter(match=f"{prefix}*")]
    if keys:
        await redis_client.delete(*keys)


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def make_store(request: pytest.FixtureRequest) -> StoreFactory:
    if request.param == "memory":
        return MemoryAttempts
    client: Redis = request.getfixturevalue("redis_client")
    prefix: str = request.getfixturevalue("redis_prefix")
    return lambda clock: RedisAttempts(client, prefix, clock)


FIVE = Limit(5, 900)


async def test_take_counts_until_the_limit_then_says_how_long_to_wait(
    make_store: StoreFactory,
) -> None:
    clock = Clock()
    store = make_store(clock)
    check = [Check("k", Limit(3, 60))]
    for _ in range(3):
        assert await store.run(check, "take") is None
        clock.now += 10
    assert await store.run(check, "take") == 30  # the first attempt leaves the window at +60
    clock.now += 29.5
    assert await store.run(check, "take") == 1  # never 0: always at least a second
    clock.now += 0.5
    assert await store.run(check, "take") is None  # the window slid past the first attempt
    assert await store.run(check, "take") == 10  # refused attempts were not counted


async def test_peek_never_counts_and_add_never_refuses(make_store: StoreFactory) -> None:
    clock = Clock()
    store = make_store(clock)
    check = [Check("k", Limit(2, 100))]
    for _ in range(5):
        assert await store.run(check, "peek") is None
    await store.run(check, "add")
    assert await store.run(check, "peek") is None
    clock.now += 1
    await store.run(check, "add")
    assert await store.run(check, "peek") == 99
    clock.now += 1
    assert await store.run(check, "add") is None  # counts even over the limit
    # Three in the window now: allowed again once two have left it, i.e. when the second does.
    assert await store.run(check, "peek") == 99
    clock.now += 99
    assert await store.run(check, "peek") is None


async def test_take_on_several_counters_counts_on_none_when_one_is_full(
    make_store: StoreFactory,
) -> None:
    clock = Clock()
    store = make_store(clock)
    email, ip = Check("mail:email:a@x", Limit(1, 900)), Check("mail:ip:1.2.3.4", Limit(3, 900))
    other = Check("mail:email:b@x", Limit(1, 900))
    assert await store.run([email, ip], "take") is None
    assert await store.run([email, ip], "take") == 900  # the address is full...
    assert await store.run([other, ip], "take") is None  # ...so the IP counted one, not two
    assert await store.run([Check("mail:email:c@x", Limit(1, 900)), ip], "take") is None
    assert await store.run([Check("mail:email:d@x", Limit(1, 900)), ip], "take") == 900


async def test_clear_and_disabled_limits(make_store: StoreFactory) -> None:
    store = make_store(Clock())
    check = [Check("k", Limit(1, 60))]
    await store.run(check, "add")
    assert await store.run(check, "peek") == 60
    await store.clear("k")
    assert await store.run(check, "peek") is None
    for off in (Limit(0, 60), Limit(5, 0)):
        for _ in range(10):
            assert await store.run([Check("off", off)], "take") is None


async def test_account_limits_follow_the_settings(make_store: StoreFactory) -> None:
    clock = Clock()
    limits = AccountLimits(Settings(), make_store(clock))
    # Sign-in: five failures per address, a success clears the address (not the IP).
    for _ in range(5):
        assert await limits.signin_wait("ann@x", "10.0.0.1") is None
        await limits.signin_failed("ann@x", "10.0.0.1")
    assert await limits.signin_wait("ann@x", "10.0.0.2") == 900
    assert await limits.signin_wait("bob@x", "10.0.0.1") is None
    await limits.signin_succeeded("ann@x")
    assert await limits.signin_wait("ann@x", "10.0.0.1") is None
    # Sign-up: ten per IP per hour.
    assert all([await limits.take_signup("10.0.0.3") is None for _ in range(10)])
    assert await limits.take_signup("10.0.0.3") == 3600
    assert await limits.take_signup("10.0.0.4") is None
    clock.now += 3600
    assert await limits.take_signup("10.0.0.3") is None
    # E-mails: three per address, ten per IP, per 15 minutes.
    assert all([await limits.take_mail("ann@x", f"10.1.0.{i}") is None for i in range(3)])
    assert await limits.take_mail("ann@x", "10.1.0.9") == 900
    assert all([await limits.take_mail(f"u{i}@x", "10.2.0.1") is None for i in range(10)])
    assert await limits.take_mail("new@x", "10.2.0.1") == 900


def test_settings_read_the_limits_from_the_environment() -> None:
    settings = Settings.from_env(
        {
            "SWITCHGATE_SIGNIN_LIMIT_PER_EMAIL": "7",
            "SWITCHGATE_SIGNIN_LIMIT_PER_IP": "70",
            "SWITCHGATE_SIGNIN_LIMIT_WINDOW_SECONDS": "60",
            "SWITCHGATE_SIGNUP_LIMIT_PER_IP": "0",
            "SWITCHGATE_SIGNUP_LIMIT_WINDOW_SECONDS": "86400",
            "SWITCHGATE_MAIL_LIMIT_PER_EMAIL": "1",
            "SWITCHGATE_MAIL_LIMIT_PER_IP": "4",
            "SWITCHGATE_MAIL_LIMIT_WINDOW_SECONDS": "300",
        }
    )
    limits = AccountLimits(settings)
    assert (limits.signin_email, limits.signin_ip) == (Limit(7, 60), Limit(70, 60))
    assert limits.signup_ip == Limit(0, 86400) and not limits.signup_ip.enabled
    assert (limits.mail_email, limits.mail_ip) == (Limit(1, 300), Limit(4, 300))
    defaults = AccountLimits(Settings.from_env({}))
    assert (defaults.signup_ip, defaults.mail_email) == (Limit(10, 3600), Limit(3, 900))
    assert Settings().with_overrides({"signup_limit_per_ip": 2}).signup_limit_per_ip == 2


@pytest.mark.redis
async def test_two_limiters_on_one_redis_share_the_counts(
    redis_client: Redis, redis_prefix: str
) -> None:
    """Two processes' limiters: what one counts, the other refuses."""
    settings = Settings(signup_limit_per_ip=3, mail_limit_per_email=2)
    first = AccountLimits(settings, RedisAttempts(redis_client, redis_prefix))
    second = AccountLimits(settings, RedisAttempts(redis_client, redis_prefix))
    assert await first.take_signup("192.0.2.1") is None
    assert await second.take_signup("192.0.2.1") is None
    assert await first.take_signup("192.0.2.1") is None
    wait = await second.take_signup("192.0.2.1")
    assert wait is not None and 3590 <= wait <= 3600
    assert await first.take_signup("192.0.2.1") is not None
    assert await first.take_mail("ann@example.com", "192.0.2.1") is None
    assert await second.take_mail("ann@example.com", "192.0.2.2") is None
    assert await first.take_mail("ann@example.com", "192.0.2.3") is not None
    for _ in range(5):
        await first.signin_failed("bob@example.com", "192.0.2.9")
    assert await second.signin_wait("bob@example.com", "192.0.2.8") is not None
    await second.signin_succeeded("bob@example.com")
    assert await first.signin_wait("bob@example.com", "192.0.2.8") is None


@pytest.mark.redis
async def test_redis_keeps_hashed_keys_that_expire(redis_client: Redis, redis_prefix: str) -> None:
    store = RedisAttempts(redis_client, redis_prefix)
    await store.run([Check("signup:ip:192.0.2.7", Limit(3, 60))], "take")
    keys = [key async for key in redis_client.scan_iter(match=f"{redis_prefix}*")]
    assert keys == [store.redis_key("signup:ip:192.0.2.7").encode()]
    assert b"192.0.2.7" not in keys[0]
    assert 0 < await redis_client.pttl(keys[0]) <= 60_000


async def test_unreachable_redis_fails_open_to_memory_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.5)
    limits = AccountLimits(Settings(mail_limit_per_email=2), RedisAttempts(client))
    try:
        with caplog.at_level(logging.WARNING, logger="switchgate.accounts.limits"):
            assert await limits.signin_wait("ann@x", "10.0.0.1") is None
            await limits.signin_failed("ann@x", "10.0.0.1")
            await limits.signin_succeeded("ann@x")
            # The limits still hold, counted in this process.
            assert await limits.take_mail("ann@x", "10.0.0.1") is None
            assert await limits.take_mail("ann@x", "10.0.0.1") is None
            wait = await limits.take_mail("ann@x", "10.0.0.1")
            assert wait is not None and 890 <= wait <= 900
    finally:
        await client.aclose()
    warnings = [r for r in caplog.records if "Redis unreachable" in r.getMessage()]
    assert len(warnings) == 1  # once per outage, not once per request


async def test_a_redis_that_does_not_answer_is_given_up_on_quickly() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # accepts, never answers
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = Redis.from_url(f"redis://127.0.0.1:{port}/0")
    store = RedisAttempts(client, timeout=0.3)
    try:
        started = asyncio.get_running_loop().time()
        assert await store.run([Check("k", Limit(1, 60))], "take") is None
        assert await store.run([Check("k", Limit(1, 60))], "take") is not None  # in memory
        assert asyncio.get_running_loop().time() - started < 3
    finally:
        await client.aclose()
        server.close()


async def test_take_signin_counts_before_the_check_and_a_success_refunds_the_ip() -> None:
    from switchgate.accounts.signin_limit import AccountLimits
    from switchgate.settings import Settings

    limits = AccountLimits(Settings(signin_limit_per_email=2, signin_limit_per_ip=3))
    assert await limits.take_signin("ann@x", "10.0.0.1") is None
    assert await limits.take_signin("ann@x", "10.0.0.1") is None
    assert await limits.take_signin("ann@x", "10.0.0.1") is not None  # the address's limit
    await limits.signin_succeeded("ann@x", "10.0.0.1")
    for _ in range(5):  # successes give the network its attempts back
        assert await limits.take_signin("bob@x", "10.0.0.1") is None
        await limits.signin_succeeded("bob@x", "10.0.0.1")
    assert await limits.take_signin("cid@x", "10.0.0.1") is None
