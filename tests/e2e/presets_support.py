"""The gateway of tests/e2e/test_provider_presets.py: deepseek, mistral, ollama and groq
channels on the fake upstream's preset modes (`/presets/{vendor}/v1`), and its helpers."""

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from tests.conftest import Gateway, serve_config
from tests.e2e.media_helpers import log_rows
from tests.support import Process, mock_requests, wait_for

MODELS = ("ds-reasoner", "mistral-mock", "magistral-mock", "ollama-mock", "groq-mock", "qwen-mock")
WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def _config(mock: str) -> str:
    prices = "\n".join(f'[prices."{m}"]\ninput = "1"\noutput = "2"' for m in MODELS)
    return f"""
[[channels]]
name = "preset-deepseek"
kind = "deepseek"
base_url = "{mock}/presets/deepseek/v1"
key = "mock-key"
models = ["ds-reasoner"]
map = {{ "ds-reasoner" = "deepseek-reasoner" }}

[[channels]]
name = "preset-mistral"
kind = "mistral"
base_url = "{mock}/presets/mistral/v1"
key = "mock-key"
models = ["mistral-mock", "magistral-mock", "mistral-embed-mock"]
options = {{ safe_prompt = "true" }}
[channels.map]
"mistral-mock" = "mistral-large-latest"
"magistral-mock" = "magistral-medium-latest"
"mistral-embed-mock" = "mistral-embed"

[[channels]]
name = "preset-ollama"
kind = "ollama"
base_url = "{mock}/presets/ollama/v1"
models = ["ollama-mock", "ollama-embed"]
map = {{ "ollama-mock" = "llama3.2", "ollama-embed" = "nomic-embed-text" }}

[[channels]]
name = "preset-groq"
kind = "groq"
base_url = "{mock}/presets/groq/v1"
key = "mock-key"
models = ["groq-mock"]
map = {{ "groq-mock" = "llama-3.3-70b-versatile" }}

[[channels]]
name = "preset-qwen"
kind = "qwen"
base_url = "{mock}/presets/qwen/v1"
key = "mock-key"
models = ["qwen-mock", "qwen-embed"]
map = {{ "qwen-mock" = "qwen-plus", "qwen-embed" = "text-embedding-v3" }}

[prices."qwen-embed"]
kind = "embedding"
input = "1"

[prices."ollama-embed"]
kind = "embedding"
input = "1"

[prices."mistral-embed-mock"]
kind = "embedding"
input = "1"

{prices}
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process) -> Iterator[Gateway]:
    config = _config(mock_upstream.base_url)
    gateway = serve_config(tmp_path_factory, "presets-gateway", config, mock_upstream.base_url)
    yield gateway
    gateway.process.stop()


def oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def ant(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0, timeout=30)


def gem(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )


def upstream_sent(gw: Gateway, vendor: str) -> list[dict[str, Any]]:
    return [r for r in mock_requests(gw.mock_url) if r["path"].startswith(f"/presets/{vendor}/")]


def billed(gw: Gateway, email: str, calls: int) -> list[dict[str, Any]]:
    """The user's log rows once `calls` are logged; the balance matches the ledger and
    went down by exactly their cost."""
    rows = wait_for(lambda: (r := log_rows(gw, email)) and len(r) >= calls and r)
    assert all(row["cost"] > 0 for row in rows), rows
    assert wait_for(lambda: gw.balance(email) == 10 * 10**12 - sum(r["cost"] for r in rows))
    return list(rows)


def try_chat(sdk: openai.OpenAI, model: str) -> Any:
    """The reply once the gateway offers `model` (its config poll), else None."""
    try:
        return sdk.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hi"}]
        )
    except openai.NotFoundError:
        return None
