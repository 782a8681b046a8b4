"""Two replicas on one PostgreSQL and Redis: a channel that failed on replica A is
skipped by replica B within a second (routing's shared health, docs/routing.md; the
bound is stated in docs/scaling.md)."""

import time
from collections.abc import Iterator

import openai
import pytest

from tests.conftest import Gateway
from tests.e2e.routing_support import Upstream, lanes_toml, start_gateway, upstream_pair
from tests.e2e.test_redis import _redis_reachable
from tests.support import IN_CI, REDIS_URL, postgres_available, postgres_database

pytestmark = [pytest.mark.redis, pytest.mark.postgres]
MODEL = "scaleout-gpt"  # its own lane: other tests' breakers never touch it


@pytest.fixture(scope="module")
def setup(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Upstream, Upstream, list[Gateway]]]:
    if not postgres_available() or not _redis_reachable():
        if IN_CI:
            pytest.fail("PostgreSQL and Redis are required in CI")
        pytest.skip("needs PostgreSQL on 127.0.0.1:5432 and Redis at " + REDIS_URL)
    with upstream_pair(tmp_path_factory) as (primary, fallback), postgres_database() as url:
        config = lanes_toml(primary.url, fallback.url, {"scaleout": []})
        env = {
            "SWITCHGATE_REDIS_URL": REDIS_URL,
            "SWITCHGATE_BREAKER_BASE_SECONDS": "60",  # stays open for the whole test
            "SWITCHGATE_CONFIG_POLL_SECONDS": "1",
        }
        gateways = [
            start_gateway(tmp_path_factory.mktemp(f"replica{i}"), config, env, url)
            for i in range(2)
        ]
        try:
            yield primary, fallback, gateways
        finally:
            for gw in gateways:
                gw.process.stop()
            forget_shared_health()


def forget_shared_health() -> None:
    """The breaker this test opens lives in Redis for a minute: leave none behind."""
    from redis import Redis

    from switchgate.routing.health_redis import NAMESPACE

    client = Redis.from_url(REDIS_URL)
    try:
        client.delete(f"{NAMESPACE}:state")
    finally:
        client.close()


def _ask(gw: Gateway, token: str) -> None:
    openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}]
    )


def test_a_channel_failing_on_a_is_skipped_by_b_within_a_second(
    setup: tuple[Upstream, Upstream, list[Gateway]],
) -> None:
    primary, fallback, (a, b) = setup
    _, token = a.new_user()
    _ask(b, token)  # B has used the healthy primary
    primary.faults(fault_status=500)
    before = primary.count(MODEL)
    for _ in range(3):  # the breaker's threshold: A opens it (answers come from the fallback)
        _ask(a, token)
    opened_at = time.monotonic()
    assert primary.count(MODEL) == before + 3
    time.sleep(max(0.0, 1.0 - (time.monotonic() - opened_at)))
    served_by_fallback = fallback.count(MODEL)
    _ask(b, token)
    assert primary.count(MODEL) == before + 3, "B still tried the channel A saw failing"
    assert fallback.count(MODEL) == served_by_fallback + 1
    primary.faults()
