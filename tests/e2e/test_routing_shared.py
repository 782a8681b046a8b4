"""Routing health shared by two gateway processes through Redis (issues 14 and 15): a
breaker one replica opened is open on the other within a second, and a half-open
channel gets exactly one trial request from all replicas together. Real PostgreSQL and
Redis (skipped when absent, required when CI=true)."""

import threading
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest
import redis

from switchgate.storage.secrets import new_key
from tests.conftest import Gateway
from tests.e2e.routing_support import Upstream, lanes_toml, start_gateway, upstream_pair
from tests.support import IN_CI, REDIS_URL, postgres_available, postgres_database

LANES: dict[str, list[str]] = {"shared": [], "trial": []}


def _redis_or_skip() -> redis.Redis:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5)
    try:
        client.ping()
    except (redis.RedisError, OSError):
        if IN_CI:
            pytest.fail(f"Redis is required in CI but {REDIS_URL} is not reachable")
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    return client


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Gateway, Gateway, Upstream, Upstream, str]]:
    client = _redis_or_skip()
    for key in client.scan_iter(match="switchgate:health*"):
        client.delete(key)
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI but is not reachable on 127.0.0.1:5432")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    with postgres_database() as url, upstream_pair(tmp_path_factory) as (primary, fallback):
        config = lanes_toml(primary.url, fallback.url, LANES)
        # replicas share the database, so they share the key that seals channel keys
        env = {"SWITCHGATE_REDIS_URL": REDIS_URL, "SWITCHGATE_SECRET_KEY": new_key()}
        a = start_gateway(tmp_path_factory.mktemp("gw-a"), config, env, url)
        try:
            b = start_gateway(tmp_path_factory.mktemp("gw-b"), config, env, url)
            try:
                _, token = a.new_user(balance_usd=20)
                yield a, b, primary, fallback, token
            finally:
                b.process.stop()
        finally:
            a.process.stop()


def ask(gw: Gateway, token: str, model: str, stream: bool = False) -> str:
    client = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)
    if stream:
        chunks = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hello"}], stream=True
        )
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reply = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hello"}]
    )
    return reply.choices[0].message.content or ""


def test_a_breaker_opened_on_one_replica_is_open_on_the_other_within_a_second(pair: Any) -> None:
    a, b, primary, _, token = pair
    primary.faults(fault_status=500, fault_models=["shared-gpt"])
    for _ in range(3):
        assert ask(a, token, "shared-gpt")
    assert primary.count("shared-gpt") == 3
    opened = time.monotonic()
    while True:  # replica B skips the primary once the state reached it
        before = primary.count("shared-gpt")
        started = time.monotonic()
        assert ask(b, token, "shared-gpt")
        if primary.count("shared-gpt") == before:
            break
        # a call that B began a second or more after the breaker opened must skip it
        assert started - opened < 1.0, "not shared within a second"
    for _ in range(3):
        assert ask(b, token, "shared-gpt")
    assert primary.count("shared-gpt") == before


def test_a_half_open_channel_gets_one_trial_from_all_replicas(pair: Any) -> None:
    a, b, primary, _, token = pair
    primary.faults(fault_status=500, fault_models=["trial-gpt"])
    for _ in range(3):
        ask(a, token, "trial-gpt", stream=True)
    assert primary.count("trial-gpt") == 3
    time.sleep(1.3)  # the cool-down (1 s here) is over on both replicas
    primary.faults(hang=True)  # the trial request will hang until its first-byte limit
    trial = threading.Thread(target=ask, args=(a, token, "trial-gpt", True))
    trial.start()
    time.sleep(0.5)
    for gw in (b, a, b):
        assert ask(gw, token, "trial-gpt", stream=True)
    trial.join()
    assert primary.count("trial-gpt") == 4, "exactly one trial request reached the primary"
    primary.faults()
    time.sleep(1.3)  # the failed trial doubled the cool-down to 2 s
    time.sleep(1.0)
    assert ask(b, token, "trial-gpt", stream=True)  # the next trial succeeds: closed
    assert primary.count("trial-gpt") == 5
    time.sleep(0.2)  # well within the sharing bound
    assert ask(a, token, "trial-gpt", stream=True)
    assert primary.count("trial-gpt") == 6, "replica A sends to the primary again"
