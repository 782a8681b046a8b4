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
from tests.mailbox import SmtpServer
from tests.support import (
    IN_CI,
    Process,
    dead_port,
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
    "gpt-resp": {"input": "1", "output": "2", "cache_read": "0.5"},
}

# Media prices (docs/endpoints.md): USD per 1M tokens / characters, per image, per minute,
# per request; `image_prices` maps SIZE[:QUALITY] to USD per image.
MEDIA_PRICES: dict[str, dict[str, Any]] = {
    "embed-mock": {"kind": "embedding", "input": "0.1"},
    "gemini-embed": {"kind": "embedding", "input": "0.15"},
    "dall-mock": {
        "kind": "image",
        "per_image": "0.04",
        "image_prices": {"1024x1024:hd": "0.08", "1792x1024": "0.12"},
    },
    "image-mock": {"kind": "image", "input": "5", "output": "40"},
    "tts-mock": {"kind": "tts", "per_1m_characters": "15"},
    "whisper-mock": {"kind": "stt", "per_minute": "0.006"},
    "transcribe-mock": {"kind": "stt", "input": "2.5", "output": "10"},
    "rerank-mock": {"kind": "rerank", "per_request": "0.002"},
    "rerank-jina": {"kind": "rerank", "input": "0.02"},
    "rerank-oai": {"kind": "rerank", "input": "0.01", "per_request": "0.001"},
}


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f'"{k}" = "{v}"' for k, v in value.items()) + " }"
    return f'"{value}"'


def media_channels(mock_url: str) -> str:
    return f"""
[[channels]]
name = "mock-openai-media"
kind = "openai"
base_url = "{mock_url}/v1"
key = "mock-key"
models = ["embed-mock", "dall-mock", "image-mock", "tts-mock", "whisper-mock",
          "transcribe-mock", "rerank-oai"]
[channels.map]
"dall-mock" = "dall-e-3"
"image-mock" = "gpt-image-1"
"whisper-mock" = "whisper-1"
"transcribe-mock" = "gpt-4o-transcribe"

[[channels]]
name = "mock-gemini-embed"
kind = "gemini"
base_url = "{mock_url}"
key = "mock-key"
models = ["gemini-embed"]
map = {{ "gemini-embed" = "gemini-embedding-001" }}

[[channels]]
name = "mock-cohere"
kind = "cohere"
base_url = "{mock_url}"
key = "mock-key"
models = ["rerank-mock"]

[[channels]]
name = "mock-jina"
kind = "jina"
base_url = "{mock_url}"
key = "mock-key"
models = ["rerank-jina"]
"""


def config_toml(mock_url: str, dead_url: str) -> str:
    prices = "\n".join(
        f'[prices."{model}"]\n' + "\n".join(f"{k} = {_toml_value(v)}" for k, v in spec.items())
        for model, spec in {**PRICES, **MEDIA_PRICES}.items()
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

[[channels]]
name = "mock-openai-responses"
kind = "openai"
base_url = "{mock_url}/v1"
key = "mock-key"
models = ["gpt-resp"]
responses = true
{media_channels(mock_url)}
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
    tmp_path_factory: pytest.TempPathFactory,
    mock: Process,
    database_url: str | None,
    extra_env: dict[str, str] | None = None,
) -> Gateway:
    config = config_toml(mock.base_url, f"http://127.0.0.1:{dead_port()}")
    return serve_config(tmp_path_factory, "gateway", config, mock.base_url, database_url, extra_env)


def serve_config(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    config: str,
    mock_url: str,
    database_url: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Gateway:
    """A gateway serving `config` (a config file's text) from a fresh data dir `name`N;
    the caller stops it (`gateway.process.stop()`)."""
    data_dir = tmp_path_factory.mktemp(name)
    path = data_dir / "switchgate.toml"
    path.write_text(config)
    port = free_port()
    env = gateway_env(data_dir, database_url)
    env.update(extra_env or {})
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(path)],
        env,
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    return Gateway(proc, mock_url, data_dir, database_url)


# The console: the first admin, the local SMTP server and the fake OAuth provider.
ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "admin-password-1"


@pytest.fixture(scope="session")
def smtp_server() -> Iterator[SmtpServer]:
    server = SmtpServer(free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fake_oauth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    port = free_port()
    log = tmp_path_factory.mktemp("oauth") / "fake_oauth.log"
    proc = start_process(
        ["--port", str(port)],
        gateway_env(log.parent, None),
        log,
        f"http://127.0.0.1:{port}/healthz",
        module="switchgate.testing.fake_oauth",
    )
    yield proc
    proc.stop()


def console_env(smtp: SmtpServer, oauth: Process) -> dict[str, str]:
    return {
        "SWITCHGATE_ADMIN_EMAIL": ADMIN_EMAIL,
        "SWITCHGATE_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "SWITCHGATE_SMTP_HOST": "127.0.0.1",
        "SWITCHGATE_SMTP_PORT": str(smtp.port),
        "SWITCHGATE_SMTP_FROM": "gateway@example.com",
        "SWITCHGATE_GITHUB_CLIENT_ID": "fake-github-id",
        "SWITCHGATE_GITHUB_CLIENT_SECRET": "fake-github-secret",
        "SWITCHGATE_GITHUB_AUTHORIZE_URL": f"{oauth.base_url}/github/login/oauth/authorize",
        "SWITCHGATE_GITHUB_TOKEN_URL": f"{oauth.base_url}/github/login/oauth/access_token",
        "SWITCHGATE_GITHUB_API_URL": f"{oauth.base_url}/github/api",
        "SWITCHGATE_GOOGLE_CLIENT_ID": "fake-google-id",
        "SWITCHGATE_GOOGLE_CLIENT_SECRET": "fake-google-secret",
        "SWITCHGATE_GOOGLE_ISSUER": f"{oauth.base_url}/google",
    }


@pytest.fixture(scope="session")
def gateway(
    tmp_path_factory: pytest.TempPathFactory,
    mock_upstream: Process,
    smtp_server: SmtpServer,
    fake_oauth: Process,
) -> Iterator[Gateway]:
    gw = _start_gateway(tmp_path_factory, mock_upstream, None, console_env(smtp_server, fake_oauth))
    yield gw
    gw.process.stop()


@pytest.fixture(scope="session")
def postgres_gateway(
    tmp_path_factory: pytest.TempPathFactory,
    mock_upstream: Process,
    smtp_server: SmtpServer,
    fake_oauth: Process,
) -> Iterator[Gateway]:
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI but is not reachable on 127.0.0.1:5432")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    with postgres_database() as url:
        gw = _start_gateway(
            tmp_path_factory, mock_upstream, url, console_env(smtp_server, fake_oauth)
        )
        yield gw
        gw.process.stop()


@pytest.fixture(
    scope="session", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def gateway_any(request: pytest.FixtureRequest) -> Gateway:
    name = "gateway" if request.param == "sqlite" else "postgres_gateway"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]
