"""The fake upstream's Cohere v2 surface (/v2/chat, /v2/embed), exercised with the
official `cohere` SDK, and the Cohere provider's requests sent to it."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import cohere
import pytest

from switchgate import jsonutil
from switchgate.core.accumulate import Accumulator
from switchgate.core.events import StreamError, ToolCallStart
from switchgate.core.response import FinishReason
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.cohere import CohereProvider
from switchgate.testing import MockConfig, MockUpstream, start_mock_upstream
from tests.unit.test_anthropic_dialect import ir_from_json

CASES = Path(__file__).resolve().parent.parent / "golden" / "cohere_provider"
PROVIDER = CohereProvider()
TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream(config=MockConfig(chunk_count=3))
    yield up
    await up.close()


@pytest.fixture
async def client(upstream: MockUpstream) -> AsyncIterator[cohere.AsyncClientV2]:
    co = cohere.AsyncClientV2(api_key="mock-key", base_url=upstream.base_url)
    yield co


async def test_chat_text_and_usage(client: cohere.AsyncClientV2) -> None:
    reply = await client.chat(
        model="command-a-03-2025",
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi there"},
        ],
    )
    assert reply.finish_reason == "COMPLETE"
    assert reply.message.content is not None
    assert reply.message.content[0].text == "Hello from mock! You said: hi there"  # type: ignore[union-attr]
    assert reply.usage is not None and reply.usage.billed_units is not None
    assert reply.usage.billed_units.input_tokens == 4
    assert reply.usage.billed_units.output_tokens == 7
    assert reply.usage.tokens is not None and reply.usage.tokens.input_tokens == 4 + 7


async def test_tool_round_trip(client: cohere.AsyncClientV2) -> None:
    first = await client.chat(
        model="command-a-03-2025",
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
        tools=[TOOL],
        tool_choice="REQUIRED",
    )
    assert first.finish_reason == "TOOL_CALL"
    assert first.message.tool_plan == "I will use the get_weather tool."
    calls = first.message.tool_calls or []
    assert len(calls) == 1 and calls[0].function is not None
    assert calls[0].function.name == "get_weather"
    assert jsonutil.loads(calls[0].function.arguments or "") == {"city": "Oslo"}
    second = await client.chat(
        model="command-a-03-2025",
        messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "tool_plan": first.message.tool_plan, "tool_calls": calls},
            {"role": "tool", "tool_call_id": calls[0].id or "", "content": "rainy, 7C"},
        ],
        tools=[TOOL],
    )
    assert second.finish_reason == "COMPLETE"
    assert second.message.content is not None
    assert second.message.content[0].text == "Tool result received: rainy, 7C"  # type: ignore[union-attr]


async def test_stream_thinking_and_text(client: cohere.AsyncClientV2) -> None:
    kinds, thinking, text = [], "", ""
    async for event in client.chat_stream(
        model="command-a-reasoning-08-2025",
        messages=[{"role": "user", "content": "hello"}],
        thinking={"type": "enabled", "token_budget": 500},
    ):
        kinds.append(event.type)
        if event.type == "content-delta":
            content = event.delta.message.content  # type: ignore[union-attr]
            thinking += content.thinking or ""  # type: ignore[union-attr]
            text += content.text or ""  # type: ignore[union-attr]
        if event.type == "message-end":
            assert event.delta is not None and event.delta.finish_reason == "COMPLETE"
    assert kinds[0] == "message-start" and kinds[-1] == "message-end"
    assert kinds.count("content-start") == 2 and kinds.count("content-end") == 2
    assert thinking.startswith("Let me think") and text == "Hello from mock! You said: hello"


async def test_errors_in_cohere_shape(upstream: MockUpstream) -> None:
    bad_key = cohere.AsyncClientV2(api_key="wrong", base_url=upstream.base_url)
    with pytest.raises(cohere.UnauthorizedError) as unauthorized:
        await bad_key.chat(model="m", messages=[{"role": "user", "content": "x"}])
    assert unauthorized.value.body == {"id": "mock-error-0000", "message": "invalid api token"}
    co = cohere.AsyncClientV2(api_key="mock-key", base_url=upstream.base_url)
    with pytest.raises(cohere.BadRequestError) as bad:
        await co.chat(model="m", messages=[{"role": "user", "content": "x"}], p=1.0)
    assert "p is out of range" in bad.value.body["message"]
    with pytest.raises(cohere.TooManyRequestsError):
        await co.chat(model="m", messages=[{"role": "user", "content": "x [[mock:error=429]]"}])
    with pytest.raises(cohere.BadRequestError):
        await co.chat(model="m", messages=[{"role": "user", "content": "x"}], tool_choice="NONE")


async def test_midstream_error_ends_with_error_finish(client: cohere.AsyncClientV2) -> None:
    events = [
        e
        async for e in client.chat_stream(
            model="m", messages=[{"role": "user", "content": "x [[mock:midstream_error]]"}]
        )
    ]
    last = events[-1]
    assert last.type == "message-end" and last.delta is not None
    assert last.delta.finish_reason == "ERROR" and last.delta.error


async def test_embed(client: cohere.AsyncClientV2) -> None:
    reply = await client.embed(
        model="embed-v4.0",
        texts=["one two three", "four"],
        input_type="search_document",
        embedding_types=["float"],
        output_dimension=256,
    )
    vectors = reply.embeddings.float_ or []
    assert len(vectors) == 2 and len(vectors[0]) == 256
    assert reply.meta is not None and reply.meta.billed_units is not None
    assert reply.meta.billed_units.input_tokens == 4
    with pytest.raises(cohere.BadRequestError):  # more than 96 texts
        await client.embed(
            model="embed-v4.0",
            texts=["x"] * 97,
            input_type="search_query",
            embedding_types=["float"],
        )
    with pytest.raises(cohere.BadRequestError):  # output_dimension on a v3 model
        await client.embed(
            model="embed-english-v3.0",
            texts=["x"],
            input_type="search_query",
            embedding_types=["float"],
            output_dimension=256,
        )


# --- the provider's requests, sent to the fake ------------------------------------------


async def _send(sent: UpstreamRequest) -> tuple[int, bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(sent.url, data=sent.body, headers=sent.headers) as response,
    ):
        return response.status, await response.read()


def _request_cases() -> list[Any]:
    out = []
    for path in sorted(CASES.glob("request_*.json")):
        case = jsonutil.loads(path.read_bytes())
        if "upstream" in case["expected"]:
            out.append(pytest.param(case, id=path.stem))
    return out


@pytest.mark.parametrize("case", _request_cases())
async def test_every_golden_request_is_served(upstream: MockUpstream, case: dict[str, Any]) -> None:
    request = ir_from_json(case["input"]["request"])
    target = Target(upstream.base_url + "/v1", "mock-key", "command-a-03-2025")
    sent = PROVIDER.build_chat_request(request, target)
    status, body = await _send(sent)
    assert status == 200, body
    if not request.stream:
        reply = PROVIDER.parse_chat_response(body, request)
        assert reply.parts and reply.usage.input_tokens > 0
        return
    decoder = PROVIDER.chat_stream_decoder(request)
    events = decoder.feed(body) + decoder.finish()
    assert not any(isinstance(e, StreamError) for e in events)
    accumulator = Accumulator()
    for event in events:
        accumulator.add(event)
    assert accumulator.response().parts


async def test_streamed_tool_call_decodes(upstream: MockUpstream) -> None:
    request = ir_from_json(
        {
            "_type": "ChatRequest",
            "model": "command-mock",
            "stream": True,
            "messages": [
                {
                    "_type": "Message",
                    "role": "user",
                    "parts": [{"_type": "TextPart", "text": "weather [[mock:tool]]"}],
                }
            ],
            "tools": [
                {
                    "_type": "ToolSpec",
                    "name": "get_weather",
                    "parameters": TOOL["function"]["parameters"],
                }
            ],
        }
    )
    sent = PROVIDER.build_chat_request(request, Target(upstream.base_url, "mock-key", "command"))
    status, body = await _send(sent)
    assert status == 200, body
    decoder = PROVIDER.chat_stream_decoder(request)
    events = [e for i in range(0, len(body), 7) for e in decoder.feed(body[i : i + 7])]
    events += decoder.finish()
    starts = [e for e in events if isinstance(e, ToolCallStart)]
    assert [s.name for s in starts] == ["get_weather"]
    accumulator = Accumulator()
    for event in events:
        accumulator.add(event)
    reply = accumulator.response()
    assert reply.finish_reason is FinishReason.TOOL_CALLS
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (2, 1)  # billed_units
