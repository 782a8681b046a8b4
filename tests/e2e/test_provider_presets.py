"""OpenAI-compatible presets end to end: a gateway of its own with deepseek, mistral, ollama
and groq channels on the fake upstream's preset modes (mock_upstream/presets.py, which
refuse what each vendor refuses), driven by the official openai, anthropic and
google-genai SDKs; usage billed to the ledger."""

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from tests.conftest import Gateway
from tests.e2e.media_helpers import log_rows
from tests.support import (
    Process,
    clear_mock_requests,
    free_port,
    gateway_env,
    mock_requests,
    run_cli,
    start_process,
    wait_for,
)

MODELS = ("ds-reasoner", "mistral-mock", "magistral-mock", "ollama-mock", "groq-mock")
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
    data_dir = tmp_path_factory.mktemp("presets-gateway")
    config = data_dir / "switchgate.toml"
    config.write_text(_config(mock_upstream.base_url))
    port = free_port()
    proc = start_process(
        ["serve", "--port", str(port), "--config", str(config)],
        gateway_env(data_dir, None),
        data_dir / "gateway.log",
        f"http://127.0.0.1:{port}/healthz",
    )
    yield Gateway(proc, mock_upstream.base_url, data_dir, None)
    proc.stop()


def _oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def _ant(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0, timeout=30)


def _gem(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )


def _sent(gw: Gateway, vendor: str) -> list[dict[str, Any]]:
    return [r for r in mock_requests(gw.mock_url) if r["path"].startswith(f"/presets/{vendor}/")]


def _billed(gw: Gateway, email: str, calls: int) -> list[dict[str, Any]]:
    """The user's log rows once `calls` are logged; the balance matches the ledger and
    went down by exactly their cost."""
    rows = wait_for(lambda: (r := log_rows(gw, email)) and len(r) >= calls and r)
    assert all(row["cost"] > 0 for row in rows), rows
    assert wait_for(lambda: gw.balance(email) == 10 * 10**12 - sum(r["cost"] for r in rows))
    return list(rows)


# --- deepseek: reasoning_content as each dialect's thinking ------------------------------


def test_deepseek_thinking_through_the_anthropic_sdk(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = _ant(gw, token)
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    reply = sdk.messages.create(
        model="ds-reasoner",
        max_tokens=2048,
        thinking=thinking,
        messages=[{"role": "user", "content": "which is larger, 9.11 or 9.8?"}],
    )
    assert [b.type for b in reply.content] == ["thinking", "text"]
    assert reply.content[0].thinking.startswith("Let me think")  # type: ignore[union-attr]
    with sdk.messages.stream(
        model="ds-reasoner",
        max_tokens=2048,
        thinking=thinking,
        messages=[{"role": "user", "content": "and streamed?"}],
    ) as stream:
        kinds = {e.delta.type for e in stream if e.type == "content_block_delta"}
        final = stream.get_final_message()
    assert {"thinking_delta", "text_delta"} <= kinds
    assert final.content[0].type == "thinking" and final.usage.output_tokens > 0
    sent = _sent(gw, "deepseek")[-1]["json"]
    assert sent["thinking"] == {"type": "enabled"} and "temperature" not in sent
    rows = _billed(gw, email, 2)
    assert rows[0]["output_tokens"] == reply.usage.output_tokens


def test_deepseek_thinking_through_google_genai(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = _gem(gw, token)
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024),
        temperature=0.4,
    )
    reply = sdk.models.generate_content(model="ds-reasoner", contents="why?", config=config)
    parts = reply.candidates[0].content.parts  # type: ignore[index, union-attr]
    assert parts is not None and parts[0].thought is True and parts[-1].text
    chunks = list(
        sdk.models.generate_content_stream(model="ds-reasoner", contents="why?", config=config)
    )
    thought = [p for c in chunks for p in (c.candidates[0].content.parts or []) if p.thought]  # type: ignore[index, union-attr]
    assert thought, "the stream carries thought parts"
    assert "temperature" not in _sent(gw, "deepseek")[-1]["json"]  # deepseek-reasoner ignores it
    _billed(gw, email, 2)


def test_deepseek_thinking_through_the_openai_sdk(gw: Gateway) -> None:
    _, token = gw.new_user()
    reply = _oai(gw, token).chat.completions.create(
        model="ds-reasoner", messages=[{"role": "user", "content": "why?"}], logprobs=True
    )
    message: Any = reply.choices[0].message
    assert message.reasoning_content.startswith("Let me think") and message.content
    assert "logprobs" not in _sent(gw, "deepseek")[-1]["json"]  # a 400 on deepseek-reasoner


def test_deepseek_tool_turn_sends_reasoning_back(gw: Gateway) -> None:
    """DeepSeek refuses a thinking-mode tool turn without its reasoning_content: the
    anthropic client's thinking block goes back as reasoning_content."""
    _, token = gw.new_user()
    sdk = _ant(gw, token)
    first = sdk.messages.create(
        model="ds-reasoner",
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "weather in Oslo?"}],
    )
    call = next(b for b in first.content if b.type == "tool_use")
    second = sdk.messages.create(
        model="ds-reasoner",
        max_tokens=2048,
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[WEATHER],  # type: ignore[list-item]
        messages=[
            {"role": "user", "content": "weather in Oslo?"},
            {"role": "assistant", "content": first.content},  # type: ignore[typeddict-item]
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "4 C"}],
            },
        ],
    )
    assert "Tool result received: 4 C" in second.content[-1].text  # type: ignore[union-attr]


# --- mistral: tool-call ids, strict fields, usage in the last chunk ----------------------


def test_mistral_tool_round_trip_from_the_anthropic_sdk(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = _ant(gw, token)
    clear_mock_requests(gw.mock_url)
    history: list[Any] = [
        {"role": "user", "content": "weather in Rome?"},
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "get_weather",
                    "input": {"city": "Rome"},
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
                    "content": "18 C",
                },
                {"type": "text", "text": "and Oslo? [[mock:tool]]"},
            ],
        },
    ]
    first = sdk.messages.create(
        model="mistral-mock",
        max_tokens=256,
        tools=[WEATHER],
        messages=history,  # type: ignore[list-item]
    )
    call = next(b for b in first.content if b.type == "tool_use")
    assert first.stop_reason == "tool_use" and len(call.id) == 9 and call.id.isalnum()
    sent = _sent(gw, "mistral")[-1]["json"]
    short = sent["messages"][1]["tool_calls"][0]["id"]
    assert short != "toolu_01A09q90qw90lq917835lq9" and len(short) == 9 and short.isalnum()
    assert sent["messages"][2]["tool_call_id"] == short, "rewritten the same way on both sides"
    assert sent["safe_prompt"] is True and "metadata" not in sent
    history += [
        {"role": "assistant", "content": first.content},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "4 C"}],
        },
    ]
    with sdk.messages.stream(
        model="mistral-mock",
        max_tokens=256,
        tools=[WEATHER],
        messages=history,  # type: ignore[list-item]
    ) as stream:
        final = stream.get_final_message()
    assert "Tool result received: 4 C" in final.content[-1].text  # type: ignore[union-attr]
    assert final.usage.output_tokens > 0, "usage from Mistral's last chunk"
    assert "stream_options" not in _sent(gw, "mistral")[-1]["json"]
    rows = _billed(gw, email, 2)
    assert rows[-1]["output_tokens"] == final.usage.output_tokens


def test_mistral_openai_client_fields_and_thinking_chunks(gw: Gateway) -> None:
    _, token = gw.new_user()
    sdk = _oai(gw, token)
    reply = sdk.chat.completions.create(
        model="magistral-mock",
        messages=[{"role": "user", "content": "hi"}],
        max_completion_tokens=200,
        seed=3,
        store=True,
        user="u-1",
    )
    message: Any = reply.choices[0].message
    assert message.reasoning_content and message.content.startswith("Hello from mock")
    sent = _sent(gw, "mistral")[-1]["json"]
    assert (sent["max_tokens"], sent["random_seed"]) == (200, 3)
    assert not {"store", "user", "max_completion_tokens"} & set(sent)


def test_mistral_error_in_each_dialect(gw: Gateway) -> None:
    _, token = gw.new_user()
    with pytest.raises(anthropic.RateLimitError) as ant:
        _ant(gw, token).messages.create(
            model="mistral-mock",
            max_tokens=64,
            messages=[{"role": "user", "content": "[[mock:error=429]]"}],
        )
    assert ant.value.body["type"] == "error"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as oai:
        _oai(gw, token).chat.completions.create(
            model="mistral-mock", messages=[{"role": "user", "content": "[[mock:error=400]]"}]
        )
    assert oai.value.status_code == 400


# --- ollama: no key; groq: usage under x_groq -------------------------------------------


def test_ollama_without_a_key(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = _oai(gw, token)
    clear_mock_requests(gw.mock_url)
    reply = sdk.chat.completions.create(
        model="ollama-mock", messages=[{"role": "user", "content": "hello llama"}]
    )
    assert reply.choices[0].message.content == "Hello from mock! You said: hello llama"
    stream = sdk.chat.completions.create(
        model="ollama-mock",
        messages=[{"role": "user", "content": "stream"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text.endswith("stream")
    for sent in _sent(gw, "ollama"):
        assert "authorization" not in sent["headers"], sent["path"]
    _billed(gw, email, 2)


def test_groq_stream_usage_under_x_groq(gw: Gateway) -> None:
    email, token = gw.new_user()
    stream = _oai(gw, token).chat.completions.create(
        model="groq-mock",
        messages=[{"role": "user", "content": "count the words here"}],
        stream=True,
        stream_options={"include_usage": True},
        logprobs=True,
    )
    chunks = list(stream)
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens > 0
    rows = _billed(gw, email, 1)
    assert rows[0]["output_tokens"] == usage.completion_tokens
    assert rows[0]["usage_estimated"] is False, "counted by Groq, read from x_groq.usage"
    assert "logprobs" not in _sent(gw, "groq")[-1]["json"]


def test_cli_adds_preset_channels(gw: Gateway) -> None:
    """A local server needs no --key, a vendor does; --option sets a kind's own settings."""
    out = run_cli(
        gw.env, "channels", "add", "cli-ollama", "--kind", "ollama",
        "--base-url", f"{gw.mock_url}/presets/ollama/v1", "--models", "cli-llama",
    ).stdout  # fmt: skip
    assert "channel cli-ollama" in out
    refused = run_cli(
        gw.env, "channels", "add", "cli-deepseek", "--kind", "deepseek",
        "--base-url", "https://api.deepseek.com", "--models", "x", check=False,
    )  # fmt: skip
    assert refused.returncode != 0 and "needs at least one API key" in refused.stderr
    run_cli(
        gw.env, "channels", "add", "cli-mistral", "--kind", "mistral", "--key", "mock-key",
        "--base-url", f"{gw.mock_url}/presets/mistral/v1", "--models", "cli-mistral",
        "--option", "safe_prompt=true", "--option", "note=plain text",
    )  # fmt: skip
    for model in ("cli-llama", "cli-mistral"):
        run_cli(gw.env, "prices", "set", model, "--input", "1", "--output", "2")
    _, token = gw.new_user()
    sdk = _oai(gw, token)
    for model in ("cli-llama", "cli-mistral"):
        reply = wait_for(lambda m=model: _try_chat(sdk, m), timeout=10)
        assert reply.choices[0].message.content.startswith("Hello from mock")
    assert _sent(gw, "mistral")[-1]["json"]["safe_prompt"] is True
    assert "authorization" not in _sent(gw, "ollama")[-1]["headers"]
    probed = run_cli(gw.env, "channels", "test", "cli-ollama").stdout
    assert "cli-ollama: OK" in probed, probed


def _try_chat(sdk: openai.OpenAI, model: str) -> Any:
    """The reply once the gateway offers `model` (its config poll), else None."""
    try:
        return sdk.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hi"}]
        )
    except openai.NotFoundError:
        return None


def test_embeddings_through_presets(gw: Gateway) -> None:
    """Embeddings are translated per call: Ollama's without a key, Mistral's with its own
    field for the size (`dimensions` would be a 422 there); billed per input token."""
    email, token = gw.new_user()
    sdk = _oai(gw, token)
    clear_mock_requests(gw.mock_url)
    for model in ("ollama-embed", "mistral-embed-mock"):
        reply = sdk.embeddings.create(model=model, input=["a b", "c d e"], dimensions=4)
        assert [len(d.embedding) for d in reply.data] == [4, 4]
        assert reply.usage.prompt_tokens == 5
    ollama, mistral = _sent(gw, "ollama")[-1], _sent(gw, "mistral")[-1]
    assert "authorization" not in ollama["headers"] and ollama["json"]["dimensions"] == 4
    assert mistral["json"]["output_dimension"] == 4 and "dimensions" not in mistral["json"]
    rows = _billed(gw, email, 2)
    assert [r["input_tokens"] for r in rows] == [5, 5]
