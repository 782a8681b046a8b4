"""Two replicas on one PostgreSQL and Redis share a key's concurrency cap: a key capped at
2 calls in flight serves 2 in total, not 2 per replica (routing/key_caps.py; the bound
is stated in docs/scaling.md)."""

from collections.abc import Iterator

import openai
import pytest
from redis import Redis

from switchgate.storage.secrets import new_key
from tests.conftest import Gateway
from tests.e2e.routing_support import Upstream, start_gateway, start_upstream
from tests.e2e.test_key_caps import carried, in_threads, openai_call
from tests.e2e.test_redis import _redis_reachable
from tests.support import IN_CI, REDIS_URL, http_json, postgres_available, postgres_database

pytestmark = [pytest.mark.redis, pytest.mark.postgres]
KEY = "sk-shared-cap-key-0004"


def forget_caps() -> None:
    client = Redis.from_url(REDIS_URL)
    try:
        names = list(client.scan_iter("sg:kc:*"))
        if names:
            client.delete(*names)
    finally:
        client.close()


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Upstream, list[Gateway]]]:
    if not postgres_available() or not _redis_reachable():
        if IN_CI:
            pytest.fail("PostgreSQL and Redis are required in CI")
        pytest.skip("needs PostgreSQL on 127.0.0.1:5432 and Redis at " + REDIS_URL)
    forget_caps()
    upstream = start_upstream(tmp_path_factory.mktemp("shared-cap-upstream"))
    http_json("POST", f"{upstream.url}/_mock/config", {"api_key": KEY, "latency_ms": 4000})
    config = (
        f'[[channels]]\nname = "shared-cap"\nkind = "openai"\nbase_url = "{upstream.url}/v1"\n'
        f'keys = [{{ key = "{KEY}", max_concurrency = 2 }}]\nmodels = ["shared-cap-gpt"]\n'
        '[prices."shared-cap-gpt"]\ninput = "1"\noutput = "2"\n'
    )
    try:
        with postgres_database() as url:
            # Replicas share the secret key (docs/deploy.md): each decrypts the other's keys.
            env = {"SWITCHGATE_REDIS_URL": REDIS_URL, "SWITCHGATE_SECRET_KEY": new_key()}
            gateways = [
                start_gateway(tmp_path_factory.mktemp(f"cap-replica{i}"), config, env, url)
                for i in range(2)
            ]
            try:
                yield upstream, gateways
            finally:
                for gw in gateways:
                    gw.process.stop()
    finally:
        upstream.process.stop()
        forget_caps()


def test_a_key_cap_holds_across_two_replicas(setup: tuple[Upstream, list[Gateway]]) -> None:
    upstream, (a, b) = setup
    _, token = a.new_user(balance_usd=5)
    calls = [openai_call(gw, token, "shared-cap-gpt") for gw in (a, b, a, b, a, b)]
    results = in_threads(calls)
    served = [r for r in results if not isinstance(r, Exception)]
    refused = [r for r in results if isinstance(r, openai.RateLimitError)]
    assert len(served) == 2 and len(refused) == 4, results
    assert len(carried(upstream, "shared-cap-gpt")) == 2  # only 2 ever reached the upstream
