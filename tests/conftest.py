"""Session fixtures: the fake upstream and the real gateway, as subprocesses.

`gateway` runs on SQLite; `gateway_any` runs the same tests on SQLite and on PostgreSQL
(skipped when PostgreSQL is absent, required when CI=true).
"""

import asyncio
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from switchgate.cli.ops import Ops
from switchgate.money import UNITS_PER_USD
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox
from tests.support import (
    IN_CI,
    Process,
    free_port,
    gateway_env,
    postgres_available,
    postgres_database,
    start_process,
)

# USD per 1M tokens; the tests compute expected costs from these.
PRICES = {
    "gpt-mock": {"input": "1", "output": "2", "cache_read": "0.5"},
    "gpt-alias": {"input": "1", "output": "2"},
    "fallback-model": {"input": "1", "output": "2"},
    "claude-mock": {"input": "3", "output": "15", "cache_read": "0.3", "cache_write": "3.75"},
    "gemini-mock": {"input": "0.5", "output": "1.5", "cache_read": "0.125"},
}


def config_toml(mock_url: str, dead_url: str) -> str:
    prices = "\n".join(
        f'[prices."{model}"]\n' + "\n".join(f'{k} = "{v}"' for k, v in spec.items())
        for model, spec in PRICES.items()
    )
    return f"""
[[channels]]
name = "mock-openai"
kind = "openai"
base_url = "{mock_url}/v1"
key = "mock-key"
models = ["gpt-mock", "gpt-alias", "unpriced-model"]
map = {{ "gpt-alias" = "gpt-mock-upstream" }}

[[channels]]
name = "dead-primary"
kind = "openai"
base_url = "{dead_url}/v1"
key = "dead-key"
models = ["fallback-model"]
priority = 10

[[channels]]
name = "mock-fallback"
kind = "openai"
base_url = "{mock_url}/v1"
key = "mock-key"
models = ["fallback-model"]

[[channels]]
name = "mock-anthropic"
kind = "anthropic"
base_url = "{mock_url}"
key = "mock-key"
models = ["claude-mock"]

[[channels]]
name = "mock-gemini"
kind = "gemini"
base_url = "{mock_url}"
key = "mock-key"
models = ["gemini-mock"]

{prices}
"""


@dataclass
class Gateway:
    process: Process
    mock_url: str
    data_dir: Path
    database_url: str | None

    @property
    def url(self) -> str:
        return self.process.base_url

    @property
    def env(self) -> dict[str, str]:
        return self.process.env

    def _ops_run(self, job: Any) -> Any:
        async def run() -> Any:
            db = Database(
                self.database_url or f"sqlite+aiosqlite:///{self.data_dir / 'switchgate.db'}"
            )
            try:
                return await job(Ops(db, SecretBox.load(None, self.data_dir)))
            finally:
                await db.dispose()

        return asyncio.run(run())

    def new_user(self, balance_usd: int = 10, admin: bool = False) -> tuple[str, str]:
        """A fresh user with a balance and a token: (email, token)."""
        email = f"user-{secrets.token_hex(4)}@example.com"

        async def job(ops: Ops) -> str:
            await ops.add_user(email, None, admin)
            if balance_usd:
                await ops.add_balance(email, balance_usd * UNITS_PER_USD, "test", "test")
            return (await ops.create_token(email, "test")).token

        return email, self._ops_run(job)

    def balance(self, email: str) -> int:
        async def job(ops: Ops) -> tuple[int, int]:
            return await ops.balance(email)

        balance, ledger_total = self._ops_run(job)
        assert balance == ledger_total, "the ledger must always sum to the balance"
        return int(balance)

    def ops(self, job: Any) -> Any:
        return self._ops_run(job)


@pytest.fixture(scope="session")
def mock_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    port = free_port()
    log = tmp_path_factory.mktemp("mock") / "mock.log"
    proc = start_process(
        ["mock-upstream", "--port", str(port)],
        gateway_env(log.parent, None),
        log,
        f"http://127.0.0.1:{port}/healthz",
    )
    yield proc
    proc.stop()


def _start_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock: Process, database_url: str | None
) -> Gateway:
    data_dir = tmp_path_factory.mktemp("gateway")
    config = data_dir / "switchgate.toml"
    config.write_text(config_toml(mock.base_url, f"http://127.0.0.1:{free_port()}"))
    port = free_port()
    env = gateway_env(data_dir, database_url)
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(config)],
        env,
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    return Gateway(proc, mock.base_url, data_dir, database_url)


@pytest.fixture(scope="session")
def gateway(tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process) -> Iterator[Gateway]:
    gw = _start_gateway(tmp_path_factory, mock_upstream, None)
    yield gw
    gw.process.stop()


@pytest.fixture(scope="session")
def postgres_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process
) -> Iterator[Gateway]:
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI but is not reachable on 127.0.0.1:5432")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    with postgres_database() as url:
        gw = _start_gateway(tmp_path_factory, mock_upstream, url)
        yield gw
        gw.process.stop()


@pytest.fixture(
    scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def gateway_any(request: pytest.FixtureRequest) -> Gateway:
    name = "gateway" if request.param == "sqlite" else "postgres_gateway"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]
