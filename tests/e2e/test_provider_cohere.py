"""A Cohere channel end to end: a gateway of its own with a `cohere` channel pointing at
the fake upstream's /v2/chat and /v2/embed, driven by the official openai, anthropic and
google-genai SDKs. Checks what the upstream was sent (Cohere's own shapes), what each
client gets back (its own dialect, errors included) and what is billed (the ledger, from
Cohere's `usage.billed_units`)."""

import base64
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from switchgate.money import UNITS_PER_USD
from switchgate.testing.mock_upstream.assets import PNG
from tests.conftest import Gateway, serve_config
from tests.e2e.media_helpers import log_rows
from tests.support import (
    Process,
    clear_mock_requests,
    http_json,
    mock_requests,
    run_cli,
    wait_for,
)

START = 10 * UNITS_PER_USD
IN_PRICE, OUT_PRICE = 2_500_000, 10_000_000  # units per token ($2.5 / $10 per 1M)
WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
CONTEXT_MESSAGE = (
    "too many tokens: total number of tokens in the prompt cannot exceed 256000 - "
    "received 300112. Try using a shorter preamble or fewer chat turns."
)


def _config(mock_url: str) -> str:
    return f"""
[[channels]]
name = "cohere-main"
kind = "cohere"
base_url = "{mock_url}"
key = "mock-key"
models = ["command-mock", "embed-cohere", "rerank-cohere"]
[channels.map]
"command-mock" = "command-a-03-2025"
"embed-cohere" = "embed-v4.0"
"rerank-cohere" = "rerank-v3.5"

[[channels]]
name = "cohere-query"
kind = "cohere"
base_url = "{mock_url}/v2"
key = "mock-key"
models = ["embed-cohere-query"]
map = {{ "embed-cohere-query" = "embed-english-v3.0" }}
options = {{ input_type = "search_query" }}

[prices."embed-cohere-query"]
kind = "embedding"
input = "0.1"

[prices."command-mock"]
input = "2.5"
output = "10"

[prices."embed-cohere"]
kind = "embedding"
input = "0.12"

[prices."rerank-cohere"]
kind = "rerank"
per_request = "0.002"
"""


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process) -> Iterator[Gateway]:
    config = _config(mock_upstream.base_url)
    gateway = serve_config(tmp_path_factory, "cohere-gateway", config, mock_upstream.base_url)
    yield gateway
    gateway.process.stop()


def _oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{gw.url}/v1", api_key=token, max_retries=0, timeout=30)


def _sent(gw: Gateway, path: str = "/v2/chat") -> list[dict[str, Any]]:
    return [r for r in mock_requests(gw.mock_url) if r["path"] == path]


def _cost(prompt: int, completion: int) -> int:
    return prompt * IN_PRICE + completion * OUT_PRICE


# --- openai SDK --------------------------------------------------------------------------


def test_openai_chat_billed_from_billed_units(gw: Gateway) -> None:
    email, token = gw.new_user()
    clear_mock_requests(gw.mock_url)
    reply = _oai(gw, token).chat.completions.create(
        model="command-mock",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hello cohere"},
        ],
        max_tokens=100,
        temperature=0.3,
        top_p=1.0,
    )
    assert reply.choices[0].message.content == "Hello from mock! You said: hello cohere"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.model == "command-mock"
    assert reply.usage is not None
    # billed_units (4 words in, 7 out), not usage.tokens (which adds the prompt template)
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (4, 7)
    sent = _sent(gw)[-1]
    assert sent["headers"]["authorization"] == "<redacted:valid>"
    body = sent["json"]
    assert body["model"] == "command-a-03-2025"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello cohere"},
    ]
    assert (body["max_tokens"], body["temperature"], body["p"]) == (100, 0.3, 0.99)
    assert wait_for(lambda: gw.balance(email) == START - _cost(4, 7))
    rows = wait_for(lambda: log_rows(gw, email))
    assert rows[0]["cost"] == _cost(4, 7) and rows[0]["input_tokens"] == 4


def test_openai_stream(gw: Gateway) -> None:
    email, token = gw.new_user()
    stream = _oai(gw, token).chat.completions.create(
        model="command-mock",
        messages=[{"role": "user", "content": "stream from cohere"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from mock! You said: stream from cohere"
    finishes = [
        c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason
    ]
    assert finishes == ["stop"]
    usage = chunks[-1].usage
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (3, 8)
    assert _sent(gw)[-1]["json"]["stream"] is True
    assert wait_for(lambda: gw.balance(email) == START - _cost(3, 8))


def test_openai_tool_round_trip(gw: Gateway) -> None:
    _, token = gw.new_user()
    client = _oai(gw, token)
    messages: list[Any] = [{"role": "user", "content": "Weather in Oslo?"}]
    first = client.chat.completions.create(
        model="command-mock", messages=messages, tools=[WEATHER], tool_choice="required"
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert len(calls) == 1 and calls[0].type == "function"
    assert calls[0].function.name == "get_weather"
    assert calls[0].function.arguments == '{"city":"Oslo"}'
    assert choice.message.content == "I will use the get_weather tool."  # Cohere's tool_plan
    sent = _sent(gw)[-1]["json"]
    assert sent["tool_choice"] == "REQUIRED" and sent["tools"][0]["type"] == "function"
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": calls[0].id, "content": "rainy, 7C"})
    second = client.chat.completions.create(
        model="command-mock", messages=messages, tools=[WEATHER]
    )
    assert second.choices[0].message.content == "Tool result received: rainy, 7C"
    assert second.choices[0].finish_reason == "stop"
    body = _sent(gw)[-1]["json"]
    assert body["messages"][1] == {
        "role": "assistant",
        "tool_plan": "I will use the get_weather tool.",
        "tool_calls": [
            {
                "id": calls[0].id,
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
            }
        ],
    }
    assert body["messages"][2] == {
        "role": "tool",
        "tool_call_id": calls[0].id,
        "content": [{"type": "text", "text": "rainy, 7C"}],
    }


def test_openai_streamed_tool_call(gw: Gateway) -> None:
    _, token = gw.new_user()
    stream = _oai(gw, token).chat.completions.create(
        model="command-mock",
        messages=[{"role": "user", "content": "Weather? [[mock:tool]]"}],
        tools=[WEATHER],
        stream=True,
    )
    names, args, finish = [], "", None
    for chunk in stream:
        if not chunk.choices:
            continue
        for call in chunk.choices[0].delta.tool_calls or []:
            if call.function and call.function.name:
                names.append(call.function.name)
            args += (call.function.arguments or "") if call.function else ""
        finish = chunk.choices[0].finish_reason or finish
    assert names == ["get_weather"] and args == '{"city":"Oslo"}' and finish == "tool_calls"


def test_openai_reasoning_and_json_schema(gw: Gateway) -> None:
    _, token = gw.new_user()
    status, reply = http_json(
        "POST",
        f"{gw.url}/v1/chat/completions",
        {
            "model": "command-mock",
            "messages": [{"role": "user", "content": "think about it"}],
            "reasoning_effort": "low",
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "a", "schema": {"type": "object"}},
            },
        },
        {"authorization": f"Bearer {token}"},
    )
    assert status == 200, reply
    message = reply["choices"][0]["message"]
    assert message["reasoning_content"].startswith("Let me think about this step by step.")
    body = _sent(gw)[-1]["json"]
    assert body["thinking"] == {"type": "enabled", "token_budget": 1024}
    assert body["response_format"] == {"type": "json_object", "json_schema": {"type": "object"}}


def test_openai_errors_in_openai_shape(gw: Gateway, mock_upstream: Process) -> None:
    email, token = gw.new_user()
    client = _oai(gw, token)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(
            model="command-mock", messages=[{"role": "user", "content": "x [[mock:error=429]]"}]
        )
    with pytest.raises(openai.BadRequestError) as bad:  # refused by the gateway: n > 1
        client.chat.completions.create(
            model="command-mock", messages=[{"role": "user", "content": "x"}], n=2
        )
    assert "n > 1" in str(bad.value)
    config = {
        "fault_status": 400,
        "fault_message": CONTEXT_MESSAGE,
        "fault_count": 1,
        "fault_models": ["command-a-03-2025"],
    }
    http_json("POST", f"{mock_upstream.base_url}/_mock/config", config)
    try:
        with pytest.raises(openai.BadRequestError) as overflow:
            client.chat.completions.create(
                model="command-mock", messages=[{"role": "user", "content": "long"}]
            )
    finally:
        http_json("POST", f"{mock_upstream.base_url}/_mock/config", {"fault_status": 0})
    assert overflow.value.code == "context_length_exceeded"
    assert "too many tokens" in overflow.value.message
    assert gw.balance(email) == START  # nothing was served, nothing charged


def test_openai_image_input(gw: Gateway) -> None:
    _, token = gw.new_user()
    png = base64.b64encode(PNG).decode()
    reply = _oai(gw, token).chat.completions.create(
        model="command-mock",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "what is this"},
                    {
                        "type": "image_url",
                        "image_url": {"url": f"data:image/png;base64,{png}", "detail": "low"},
                    },
                ],
            }
        ],
    )
    assert reply.choices[0].message.content == "Hello from mock! You said: what is this"
    content = _sent(gw)[-1]["json"]["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "what is this"},
        {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{png}", "detail": "low"},
        },
    ]


def test_openai_stream_error_mid_way(gw: Gateway) -> None:
    _, token = gw.new_user()
    stream = _oai(gw, token).chat.completions.create(
        model="command-mock",
        messages=[{"role": "user", "content": "x [[mock:midstream_error]]"}],
        stream=True,
    )
    with pytest.raises(openai.APIError) as failed:
        for _ in stream:
            pass
    assert "internal server error" in str(failed.value)


# --- anthropic SDK -----------------------------------------------------------------------


def test_anthropic_messages_and_stream(gw: Gateway) -> None:
    email, token = gw.new_user()
    client = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0)
    message = client.messages.create(
        model="command-mock",
        max_tokens=200,
        system="Be brief.",
        messages=[{"role": "user", "content": "hello from claude code"}],
    )
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello from mock! You said: hello from claude code"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (6, 9)
    sent = _sent(gw)[-1]["json"]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["max_tokens"] == 200
    with client.messages.stream(
        model="command-mock",
        max_tokens=200,
        messages=[{"role": "user", "content": "stream please"}],
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello from mock! You said: stream please"
    assert final.stop_reason == "end_turn" and final.usage.output_tokens == 7
    assert wait_for(lambda: gw.balance(email) == START - _cost(6, 9) - _cost(2, 7))
    with pytest.raises(anthropic.RateLimitError) as limited:
        client.messages.create(
            model="command-mock",
            max_tokens=20,
            messages=[{"role": "user", "content": "x [[mock:error=429]]"}],
        )
    assert limited.value.body["type"] == "error"  # type: ignore[index]


def test_anthropic_tool_use(gw: Gateway) -> None:
    _, token = gw.new_user()
    client = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0)
    tool: Any = {
        "name": "get_weather",
        "description": "Weather for a city",
        "input_schema": WEATHER["function"]["parameters"],
    }
    message = client.messages.create(
        model="command-mock",
        max_tokens=200,
        tools=[tool],
        tool_choice={"type": "tool", "name": "get_weather"},
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
    )
    assert message.stop_reason == "tool_use"
    uses = [b for b in message.content if b.type == "tool_use"]
    assert len(uses) == 1 and uses[0].input == {"city": "Oslo"}


def test_anthropic_thinking(gw: Gateway) -> None:
    _, token = gw.new_user()
    client = anthropic.Anthropic(base_url=gw.url, api_key=token, max_retries=0)
    with client.messages.stream(
        model="command-mock",
        max_tokens=4096,
        thinking={"type": "enabled", "budget_tokens": 2048},
        messages=[{"role": "user", "content": "think first"}],
    ) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking.startswith("Let me think")  # type: ignore[union-attr]
    assert final.content[1].text == "Hello from mock! You said: think first"  # type: ignore[union-attr]
    sent = _sent(gw)[-1]["json"]
    assert sent["thinking"] == {"type": "enabled", "token_budget": 2048}
    assert sent["max_tokens"] == 4096


# --- google-genai SDK --------------------------------------------------------------------


def _genai(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )


def test_genai_generate_and_stream(gw: Gateway) -> None:
    email, token = gw.new_user()
    sdk = _genai(gw, token)
    reply = sdk.models.generate_content(
        model="command-mock",
        contents="hello gemini client",
        config=types.GenerateContentConfig(
            system_instruction="be brief", max_output_tokens=100, top_k=40
        ),
    )
    assert reply.text == "Hello from mock! You said: hello gemini client"
    assert reply.candidates and reply.candidates[0].finish_reason == types.FinishReason.STOP
    assert reply.usage_metadata is not None
    assert reply.usage_metadata.prompt_token_count == 5
    sent = _sent(gw)[-1]["json"]
    assert (sent["k"], sent["max_tokens"]) == (40, 100)
    chunks = list(sdk.models.generate_content_stream(model="command-mock", contents="stream it"))
    assert len(chunks) > 1
    assert "".join(c.text or "" for c in chunks) == "Hello from mock! You said: stream it"
    assert chunks[-1].usage_metadata is not None
    assert wait_for(lambda: gw.balance(email) == START - _cost(5, 8) - _cost(2, 7))


# --- embeddings (openai SDK, google-genai SDK) -------------------------------------------

EMBED_PRICE = 120_000  # units per token ($0.12 per 1M)


def test_openai_embeddings_batched_by_96(gw: Gateway) -> None:
    email, token = gw.new_user()
    clear_mock_requests(gw.mock_url)
    texts = [f"text number {i}" for i in range(100)]
    reply = _oai(gw, token).embeddings.create(model="embed-cohere", input=texts, dimensions=256)
    assert [d.index for d in reply.data] == list(range(100))
    assert all(len(d.embedding) == 256 for d in reply.data)
    sent = [r["json"] for r in _sent(gw, "/v2/embed")]
    assert [len(b["texts"]) for b in sent] == [96, 4]  # Cohere takes at most 96 texts a call
    assert sent[0] == {
        "model": "embed-v4.0",
        "texts": texts[:96],
        "input_type": "search_document",
        "embedding_types": ["float"],
        "output_dimension": 256,
    }
    assert reply.usage.prompt_tokens == 300  # meta.billed_units.input_tokens, summed
    assert wait_for(lambda: gw.balance(email) == START - 300 * EMBED_PRICE)
    # the same text gives the same vector whichever batch carried it
    again = _oai(gw, token).embeddings.create(
        model="embed-cohere", input=texts[97], dimensions=256, encoding_format="float"
    )
    assert again.data[0].embedding == reply.data[97].embedding


def test_openai_embeddings_error_mapped(gw: Gateway) -> None:
    _, token = gw.new_user()
    with pytest.raises(openai.BadRequestError) as bad:  # embed-v4 takes 256..1536 only
        _oai(gw, token).embeddings.create(model="embed-cohere", input="x", dimensions=100)
    assert "output_dimension" in bad.value.message


def test_genai_embed_content(gw: Gateway) -> None:
    email, token = gw.new_user()
    clear_mock_requests(gw.mock_url)
    sdk = _genai(gw, token)
    result = sdk.models.embed_content(
        model="embed-cohere",
        contents=[types.Content(parts=[types.Part(text=t)]) for t in ["first doc", "second"]],
        config=types.EmbedContentConfig(output_dimensionality=512),
    )
    assert result.embeddings is not None
    assert [len(e.values or []) for e in result.embeddings] == [512, 512]
    sent = _sent(gw, "/v2/embed")[-1]["json"]
    assert sent["texts"] == ["first doc", "second"] and sent["output_dimension"] == 512
    assert wait_for(lambda: gw.balance(email) == START - 3 * EMBED_PRICE)
    query = sdk.models.embed_content(model="embed-cohere-query", contents="what is a cat")
    assert query.embeddings is not None and len(query.embeddings[0].values or []) == 1024
    sent = _sent(gw, "/v2/embed")[-1]["json"]
    assert sent["input_type"] == "search_query" and sent["model"] == "embed-english-v3.0"


def test_rerank_through_the_same_channel(gw: Gateway) -> None:
    email, token = gw.new_user()
    status, reply = http_json(
        "POST",
        f"{gw.url}/v2/rerank",
        {"model": "rerank-cohere", "query": "the cat", "documents": ["a cat", "a dog"]},
        {"authorization": f"Bearer {token}"},
    )
    assert status == 200, reply
    assert reply["results"][0]["index"] == 0
    assert _sent(gw, "/v2/rerank")[-1]["json"]["model"] == "rerank-v3.5"
    assert wait_for(lambda: gw.balance(email) == START - 2_000_000_000)


# --- channel options ----------------------------------------------------------------------

ALLOWED_INPUT_TYPES = "classification, clustering, search_document, search_query"


def test_an_unknown_input_type_is_refused_when_the_channel_is_saved(gw: Gateway) -> None:
    """CLI, config file and console API refuse it with the allowed values (it used to
    be saved, and then every embeddings call failed with 500)."""
    env, url = gw.env, gw.mock_url
    add = ["channels", "add", "cohere-bad", "--kind", "cohere", "--base-url", url,
           "--key", "mock-key", "--models", "embed-bad"]  # fmt: skip
    refused = run_cli(env, *add, "--option", "input_type=search_queries", check=False)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused
    assert "'search_queries'" in refused.stderr and ALLOWED_INPUT_TYPES in refused.stderr

    config = gw.data_dir / "bad-input-type.toml"
    config.write_text(
        f'[[channels]]\nname = "cohere-bad"\nkind = "cohere"\nbase_url = "{url}"\n'
        'key = "mock-key"\nmodels = ["embed-bad"]\noptions = { input_type = "query" }\n'
    )
    refused = run_cli(env, "config", str(config), check=False)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused
    assert "'query'" in refused.stderr and ALLOWED_INPUT_TYPES in refused.stderr

    _, admin_token = gw.new_user(admin=True)
    headers = {"authorization": f"Bearer {admin_token}"}
    body = {"name": "cohere-console", "kind": "cohere", "base_url": url, "api_key": "mock-key",
            "models": ["embed-console"], "options": {"input_type": "Search_Query"}}  # fmt: skip
    refused_api = httpx.post(f"{gw.url}/api/channels", headers=headers, json=body)
    assert refused_api.status_code == 400, refused_api.text
    assert "'Search_Query'" in refused_api.text and ALLOWED_INPUT_TYPES in refused_api.text
    names = [
        c["name"] for c in httpx.get(f"{gw.url}/api/channels", headers=headers).json()["items"]
    ]
    assert "cohere-bad" not in names and "cohere-console" not in names

    # A value Cohere takes is saved; editing it to one it does not is refused.
    created = httpx.post(
        f"{gw.url}/api/channels",
        headers=headers,
        json={**body, "options": {"input_type": "clustering"}},
    )
    assert created.status_code == 200, created.text
    channel = f"{gw.url}/api/channels/{created.json()['id']}"
    edit = httpx.patch(channel, headers=headers, json={"options": {"input_type": "bogus"}})
    assert edit.status_code == 400 and ALLOWED_INPUT_TYPES in edit.text
    listed = httpx.get(f"{gw.url}/api/channels", headers=headers).json()["items"]
    [saved] = [c for c in listed if c["name"] == "cohere-console"]
    assert saved["options"] == {"input_type": "clustering"}
    assert run_cli(env, *add, "--option", "input_type=classification").returncode == 0
