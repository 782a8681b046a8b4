"""`bedrock` channels end to end: a gateway of its own whose channels reach a fake Bedrock
Runtime of its own (switchgate/testing/mock_upstream/bedrock.py, which checks every SigV4
signature and answers streams as real event-stream frames), driven by the official
openai, anthropic and google-genai SDKs: plain and streamed turns, a tool round trip
(with Claude's thinking replayed through it), errors in each client's dialect, a
Bedrock API key channel, a channel with a wrong secret, and the ledger."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types

from switchgate.testing.mock_upstream.bedrock_wire import ACCESS_KEY_ID, SECRET_ACCESS_KEY
from tests.conftest import Gateway, serve_config
from tests.support import (
    Process,
    clear_mock_requests,
    free_port,
    gateway_env,
    http_json,
    mock_requests,
    run_cli,
    start_process,
    wait_for,
)

CLAUDE, LLAMA, NOVA, MISTRAL = "br-claude", "br-llama", "br-nova", "br-mistral"
KEYED, BROKEN = "br-nova-apikey", "br-broken"
TITAN, COHERE = "br-titan", "br-cohere"
UPSTREAM = {
    CLAUDE: "anthropic.claude-sonnet-4-5-20250929-v1:0",
    LLAMA: "meta.llama3-3-70b-instruct-v1:0",
    NOVA: "amazon.nova-pro-v1:0",
    MISTRAL: "mistral.mistral-large-2407-v1:0",
    TITAN: "amazon.titan-embed-text-v2:0",
    COHERE: "cohere.embed-english-v3",
}
UNITS_PER_TOKEN_IN, UNITS_PER_TOKEN_OUT = 3_000_000, 15_000_000  # $3 / $15 per 1M
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


def _config(mock_url: str) -> str:
    names = ", ".join(f'"{m}"' for m in UPSTREAM)
    mapping = "\n".join(f'"{alias}" = "{model}"' for alias, model in UPSTREAM.items())
    prices = "\n".join(
        f'[prices."{m}"]\ninput = "3"\noutput = "15"' for m in (CLAUDE, LLAMA, NOVA, MISTRAL)
    )
    return f"""
[[channels]]
name = "bedrock-iam"
kind = "bedrock"
base_url = "{mock_url}"
key_env = "BEDROCK_IAM_KEY"
models = [{names}]
options = {{ region = "us-west-2" }}
[channels.map]
{mapping}

[[channels]]
name = "bedrock-api-key"
kind = "bedrock"
base_url = "{mock_url}"
key = "mock-key"
models = ["{KEYED}"]
map = {{ "{KEYED}" = "amazon.nova-lite-v1:0" }}

[[channels]]
name = "bedrock-wrong-secret"
kind = "bedrock"
base_url = "{mock_url}"
key = "{ACCESS_KEY_ID}:not-the-secret"
models = ["{BROKEN}"]
options = {{ region = "us-west-2" }}
map = {{ "{BROKEN}" = "amazon.nova-pro-v1:0" }}

{prices}
[prices."{KEYED}"]
input = "3"
output = "15"
[prices."{BROKEN}"]
input = "3"
output = "15"
[prices."{TITAN}"]
kind = "embedding"
input = "0.02"
[prices."{COHERE}"]
kind = "embedding"
input = "0.1"
"""


@pytest.fixture(scope="module")
def bedrock_mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    port = free_port()
    log = tmp_path_factory.mktemp("bedrock-mock") / "mock.log"
    proc = start_process(
        ["mock-upstream", "--port", str(port)],
        gateway_env(log.parent, None),
        log,
        f"http://127.0.0.1:{port}/healthz",
    )
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, bedrock_mock: Process) -> Iterator[Gateway]:
    env = {"BEDROCK_IAM_KEY": f"{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}"}
    config = _config(bedrock_mock.base_url)
    gateway = serve_config(
        tmp_path_factory, "bedrock-gateway", config, bedrock_mock.base_url, extra_env=env
    )
    yield gateway
    gateway.process.stop()
    assert SECRET_ACCESS_KEY not in gateway.process.log_path.read_text()


@pytest.fixture
def user(gw: Gateway) -> tuple[str, str]:
    clear_mock_requests(gw.mock_url)
    return gw.new_user()


def _calls(gw: Gateway) -> list[dict[str, Any]]:
    return [r for r in mock_requests(gw.mock_url) if r["path"].startswith("/model/")]


def _oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(api_key=token, base_url=gw.url + "/v1", max_retries=0)


def _claude(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=token, base_url=gw.url, max_retries=0)


def _genai(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )


def _cost(prompt: int, completion: int) -> int:
    return prompt * UNITS_PER_TOKEN_IN + completion * UNITS_PER_TOKEN_OUT


# ---------------------------------------------------------------- openai SDK


def test_openai_chat_is_signed_and_billed(gw: Gateway, user: tuple[str, str]) -> None:
    email, token = user
    before = gw.balance(email)
    reply = _oai(gw, token).chat.completions.create(
        model=CLAUDE,
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hello bedrock"},
        ],
        max_tokens=100,
        temperature=0.2,
    )
    assert reply.choices[0].message.content == "Hello from mock! You said: hello bedrock"
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (4, 7)
    (call,) = _calls(gw)  # the fake logs the path decoded (sent: ...v1%3A0/converse)
    assert call["path"] == "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse"
    assert call["headers"]["authorization"] == "<redacted>"  # SigV4, checked by the fake
    assert call["headers"]["x-amz-date"].endswith("Z")
    assert call["json"]["system"] == [{"text": "Be brief."}]
    assert call["json"]["inferenceConfig"] == {"maxTokens": 100, "temperature": 0.2}
    assert wait_for(lambda: before - gw.balance(email) == _cost(4, 7))  # settled after the reply


def test_openai_stream_with_usage(gw: Gateway, user: tuple[str, str]) -> None:
    email, token = user
    before = gw.balance(email)
    stream = _oai(gw, token).chat.completions.create(
        model=LLAMA,
        messages=[{"role": "user", "content": "stream please [[mock:chunks=4]]"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from mock! You said: stream please [[mock:chunks=4]]"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop"
    usage = chunks[-1].usage
    assert usage is not None and usage.prompt_tokens == 3 and usage.completion_tokens == 8
    (call,) = _calls(gw)
    assert call["path"].endswith("/converse-stream")
    assert call["headers"]["accept"] == "application/vnd.amazon.eventstream"
    assert wait_for(lambda: before - gw.balance(email) == _cost(3, 8))  # settled after the end


def test_openai_tool_round_trip(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    client = _oai(gw, token)
    messages: list[Any] = [{"role": "user", "content": "Weather in Oslo? [[mock:tool]]"}]
    first = client.chat.completions.create(model=NOVA, messages=messages, tools=[WEATHER])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert len(calls) == 1 and calls[0].type == "function"
    assert calls[0].function.name == "get_weather"
    assert calls[0].function.arguments == '{"city":"Oslo"}'
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": calls[0].id, "content": "12C and sunny"},
    ]
    second = client.chat.completions.create(model=NOVA, messages=messages, tools=[WEATHER])
    assert second.choices[0].message.content == "Tool result received: 12C and sunny"
    last = _calls(gw)[-1]["json"]
    assert last["messages"][1]["content"][-1]["toolUse"]["toolUseId"] == calls[0].id
    assert last["messages"][2]["content"][0]["toolResult"] == {
        "toolUseId": calls[0].id,
        "content": [{"text": "12C and sunny"}],
    }
    assert last["toolConfig"]["tools"][0]["toolSpec"]["name"] == "get_weather"


def test_openai_streamed_tool_call(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    stream = _oai(gw, token).chat.completions.create(
        model=MISTRAL,
        messages=[{"role": "user", "content": "Weather? [[mock:tool]]"}],
        tools=[WEATHER],
        tool_choice="required",
        stream=True,
    )
    chunks = list(stream)
    deltas = [d for c in chunks if c.choices for d in (c.choices[0].delta.tool_calls or [])]
    assert deltas[0].function is not None and deltas[0].function.name == "get_weather"
    args = "".join(d.function.arguments or "" for d in deltas if d.function)
    assert args == '{"city":"Oslo"}'
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert _calls(gw)[-1]["json"]["toolConfig"]["toolChoice"] == {"any": {}}


def test_openai_errors_in_openai_shape(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    client = _oai(gw, token)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(
            model=NOVA, messages=[{"role": "user", "content": "[[mock:error=429]]"}]
        )
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(
            model=NOVA, messages=[{"role": "user", "content": "[[mock:error=400]]"}]
        )
    assert "Malformed input request" in str(info.value)


def test_context_length_is_the_dialects_own_error(
    gw: Gateway, user: tuple[str, str], bedrock_mock: Process
) -> None:
    _, token = user
    fault = {"fault_status": 400, "fault_message": "Input is too long for requested model."}
    http_json("POST", f"{bedrock_mock.base_url}/_mock/config", fault)
    try:
        with pytest.raises(openai.BadRequestError) as info:
            _oai(gw, token).chat.completions.create(
                model=LLAMA, messages=[{"role": "user", "content": "a long prompt"}]
            )
        assert info.value.code == "context_length_exceeded"
        with pytest.raises(anthropic.BadRequestError) as claude_info:
            _claude(gw, token).messages.create(
                model=CLAUDE, max_tokens=50, messages=[{"role": "user", "content": "long"}]
            )
        assert "Input is too long" in str(claude_info.value)
    finally:
        http_json("POST", f"{bedrock_mock.base_url}/_mock/config", {"fault_status": 0})


def test_exception_name_comes_from_the_errortype_header(
    gw: Gateway, user: tuple[str, str], bedrock_mock: Process
) -> None:
    """Bedrock names the exception only in `x-amzn-errortype` (the body is `{message}`):
    a ServiceQuotaExceededException 400 is a rate limit, not the client's bad request
    (and never context length), a ModelNotReadyException 429 an overloaded model."""
    _, token = user
    quota = {
        "fault_status": 400,
        "fault_error_type": "ServiceQuotaExceededException",
        "fault_message": "Too many tokens per day, please wait before trying again.",
    }
    http_json("POST", f"{bedrock_mock.base_url}/_mock/config", quota)
    try:
        with pytest.raises(openai.RateLimitError) as info:
            _oai(gw, token).chat.completions.create(
                model=LLAMA, messages=[{"role": "user", "content": "hi"}]
            )
        assert info.value.code != "context_length_exceeded"
        not_ready = {
            "fault_status": 429,
            "fault_error_type": "ModelNotReadyException",
            "fault_message": "Model is not ready to serve inference requests.",
        }
        http_json("POST", f"{bedrock_mock.base_url}/_mock/config", not_ready)
        with pytest.raises(openai.InternalServerError) as busy:
            _oai(gw, token).chat.completions.create(
                model=LLAMA, messages=[{"role": "user", "content": "hi"}]
            )
        assert busy.value.status_code == 503
    finally:
        reset = {"fault_status": 0, "fault_error_type": None, "fault_message": None}
        http_json("POST", f"{bedrock_mock.base_url}/_mock/config", reset)


def test_midstream_exception_ends_the_stream(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    stream = _oai(gw, token).chat.completions.create(
        model=NOVA,
        messages=[{"role": "user", "content": "go [[mock:midstream_error=429]] [[mock:chunks=6]]"}],
        stream=True,
    )
    with pytest.raises(openai.APIError) as info:
        for _ in stream:
            pass
    assert "Too many requests" in str(info.value)


def test_api_key_channel_sends_bearer(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    reply = _oai(gw, token).chat.completions.create(
        model=KEYED, messages=[{"role": "user", "content": "with an API key"}]
    )
    assert reply.choices[0].message.content == "Hello from mock! You said: with an API key"
    (call,) = _calls(gw)
    assert call["path"] == "/model/amazon.nova-lite-v1:0/converse"
    assert call["headers"]["authorization"] == "<redacted:valid>"  # Bearer mock-key
    assert "x-amz-date" not in call["headers"]


def test_wrong_secret_is_refused_upstream(gw: Gateway, user: tuple[str, str]) -> None:
    email, token = user
    before = gw.balance(email)
    with pytest.raises(openai.APIStatusError) as info:
        _oai(gw, token).chat.completions.create(
            model=BROKEN, messages=[{"role": "user", "content": "hi"}]
        )
    assert info.value.status_code == 502
    assert "not-the-secret" not in str(info.value.body)
    assert [c["path"] for c in _calls(gw)] == ["/model/amazon.nova-pro-v1:0/converse"]
    assert gw.balance(email) == before  # nothing billed


# ---------------------------------------------------------------- anthropic SDK


def test_anthropic_messages_with_thinking_and_tools(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    client = _claude(gw, token)
    tools: Any = [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": WEATHER["function"]["parameters"],
        }
    ]
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    ask: Any = [{"role": "user", "content": "Weather in Oslo? [[mock:tool]]"}]
    first = client.messages.create(
        model=CLAUDE, max_tokens=2048, thinking=thinking, tools=tools, messages=ask
    )
    assert first.stop_reason == "tool_use"
    kinds = [b.type for b in first.content]
    assert kinds == ["thinking", "tool_use"]
    block = first.content[0]
    assert block.type == "thinking" and block.signature.startswith("bedrock:")
    use = first.content[1]
    assert use.type == "tool_use" and use.input == {"city": "Oslo"}
    second = client.messages.create(
        model=CLAUDE,
        max_tokens=2048,
        thinking=thinking,
        tools=tools,
        messages=[
            *ask,
            {"role": "assistant", "content": [b.model_dump() for b in first.content]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "9C"}],
            },
        ],
    )
    assert [b.type for b in second.content] == ["thinking", "text"]
    text = second.content[1]
    assert text.type == "text" and text.text == "Tool result received: 9C"
    replayed = _calls(gw)[-1]["json"]
    assert replayed["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 1024
    reasoning = replayed["messages"][1]["content"][0]["reasoningContent"]["reasoningText"]
    assert reasoning["signature"] == block.signature.removeprefix("bedrock:")


def test_anthropic_stream(gw: Gateway, user: tuple[str, str]) -> None:
    email, token = user
    before = gw.balance(email)
    with _claude(gw, token).messages.stream(
        model=CLAUDE, max_tokens=200, messages=[{"role": "user", "content": "stream me"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello from mock! You said: stream me"
    assert final.stop_reason == "end_turn"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (2, 7)
    assert wait_for(lambda: before - gw.balance(email) == _cost(2, 7))


def test_anthropic_error_in_anthropic_shape(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    with pytest.raises(anthropic.RateLimitError) as info:
        _claude(gw, token).messages.create(
            model=CLAUDE,
            max_tokens=50,
            messages=[{"role": "user", "content": "[[mock:error=429]]"}],
        )
    assert info.value.body is not None and info.value.body["type"] == "error"


# ---------------------------------------------------------------- google-genai SDK


def test_genai_generate_and_stream(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    client = _genai(gw, token)
    reply = client.models.generate_content(model=MISTRAL, contents="hello from gemini")
    assert reply.text == "Hello from mock! You said: hello from gemini"
    assert reply.usage_metadata is not None and reply.usage_metadata.prompt_token_count == 3
    pieces = [
        chunk.text or ""
        for chunk in client.models.generate_content_stream(model=LLAMA, contents="and streamed")
    ]
    assert "".join(pieces) == "Hello from mock! You said: and streamed"
    paths = [c["path"] for c in _calls(gw)]
    assert paths[-1].endswith("/converse-stream") and paths[-2].endswith("/converse")


def test_genai_function_call(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    tool = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name="get_weather",
                description="Weather for a city",
                parameters_json_schema=WEATHER["function"]["parameters"],
            )
        ]
    )
    client = _genai(gw, token)  # kept: a collected client closes its connection pool
    reply = client.models.generate_content(
        model=NOVA,
        contents="Weather? [[mock:tool]]",
        config=types.GenerateContentConfig(tools=[tool]),
    )
    calls = reply.function_calls or []
    assert len(calls) == 1 and calls[0].name == "get_weather"
    assert calls[0].args == {"city": "Oslo"}


def test_genai_error(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    client = _genai(gw, token)
    with pytest.raises(genai.errors.ClientError) as info:
        client.models.generate_content(model=NOVA, contents="[[mock:error=429]]")
    assert info.value.code == 429


# ---------------------------------------------------------------- CLI


def test_cli_channel_with_region_option_is_probed(bedrock_mock: Process, tmp_path: Path) -> None:
    env = gateway_env(tmp_path, None)
    key = f"{ACCESS_KEY_ID}:{SECRET_ACCESS_KEY}"
    run_cli(env, "channels", "add", "br", "--kind", "bedrock", "--base-url", bedrock_mock.base_url,
            "--key", key, "--models", NOVA, "--map", f"{NOVA}={UPSTREAM[NOVA]}",
            "--option", "region=eu-west-1")  # fmt: skip
    ok = run_cli(env, "channels", "test", "br")
    assert f"br: OK  chat {NOVA}" in ok.stdout
    assert "Hello from mock! You said: Say hello in three words." in ok.stdout
    run_cli(env, "channels", "add", "br-embed", "--kind", "bedrock",
            "--base-url", bedrock_mock.base_url, "--key", key, "--models", TITAN,
            "--map", f"{TITAN}={UPSTREAM[TITAN]}", "--option", "region=eu-west-1")  # fmt: skip
    run_cli(env, "prices", "set", TITAN, "--kind", "embedding", "--input", "0.02")
    embedded = run_cli(env, "channels", "test", "br-embed")
    assert f"br-embed: OK  embedding {TITAN}" in embedded.stdout
    assert "embedding of 1024 dimensions" in embedded.stdout
    run_cli(env, "channels", "add", "br-noregion", "--kind", "bedrock",
            "--base-url", bedrock_mock.base_url, "--key", key, "--models", NOVA)  # fmt: skip
    failed = run_cli(env, "channels", "test", "br-noregion", check=False)
    assert failed.returncode == 1 and "no region" in failed.stdout
    reserved = run_cli(env, "channels", "add", "x", "--kind", "bedrock", "--base-url",
                       bedrock_mock.base_url, "--key", key, "--models", NOVA,
                       "--option", "headers=1", check=False)  # fmt: skip
    assert reserved.returncode != 0 and "setting of its own" in reserved.stderr
    assert SECRET_ACCESS_KEY not in ok.stdout + failed.stdout + reserved.stderr


# ---------------------------------------------------------------- embeddings


def test_embeddings_titan_and_cohere(gw: Gateway, user: tuple[str, str]) -> None:
    email, token = user
    before = gw.balance(email)
    client = _oai(gw, token)
    titan = client.embeddings.create(model=TITAN, input=["one two", "three"], dimensions=256)
    assert [len(d.embedding) for d in titan.data] == [256, 256]
    assert titan.usage.prompt_tokens == 3  # Titan's inputTextTokenCount, summed
    calls = _calls(gw)
    assert [c["json"] for c in calls] == [
        {"inputText": "one two", "dimensions": 256, "normalize": True},
        {"inputText": "three", "dimensions": 256, "normalize": True},
    ]  # one text per InvokeModel call for Titan
    assert all(c["path"] == "/model/amazon.titan-embed-text-v2:0/invoke" for c in calls)
    clear_mock_requests(gw.mock_url)
    cohere = client.embeddings.create(model=COHERE, input=["a", "b", "c"], encoding_format="float")
    assert len(cohere.data) == 3 and len(cohere.data[0].embedding) == 1024
    texts = [t for c in _calls(gw) for t in c["json"]["texts"]]
    assert texts == ["a", "b", "c"]
    assert all(c["json"]["input_type"] == "search_document" for c in _calls(gw))
    assert wait_for(lambda: gw.balance(email) < before)


def test_genai_embed_content_on_cohere(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    client = _genai(gw, token)
    reply = client.models.embed_content(model=COHERE, contents=["first text", "second text"])
    vectors = [e.values or [] for e in reply.embeddings or []]
    assert [len(v) for v in vectors] == [1024, 1024] and vectors[0] != vectors[1]
    (call,) = _calls(gw)  # Cohere takes the batch in one InvokeModel call
    assert call["path"] == "/model/cohere.embed-english-v3/invoke"
    assert call["json"]["texts"] == ["first text", "second text"]


# ---------------------------------------------------------------- console


def test_console_edit_keeps_the_region(gw: Gateway, user: tuple[str, str]) -> None:
    _, admin_token = gw.new_user(admin=True)
    headers = {"authorization": f"Bearer {admin_token}"}

    def listed() -> dict[str, Any]:
        items = httpx.get(f"{gw.url}/api/channels", headers=headers).json()["items"]
        return next(c for c in items if c["name"] == "bedrock-iam")

    channel = listed()
    assert channel["options"] == {"region": "us-west-2"}
    edited = httpx.patch(
        f"{gw.url}/api/channels/{channel['id']}", headers=headers, json={"priority": 1}
    )
    assert edited.status_code == 200, edited.text
    assert listed()["options"] == {"region": "us-west-2"} and listed()["priority"] == 1
    refused = httpx.patch(
        f"{gw.url}/api/channels/{channel['id']}",
        headers=headers,
        json={"options": {"headers": "x"}},
    )
    assert refused.status_code == 400 and "setting of its own" in refused.text
    _, token = user
    reply = wait_for(
        lambda: _oai(gw, token).chat.completions.create(
            model=NOVA, messages=[{"role": "user", "content": "after the edit"}]
        )
    )
    assert reply.choices[0].message.content == "Hello from mock! You said: after the edit"


def test_openai_responses_api(gw: Gateway, user: tuple[str, str]) -> None:
    _, token = user
    client = _oai(gw, token)
    reply = client.responses.create(model=NOVA, input="hello responses", max_output_tokens=50)
    assert reply.output_text == "Hello from mock! You said: hello responses"
    assert reply.usage is not None and reply.usage.input_tokens == 2
    with client.responses.stream(model=LLAMA, input="streamed responses") as stream:
        text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
    assert text == "Hello from mock! You said: streamed responses"
    assert [c["path"].rsplit("/", 1)[-1] for c in _calls(gw)] == ["converse", "converse-stream"]
