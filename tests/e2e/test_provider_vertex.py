"""`vertex` channels end to end: a gateway of its own whose channels reach the fake Vertex
AI (switchgate/testing/mock_upstream/vertex.py) with a service-account key generated
here, exchanged for OAuth tokens at the fake token endpoint; driven by the official
openai, anthropic and google-genai SDKs against both publishers (Gemini and Claude),
streamed and not, with a tool round trip, an error in each client's dialect and the
ledger."""

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from switchgate.routing.channels import Channel, load_channels
from switchgate.storage.db import Database
from switchgate.storage.secrets import SecretBox
from switchgate.testing.mock_upstream.assets import embed_vector
from tests.conftest import Gateway
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
from tests.vertex_support import ServiceAccountKey, make_service_account, register, tokens_issued

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


@pytest.fixture(scope="module")
def account(mock_upstream: Process) -> ServiceAccountKey:
    sa = make_service_account(mock_upstream.base_url, project="vertex-e2e")
    register(mock_upstream.base_url, sa)
    return sa


@pytest.fixture(scope="module")
def vertex_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process, account: ServiceAccountKey
) -> Iterator[Gateway]:
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


def _vertex_calls(gw: Gateway) -> list[dict[str, Any]]:
    return [r for r in mock_requests(gw.mock_url) if r["path"].startswith("/v1/projects/")]


def _oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=token, base_url=gw.url + "/v1", max_retries=0)


def _claude(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=token, base_url=gw.url, max_retries=0)


def _genai(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )


@pytest.mark.parametrize("model", MODELS)
def test_openai_sdk_chat_and_ledger(
    vertex_gateway: Gateway, account: ServiceAccountKey, model: str
) -> None:
    gw = vertex_gateway
    email, token = gw.new_user()
    before = gw.balance(email)
    clear_mock_requests(gw.mock_url)
    reply = _oai(gw, token).chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hello vertex"}], max_tokens=100
    )
    assert "hello vertex" in (reply.choices[0].message.content or "")
    assert reply.usage is not None and reply.usage.prompt_tokens > 0
    calls = _vertex_calls(gw)
    assert len(calls) == 1
    publisher, method = (
        ("anthropic", "rawPredict") if model == CLAUDE else ("google", "generateContent")
    )
    upstream = "claude-sonnet-4-5@20250929" if model == CLAUDE else "gemini-2.5-flash"
    assert calls[0]["path"] == (
        f"/v1/projects/vertex-e2e/locations/us-east5/publishers/{publisher}/models/"
        f"{upstream}:{method}"
    )
    assert calls[0]["headers"]["authorization"] == "<redacted>"
    assert account.info["private_key"] not in json.dumps(calls[0])
    assert wait_for(lambda: gw.balance(email) < before)  # billed; the ledger sums to it


@pytest.mark.parametrize("model", MODELS)
def test_openai_sdk_stream(vertex_gateway: Gateway, model: str) -> None:
    _, token = vertex_gateway.new_user()
    stream = _oai(vertex_gateway, token).chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "stream from vertex"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "stream from vertex" in text
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


@pytest.mark.parametrize("model", MODELS)
def test_openai_sdk_tool_round_trip(vertex_gateway: Gateway, model: str) -> None:
    _, token = vertex_gateway.new_user()
    sdk = _oai(vertex_gateway, token)
    tools: Any = [
        {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_SCHEMA}}
    ]
    messages: list[Any] = [{"role": "user", "content": "weather in Oslo? [[mock:tool]]"}]
    first = sdk.chat.completions.create(model=model, messages=messages, tools=tools)
    call = (first.choices[0].message.tool_calls or [])[0]
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "foggy"},
    ]
    second = sdk.chat.completions.create(model=model, messages=messages, tools=tools)
    assert second.choices[0].finish_reason == "stop"
    assert "foggy" in (second.choices[0].message.content or "")


@pytest.mark.parametrize("model", MODELS)
def test_anthropic_sdk(vertex_gateway: Gateway, model: str) -> None:
    _, token = vertex_gateway.new_user()
    sdk = _claude(vertex_gateway, token)
    reply = sdk.messages.create(
        model=model, max_tokens=200, messages=[{"role": "user", "content": "hi claude sdk"}]
    )
    assert "hi claude sdk" in "".join(b.text for b in reply.content if b.type == "text")
    assert reply.usage.input_tokens > 0
    with sdk.messages.stream(
        model=model, max_tokens=200, messages=[{"role": "user", "content": "streamed sdk"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert "streamed sdk" in text and final.stop_reason == "end_turn"


@pytest.mark.parametrize("model", MODELS)
def test_anthropic_sdk_tool_round_trip(vertex_gateway: Gateway, model: str) -> None:
    _, token = vertex_gateway.new_user()
    sdk = _claude(vertex_gateway, token)
    tools: Any = [{"name": "get_weather", "input_schema": WEATHER_SCHEMA}]
    messages: list[Any] = [{"role": "user", "content": "weather in Oslo? [[mock:tool]]"}]
    first = sdk.messages.create(model=model, max_tokens=200, messages=messages, tools=tools)
    use = next(b for b in first.content if b.type == "tool_use")
    assert first.stop_reason == "tool_use" and use.name == "get_weather"
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}],
        },
    ]
    second = sdk.messages.create(model=model, max_tokens=200, messages=messages, tools=tools)
    assert "sunny" in "".join(b.text for b in second.content if b.type == "text")


@pytest.mark.parametrize("model", MODELS)
def test_genai_sdk(vertex_gateway: Gateway, model: str) -> None:
    _, token = vertex_gateway.new_user()
    sdk = _genai(vertex_gateway, token)
    reply = sdk.models.generate_content(model=model, contents="hello genai")
    assert "hello genai" in (reply.text or "")
    chunks = list(sdk.models.generate_content_stream(model=model, contents="genai stream"))
    assert "genai stream" in "".join(c.text or "" for c in chunks)
    assert chunks[-1].usage_metadata is not None


@pytest.mark.parametrize("model", MODELS)
def test_genai_sdk_function_calling(vertex_gateway: Gateway, model: str) -> None:
    _, token = vertex_gateway.new_user()
    sdk = _genai(vertex_gateway, token)
    decl = types.FunctionDeclaration(name="get_weather", parameters_json_schema=WEATHER_SCHEMA)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[decl])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    question = "weather in Oslo? [[mock:tool]]"
    first = sdk.models.generate_content(model=model, contents=question, config=config)
    calls = first.function_calls or []
    assert calls and calls[0].name == "get_weather"
    contents = [
        types.Content(role="user", parts=[types.Part.from_text(text=question)]),
        first.candidates[0].content,  # type: ignore[index]
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(name="get_weather", response={"output": "mild"})
            ],
        ),
    ]
    second = sdk.models.generate_content(model=model, contents=contents, config=config)
    assert "mild" in (second.text or "")


def test_errors_in_each_dialect(vertex_gateway: Gateway) -> None:
    _, token = vertex_gateway.new_user()
    with pytest.raises(openai.RateLimitError):
        _oai(vertex_gateway, token).chat.completions.create(
            model=GEMINI, messages=[{"role": "user", "content": "x [[mock:error=429]]"}]
        )
    with pytest.raises(anthropic.BadRequestError) as info:
        _claude(vertex_gateway, token).messages.create(
            model=CLAUDE,
            max_tokens=50,
            messages=[{"role": "user", "content": "x [[mock:error=400]]"}],
        )
    assert info.value.body["type"] == "error"  # type: ignore[index]
    client = _genai(vertex_gateway, token)
    with pytest.raises(genai.errors.ClientError) as gerr:
        client.models.generate_content(model=CLAUDE, contents="x [[mock:error=400]]")
    assert gerr.value.code == 400


def test_token_fetched_once_for_many_calls(
    vertex_gateway: Gateway, mock_upstream: Process, account: ServiceAccountKey
) -> None:
    _, token = vertex_gateway.new_user()
    sdk = _oai(vertex_gateway, token)
    for model in MODELS * 3:
        sdk.chat.completions.create(model=model, messages=[{"role": "user", "content": "again"}])
    assert tokens_issued(mock_upstream.base_url, account) == 1


def test_cli_channel_with_options(
    tmp_path_factory: pytest.TempPathFactory, account: ServiceAccountKey
) -> None:
    data_dir = tmp_path_factory.mktemp("vertex-cli")
    env = gateway_env(data_dir, None)
    run_cli(
        env,
        *("channels", "add", "vx", "--kind", "vertex"),
        *("--base-url", "https://aiplatform.googleapis.com", "--key", account.key),
        *("--models", "gemini-2.5-flash", "--option", "location=europe-west4"),
        *("--option", "project=other-project"),
    )
    listed = run_cli(env, "channels", "list").stdout
    assert "vx" in listed and "PRIVATE KEY" not in listed

    async def channels() -> list[Channel]:
        db = Database(f"sqlite+aiosqlite:///{data_dir / 'switchgate.db'}")
        try:
            async with db.begin() as conn:
                return await load_channels(conn, SecretBox.load(None, data_dir))
        finally:
            await db.dispose()

    (channel,) = asyncio.run(channels())
    assert channel.kind == "vertex" and channel.api_key == account.key
    assert channel.extra == {"location": "europe-west4", "project": "other-project"}


def test_token_endpoint_refusal_fails_over(
    vertex_gateway: Gateway, mock_upstream: Process, account: ServiceAccountKey
) -> None:
    """The higher-priority channel's key is unknown to the token endpoint: that attempt
    fails as the channel's failure and the call is served by the other channel."""
    _, token = vertex_gateway.new_user()
    clear_mock_requests(vertex_gateway.mock_url)
    issued = tokens_issued(mock_upstream.base_url, account)
    for _ in range(3):
        reply = _oai(vertex_gateway, token).chat.completions.create(
            model=FAILOVER, messages=[{"role": "user", "content": "fail over"}]
        )
        assert "fail over" in (reply.choices[0].message.content or "")
    paths = [c["path"] for c in _vertex_calls(vertex_gateway)]
    assert len(paths) == 3 and all("/projects/vertex-e2e/" in p for p in paths)
    asked = [r for r in mock_requests(vertex_gateway.mock_url) if r["path"] == "/token"]
    granted = tokens_issued(mock_upstream.base_url, account) - issued
    assert len(asked) > granted  # the unknown account asked, and was refused


def test_embeddings(vertex_gateway: Gateway) -> None:
    email, token = vertex_gateway.new_user()
    before = vertex_gateway.balance(email)
    clear_mock_requests(vertex_gateway.mock_url)
    reply = _oai(vertex_gateway, token).embeddings.create(
        model=EMBED, input=["first text", "second text here"], dimensions=32
    )
    assert [len(d.embedding) for d in reply.data] == [32, 32]
    assert reply.usage.prompt_tokens == 5
    calls = [c for c in _vertex_calls(vertex_gateway) if c["path"].endswith(":predict")]
    assert len(calls) == 2 and all(len(c["json"]["instances"]) == 1 for c in calls)
    assert wait_for(lambda: vertex_gateway.balance(email) < before)


def test_genai_embed_content(vertex_gateway: Gateway) -> None:
    _, token = vertex_gateway.new_user()
    clear_mock_requests(vertex_gateway.mock_url)
    sdk = _genai(vertex_gateway, token)  # keep a reference: a collected client closes
    texts = ["a first document", "the second"]
    result = sdk.models.embed_content(
        model=EMBED,
        contents=[types.Content(parts=[types.Part.from_text(text=t)]) for t in texts],
        config=types.EmbedContentConfig(output_dimensionality=16),
    )
    assert result.embeddings is not None
    assert [len(e.values or []) for e in result.embeddings] == [16, 16]
    calls = [c for c in _vertex_calls(vertex_gateway) if c["path"].endswith(":predict")]
    assert sorted(c["json"]["instances"][0]["content"] for c in calls) == sorted(texts)
    assert all(c["json"]["parameters"] == {"outputDimensionality": 16} for c in calls)


def test_text_embedding_models_take_eight_texts_per_request(vertex_gateway: Gateway) -> None:
    _, token = vertex_gateway.new_user()
    clear_mock_requests(vertex_gateway.mock_url)
    texts = [f"text number {i}" for i in range(10)]
    reply = _oai(vertex_gateway, token).embeddings.create(model=TEXT_EMBED, input=texts)
    assert [d.index for d in reply.data] == list(range(10))
    for text, item in zip(texts, reply.data, strict=True):  # in input order, batches merged
        assert item.embedding == pytest.approx(embed_vector(text, 768), abs=1e-6)
    assert reply.usage.prompt_tokens == 30
    calls = [c for c in _vertex_calls(vertex_gateway) if c["path"].endswith(":predict")]
    sizes = sorted(len(c["json"]["instances"]) for c in calls)
    assert sizes == [2, 8]
    sent = [i["content"] for c in calls for i in c["json"]["instances"]]
    assert sorted(sent) == sorted(texts)


@pytest.mark.parametrize("model", MODELS)
def test_openai_responses_api(vertex_gateway: Gateway, model: str) -> None:
    """/v1/responses is translated to the vertex channel through the chat pipeline."""
    _, token = vertex_gateway.new_user()
    sdk = _oai(vertex_gateway, token)
    reply = sdk.responses.create(model=model, input="responses to vertex", max_output_tokens=100)
    assert "responses to vertex" in reply.output_text
    assert reply.usage is not None and reply.usage.input_tokens > 0
    with sdk.responses.stream(model=model, input="streamed responses") as stream:
        final = stream.get_final_response()
    assert "streamed responses" in final.output_text
