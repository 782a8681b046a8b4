"""Two fake upstreams (a primary and a fallback) behind real gateway processes, for the
routing tests: every scenario has its own *lane* (its own pair of channels and models),
so that one scenario's breakers never touch another's."""

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Gateway
from tests.support import Process, free_port, gateway_env, http_json, start_process

KINDS = {"gpt": ("openai", "/v1"), "claude": ("anthropic", ""), "gemini": ("gemini", "")}
FAST_LIMITS = "{ first_byte = 3, stream_first_byte = 2, stream_idle = 2 }"
FAULTS_OFF = {
    "fault_status": 0,
    "fault_count": -1,
    "fault_models": [],
    "fault_retry_after": None,
    "fault_message": None,
    "hang": False,
    "stall_after": None,
    "cut_after": None,
    "invalid_after": None,
    "end_after": None,
}


def lane_models(lane: str, extra: Iterable[str] = ()) -> list[str]:
    return [f"{lane}-{suffix}" for suffix in (*KINDS, *extra)]


def lanes_toml(primary: str, fallback: str, lanes: dict[str, list[str]]) -> str:
    """A primary (priority 10) and a fallback channel per kind per lane."""
    out: list[str] = []
    prices: set[str] = set()
    for lane, extra in lanes.items():
        for suffix, (kind, path) in KINDS.items():
            models = [f"{lane}-{suffix}"] + (
                [f"{lane}-{m}" for m in extra] if kind == "openai" else []
            )
            prices.update(models)
            names = ", ".join(f'"{m}"' for m in models)
            for role, url, priority in (("primary", primary, 10), ("fallback", fallback, 0)):
                out.append(
                    f'[[channels]]\nname = "{lane}-{suffix}-{role}"\nkind = "{kind}"\n'
                    f'base_url = "{url}{path}"\nkey = "mock-key"\nmodels = [{names}]\n'
                    f"priority = {priority}\ntimeouts = {FAST_LIMITS}\n"
                )
    out += [f'[prices."{m}"]\ninput = "1"\noutput = "2"\n' for m in sorted(prices)]
    return "\n".join(out)


def keys_toml(url: str, lane: str, keys: list[str]) -> str:
    """One channel per kind holding several keys (no fallback channel)."""
    listed = ", ".join(f'"{k}"' for k in keys)
    out = []
    for suffix, (kind, path) in KINDS.items():
        out.append(
            f'[[channels]]\nname = "{lane}-{suffix}"\nkind = "{kind}"\n'
            f'base_url = "{url}{path}"\nkeys = [{listed}]\nmodels = ["{lane}-{suffix}"]\n'
            f'[prices."{lane}-{suffix}"]\ninput = "1"\noutput = "2"\n'
        )
    return "\n".join(out)


@dataclass
class Upstream:
    process: Process

    @property
    def url(self) -> str:
        return self.process.base_url

    def faults(self, **values: Any) -> None:
        status, body = http_json("POST", f"{self.url}/_mock/config", {**FAULTS_OFF, **values})
        assert status == 200, body

    def keys_used(self, model: str) -> list[str]:
        """For each request for `model`: "valid" or "invalid" (the mock redacts keys)."""
        _, data = http_json("GET", f"{self.url}/_mock/requests")
        out = []
        for request in data["requests"]:
            body = request.get("json") or {}
            named = body.get("model") if isinstance(body, dict) else None
            if named == model or f"/models/{model}:" in request["path"]:
                headers = request["headers"]
                value = next(
                    (
                        headers[h]
                        for h in ("authorization", "x-api-key", "x-goog-api-key")
                        if h in headers
                    ),
                    request["query"].get("key", ""),
                )
                out.append("valid" if value == "<redacted:valid>" else "invalid")
        return out

    def count(self, model: str) -> int:
        """Requests this upstream received for `model` (any dialect)."""
        _, data = http_json("GET", f"{self.url}/_mock/requests")
        found = 0
        for request in data["requests"]:
            body = request.get("json") or {}
            named = body.get("model") if isinstance(body, dict) else None
            if named == model or f"/models/{model}:" in request["path"]:
                found += 1
        return found


def start_upstream(tmp: Path, port: int | None = None) -> Upstream:
    """A fake upstream process (on `port`, e.g. to restart one that was killed)."""
    port = port or free_port()
    return Upstream(
        start_process(
            ["mock-upstream", "--port", str(port)],
            gateway_env(tmp, None),
            tmp / f"mock-{port}-{time.monotonic_ns()}.log",
            f"http://127.0.0.1:{port}/healthz",
        )
    )


def start_gateway(
    data_dir: Path, config: str, env: dict[str, str] | None = None, database_url: str | None = None
) -> Gateway:
    (data_dir / "switchgate.toml").write_text(config)
    port = free_port()
    full_env = gateway_env(data_dir, database_url)
    full_env["SWITCHGATE_BREAKER_BASE_SECONDS"] = "1"
    full_env.update(env or {})
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(data_dir / "switchgate.toml")],
        full_env,
        data_dir / f"gateway-{port}.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    return Gateway(proc, "", data_dir, database_url)


@contextmanager
def upstream_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Upstream, Upstream]]:
    tmp = tmp_path_factory.mktemp("upstreams")
    primary = start_upstream(tmp)
    fallback = start_upstream(tmp)
    try:
        for upstream in (primary, fallback):
            http_json("POST", f"{upstream.url}/_mock/config", {"record": 1000})
        yield primary, fallback
    finally:
        primary.process.stop()
        fallback.process.stop()
