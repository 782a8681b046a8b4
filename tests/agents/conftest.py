"""The real coding agents, installed from npm at pinned versions, against the gateway.

The CLIs go into a cache folder outside the repository (`SWITCHGATE_AGENTS_DIR`, default
`~/.cache/switchgate/agents/<versions>`), installed once and reused (~740 MB). Without
node/npm or the npm registry the tests are skipped, except in CI (CI=true), where they are
required. Everything runs hermetically: the fake upstream in strict mode behind the
gateway, every agent's own HOME, and HTTP(S)_PROXY pointing at a closed local port so any
traffic other than to the gateway (telemetry, update checks) fails fast instead of
leaving the machine.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Gateway
from tests.support import IN_CI, Process, dead_port, free_port, gateway_env, start_process

PINNED = {
    "@anthropic-ai/claude-code": "2.1.197",
    "@openai/codex": "0.169.0",
    "@google/gemini-cli": "0.61.0",
}
BINARIES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "gemini": "@google/gemini-cli",
}
# One model per channel kind; an OpenAI channel that serves /responses natively too.
MODELS = {"openai": "agent-gpt", "anthropic": "agent-claude", "gemini": "agent-gemini"}
RESPONSES_MODEL = "agent-gpt-responses"


def _unavailable(message: str) -> None:
    if IN_CI:
        pytest.fail(f"{message}: the agent tests are required in CI")
    pytest.skip(message)


def _installed(folder: Path) -> bool:
    for package, version in PINNED.items():
        manifest = folder / "node_modules" / package / "package.json"
        try:
            if json.loads(manifest.read_text())["version"] != version:
                return False
        except (OSError, ValueError, KeyError):
            return False
    return all((folder / "node_modules" / ".bin" / name).exists() for name in BINARIES)


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The folder holding the `claude`, `codex` and `gemini` commands."""
    versions = "-".join(v for v in PINNED.values())
    default = Path.home() / ".cache" / "switchgate" / "agents" / versions
    folder = Path(os.environ.get("SWITCHGATE_AGENTS_DIR", default))
    if not _installed(folder):
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            _unavailable("node and npm are not installed")
        folder.mkdir(parents=True, exist_ok=True)
        specs = [f"{package}@{version}" for package, version in PINNED.items()]
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", *specs],
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
        except subprocess.TimeoutExpired:
            _unavailable("npm install of the coding agents timed out")
        if done.returncode != 0 or not _installed(folder):
            _unavailable(f"npm install of the coding agents failed: {done.stderr[-500:]}")
    return folder / "node_modules" / ".bin"


def agents_config(mock_url: str) -> str:
    prices = "\n".join(
        f'[prices."{model}"]\ninput = "1"\noutput = "2"\n'
        for model in [*MODELS.values(), RESPONSES_MODEL]
    )
    return f"""
[[channels]]
name = "agents-openai"
kind = "openai"
base_url = "{mock_url}/v1"
key = "mock-key"
models = ["{MODELS["openai"]}"]

[[channels]]
name = "agents-anthropic"
kind = "anthropic"
base_url = "{mock_url}"
key = "mock-key"
models = ["{MODELS["anthropic"]}"]

[[channels]]
name = "agents-gemini"
kind = "gemini"
base_url = "{mock_url}"
key = "mock-key"
models = ["{MODELS["gemini"]}"]

[[channels]]
name = "agents-openai-responses"
kind = "openai"
base_url = "{mock_url}/v1"
key = "mock-key"
models = ["{RESPONSES_MODEL}"]
responses = true

{prices}
"""


@pytest.fixture(scope="session")
def strict_upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    """The fake upstream refusing what the real providers refuse (strict.py)."""
    port = free_port()
    log = tmp_path_factory.mktemp("agents-mock") / "mock.log"
    proc = start_process(
        ["mock-upstream", "--port", str(port), "--strict"],
        gateway_env(log.parent, None),
        log,
        f"http://127.0.0.1:{port}/healthz",
    )
    yield proc
    proc.stop()


@pytest.fixture(scope="session")
def agents_gateway(
    tmp_path_factory: pytest.TempPathFactory, strict_upstream: Process
) -> Iterator[Gateway]:
    data_dir = tmp_path_factory.mktemp("agents-gateway")
    config = data_dir / "switchgate.toml"
    config.write_text(agents_config(strict_upstream.base_url))
    port = free_port()
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(config)],
        gateway_env(data_dir, None),
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    yield Gateway(proc, strict_upstream.base_url, data_dir, None)
    proc.stop()


@dataclass
class AgentRun:
    """How to run one agent against the gateway, in its own HOME and work folder."""

    bin: Path
    gateway: Gateway
    email: str
    token: str
    home: Path
    work: Path

    def failed_requests(self) -> list[tuple[str, int, str | None]]:
        """(endpoint, status, error) of this user's logged calls that didn't answer 200:
        an agent may carry on past a failed side call, the log shows it."""
        time.sleep(0.3)  # logs are written in batches (SWITCHGATE_FLUSH_SECONDS=0.05)
        with sqlite3.connect(self.gateway.data_dir / "switchgate.db") as db:
            rows = db.execute(
                "SELECT l.endpoint, l.status, l.error FROM request_logs l "
                "JOIN users u ON u.id = l.user_id WHERE u.email = ? AND l.status != 200",
                (self.email,),
            ).fetchall()
        return [(str(e), int(s), r) for e, s, r in rows]

    def env(self) -> dict[str, str]:
        dead = f"http://127.0.0.1:{dead_port()}"  # nothing listens there
        keep = ("PATH", "LANG", "TERM", "TMPDIR")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(
            {
                "HOME": str(self.home),
                "HTTP_PROXY": dead,
                "HTTPS_PROXY": dead,
                "http_proxy": dead,
                "https_proxy": dead,
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
                "CI": "true",
                "NO_COLOR": "1",
            }
        )
        return env

    def run(self, agent: str, model: str, prompt: str) -> subprocess.CompletedProcess[str]:
        command, env = getattr(self, f"_{agent}")(model, prompt)
        return subprocess.run(
            command,
            cwd=self.work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def _claude(self, model: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        env = self.env()
        env.update(
            {
                "ANTHROPIC_BASE_URL": self.gateway.url,
                "ANTHROPIC_API_KEY": self.token,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
            }
        )
        return [
            str(self.bin / "claude"),
            "-p",
            prompt,
            "--model",
            model,
            "--allowedTools",
            "Read",
        ], env

    def _codex(self, model: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        codex_home = self.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            f'model = "{model}"\nmodel_provider = "switchgate"\n'
            "[model_providers.switchgate]\n"
            'name = "switchgate"\n'
            f'base_url = "{self.gateway.url}/v1"\n'
            'env_key = "SWITCHGATE_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        env = self.env()
        env.update({"CODEX_HOME": str(codex_home), "SWITCHGATE_API_KEY": self.token})
        return [str(self.bin / "codex"), "exec", "--skip-git-repo-check", prompt], env

    def _gemini(self, model: str, prompt: str) -> tuple[list[str], dict[str, str]]:
        settings = self.home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(
            json.dumps(
                {
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "privacy": {"usageStatisticsEnabled": False},
                    "telemetry": {"enabled": False},
                }
            )
        )
        env = self.env()
        env.update(
            {
                "GEMINI_API_KEY": self.token,
                "GOOGLE_GEMINI_BASE_URL": self.gateway.url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            }
        )
        return [str(self.bin / "gemini"), "-p", prompt, "-m", model], env


@pytest.fixture
def agents(agent_bin: Path, agents_gateway: Gateway, tmp_path: Path) -> AgentRun:
    email, token = agents_gateway.new_user(balance_usd=10)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    return AgentRun(agent_bin, agents_gateway, email, token, home, work)
