"""The systems under test: the fake upstream called directly, switchgate, LiteLLM's proxy.

Every gateway serves the same four models, each backed by the same fake upstream:

| model      | upstream                         | shape                              |
|------------|----------------------------------|------------------------------------|
| gpt-l0     | OpenAI /u/0/20/0/v1              | no latency, 20-chunk streams       |
| gpt-l50    | OpenAI /u/50/20/0/v1             | 50 ms before the response headers  |
| gpt-paced  | OpenAI /u/0/50/20/v1             | 50-chunk streams, 20 ms apart      |
| claude-l0  | Anthropic /u/0/20/0              | no latency, 20-chunk streams       |
"""

import asyncio
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.procs import Proc, free_port, spawn

ROOT = Path(__file__).resolve().parent.parent
LITELLM_BIN = ROOT / "bench" / ".venv-litellm" / "bin" / "litellm"
LITELLM_KEY = "sk-bench-master-key"

# model -> (upstream kind, path prefix on the fake upstream)
MODELS: dict[str, tuple[str, str]] = {
    "gpt-l0": ("openai", "/u/0/20/0"),
    "gpt-l50": ("openai", "/u/50/20/0"),
    "gpt-paced": ("openai", "/u/0/50/20"),
    "claude-l0": ("anthropic", "/u/0/20/0"),
}


def upstream_base(upstream_url: str, model: str) -> str:
    """The base URL each provider's SDK would take: OpenAI's ends in /v1."""
    kind, prefix = MODELS[model]
    return f"{upstream_url}{prefix}/v1" if kind == "openai" else f"{upstream_url}{prefix}"


@dataclass
class Running:
    name: str
    port: int
    token: str
    proc: Proc | None  # None: the fake upstream itself (direct)
    cold_start_s: float | None = None


def start_upstream(work: Path, cpus: set[int]) -> tuple[Proc, int]:
    port = free_port()
    proc = spawn(
        "upstream",
        [sys.executable, "-m", "bench.upstream", "--port", str(port)],
        env=dict(os.environ),
        cpus=cpus,
        log_path=work / "upstream.log",
        cwd=ROOT,
    )
    proc.wait_ready(f"http://127.0.0.1:{port}/health")
    return proc, port


# ---------------------------------------------------------------- switchgate


def _switchgate_config(upstream_url: str) -> str:
    lines = []
    for model, (kind, _) in MODELS.items():
        lines += [
            "[[channels]]",
            f'name = "bench-{model}"',
            f'kind = "{kind}"',
            f'base_url = "{upstream_base(upstream_url, model)}"',
            'key = "mock-key"',
            f'models = ["{model}"]',
            "",
            f'[prices."{model}"]',
            'input = "0.15"',
            'output = "0.60"',
            "",
        ]
    return "\n".join(lines)


async def _switchgate_data(data_dir: Path, upstream_url: str) -> str:
    """Schema, channels, prices, a user with $1M and a token with a rate limit; returns
    the token. Uses the same service functions as the CLI."""
    from switchgate.accounts import service as accounts
    from switchgate.cli.config_file import apply_config, read_config
    from switchgate.cli.ops import Ops
    from switchgate.money import UNITS_PER_USD
    from switchgate.settings import Settings
    from switchgate.storage import migrate
    from switchgate.storage.db import Database
    from switchgate.storage.secrets import SecretBox

    settings = Settings(data_dir=data_dir)
    db = Database(settings.resolved_database_url())
    try:
        await migrate.upgrade(db)
        box = SecretBox.load(None, data_dir)
        config_path = data_dir / "bench.toml"
        config_path.write_text(_switchgate_config(upstream_url))
        await apply_config(db, box, read_config(config_path))
        ops = Ops(db, box)
        user = await ops.add_user("bench@example.com", None, False)
        await ops.add_balance("bench@example.com", 1_000_000 * UNITS_PER_USD, "bench", "bench")
        async with db.begin() as conn:
            # A real limit (checked on every request), high enough never to refuse one.
            new = await accounts.create_token(conn, user.id, "bench", rpm_limit=100_000_000)
        return new.token
    finally:
        await db.dispose()


def start_switchgate(
    work: Path, upstream_url: str, cpus: set[int], workers: int = 1, label: str = "switchgate"
) -> Running:
    data_dir = work / f"{label}-data"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    token = asyncio.run(_switchgate_data(data_dir, upstream_url))
    port = free_port()
    env = dict(os.environ)
    env.update(
        {
            "SWITCHGATE_DATA_DIR": str(data_dir),
            "SWITCHGATE_LOG_LEVEL": "warning",
        }
    )
    env.pop("SWITCHGATE_DATABASE_URL", None)
    proc = spawn(
        label,
        [
            sys.executable,
            "-m",
            "switchgate",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        env=env,
        cpus=cpus,
        log_path=work / f"{label}.log",
        cwd=ROOT,
    )
    cold = proc.wait_ready(f"http://127.0.0.1:{port}/healthz")
    return Running(label, port, token, proc, cold)


# ---------------------------------------------------------------- LiteLLM


def litellm_available() -> bool:
    return LITELLM_BIN.exists()


def install_litellm() -> None:
    """Create bench/.venv-litellm and install LiteLLM's proxy from PyPI into it."""
    import subprocess

    venv = LITELLM_BIN.parent.parent
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "litellm[proxy]"], check=True)


def _litellm_config(upstream_url: str) -> str:
    lines = ["model_list:"]
    for model, (kind, _) in MODELS.items():
        # Models LiteLLM's price map knows, so it takes its normal cost path (an unknown
        # model sends every request through its "zero cost" diagnostics instead).
        upstream_model = "openai/gpt-4o-mini" if kind == "openai" else "anthropic/claude-haiku-4-5"
        lines += [
            f"  - model_name: {model}",
            "    litellm_params:",
            f"      model: {upstream_model}",
            f"      api_base: {upstream_base(upstream_url, model)}",
            "      api_key: mock-key",
        ]
    # Production settings from LiteLLM's "Best Practices for Production" page: a master
    # key, verbose logging off, a request timeout; cooldowns off so that one slow answer
    # under overload doesn't turn the rest of a run into 429s.
    lines += [
        "general_settings:",
        f"  master_key: {LITELLM_KEY}",
        "  disable_error_logs: true",
        "litellm_settings:",
        "  set_verbose: false",
        "  json_logs: true",
        "  request_timeout: 600",
        "router_settings:",
        "  disable_cooldowns: true",
    ]
    return "\n".join(lines) + "\n"


def start_litellm(
    work: Path, upstream_url: str, cpus: set[int], workers: int = 1, label: str = "litellm"
) -> Running:
    config = work / f"{label}.yaml"
    config.write_text(_litellm_config(upstream_url))
    port = free_port()
    env = dict(os.environ)
    env.update(
        {
            "LITELLM_LOG": "ERROR",
            "LITELLM_MODE": "PRODUCTION",
            # Anthropic-messages clients on an OpenAI model: use Chat Completions upstream
            # (the default for OpenAI models is the Responses API), as switchgate does.
            "LITELLM_USE_CHAT_COMPLETIONS_URL_FOR_ANTHROPIC_MESSAGES": "true",
        }
    )
    proc = spawn(
        label,
        [
            str(LITELLM_BIN),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--num_workers",
            str(workers),
        ],
        env=env,
        cpus=cpus,
        log_path=work / f"{label}.log",
        cwd=work,
    )
    cold = proc.wait_ready(f"http://127.0.0.1:{port}/health/liveliness", timeout=300)
    return Running(label, port, LITELLM_KEY, proc, cold)
