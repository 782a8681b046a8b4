"""The generate-content dialect end to end with the official google-genai SDK against
Gemini, OpenAI and Anthropic channels; and the other SDKs against the Gemini channel."""

import json

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from tests.conftest import Gateway
from tests.support import http_json, wait_for

MODELS = ["gemini-mock", "gpt-mock", "claude-mock"]
WEATHER = types.FunctionDeclaration(
    name="get_weather",
    description="Weather for a city",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


def client(gw: Gateway, token: str) -> genai.Client:
    return genai.Client(
        api_key=token, http_options=types.HttpOptions(base_url=gw.url, timeout=30_000)
    )


@pytest.mark.parametrize("model", MODELS)
def test_generate_content(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    reply = sdk.models.generate_content(
        model=model,
        contents="hello gemini",
        config=types.GenerateContentConfig(system_instruction="be brief", max_output_tokens=200),
    )
    assert "hello gemini" in (reply.text or "")
    assert reply.usage_metadata is not None and (reply.usage_metadata.prompt_token_count or 0) > 0
    assert reply.candidates and reply.candidates[0].finish_reason == types.FinishReason.STOP


@pytest.mark.parametrize("model", MODELS)
def test_generate_content_stream(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    chunks = list(sdk.models.generate_content_stream(model=model, contents="stream it"))
    assert len(chunks) > 1
    assert "stream it" in "".join(c.text or "" for c in chunks)
    assert chunks[-1].usage_metadata is not None


@pytest.mark.parametrize("model", MODELS)
def test_function_calling_round_trip(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[WEATHER])],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.ANY
            )
        ),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    first = sdk.models.generate_content(model=model, contents="weather in Oslo?", config=config)
    calls = first.function_calls or []
    assert calls and calls[0].name == "get_weather" and calls[0].args == {"city": "Oslo"}
    contents = [
        types.Content(role="user", parts=[types.Part.from_text(text="weather in Oslo?")]),
        first.candidates[0].content,  # type: ignore[index]
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(name="get_weather", response={"output": "foggy"})
            ],
        ),
    ]
    second = sdk.models.generate_content(
        model=model,
        contents=contents,
        config=types.GenerateContentConfig(tools=config.tools),  # type: ignore[arg-type]
    )
    assert "foggy" in (second.text or "")


@pytest.mark.parametrize("model", MODELS)
def test_count_tokens(gateway: Gateway, model: str) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    counted = sdk.models.count_tokens(model=model, contents="count these words please")
    if model == "gemini-mock":  # asked of the Gemini upstream: the fake one counts words
        assert counted.total_tokens == 4
    else:
        assert (counted.total_tokens or 0) > 3


def test_stream_without_alt_sse_is_a_json_array(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    for model in ("gemini-mock", "gpt-mock"):
        status, body = http_json(
            "POST",
            f"{gateway.url}/v1beta/models/{model}:streamGenerateContent?key={token}",
            {"contents": [{"role": "user", "parts": [{"text": "array please"}]}]},
        )
        assert status == 200 and isinstance(body, list) and len(body) > 1, body
        assert "array please" in "".join(
            p.get("text", "") for item in body for p in item["candidates"][0]["content"]["parts"]
        )


def test_bad_key_and_unknown_model(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    body = {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    for key in ("wrong", f"{token} "):
        url = f"{gateway.url}/v1beta/models/gemini-mock:generateContent"
        status, reply = http_json("POST", f"{url}?key={key.replace(' ', '%20')}", body)
        assert status == 401 and reply["error"]["status"] == "UNAUTHENTICATED"
    sdk = client(gateway, token)
    with pytest.raises(genai_errors.ClientError) as info:
        sdk.models.generate_content(model="no-such-model", contents="x")
    assert info.value.code == 404
    assert gateway.balance(email) == 10 * 10**12


def test_model_list_in_gemini_shape(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    sdk = client(gateway, token)
    names = [m.name for m in sdk.models.list()]
    assert "models/gemini-mock" in names


def test_openai_and_anthropic_sdks_on_a_gemini_channel(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=token, max_retries=0)
    chunks = list(
        sdk.chat.completions.create(
            model="gemini-mock", messages=[{"role": "user", "content": "hi gemini"}], stream=True
        )
    )
    assert "hi gemini" in "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    tools = [
        {
            "type": "function",
            "function": {"name": "get_weather", "parameters": WEATHER.parameters_json_schema},
        }
    ]
    reply = sdk.chat.completions.create(
        model="gemini-mock",
        messages=[{"role": "user", "content": "weather"}],
        tools=tools,
        tool_choice="required",  # type: ignore[arg-type]
    )
    call = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.id and json.loads(call.function.arguments) == {"city": "Oslo"}
    ant = anthropic.Anthropic(base_url=gateway.url, api_key=token, max_retries=0)
    with ant.messages.stream(
        model="gemini-mock",
        max_tokens=100,
        messages=[{"role": "user", "content": "hello via claude sdk"}],
    ) as stream:
        final = stream.get_final_message()
    assert "hello via claude sdk" in final.content[0].text  # type: ignore[union-attr]
    assert wait_for(lambda: gateway.balance(email) < 10 * 10**12)
