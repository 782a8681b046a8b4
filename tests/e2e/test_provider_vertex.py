"""`vertex` channels end to end (tests/e2e/vertex_gateway.py): the official openai,
anthropic and google-genai SDKs against both publishers (Gemini and Claude), streamed and
not, tool round trips, the Responses API, an error in each client's dialect, the ledger,
and one access token for many calls."""

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from tests.conftest import Gateway
from tests.e2e.vertex_gateway import (
    CLAUDE,
    GEMINI,
    MODELS,
    WEATHER_SCHEMA,
    claude,
    genai_client,
    new_account,
    oai,
    running_gateway,
    vertex_calls,
)
from tests.support import Process, clear_mock_requests, wait_for
from tests.vertex_support import ServiceAccountKey, tokens_issued


@pytest.fixture(scope="module")
def account(mock_upstream: Process) -> ServiceAccountKey:
    return new_account(mock_upstream)


@pytest.fixture(scope="module")
def vertex_gateway(
    tmp_path_factory: pytest.TempPathFactory, mock_upstream: Process, account: ServiceAccountKey
) -> Iterator[Gateway]:
    with running_gateway(tmp_path_factory, mock_upstream, account) as gw:
        yield gw


@pytest.mark.parametrize("model", MODELS)
def test_openai_sdk_chat_and_ledger(
    vertex_gateway: Gateway, account: ServiceAccountKey, model: str
) -> None:
    gw = vertex_gateway
    email, token = gw.new_user()
    before = gw.balance(email)
    clear_mock_requests(gw.mock_url)
    reply = oai(gw, token).chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hello vertex"}], max_tokens=100
    )
    assert "hello vertex" in (reply.choices[0].message.content or "")
    assert reply.usage is not None and reply.usage.prompt_tokens > 0
    calls = vertex_calls(gw)
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
    stream = oai(vertex_gateway, token).chat.completions.create(
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
    sdk = oai(vertex_gateway, token)
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
    sdk = claude(vertex_gateway, token)
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
    sdk = claude(vertex_gateway, token)
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
    sdk = genai_client(vertex_gateway, token)
    reply = sdk.models.generate_content(model=model, contents="hello genai")
    assert "hello genai" in (reply.text or "")
    chunks = list(sdk.models.generate_content_stream(model=model, contents="genai stream"))
    assert "genai stream" in "".join(c.text or "" for c in chunks)
    assert chunks[-1].usage_metadata is not None


@pytest.mark.parametrize("model", MODELS)
def test_genai_sdk_function_calling(vertex_gateway: Gateway, model: str) -> None:
    _, token = vertex_gateway.new_user()
    sdk = genai_client(vertex_gateway, token)
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
        oai(vertex_gateway, token).chat.completions.create(
            model=GEMINI, messages=[{"role": "user", "content": "x [[mock:error=429]]"}]
        )
    with pytest.raises(anthropic.BadRequestError) as info:
        claude(vertex_gateway, token).messages.create(
            model=CLAUDE,
            max_tokens=50,
            messages=[{"role": "user", "content": "x [[mock:error=400]]"}],
        )
    assert info.value.body["type"] == "error"  # type: ignore[index]
    client = genai_client(vertex_gateway, token)
    with pytest.raises(genai.errors.ClientError) as gerr:
        client.models.generate_content(model=CLAUDE, contents="x [[mock:error=400]]")
    assert gerr.value.code == 400


def test_token_fetched_once_for_many_calls(
    vertex_gateway: Gateway, mock_upstream: Process, account: ServiceAccountKey
) -> None:
    _, token = vertex_gateway.new_user()
    sdk = oai(vertex_gateway, token)
    for model in MODELS * 3:
        sdk.chat.completions.create(model=model, messages=[{"role": "user", "content": "again"}])
    assert tokens_issued(mock_upstream.base_url, account) == 1


@pytest.mark.parametrize("model", MODELS)
def test_openai_responses_api(vertex_gateway: Gateway, model: str) -> None:
    """/v1/responses is translated to the vertex channel through the chat pipeline."""
    _, token = vertex_gateway.new_user()
    sdk = oai(vertex_gateway, token)
    reply = sdk.responses.create(model=model, input="responses to vertex", max_output_tokens=100)
    assert "responses to vertex" in reply.output_text
    assert reply.usage is not None and reply.usage.input_tokens > 0
    with sdk.responses.stream(model=model, input="streamed responses") as stream:
        final = stream.get_final_response()
    assert "streamed responses" in final.output_text
