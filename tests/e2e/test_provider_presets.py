"""OpenAI-compatible presets end to end: a gateway of its own with deepseek, mistral, ollama
and groq channels on the fake upstream's preset modes (mock_upstream/presets.py, which
refuse what each vendor refuses), driven by the official openai, anthropic and
google-genai SDKs; usage billed to the ledger."""

from typing import Any

import anthropic
import openai
import pytest
from google.genai import types

from tests.conftest import Gateway
from tests.e2e.presets_support import (
    WEATHER,
    ant,
    billed,
    gem,
    gw,
    oai,
    try_chat,
    upstream_sent,
)
from tests.support import clear_mock_requests, run_cli, wait_for

__all__ = ["gw"]  # the module's gateway (a fixture)


# --- deepseek: reasoning_content as each dialect's thinking ------------------------------


def test_deepseek_thinking_through_the_anthropic_sdk(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = ant(gw, token)
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
    sent = upstream_sent(gw, "deepseek")[-1]["json"]
    assert sent["thinking"] == {"type": "enabled"} and "temperature" not in sent
    rows = billed(gw, email, 2)
    assert rows[0]["output_tokens"] == reply.usage.output_tokens


def test_deepseek_thinking_through_google_genai(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = gem(gw, token)
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
    assert (
        "temperature" not in upstream_sent(gw, "deepseek")[-1]["json"]
    )  # deepseek-reasoner ignores it
    billed(gw, email, 2)


def test_deepseek_thinking_through_the_openai_sdk(gw: Gateway) -> None:
    _, token = gw.new_user()
    reply = oai(gw, token).chat.completions.create(
        model="ds-reasoner", messages=[{"role": "user", "content": "why?"}], logprobs=True
    )
    message: Any = reply.choices[0].message
    assert message.reasoning_content.startswith("Let me think") and message.content
    assert "logprobs" not in upstream_sent(gw, "deepseek")[-1]["json"]  # a 400 on deepseek-reasoner


def test_deepseek_tool_turn_sends_reasoning_back(gw: Gateway) -> None:
    """DeepSeek refuses a thinking-mode tool turn without its reasoning_content: the
    anthropic client's thinking block goes back as reasoning_content."""
    _, token = gw.new_user()
    sdk = ant(gw, token)
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
    sdk = ant(gw, token)
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
    sent = upstream_sent(gw, "mistral")[-1]["json"]
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
    assert "stream_options" not in upstream_sent(gw, "mistral")[-1]["json"]
    rows = billed(gw, email, 2)
    assert rows[-1]["output_tokens"] == final.usage.output_tokens


def test_mistral_openai_client_fields_and_thinking_chunks(gw: Gateway) -> None:
    _, token = gw.new_user()
    sdk = oai(gw, token)
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
    sent = upstream_sent(gw, "mistral")[-1]["json"]
    assert (sent["max_tokens"], sent["random_seed"]) == (200, 3)
    assert not {"store", "user", "max_completion_tokens"} & set(sent)


def test_mistral_error_in_each_dialect(gw: Gateway) -> None:
    _, token = gw.new_user()
    with pytest.raises(anthropic.RateLimitError) as ant_err:
        ant(gw, token).messages.create(
            model="mistral-mock",
            max_tokens=64,
            messages=[{"role": "user", "content": "[[mock:error=429]]"}],
        )
    assert ant_err.value.body["type"] == "error"  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as oai_err:
        oai(gw, token).chat.completions.create(
            model="mistral-mock", messages=[{"role": "user", "content": "[[mock:error=400]]"}]
        )
    assert oai_err.value.status_code == 400


# --- ollama: no key; groq: usage under x_groq -------------------------------------------


def test_ollama_without_a_key(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = oai(gw, token)
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
    for sent in upstream_sent(gw, "ollama"):
        assert "authorization" not in sent["headers"], sent["path"]
    billed(gw, email, 2)


def test_groq_stream_usage_under_x_groq(gw: Gateway) -> None:
    email, token = gw.new_user()
    stream = oai(gw, token).chat.completions.create(
        model="groq-mock",
        messages=[{"role": "user", "content": "count the words here"}],
        stream=True,
        stream_options={"include_usage": True},
        logprobs=True,
    )
    chunks = list(stream)
    usage = chunks[-1].usage
    assert usage is not None and usage.completion_tokens > 0
    rows = billed(gw, email, 1)
    assert rows[0]["output_tokens"] == usage.completion_tokens
    assert rows[0]["usage_estimated"] is False, "counted by Groq, read from x_groq.usage"
    assert "logprobs" not in upstream_sent(gw, "groq")[-1]["json"]


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
    sdk = oai(gw, token)
    for model in ("cli-llama", "cli-mistral"):
        reply = wait_for(lambda m=model: try_chat(sdk, m), timeout=10)
        assert reply.choices[0].message.content.startswith("Hello from mock")
    assert upstream_sent(gw, "mistral")[-1]["json"]["safe_prompt"] is True
    assert "authorization" not in upstream_sent(gw, "ollama")[-1]["headers"]
    probed = run_cli(gw.env, "channels", "test", "cli-ollama").stdout
    assert "cli-ollama: OK" in probed, probed


def test_embeddings_through_presets(gw: Gateway) -> None:
    """Embeddings are translated per call: Ollama's without a key, Mistral's with its own
    field for the size (`dimensions` would be a 422 there); billed per input token."""
    email, token = gw.new_user()
    sdk = oai(gw, token)
    clear_mock_requests(gw.mock_url)
    for model in ("ollama-embed", "mistral-embed-mock"):
        reply = sdk.embeddings.create(model=model, input=["a b", "c d e"], dimensions=4)
        assert [len(d.embedding) for d in reply.data] == [4, 4]
        assert reply.usage.prompt_tokens == 5
    ollama, mistral = upstream_sent(gw, "ollama")[-1], upstream_sent(gw, "mistral")[-1]
    assert "authorization" not in ollama["headers"] and ollama["json"]["dimensions"] == 4
    assert mistral["json"]["output_dimension"] == 4 and "dimensions" not in mistral["json"]
    rows = billed(gw, email, 2)
    assert [r["input_tokens"] for r in rows] == [5, 5]


def test_qwen_embeddings_in_batches_of_ten_and_unstreamed_thinking(gw: Gateway) -> None:
    """DashScope takes at most 10 texts per embeddings call (text-embedding-v3) and refuses
    thinking on an unstreamed call: the gateway splits the batch and turns thinking off."""
    _, token = gw.new_user()
    sdk = oai(gw, token)
    clear_mock_requests(gw.mock_url)
    texts = [f"text {i}" for i in range(23)]
    reply = sdk.embeddings.create(model="qwen-embed", input=texts)
    assert [d.index for d in reply.data] == list(range(23))
    sizes = sorted(len(r["json"]["input"]) for r in upstream_sent(gw, "qwen"))
    assert sizes == [3, 10, 10]
    answer = sdk.chat.completions.create(
        model="qwen-mock", messages=[{"role": "user", "content": "think"}], reasoning_effort="high"
    )
    assert answer.choices[0].message.content
    assert upstream_sent(gw, "qwen")[-1]["json"]["enable_thinking"] is False
