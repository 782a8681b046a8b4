"""Hosted tools on Vertex AI (providers/hosted_tools.py, capabilities.HostedToolMapper): the
search tool a Vertex channel gets is the upstream model's own (Claude: Anthropic's server
web search, Gemini: Google Search grounding), on channels that allow paid hosted tools;
elsewhere every hosted tool is left out, the client's own too, and named in
`x-switchgate-dropped-tools`. Official SDKs against the fake Vertex AI."""

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.conftest import Gateway, serve_config
from tests.e2e.vertex_gateway import new_account, vertex_calls
from tests.support import Process

MODELS = {
    "vx-claude": "claude-sonnet-4-5@20250929",
    "vx-gemini": "gemini-2.5-flash",
    "vx-claude-free": "claude-sonnet-4-5@20250929",
}


def _config(mock_url: str) -> str:
    prices = "\n".join(f'[prices."{m}"]\ninput = "3"\noutput = "15"' for m in MODELS)
    return f"""
[[channels]]
name = "vertex-paid"
kind = "vertex"
base_url = "{mock_url}"
key_env = "VERTEX_SA_JSON"
models = ["vx-claude", "vx-gemini"]
paid_options = ["hosted_tools"]
options = {{ location = "us-east5" }}
map = {{ "vx-claude" = "{MODELS["vx-claude"]}", "vx-gemini" = "{MODELS["vx-gemini"]}" }}

[[channels]]
name = "vertex-free"
kind = "vertex"
base_url = "{mock_url}"
key_env = "VERTEX_SA_JSON"
models = ["vx-claude-free"]
options = {{ location = "us-east5" }}
map = {{ "vx-claude-free" = "{MODELS["vx-claude-free"]}" }}

{prices}
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process) -> Iterator[Gateway]:
    account = new_account(mock_upstream)
    config = _config(mock_upstream.base_url)
    env = {"VERTEX_SA_JSON": account.key}
    gateway = serve_config(
        tmp_path_factory, "vertex-hosted-tools", config, mock_upstream.base_url, extra_env=env
    )
    yield gateway
    gateway.process.stop()


def _last_call(gw: Gateway, model: str) -> dict[str, Any]:
    """The last call to a Vertex model (its id up to a version's `@`, escaped or not)."""
    return [c for c in vertex_calls(gw) if f"/models/{model}" in c["path"]][-1]


def test_codex_web_search_becomes_each_publishers_own_search_tool(gw: Gateway) -> None:
    _, token = gw.new_user()
    sdk = openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0)
    for model, tool in (
        ("vx-claude", {"type": "web_search_20250305", "name": "web_search"}),
        ("vx-gemini", {"googleSearch": {}}),
    ):
        raw = sdk.responses.with_raw_response.create(
            model=model, input="news?", tools=[{"type": "web_search"}]
        )
        assert raw.parse().output_text
        assert "x-switchgate-dropped-tools" not in raw.headers
        sent = _last_call(gw, MODELS[model].split("@")[0])["json"]
        assert sent["tools"] == [tool], sent


def test_without_paid_hosted_tools_claude_codes_own_tools_are_dropped_and_named(
    gw: Gateway,
) -> None:
    _, token = gw.new_user()
    client = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0)
    raw = client.messages.with_raw_response.create(
        model="vx-claude-free",
        max_tokens=64,
        messages=[{"role": "user", "content": "news?"}],
        tools=[{"type": "web_search_20250305", "name": "web_search"}],
    )
    assert raw.parse().content
    assert raw.headers["x-switchgate-dropped-tools"] == "web_search"
    sent = _last_call(gw, "claude-sonnet-4-5")["json"]
    assert "tools" not in sent, sent
