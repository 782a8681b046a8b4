"""The fake upstream's Gemini surface, exercised with the official `google-genai` SDK."""

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from google import genai
from google.genai import errors, types

from switchgate import jsonutil
from switchgate.testing import MockConfig, MockUpstream, start_mock_upstream

WEATHER = types.FunctionDeclaration(
    name="get_weather",
    parameters_json_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "hot": {"type": "boolean"}},
    },
)


def parts_of(response: types.GenerateContentResponse) -> list[types.Part]:
    assert response.candidates and response.candidates[0].content
    return response.candidates[0].content.parts or []


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream(config=MockConfig(chunk_count=5))
    yield up
    await up.close()


@pytest.fixture
async def client(upstream: MockUpstream) -> AsyncIterator[genai.Client]:
    c = genai.Client(api_key="mock-key", http_options=types.HttpOptions(base_url=upstream.base_url))
    yield c
    await c.aio.aclose()


async def test_generate(client: genai.Client) -> None:
    result = await client.aio.models.generate_content(
        model="gemini-2.5-flash",
        contents="hi there",
        config=types.GenerateContentConfig(system_instruction="Be brief."),
    )
    assert result.text == "Hello from mock! You said: hi there"
    usage = result.usage_metadata
    assert usage is not None
    assert (usage.prompt_token_count, usage.candidates_token_count) == (4, 7)
    assert usage.total_token_count == 11
    assert result.candidates is not None
    assert result.candidates[0].finish_reason == types.FinishReason.STOP
    assert result.model_version == "gemini-2.5-flash"


async def test_stream_with_thoughts(client: genai.Client) -> None:
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024)
    )
    chunks = [
        chunk
        async for chunk in await client.aio.models.generate_content_stream(
            model="gemini-2.5-flash", contents="stream me", config=config
        )
    ]
    thoughts = "".join(p.text or "" for c in chunks for p in parts_of(c) if p.thought)
    answer = "".join(p.text or "" for c in chunks for p in parts_of(c) if not p.thought)
    assert thoughts.startswith("Let me think")
    assert answer == "Hello from mock! You said: stream me"
    usage = chunks[-1].usage_metadata
    assert usage is not None and usage.thoughts_token_count
    assert usage.total_token_count == (
        (usage.prompt_token_count or 0)
        + (usage.candidates_token_count or 0)
        + usage.thoughts_token_count
    )
    assert chunks[-1].candidates is not None
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP


async def test_function_call_and_response(client: genai.Client) -> None:
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[WEATHER])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    result = await client.aio.models.generate_content(
        model="gemini-2.5-flash", contents="weather [[mock:tools=2]]", config=config
    )
    calls = result.function_calls
    assert calls is not None and len(calls) == 2
    assert calls[0].name == "get_weather" and calls[0].args == {"city": "Oslo", "hot": True}
    parts = parts_of(result)
    assert parts[0].thought_signature == b"mock-thought-signature"
    assert parts[1].thought_signature is None
    history = [
        types.Content(role="user", parts=[types.Part(text="weather [[mock:tools=2]]")]),
        types.Content(role="model", parts=parts),
        types.Content(
            role="user",
            parts=[
                types.Part.from_function_response(name="get_weather", response={"output": "Hot"})
            ],
        ),
    ]
    again = await client.aio.models.generate_content(
        model="gemini-2.5-flash", contents=history, config=config
    )
    assert again.text == "Tool result received: Hot"


async def test_forced_function_via_tool_config(client: genai.Client) -> None:
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[WEATHER])],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.ANY
            )
        ),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    result = await client.aio.models.generate_content(
        model="gemini-2.5-flash", contents="no directive", config=config
    )
    assert result.function_calls is not None and len(result.function_calls) == 1


async def test_embeddings(client: genai.Client) -> None:
    result = await client.aio.models.embed_content(
        model="gemini-embedding-001",
        contents=["alpha", "beta"],
        config=types.EmbedContentConfig(output_dimensionality=16),
    )
    assert result.embeddings is not None and len(result.embeddings) == 2
    first, second = (e.values for e in result.embeddings)
    assert first is not None and second is not None
    assert len(first) == 16 and first != second
    again = await client.aio.models.embed_content(model="gemini-embedding-001", contents="alpha")
    assert again.embeddings is not None and again.embeddings[0].values is not None
    assert len(again.embeddings[0].values) == 3072


async def test_embed_content_single(upstream: MockUpstream) -> None:
    body = {"content": {"parts": [{"text": "alpha"}]}, "outputDimensionality": 4}
    url = upstream.base_url + "/v1beta/models/text-embedding-004:embedContent?key=mock-key"
    async with aiohttp.ClientSession() as session, session.post(url, json=body) as r:
        values = (await r.json())["embedding"]["values"]
    assert len(values) == 4


async def test_count_tokens_and_models(client: genai.Client) -> None:
    count = await client.aio.models.count_tokens(model="gemini-2.5-flash", contents="a b c")
    assert count.total_tokens == 3
    names = [m.name async for m in await client.aio.models.list()]
    assert "models/gemini-2.5-flash" in names


async def test_bad_key_is_400_api_key_invalid(upstream: MockUpstream) -> None:
    bad = genai.Client(api_key="nope", http_options=types.HttpOptions(base_url=upstream.base_url))
    with pytest.raises(errors.ClientError) as info:
        await bad.aio.models.generate_content(model="gemini-2.5-flash", contents="hi")
    await bad.aio.aclose()
    assert info.value.code == 400 and info.value.status == "INVALID_ARGUMENT"
    assert "API key not valid" in str(info.value.message)


@pytest.mark.parametrize(("code", "exc"), [(429, errors.ClientError), (503, errors.ServerError)])
async def test_error_directive(client: genai.Client, code: int, exc: type[Exception]) -> None:
    with pytest.raises(exc) as info:
        await client.aio.models.generate_content(
            model="gemini-2.5-flash", contents=f"[[mock:error={code}]]"
        )
    assert isinstance(info.value, errors.APIError) and info.value.code == code


async def test_stream_without_alt_sse_is_json_array(upstream: MockUpstream) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "array [[mock:chunks=2]]"}]}]}
    url = upstream.base_url + "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    headers = {"x-goog-api-key": "mock-key"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json=body, headers=headers) as r,
    ):
        raw = await r.read()
    assert raw.startswith(b"[{") and b",\r\n{" in raw and raw.endswith(b"]")
    chunks: list[Any] = jsonutil.loads(raw)
    assert len(chunks) == 2
    assert "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks) == (
        "Hello from mock! You said: array [[mock:chunks=2]]"
    )


async def test_snake_case_request(upstream: MockUpstream) -> None:
    body = {
        "system_instruction": {"parts": [{"text": "one two"}]},
        "contents": [{"role": "user", "parts": [{"text": "three"}]}],
        "generation_config": {"max_output_tokens": 2},
    }
    url = upstream.base_url + "/v1beta/models/gemini-2.5-flash:generateContent"
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json=body, headers={"x-goog-api-key": "mock-key"}) as r,
    ):
        result = await r.json()
    assert result["usageMetadata"]["promptTokenCount"] == 3
    assert result["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert result["candidates"][0]["content"]["parts"][0]["text"] == "Hello from"


async def test_midstream_error_raises(client: genai.Client) -> None:
    texts: list[str] = []
    with pytest.raises(errors.APIError) as info:
        async for chunk in await client.aio.models.generate_content_stream(
            model="gemini-2.5-flash", contents="go [[mock:midstream_error]]"
        ):
            texts.append(chunk.text or "")
    assert texts and info.value.code == 503
