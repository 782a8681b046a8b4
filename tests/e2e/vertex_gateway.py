"""The gateway of the vertex e2e tests (test_provider_vertex*.py): its own process and
config, whose vertex channels reach the fake Vertex AI of the session's fake upstream
(switchgate/testing/mock_upstream/vertex.py) with a service-account key generated for the
module, exchanged for OAuth tokens at the fake token endpoint; and the three SDK clients."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from tests.conftest import Gateway
from tests.support import Process, free_port, gateway_env, mock_requests, start_process
from tests.vertex_support import ServiceAccountKey, make_service_account, register

GEMINI, CLAUDE, EMBED, FAILOVER = "vx-gemini", "vx-claude", "vx-embed", "vx-failover"
TEXT_EMBED = "vx-text-embed"
MODELS = [GEMINI, CLAUDE]
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def _config(mock_url: str) -> str:
    return f"""
[[channels]]
name = "vertex-main"
kind = "vertex"
base_url = "{mock_url}"
key_env = "VERTEX_SA_JSON"
models = ["{GEMINI}", "{CLAUDE}", "{EMBED}", "{FAILOVER}", "{TEXT_EMBED}"]
options = {{ location = "us-east5" }}
[channels.map]
"{GEMINI}" = "gemini-2.5-flash"
"{CLAUDE}" = "claude-sonnet-4-5@20250929"
"{EMBED}" = "gemini-embedding-001"
"{FAILOVER}" = "gemini-2.5-flash"
"{TEXT_EMBED}" = "text-embedding-005"

[[channels]]
name = "vertex-unknown-account"
kind = "vertex"
base_url = "{mock_url}"
key_env = "VERTEX_UNKNOWN_SA_JSON"
models = ["{FAILOVER}"]
priority = 10

[channels.map]
"{FAILOVER}" = "gemini-2.5-flash"

[prices."{FAILOVER}"]
input = "0.3"
output = "2.5"

[prices."{GEMINI}"]
input = "0.3"
output = "2.5"

[prices."{CLAUDE}"]
input = "3"
output = "15"

[prices."{EMBED}"]
kind = "embedding"
input = "0.15"

[prices."{TEXT_EMBED}"]
kind = "embedding"
input = "0.1"
"""


def new_account(mock_upstream: Process) -> ServiceAccountKey:
    """A service account of project vertex-e2e, registered with the fake token endpoint."""
    sa = make_service_account(mock_upstream.base_url, project="vertex-e2e")
    register(mock_upstream.base_url, sa)
    return sa


@contextmanager
def running_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process, account: ServiceAccountKey
) -> Iterator[Gateway]:
    """A gateway with the vertex channels of `_config` (for a module fixture)."""
    data_dir = tmp_path_factory.mktemp("vertex-gateway")
    config = data_dir / "switchgate.toml"
    config.write_text(_config(mock_upstream.base_url))
    port = free_port()
    env = gateway_env(data_dir, None)
    env["VERTEX_SA_JSON"] = account.key
    # a key the token endpoint does not know (never registered): its channel must fail over
    unknown = make_service_account(mock_upstream.base_url, project="unknown-project")
    env["VERTEX_UNKNOWN_SA_JSON"] = unknown.key
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(config)],
        env,
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    gw = Gateway(proc, mock_upstream.base_url, data_dir, None)
    yield gw
    proc.stop()
    log = proc.log_path.read_text()
    for key in (account, unknown):
        assert key.info["private_key"].splitlines()[1] not in log


def vertex_calls(gw: Gateway) -> list[dict[str, Any]]:
    return [r for r in mock_requests(gw.mock_url) if r["path"].startswith("/v1/projects/")]


def oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=token, base_url=gw.url + "/v1", max_retries=0)


def claude(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=token, base_url=gw.url, max_retries=0)


def genai_client(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )
