"""Test helpers: run the real gateway and the fake upstream as subprocesses, set up data
through the same service functions the CLI uses."""

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_ADMIN_URL = os.environ.get(
    "SWITCHGATE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
REDIS_URL = os.environ.get("SWITCHGATE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
IN_CI = os.environ.get("CI") == "true"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Sockets bound and never listened on, kept open until the test run ends (see dead_port).
_DEAD_PORTS: list[socket.socket] = []


def dead_port() -> int:
    """A port that refuses connections for the whole test run. A port that was merely
    free once (free_port) can be taken later by another test's server, which may then
    accept and never answer: a "dead" channel would then hang instead of failing over."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    _DEAD_PORTS.append(s)
    return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 20.0, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{url} did not become ready in {timeout}s")


def postgres_available() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=0.5):
            return True
    except OSError:
        return False


async def _pg_admin(statement: str) -> None:
    import asyncpg

    url = POSTGRES_ADMIN_URL.replace("postgresql+asyncpg", "postgresql")
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for one test session; dropped afterwards."""
    name = f"sg_test_{secrets.token_hex(4)}"
    asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield POSTGRES_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@dataclass
class Process:
    proc: subprocess.Popen[bytes]
    base_url: str
    env: dict[str, str]
    log_path: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_process(
    args: list[str],
    env: dict[str, str],
    log_path: Path,
    ready_url: str,
    module: str = "switchgate",
) -> Process:
    handle = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args],
        env=env,
        stdout=handle,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    try:
        wait_http(ready_url, proc=proc)
    except RuntimeError:
        proc.kill()
        raise RuntimeError(log_path.read_text(errors="replace")) from None
    return Process(proc, ready_url.rsplit("/", 1)[0], env, log_path)


def gateway_env(data_dir: Path, database_url: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "SWITCHGATE_DATA_DIR": str(data_dir),
            "SWITCHGATE_CONFIG_POLL_SECONDS": "0.1",
            "SWITCHGATE_FLUSH_SECONDS": "0.05",
            "SWITCHGATE_LOG_LEVEL": "warning",
            # Tests that read a gateway's log look for its human words; the JSON lines a
            # non-terminal gets by default are tested in test_secret_scan / test_logs.
            "SWITCHGATE_LOG_FORMAT": "text",
        }
    )
    if database_url:
        env["SWITCHGATE_DATABASE_URL"] = database_url
    else:
        env.pop("SWITCHGATE_DATABASE_URL", None)
    return env


def run_cli(
    env: dict[str, str], *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "switchgate", *args],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"switchgate {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        )
    return result


def http_json(
    method: str, url: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw


def mock_requests(mock_url: str) -> list[dict[str, Any]]:
    _, data = http_json("GET", f"{mock_url}/_mock/requests")
    return list(data["requests"] if isinstance(data, dict) else data)


def clear_mock_requests(mock_url: str) -> None:
    http_json("DELETE", f"{mock_url}/_mock/requests")


def wait_for(predicate: Any, timeout: float = 5.0, interval: float = 0.05) -> Any:
    """Poll until predicate() is truthy (for state written in batches)."""
    deadline = time.monotonic() + timeout
    value = predicate()
    while not value and time.monotonic() < deadline:
        time.sleep(interval)
        value = predicate()
    return value
