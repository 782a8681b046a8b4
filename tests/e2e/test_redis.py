"""With Redis configured, two gateway processes share rate limits and hear about config
changes at once (pub/sub) instead of at their next poll."""

import time
from collections.abc import Iterator

import openai
import pytest

from switchgate.cli.ops import Ops
from tests.conftest import Gateway, config_toml
from tests.support import IN_CI, REDIS_URL, Process, free_port, gateway_env, run_cli, start_process

pytestmark = pytest.mark.redis


def _redis_reachable() -> bool:
    from redis import Redis
    from redis.exceptions import RedisError

    try:
        client = Redis.from_url(REDIS_URL, socket_connect_timeout=0.5)
        client.flushdb()  # database 15 belongs to the tests
        client.close()
        return True
    except (RedisError, OSError):
        return False


@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> Iterator[list[Gateway]]:
    if not _redis_reachable():
        if IN_CI:
            pytest.fail(f"Redis is required in CI but {REDIS_URL} is not reachable")
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    data_dir = tmp_path_factory.mktemp("redis-pair")
    config = data_dir / "switchgate.toml"
    config.write_text(config_toml(mock_upstream.base_url, f"http://127.0.0.1:{free_port()}"))
    env = gateway_env(data_dir, None)
    env.update({"SWITCHGATE_REDIS_URL": REDIS_URL, "SWITCHGATE_CONFIG_POLL_SECONDS": "60"})
    gateways = []
    for index in range(2):
        port = free_port()
        args = ["serve", "--port", str(port)] + (["--config", str(config)] if index == 0 else [])
        process = start_process(
            args, env, data_dir / f"gw{index}.log", f"http://127.0.0.1:{port}/healthz"
        )
        gateways.append(Gateway(process, mock_upstream.base_url, data_dir, None))
    yield gateways
    for gw in gateways:
        gw.process.stop()


def ask(gw: Gateway, token: str) -> None:
    openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0).chat.completions.create(
        model="gpt-mock", messages=[{"role": "user", "content": "hi"}]
    )


def test_rate_limit_is_shared_across_processes(pair: list[Gateway]) -> None:
    email, _ = pair[0].new_user()

    async def job(ops: Ops) -> str:
        return (await ops.create_token(email, "rl", rpm_limit=3)).token

    token = str(pair[0].ops(job))
    ask(pair[0], token)
    ask(pair[1], token)
    ask(pair[0], token)
    with pytest.raises(openai.RateLimitError):
        ask(pair[1], token)


def test_revocation_reaches_every_process_at_once(pair: list[Gateway]) -> None:
    email, token = pair[0].new_user()
    for gw in pair:
        ask(gw, token)  # both processes now hold the token in memory
    token_id = run_cli(pair[0].env, "tokens", "list", email).stdout.split()[0]
    run_cli(pair[0].env, "tokens", "revoke", token_id)  # polls are 60 s apart here
    revoked_at = time.monotonic()
    for gw in pair:
        while True:
            try:
                ask(gw, token)
            except openai.AuthenticationError:
                break
            assert time.monotonic() - revoked_at < 2.0, "pub/sub did not reach the process"
            time.sleep(0.05)
