"""Two gateway replicas on one PostgreSQL and one Redis, as in production, under
concurrent load through both: limits hold in total (not per replica), a token revoked
through one replica's console is refused by the other within a second, and a balance
never goes below zero while the ledger sums to it. (docs/scaling.md states the bounds.)"""

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from redis import Redis

from switchgate.cli.ops import Ops
from switchgate.money import UNITS_PER_USD
from tests.conftest import Gateway, config_toml
from tests.e2e.console_client import signed_in
from tests.e2e.test_billing_integrity import _charges
from tests.e2e.test_redis import _redis_reachable
from tests.support import (
    IN_CI,
    REDIS_URL,
    Process,
    free_port,
    gateway_env,
    postgres_available,
    postgres_database,
    start_process,
)

pytestmark = [pytest.mark.redis, pytest.mark.postgres]


@pytest.fixture(scope="module")
def replicas(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> Iterator[list[Gateway]]:
    if not postgres_available() or not _redis_reachable():
        if IN_CI:
            pytest.fail("PostgreSQL and Redis are required in CI")
        pytest.skip("needs PostgreSQL on 127.0.0.1:5432 and Redis at " + REDIS_URL)
    data_dir = tmp_path_factory.mktemp("replicas")
    config = data_dir / "switchgate.toml"
    config.write_text(config_toml(mock_upstream.base_url, f"http://127.0.0.1:{free_port()}"))
    with postgres_database() as url:
        env = gateway_env(data_dir, url)
        env["SWITCHGATE_REDIS_URL"] = REDIS_URL
        env["SWITCHGATE_CONFIG_POLL_SECONDS"] = "1"  # the default
        gateways = []
        try:
            for index in range(2):
                port = free_port()
                args = ["serve", "--port", str(port)]
                args += ["--config", str(config)] if index == 0 else []
                process = start_process(
                    args, env, data_dir / f"gw{index}.log", f"http://127.0.0.1:{port}/readyz"
                )
                gateways.append(Gateway(process, mock_upstream.base_url, data_dir, url))
            yield gateways
        finally:
            for gw in gateways:
                gw.process.stop()


def _ask(gw: Gateway, token: str, content: str = "hi") -> int:
    """The HTTP status of one chat completion."""
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    try:
        sdk.chat.completions.create(
            model="gpt-mock", max_tokens=10, messages=[{"role": "user", "content": content}]
        )
        return 200
    except openai.APIStatusError as exc:
        return exc.status_code


def _away_from_a_minute_boundary() -> None:
    """Fixed one-minute windows: don't let a burst straddle two of them."""
    second = time.time() % 60
    if second > 45:
        time.sleep(60.5 - second)


def test_rpm_limit_admits_n_in_total_not_per_replica(replicas: list[Gateway]) -> None:
    email, _ = replicas[0].new_user()
    limit = 12

    async def job(ops: Ops) -> str:
        return (await ops.create_token(email, "rpm", rpm_limit=limit)).token

    token = str(replicas[0].ops(job))
    _away_from_a_minute_boundary()
    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(lambda i: _ask(replicas[i % 2], token), range(40)))
    assert statuses.count(200) == limit, statuses
    assert statuses.count(429) == 40 - limit, statuses


def test_token_revoked_through_a_is_refused_by_b_within_a_second(
    replicas: list[Gateway],
) -> None:
    a, b = replicas
    console = signed_in(a, balance_usd=5)
    created = console.ok("POST", "/api/tokens", {"name": "to-revoke"})
    token = created["token"]
    assert _ask(b, token) == 200  # B now holds the token in its cache
    console.ok("DELETE", f"/api/tokens/{created['id']}")
    revoked_at = time.monotonic()
    with httpx.Client(base_url=b.url, timeout=5) as client:
        while True:
            response = client.post(
                "/v1/chat/completions",
                headers={"authorization": f"Bearer {token}"},
                json={"model": "gpt-mock", "messages": [{"role": "user", "content": "hi"}]},
            )
            elapsed = time.monotonic() - revoked_at
            if response.status_code == 401:
                break
            assert response.status_code == 200, response.text
            assert elapsed < 1.0, "replica B still serves a token revoked through A"
            time.sleep(0.02)
    assert elapsed < 1.0


def test_balance_never_below_zero_across_replicas(replicas: list[Gateway]) -> None:
    a, _ = replicas
    email, token = a.new_user(balance_usd=0)
    start = 500 * UNITS_PER_USD // 10**6  # $0.0005: a handful of requests

    async def top_up(ops: Ops) -> None:
        await ops.add_balance(email, start, "small", "test")

    a.ops(top_up)
    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(lambda i: _ask(replicas[i % 2], token, "tiny"), range(60)))
    assert set(statuses) <= {200, 402}, statuses
    succeeded = statuses.count(200)
    assert succeeded >= 5 and 402 in statuses

    deadline = time.monotonic() + 10
    while _charges(a, email)[0] != succeeded and time.monotonic() < deadline:
        time.sleep(0.1)
    count, total = _charges(a, email)
    assert count == succeeded
    balance = a.balance(email)  # also checks that the ledger sums to the balance
    assert balance >= 0
    assert balance == start - total


def test_user_rpm_admits_n_in_total_over_tokens_and_replicas(replicas: list[Gateway]) -> None:
    email, first = replicas[0].new_user()

    async def job(ops: Ops) -> str:
        await ops.set_user_rates(email, 10, None)
        return (await ops.create_token(email, "second")).token

    tokens = [first, str(replicas[0].ops(job))]
    time.sleep(1.5)  # a direct database change: replicas see it at their next poll (1 s)
    _away_from_a_minute_boundary()
    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(lambda i: _ask(replicas[i % 2], tokens[i // 2 % 2]), range(30)))
    assert statuses.count(200) == 10, statuses
    assert statuses.count(429) == 20, statuses


def test_token_tpm_counts_tokens_spent_on_every_replica(replicas: list[Gateway]) -> None:
    email, probe = replicas[0].new_user()
    sdk = openai.OpenAI(base_url=f"{replicas[0].url}/v1", api_key=probe, max_retries=0)
    usage = sdk.chat.completions.create(
        model="gpt-mock", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
    ).usage
    assert usage is not None
    per_request = usage.prompt_tokens + usage.completion_tokens

    async def job(ops: Ops) -> tuple[int, str]:
        limit = 3 * per_request + per_request // 2  # room for 4 requests, not 5
        new = await ops.create_token(email, "tpm", tpm_limit=limit)
        return new.id, new.token

    token_id, token = replicas[0].ops(job)
    _away_from_a_minute_boundary()
    counter = f"sg:rl:k:t:{token_id}:{int(time.time() // 60)}"
    redis = Redis.from_url(REDIS_URL)
    statuses = []
    try:
        for i in range(6):
            statuses.append(_ask(replicas[i % 2], token))
            counted = per_request * statuses.count(200)
            deadline = time.monotonic() + 5  # counted once the answer is recorded
            while int(redis.get(counter) or 0) < counted and time.monotonic() < deadline:
                time.sleep(0.02)
    finally:
        redis.close()
    assert statuses == [200, 200, 200, 200, 429, 429]
