"""Every relay endpoint and every error path, then a scan of everything the gateway
emitted (its JSON log lines, /metrics, the spans an OTLP collector double received) for
secrets: user tokens, upstream keys, passwords, session cookies, the secret key and the
metrics token. None may appear. The access log lines carry the fields operators need."""

import json
from collections.abc import Iterator
from dataclasses import dataclass

import anthropic
import httpx
import openai
import pytest

from switchgate.cli.ops import Ops
from tests.conftest import Gateway
from tests.e2e.console_client import Console
from tests.otlp_collector import Collector, start_collector
from tests.support import free_port, gateway_env, start_process

UPSTREAM_KEY = "sk-upstream-SECRET-4f1c9e2b7a"
WRONG_KEY = "sk-revoked-SECRET-77aa01"
DEAD_KEY = "sk-dead-SECRET-0b3e"
NEW_KEY = "sk-added-in-console-SECRET-9d2"
ADMIN_PASSWORD = "admin-SECRET-pass-3141"
WRONG_PASSWORD = "wrong-SECRET-pass-2718"
BAD_TOKEN = "sk-not-a-real-token-SECRET-5f5f5f5f5f5f5f5f5f5f5f5f"
SECRET_KEY = "c3dpdGNoZ2F0ZS1zZWNyZXQta2V5LTMyLWJ5dGVzISE="  # base64 of 32 bytes
METRICS_TOKEN = "metrics-SECRET-token-1618"
MODELS = {
    "gpt-mock": 'input = "1"\noutput = "2"',
    "claude-mock": 'input = "3"\noutput = "15"',
    "gemini-mock": 'input = "1"\noutput = "2"',
    "embed-mock": 'kind = "embedding"\ninput = "0.1"',
    "dall-mock": 'kind = "image"\nper_image = "0.04"',
    "tts-mock": 'kind = "tts"\nper_1m_characters = "15"',
    "rerank-oai": 'kind = "rerank"\nper_request = "0.001"',
    "revoked-model": 'input = "1"\noutput = "2"',
    "dead-model": 'input = "1"\noutput = "2"',
}


def _config(mock: str, dead: str) -> str:
    def channel(name: str, kind: str, base: str, key: str, models: str, extra: str = "") -> str:
        return (
            f'[[channels]]\nname = "{name}"\nkind = "{kind}"\nbase_url = "{base}"\n'
            f'key = "{key}"\nmodels = [{models}]\n{extra}\n'
        )

    media = '"gpt-mock", "embed-mock", "dall-mock", "tts-mock", "rerank-oai"'
    return "\n".join(
        [
            channel("main", "openai", f"{mock}/v1", UPSTREAM_KEY, media,
                    'map = { "dall-mock" = "dall-e-3" }'),
            channel("claude", "anthropic", mock, UPSTREAM_KEY, '"claude-mock"'),
            channel("gemini", "gemini", mock, UPSTREAM_KEY, '"gemini-mock"'),
            channel("revoked", "openai", f"{mock}/v1", WRONG_KEY, '"revoked-model"'),
            channel("dead", "openai", f"{dead}/v1", DEAD_KEY, '"dead-model"'),
            *(f'[prices."{m}"]\n{spec}\n' for m, spec in MODELS.items()),
        ]
    )  # fmt: skip


@dataclass
class Setup:
    gateway: Gateway
    collector: Collector


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    collector, server = start_collector()
    base = tmp_path_factory.mktemp("secrets")
    mock_port = free_port()
    mock = start_process(
        ["mock-upstream", "--port", str(mock_port), "--key", UPSTREAM_KEY],
        gateway_env(base, None),
        base / "mock.log",
        f"http://127.0.0.1:{mock_port}/healthz",
    )
    config = base / "switchgate.toml"
    config.write_text(_config(mock.base_url, f"http://127.0.0.1:{free_port()}"))
    env = gateway_env(base, None)
    env.update(
        {
            "SWITCHGATE_LOG_LEVEL": "info",
            "SWITCHGATE_LOG_FORMAT": "json",
            "SWITCHGATE_ADMIN_EMAIL": "root@example.com",
            "SWITCHGATE_ADMIN_PASSWORD": ADMIN_PASSWORD,
            "SWITCHGATE_SECRET_KEY": SECRET_KEY,
            "SWITCHGATE_METRICS_TOKEN": METRICS_TOKEN,
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        }
    )
    port = free_port()
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(config)],
        env,
        base / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    yield Setup(Gateway(proc, mock.base_url, base, None), collector)
    proc.stop()
    mock.stop()
    server.shutdown()


def _drive_relay(gw: Gateway, token: str, broke: str, limited: str) -> None:
    url = gw.url
    hi = [{"role": "user", "content": "hello"}]
    oa = openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0)
    oa.chat.completions.create(model="gpt-mock", messages=hi)
    for _ in oa.chat.completions.create(model="gpt-mock", messages=hi, stream=True):
        pass
    oa.completions.create(model="gpt-mock", prompt="once upon")
    oa.embeddings.create(model="embed-mock", input=["a", "b"])
    oa.images.generate(model="dall-mock", prompt="a cat")
    oa.audio.speech.create(model="tts-mock", voice="alloy", input="hello").read()
    oa.models.list()
    h = {"authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, timeout=30) as http:
        http.post("/v1/rerank", headers=h, json={"model": "rerank-oai", "query": "q",
                  "documents": ["a", "b"]})  # fmt: skip
        http.post("/v1/responses", headers=h, json={"model": "gpt-mock", "input": "hi"})
        gem = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        for action in ("generateContent", "streamGenerateContent?alt=sse"):
            sep = "&" if "?" in action else "?"
            http.post(f"/v1beta/models/gemini-mock:{action}{sep}key={token}", json=gem)
        http.post(f"/v1beta/models/gemini-mock:generateContent?key={BAD_TOKEN}", json=gem)
        for body in (b"{not json", b"", b"[]"):
            http.post("/v1/chat/completions", headers=h, content=body)
        http.post("/v1/chat/completions", json={"model": "gpt-mock", "messages": hi})
        for bad in (BAD_TOKEN, f"{token}x"):
            http.post("/v1/chat/completions", headers={"authorization": f"Bearer {bad}"},
                      json={"model": "gpt-mock", "messages": hi})  # fmt: skip
        http.post("/v1/messages", headers={"x-api-key": BAD_TOKEN},
                  json={"model": "claude-mock", "max_tokens": 5, "messages": hi})  # fmt: skip
        for model in ("no-such-model", "revoked-model", "dead-model"):
            http.post("/v1/chat/completions", headers=h, json={"model": model, "messages": hi})
        for directive in ("[[mock:error=500]]", "[[mock:error=429]]", "[[mock:drop_after=2]]"):
            said = [{"role": "user", "content": directive}]
            http.post("/v1/chat/completions", headers=h,
                      json={"model": "gpt-mock", "stream": True, "messages": said})  # fmt: skip
        http.post("/v1/chat/completions", headers={"authorization": f"Bearer {broke}"},
                  json={"model": "gpt-mock", "messages": hi})  # fmt: skip
        for _ in range(3):
            http.post("/v1/chat/completions", headers={"authorization": f"Bearer {limited}"},
                      json={"model": "gpt-mock", "messages": hi})  # fmt: skip
    claude = anthropic.Anthropic(base_url=url, api_key=token, max_retries=0)
    claude.messages.create(model="claude-mock", max_tokens=20, messages=hi)  # type: ignore[arg-type]
    with claude.messages.stream(model="claude-mock", max_tokens=20, messages=hi) as s:  # type: ignore[arg-type]
        for _t in s.text_stream:
            pass
    claude.messages.count_tokens(model="claude-mock", messages=hi)  # type: ignore[arg-type]


def _drive_console(gw: Gateway) -> list[str]:
    """Sign-ins (a wrong password first), admin API calls; returns the secrets it saw."""
    wrong = Console(gw)
    assert wrong.signin("root@example.com", WRONG_PASSWORD).status_code != 303
    admin = Console(gw)
    assert admin.signin("root@example.com", ADMIN_PASSWORD).status_code == 303
    created = admin.ok("POST", "/api/channels", {"name": "added", "kind": "openai",
                       "base_url": f"{gw.mock_url}/v1", "api_key": NEW_KEY,
                       "models": ["gpt-mock"]})  # fmt: skip
    admin.ok("POST", f"/api/channels/{created['id']}/test", {})
    admin.ok("GET", "/api/channels")
    new_token = admin.ok("POST", "/api/tokens", {"name": "console"})
    admin.api("GET", "/api/logs")
    cookies = [c.value for c in admin.http.cookies.jar] + [c.value for c in wrong.http.cookies.jar]
    found = [v for v in cookies if len(v) >= 16]
    assert found, "the console session should have set a cookie"
    return [*found, *(str(v) for v in new_token.values() if str(v).startswith("sk-"))]


def test_nothing_emitted_contains_a_secret(setup: Setup) -> None:
    gw = setup.gateway
    email, token = gw.new_user()
    _, broke = gw.new_user(balance_usd=0)

    async def limited_token(ops: Ops) -> str:
        return (await ops.create_token(email, "limited", rpm_limit=1)).token

    limited = gw.ops(limited_token)
    _drive_relay(gw, token, broke, limited)
    seen = _drive_console(gw)
    metrics = httpx.get(
        f"{gw.url}/metrics", headers={"authorization": f"Bearer {METRICS_TOKEN}"}
    ).text
    assert "switchgate_requests_total" in metrics
    gw.process.stop()  # flushes the log, the batch processor sends the last spans
    log = (gw.data_dir / "gateway.log").read_text(errors="replace")
    secrets = [token, broke, limited, BAD_TOKEN, UPSTREAM_KEY, WRONG_KEY, DEAD_KEY, NEW_KEY,
               ADMIN_PASSWORD, WRONG_PASSWORD, SECRET_KEY, METRICS_TOKEN, *seen]  # fmt: skip
    spans = b"".join(setup.collector.raw)
    assert len(setup.collector.spans) >= 100, "every request should have been traced"
    span_text = json.dumps([s.__dict__ for s in setup.collector.spans])
    for secret in secrets:
        needle = secret[:24]  # a prefix long enough to be that secret alone
        assert needle not in log, f"a secret is in the logs: {needle[:6]}..."
        assert needle not in metrics, f"a secret is in /metrics: {needle[:6]}..."
        assert needle.encode() not in spans and needle not in span_text, needle[:6]

    access = [json.loads(line) for line in log.splitlines() if '"switchgate.access"' in line]
    assert len(access) >= 30, len(access)
    fields = {"request_id", "user_id", "token_id", "model", "channel", "status",
              "latency_ms", "cost_usd"}  # fmt: skip
    assert all(fields <= set(line) for line in access)
    ok = [a for a in access if a["status"] == 200 and a["model"] == "gpt-mock"]
    assert ok and all(a["channel"] == "main" and a["user_id"] and a["token_id"] for a in ok)
    assert any(a["status"] == 401 and a["user_id"] is None for a in access)
    assert any(a["status"] == 429 for a in access)
    assert any(a["model"] == "revoked-model" and a["status"] >= 500 for a in access)
    assert all(json.loads(line) for line in log.splitlines() if line.startswith("{"))
