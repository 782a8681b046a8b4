"""The fake upstream's Anthropic surface, exercised with the official `anthropic` SDK."""

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import anthropic
import pytest

from switchgate import jsonutil
from switchgate.testing import MockConfig, MockUpstream, start_mock_upstream

TOOL: Any = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "number"}},
        "required": ["city"],
    },
}


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream(config=MockConfig(chunk_count=3))
    yield up
    await up.close()


@pytest.fixture
async def client(upstream: MockUpstream) -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with anthropic.AsyncAnthropic(
        base_url=upstream.base_url, api_key="mock-key", max_retries=0
    ) as c:
        yield c


async def test_message_non_stream(client: anthropic.AsyncAnthropic) -> None:
    message = await client.messages.create(
        model="claude-x",
        max_tokens=100,
        system="Be brief.",
        messages=[{"role": "user", "content": "hi there"}],
    )
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello from mock! You said: hi there"
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens == 4 and message.usage.output_tokens == 7
    assert message.usage.cache_read_input_tokens == 0


async def test_stream_text(client: anthropic.AsyncAnthropic) -> None:
    async with client.messages.stream(
        model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "stream"}]
    ) as stream:
        pieces = [text async for text in stream.text_stream]
        final = await stream.get_final_message()
    assert len(pieces) == 3
    assert "".join(pieces) == "Hello from mock! You said: stream"
    assert final.usage.output_tokens == 6 and final.usage.input_tokens == 1


async def test_stream_thinking_and_tool_use(client: anthropic.AsyncAnthropic) -> None:
    async with client.messages.stream(
        model="claude-x",
        max_tokens=4096,
        thinking={"type": "enabled", "budget_tokens": 1024},
        tools=[TOOL],
        messages=[{"role": "user", "content": "weather please [[mock:tool]]"}],
    ) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_message()
    assert kinds[0] == "message_start"
    assert "input_json" in kinds and "thinking" in kinds and "signature" in kinds
    thinking, tool_use = final.content
    assert thinking.type == "thinking" and thinking.signature
    assert thinking.thinking.startswith("Let me think")
    assert tool_use.type == "tool_use"
    assert tool_use.name == "get_weather" and tool_use.input == {"city": "Oslo", "days": 1}
    assert tool_use.id.startswith("toolu_")
    assert final.stop_reason == "tool_use"
    assert final.usage.output_tokens > 1


async def test_tool_result_turn(client: anthropic.AsyncAnthropic) -> None:
    first = await client.messages.create(
        model="claude-x",
        max_tokens=100,
        tools=[TOOL],
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "weather"}],
    )
    call = first.content[0]
    assert call.type == "tool_use"
    history: list[Any] = [
        {"role": "user", "content": "weather"},
        {"role": "assistant", "content": [call.model_dump()]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Rainy"}],
        },
    ]
    second = await client.messages.create(
        model="claude-x", max_tokens=100, tools=[TOOL], messages=history
    )
    assert second.content[0].type == "text"
    assert second.content[0].text == "Tool result received: Rainy"


async def test_cache_control_reports_cache_reads(client: anthropic.AsyncAnthropic) -> None:
    message = await client.messages.create(
        model="claude-x",
        max_tokens=100,
        system=[
            {"type": "text", "text": "a b c d e f g h", "cache_control": {"type": "ephemeral"}}
        ],
        messages=[{"role": "user", "content": "one two"}],
    )
    usage = message.usage
    assert usage.cache_read_input_tokens == 5  # half of the 10 prompt words
    assert usage.input_tokens == 5  # excludes the cache reads


@pytest.mark.parametrize(
    ("code", "exc"),
    [
        (429, anthropic.RateLimitError),
        (500, anthropic.InternalServerError),
        (529, anthropic.OverloadedError),
    ],
)
async def test_error_directive(
    client: anthropic.AsyncAnthropic, code: int, exc: type[Exception]
) -> None:
    with pytest.raises(exc) as info:
        await client.messages.create(
            model="claude-x",
            max_tokens=10,
            messages=[{"role": "user", "content": f"[[mock:error={code}]]"}],
        )
    assert isinstance(info.value, anthropic.APIStatusError)
    assert info.value.status_code == code
    body: Any = info.value.body
    assert body["type"] == "error"


async def test_auth_failure(upstream: MockUpstream) -> None:
    async with anthropic.AsyncAnthropic(
        base_url=upstream.base_url, api_key="bad", max_retries=0
    ) as bad:
        with pytest.raises(anthropic.AuthenticationError):
            await bad.messages.create(
                model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )


async def test_x_api_key_and_version_header(upstream: MockUpstream) -> None:
    body = {"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    url = upstream.base_url + "/v1/messages"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=body, headers={"x-api-key": "mock-key"}) as r:
            assert r.status == 400
            error = await r.json()
        headers = {"x-api-key": "mock-key", "anthropic-version": "2023-06-01"}
        async with session.post(url, json=body, headers=headers) as r:
            assert r.status == 200
    assert error["error"]["type"] == "invalid_request_error"


async def test_midstream_error_event(client: anthropic.AsyncAnthropic) -> None:
    with pytest.raises(anthropic.APIStatusError) as info:
        async with client.messages.stream(
            model="claude-x",
            max_tokens=100,
            messages=[{"role": "user", "content": "[[mock:midstream_error]]"}],
        ) as stream:
            async for _ in stream:
                pass
    assert "Overloaded" in str(info.value)


async def test_raw_stream_event_names(upstream: MockUpstream) -> None:
    body = {
        "model": "c",
        "max_tokens": 50,
        "stream": True,
        "messages": [{"role": "user", "content": "go [[mock:chunks=2]]"}],
    }
    headers = {"x-api-key": "mock-key", "anthropic-version": "2023-06-01"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(upstream.base_url + "/v1/messages", json=body, headers=headers) as r,
    ):
        raw = (await r.read()).decode()
    names = []
    for event in filter(None, raw.split("\n\n")):
        name_line, data_line = event.split("\n")
        name = name_line.removeprefix("event: ")
        assert jsonutil.loads(data_line.removeprefix("data: "))["type"] == name
        names.append(name)
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


async def test_count_tokens(client: anthropic.AsyncAnthropic) -> None:
    count = await client.messages.count_tokens(
        model="claude-x", system="one two", messages=[{"role": "user", "content": "three four"}]
    )
    assert count.input_tokens == 4


async def test_models_list_shape(client: anthropic.AsyncAnthropic) -> None:
    models = [m.id async for m in client.models.list()]
    assert "claude-sonnet-4-5" in models
