"""The fake upstream's pure reply logic, directives, control endpoints and server handle."""

import asyncio
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from switchgate.testing import MockConfig, MockUpstream, create_app, start_mock_upstream
from switchgate.testing.mock_upstream import parse_directives
from switchgate.testing.mock_upstream.assets import embed_vector, wav_duration, wav_header
from switchgate.testing.mock_upstream.reply import (
    Ask,
    first_words,
    plan_reply,
    sample_args,
    split_text,
)

OPENAI_AUTH = {"Authorization": "Bearer mock-key"}


@pytest.fixture
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream(config=MockConfig(record=3))
    yield up
    await up.close()


def chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


# --- pure logic -------------------------------------------------------------------------------


def test_parse_directives() -> None:
    d = parse_directives(
        "x [[mock:error=429]] [[mock:latency=5]] [[mock:chunks=3]] [[mock:interval=2.5]]"
        " [[mock:drop_after=4]] [[mock:no_usage]] [[mock:tools=2]] [[mock:cached]]"
        " [[mock:text=a ]b]]"
    )
    assert (d.error, d.latency_ms, d.chunks, d.interval_ms) == (429, 5.0, 3, 2.5)
    assert (d.drop_after, d.no_usage, d.tools, d.cached, d.text) == (4, True, 2, True, "a ]b")
    assert parse_directives("[[mock:midstream_error]]").midstream_error == 0
    assert parse_directives("[[mock:midstream_error=503]]").midstream_error == 503
    assert parse_directives("[[mock:error=abc]] [[mock:bogus]]").error is None
    assert parse_directives("[[mock:error=200]]").error is None  # not an error status
    assert parse_directives("plain text") == parse_directives("")


def test_split_text() -> None:
    assert split_text("abcdefg", 3) == ["abc", "de", "fg"]
    assert split_text("ab", 8) == ["a", "b"]
    assert split_text("", 4) == []
    assert "".join(split_text("Hello from mock!", 5)) == "Hello from mock!"


def test_first_words_keeps_spacing() -> None:
    assert first_words("one  two\nthree four", 2) == "one  two"
    assert first_words("one two", 5) == "one two"


def test_sample_args_from_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "n": {"type": "number"},
            "ok": {"type": "BOOLEAN"},
            "unit": {"enum": ["c", "f"]},
            "tags": {"type": "array", "items": {"type": "integer"}},
            "where": {"type": "object", "properties": {"lat": {"type": ["null", "number"]}}},
        },
    }
    assert sample_args(schema) == {
        "city": "Oslo",
        "n": 1,
        "ok": True,
        "unit": "c",
        "tags": [1],
        "where": {"lat": 1},
    }
    assert sample_args(None) == {}


def test_plan_token_counts() -> None:
    config = MockConfig()
    ask = Ask(last_user_text="hello world", prompt_words=5)
    plan = plan_reply(ask, parse_directives(ask.last_user_text), config)
    assert plan.text == "Hello from mock! You said: hello world"
    assert (plan.prompt_tokens, plan.completion_tokens, plan.cached_tokens) == (5, 7, 0)
    config.reply_text = "fixed reply"
    assert plan_reply(ask, parse_directives(""), config).text == "fixed reply"
    long = Ask(last_user_text="x" * 500)
    assert len(plan_reply(long, parse_directives(""), MockConfig()).text) == 27 + 200
    assert plan_reply(Ask(), parse_directives(""), MockConfig()).prompt_tokens == 1


def test_plan_tool_calls_are_deterministic() -> None:
    ask = Ask(
        last_user_text="[[mock:tools=3]]",
        tools=[("a", {"type": "object", "properties": {"q": {"type": "string"}}}), ("b", None)],
    )
    first = plan_reply(ask, parse_directives(ask.last_user_text), MockConfig())
    second = plan_reply(ask, parse_directives(ask.last_user_text), MockConfig())
    assert [c.name for c in first.tool_calls] == ["a", "b", "a"]
    assert [c.id for c in first.tool_calls] == [c.id for c in second.tool_calls]
    assert len({c.id for c in first.tool_calls}) == 3
    assert first.text == "" and first.completion_tokens == 3
    forced = Ask(last_user_text="", tools=ask.tools, tool_forced="b")
    assert plan_reply(forced, parse_directives(""), MockConfig()).tool_calls[0].name == "b"
    off = Ask(last_user_text="[[mock:tool]]", tools=ask.tools, tool_disabled=True)
    assert plan_reply(off, parse_directives(off.last_user_text), MockConfig()).tool_calls == []


def test_assets() -> None:
    assert wav_duration(wav_header(48_000) + bytes(48_000)) == 1.0
    assert wav_duration(b"ID3 not a wav") is None
    vector = embed_vector("x", 64)
    assert vector == embed_vector("x", 64) != embed_vector("y", 64)
    assert abs(sum(v * v for v in vector) - 1) < 1e-5


# --- server behaviour -------------------------------------------------------------------------


async def test_recorded_requests_are_redacted_and_bounded(upstream: MockUpstream) -> None:
    async with aiohttp.ClientSession() as session:
        for i in range(4):
            url = upstream.base_url + "/v1/chat/completions"
            async with session.post(url, json=chat(f"n{i}"), headers=OPENAI_AUTH) as r:
                assert r.status == 200
        url = upstream.base_url + "/v1beta/models/g:generateContent?key=mock-key"
        body = {"contents": [{"parts": [{"text": "hi"}]}]}
        async with session.post(url, json=body, headers={"x-goog-api-key": "other"}) as r:
            assert r.status == 400
        async with session.get(upstream.base_url + "/_mock/requests") as r:
            recorded = (await r.json())["requests"]
        assert len(recorded) == 3  # MockConfig.record
        assert recorded[0]["headers"]["authorization"] == "<redacted:valid>"
        assert recorded[1]["json"]["messages"][0]["content"] == "n3"
        gemini = recorded[2]
        assert gemini["query"] == {"key": "<redacted:valid>"}
        assert gemini["headers"]["x-goog-api-key"] == "<redacted>"
        assert gemini["body_size"] > 0
        assert upstream.requests == recorded
        async with session.delete(upstream.base_url + "/_mock/requests") as r:
            assert (await r.json())["cleared"] == 3
    assert upstream.requests == []


async def test_config_endpoint_updates_live_config(upstream: MockUpstream) -> None:
    async with aiohttp.ClientSession() as session:
        url = upstream.base_url + "/_mock/config"
        async with session.post(url, json={"reply_text": "Fixed.", "api_key": "k2"}) as r:
            assert r.status == 200
            assert (await r.json())["config"]["reply_text"] == "Fixed."
        async with session.post(url, json={"chunk_count": 0}) as r:
            assert r.status == 400
        async with session.post(url, json={"nope": 1}) as r:
            assert r.status == 400
        chat_url = upstream.base_url + "/v1/chat/completions"
        async with session.post(chat_url, json=chat("hi"), headers=OPENAI_AUTH) as r:
            assert r.status == 401
        headers = {"Authorization": "Bearer k2"}
        async with session.post(chat_url, json=chat("hi"), headers=headers) as r:
            assert (await r.json())["choices"][0]["message"]["content"] == "Fixed."
        async with session.get(upstream.base_url + "/healthz") as r:
            assert (await r.json()) == {"status": "ok"}
    assert upstream.config.api_key == "k2"


async def test_latency_and_interval_directives(upstream: MockUpstream) -> None:
    url = upstream.base_url + "/v1/chat/completions"
    async with aiohttp.ClientSession() as session:
        start = time.perf_counter()
        async with session.post(url, json=chat("[[mock:latency=60]]"), headers=OPENAI_AUTH) as r:
            await r.read()
        assert time.perf_counter() - start >= 0.06
        body = chat("[[mock:interval=30]] [[mock:chunks=3]]", stream=True)
        arrivals: list[float] = []
        async with session.post(url, json=body, headers=OPENAI_AUTH) as r:
            async for _ in r.content:
                arrivals.append(time.perf_counter())
    assert arrivals[-1] - arrivals[0] >= 0.1  # 5 events after the first, 30 ms apart


async def test_drop_after_in_every_dialect(upstream: MockUpstream) -> None:
    text = "[[mock:drop_after=2]]"
    cases = [
        (
            "/v1/messages",
            {
                "model": "c",
                "max_tokens": 9,
                "stream": True,
                "messages": [{"role": "user", "content": text}],
            },
            {"x-api-key": "mock-key", "anthropic-version": "2023-06-01"},
        ),
        (
            "/v1beta/models/g:streamGenerateContent?alt=sse",
            {"contents": [{"parts": [{"text": text}]}]},
            {"x-goog-api-key": "mock-key"},
        ),
        ("/v1/responses", {"model": "m", "input": text, "stream": True}, OPENAI_AUTH),
    ]
    async with aiohttp.ClientSession() as session:
        for path, body, headers in cases:
            async with session.post(upstream.base_url + path, json=body, headers=headers) as r:
                assert r.status == 200
                with pytest.raises(aiohttp.ClientPayloadError):
                    await r.read()


async def test_create_app_serves_without_start_helper() -> None:
    from aiohttp.test_utils import TestClient, TestServer

    async with TestClient(TestServer(create_app())) as client:
        r = await client.get("/healthz")
        assert r.status == 200


def test_run_prints_address_and_key() -> None:
    code = (
        "from switchgate.testing import run, MockConfig; "
        "run('127.0.0.1', 0, MockConfig(api_key='abc'))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    assert "http://127.0.0.1:" in line and "abc" in line


async def test_close_ends_open_realtime_socket() -> None:
    up = await start_mock_upstream()
    async with aiohttp.ClientSession() as session:
        ws = await session.ws_connect(up.base_url + "/v1/realtime?model=m", headers=OPENAI_AUTH)
        first = await ws.receive_json()
        assert first["type"] == "session.created"
        await asyncio.wait_for(up.close(), timeout=5)
        await ws.close()
