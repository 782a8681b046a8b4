"""`switchgate doctor` against a healthy set-up (exit 0) and five broken ones: a wrong
upstream key, a dead upstream, a served model without a price, an unreachable Redis and a
pending migration; each names the problem and prints the command that fixes it."""

import asyncio
from pathlib import Path

import pytest

from switchgate.storage import migrate
from switchgate.storage.db import Database
from tests.support import Process, dead_port, gateway_env, run_cli


def _channel(env: dict[str, str], name: str, base_url: str, key: str, models: str) -> None:
    run_cli(env, "channels", "add", name, "--kind", "openai", "--base-url", base_url,
            "--key", key, "--models", models)  # fmt: skip


def _setup(tmp_path: Path, mock: Process) -> dict[str, str]:
    env = gateway_env(tmp_path, None)
    _channel(env, "main", mock.base_url + "/v1", "mock-key", "gpt-a")
    run_cli(env, "prices", "set", "gpt-a", "--input", "1", "--output", "2")
    return env


def _doctor(env: dict[str, str]) -> tuple[int, str]:
    result = run_cli(env, "doctor", "--timeout", "3", check=False)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout


def test_a_healthy_setup_passes(tmp_path: Path, mock_upstream: Process) -> None:
    code, out = _doctor(_setup(tmp_path, mock_upstream))
    assert code == 0, out
    assert "FAIL" not in out and out.rstrip().endswith("all good")
    for check in ("settings", "secret key", "redis", "database", "migrations", "channel", "prices"):
        assert f"ok    {check}" in out, out
    assert "main: ok (chat gpt-a" in out


def test_a_wrong_upstream_key(tmp_path: Path, mock_upstream: Process) -> None:
    env = _setup(tmp_path, mock_upstream)
    _channel(env, "main", mock_upstream.base_url + "/v1", "sk-wrong-one", "gpt-a")
    code, out = _doctor(env)
    assert code == 1 and "FAIL  channel      main: 401: the upstream rejected the API key" in out
    fix = (
        f"fix: switchgate channels add main --kind openai --base-url {mock_upstream.base_url}/v1"
        " --key NEW_KEY --models gpt-a"
    )
    assert fix in out
    assert "or: switchgate channels disable main" in out and "1 problem found" in out
    assert "sk-wrong-one" not in out


def test_a_dead_upstream(tmp_path: Path, mock_upstream: Process) -> None:
    env = _setup(tmp_path, mock_upstream)
    dead = f"http://127.0.0.1:{dead_port()}/v1"
    _channel(env, "gone", dead, "k", "gpt-a")
    code, out = _doctor(env)
    assert code == 1 and "FAIL  channel      gone: unreachable: Could not reach the upstream" in out
    assert "fix: switchgate channels add gone --kind openai --base-url URL" in out
    assert "ok    channel      main: ok" in out


def test_a_served_model_without_a_price(tmp_path: Path, mock_upstream: Process) -> None:
    env = _setup(tmp_path, mock_upstream)
    _channel(env, "main", mock_upstream.base_url + "/v1", "mock-key", "gpt-a,gpt-b")
    code, out = _doctor(env)
    assert code == 1
    assert "FAIL  prices       model 'gpt-b' (channel main) has no price: clients get 404" in out
    assert "fix: switchgate prices set gpt-b --input USD_PER_1M --output USD_PER_1M" in out


def test_an_unreachable_redis(tmp_path: Path, mock_upstream: Process) -> None:
    env = _setup(tmp_path, mock_upstream)
    env["SWITCHGATE_REDIS_URL"] = f"redis://:hunter2@127.0.0.1:{dead_port()}/0"
    code, out = _doctor(env)
    assert code == 1 and "FAIL  redis        redis://:***@127.0.0.1:" in out
    assert "does not answer" in out and "hunter2" not in out
    assert "fix: start Redis, or fix SWITCHGATE_REDIS_URL" in out


def _migrate_to(url: str, revision: str) -> None:
    async def run() -> None:
        db = Database(url)
        try:
            async with db.engine.begin() as conn:

                def upgrade(sync_conn: object) -> None:
                    from alembic import command

                    command.upgrade(migrate.alembic_config(sync_conn), revision)  # type: ignore[arg-type]

                await conn.run_sync(upgrade)
        finally:
            await db.dispose()

    asyncio.run(run())


def test_a_pending_migration(tmp_path: Path, mock_upstream: Process) -> None:
    env = gateway_env(tmp_path, None)
    _migrate_to(f"sqlite+aiosqlite:///{tmp_path / 'switchgate.db'}", "0001")
    code, out = _doctor(env)
    assert code == 1 and "FAIL  migrations   the database has migrations pending" in out
    assert "fix: switchgate migrate" in out
    run_cli(env, "migrate")
    code, out = _doctor(env)
    assert "ok    migrations   at head" in out


def test_bad_settings_are_reported_not_a_traceback(tmp_path: Path) -> None:
    env = gateway_env(tmp_path, None)
    env["SWITCHGATE_PORT"] = "eighty"
    code, out = _doctor(env)
    assert code == 1 and "FAIL  settings     cannot read the settings" in out


@pytest.mark.parametrize("value", ["not-base64!", "c2hvcnQ="])
def test_a_malformed_secret_key(tmp_path: Path, value: str) -> None:
    env = gateway_env(tmp_path, None)
    env["SWITCHGATE_SECRET_KEY"] = value
    code, out = _doctor(env)
    assert code == 1 and "SWITCHGATE_SECRET_KEY is not base64 of 32 bytes" in out
