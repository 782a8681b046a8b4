"""The fake upstream's strict mode (refuses what the real providers refuse) and scripted
tool round-trips, exercised with the official SDKs."""

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from switchgate.testing import MockConfig, MockUpstream, start_mock_upstream

READ: Any = {
    "name": "Read",
    "description": "Read a file",
    "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
}


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream(config=MockConfig(chunk_count=2, strict=True))
    yield up
    await up.close()


def _anthropic(up: MockUpstream) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=up.base_url, api_key="mock-key", max_retries=0)


async def test_anthropic_refuses_a_system_role_inside_messages(upstream: MockUpstream) -> None:
    messages: Any = [{"role": "user", "content": "hi"}, {"role": "system", "content": "x"}]
    async with _anthropic(upstream) as client:
        with pytest.raises(anthropic.BadRequestError) as info:
            await client.messages.create(model="m", max_tokens=10, messages=messages)
    assert "messages.1.role" in str(info.value)


async def test_scripted_tool_round_trip(upstream: MockUpstream) -> None:
    prompt = 'read it [[mock:call=Read]] [[mock:args={"file_path": "/tmp/x"}]]'
    async with _anthropic(upstream) as client:
        first = await client.messages.create(
            model="m", max_tokens=100, tools=[READ], messages=[{"role": "user", "content": prompt}]
        )
        call = first.content[0]
        assert call.type == "tool_use" and call.name == "Read"
        assert call.input == {"file_path": "/tmp/x"} and first.stop_reason == "tool_use"
        second = await client.messages.create(
            model="m",
            max_tokens=100,
            tools=[READ],
            messages=[
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": [call.model_dump()]},  # type: ignore[list-item]
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "42"}],
                },
            ],
        )
    assert second.content[0].type == "text"
    assert second.content[0].text == "Tool result received: 42"
    # A tool the request doesn't offer is not called: the model just talks.
    async with _anthropic(upstream) as client:
        other = await client.messages.create(
            model="m", max_tokens=100, messages=[{"role": "user", "content": prompt}]
        )
    assert other.content[0].type == "text"


async def test_openai_refuses_hosted_tool_types_and_orphan_tool_messages(
    upstream: MockUpstream,
) -> None:
    async with openai.AsyncOpenAI(
        base_url=upstream.base_url + "/v1", api_key="mock-key", max_retries=0
    ) as client:
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "x"}],
                tools=[{"type": "namespace", "name": "ns", "tools": []}],  # type: ignore[list-item]
            )
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(
                model="m",
                messages=[
                    {"role": "user", "content": "x"},
                    {"role": "tool", "tool_call_id": "call_1", "content": "r"},
                ],
            )


async def test_gemini_refuses_unknown_schema_keys_and_search_with_functions(
    upstream: MockUpstream,
) -> None:
    client = genai.Client(
        api_key="mock-key", http_options=types.HttpOptions(base_url=upstream.base_url)
    )
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "$schema": "x"}
    decl = types.FunctionDeclaration(name="f", parameters_json_schema=schema)
    with pytest.raises(genai_errors.ClientError) as info:
        await client.aio.models.generate_content(
            model="g",
            contents="x",
            config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=[decl])]),
        )
    assert "$schema" in str(info.value)
    clean = types.FunctionDeclaration(name="f", parameters_json_schema={"type": "object"})
    with pytest.raises(genai_errors.ClientError):
        await client.aio.models.generate_content(
            model="g",
            contents="x",
            config=types.GenerateContentConfig(
                tools=[
                    types.Tool(function_declarations=[clean]),
                    types.Tool(google_search=types.GoogleSearch()),
                ]
            ),
        )
    ok = await client.aio.models.generate_content(
        model="g",
        contents="x",
        config=types.GenerateContentConfig(tools=[types.Tool(function_declarations=[clean])]),
    )
    assert ok.text
