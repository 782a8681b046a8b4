"""The fake upstream's OpenAI surfaces, exercised with the official `openai` SDK as client."""

import base64
import struct
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import openai
import pytest

from switchgate import jsonutil
from switchgate.testing import MockConfig, MockUpstream, start_mock_upstream
from switchgate.testing.mock_upstream.assets import PNG

WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "metric": {"type": "boolean"},
            },
        },
    },
}
TIME_TOOL: Any = {"type": "function", "function": {"name": "get_time"}}


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[MockUpstream]:
    up = await start_mock_upstream(config=MockConfig(chunk_count=4))
    yield up
    await up.close()


@pytest.fixture
async def client(upstream: MockUpstream) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(
        base_url=upstream.base_url + "/v1", api_key="mock-key", max_retries=0
    ) as c:
        yield c


def user(text: str) -> list[Any]:
    return [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}]


async def test_chat_non_stream(client: openai.AsyncOpenAI) -> None:
    result = await client.chat.completions.create(model="gpt-x", messages=user("hi there"))
    assert result.choices[0].message.content == "Hello from mock! You said: hi there"
    assert result.choices[0].finish_reason == "stop"
    assert result.model == "gpt-x"
    assert result.usage is not None
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (4, 7)
    assert result.usage.total_tokens == 11


async def test_chat_stream_with_usage(client: openai.AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="m",
        messages=user("stream me"),
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[0].choices[0].delta.content == ""
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from mock! You said: stream me"
    content_chunks = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(content_chunks) == 4  # MockConfig.chunk_count
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 7


async def test_chat_stream_raw_shape(upstream: MockUpstream) -> None:
    body = {"model": "m", "messages": user("raw"), "stream": True}
    headers = {"Authorization": "Bearer mock-key"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(upstream.base_url + "/v1/chat/completions", json=body, headers=headers) as r,
    ):
        assert r.headers["Content-Type"].startswith("text/event-stream")
        raw = (await r.read()).decode()
    events = [e for e in raw.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    for event in events[:-1]:
        chunk = jsonutil.loads(event.removeprefix("data: "))
        assert chunk["object"] == "chat.completion.chunk"
        assert "usage" not in chunk  # only with include_usage


async def test_chat_stream_helper_accumulates_tool_calls(client: openai.AsyncOpenAI) -> None:
    async with client.chat.completions.stream(
        model="m",
        messages=user("weather? [[mock:tools=2]]"),
        tools=[WEATHER_TOOL, TIME_TOOL],
    ) as stream:
        final = await stream.get_final_completion()
    message = final.choices[0].message
    assert final.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None and len(message.tool_calls) == 2
    first, second = message.tool_calls
    assert first.function.name == "get_weather"  # not repeated by the accumulator
    assert jsonutil.loads(first.function.arguments) == {"city": "Oslo", "days": 1, "metric": True}
    assert second.function.name == "get_time"
    assert second.function.arguments == "{}"
    assert first.id.startswith("call_") and first.id != second.id


async def test_tool_choice_required_and_tool_result(client: openai.AsyncOpenAI) -> None:
    result = await client.chat.completions.create(
        model="m", messages=user("no directive"), tools=[WEATHER_TOOL], tool_choice="required"
    )
    calls = result.choices[0].message.tool_calls
    assert calls is not None and result.choices[0].message.content is None
    assert result.usage is not None and result.usage.completion_tokens == 1
    follow_up: list[Any] = [
        *user("no directive"),
        {"role": "assistant", "content": None, "tool_calls": [calls[0].model_dump()]},
        {"role": "tool", "tool_call_id": calls[0].id, "content": "Sunny, 20C"},
    ]
    again = await client.chat.completions.create(
        model="m", messages=follow_up, tools=[WEATHER_TOOL], tool_choice="required"
    )
    assert again.choices[0].message.content == "Tool result received: Sunny, 20C"


async def test_auto_tool_choice_without_directive_answers_text(client: openai.AsyncOpenAI) -> None:
    result = await client.chat.completions.create(
        model="m", messages=user("hello"), tools=[WEATHER_TOOL]
    )
    assert result.choices[0].message.tool_calls is None


async def test_reasoning_and_cached_usage(client: openai.AsyncOpenAI) -> None:
    result = await client.chat.completions.create(
        model="o-mock", messages=user("one two three four [[mock:cached]]"), reasoning_effort="low"
    )
    usage = result.usage
    assert usage is not None and usage.completion_tokens_details is not None
    assert usage.prompt_tokens_details is not None
    reasoning = usage.completion_tokens_details.reasoning_tokens
    assert reasoning is not None and reasoning > 0
    assert usage.completion_tokens > reasoning
    assert usage.prompt_tokens_details.cached_tokens == usage.prompt_tokens // 2
    extra = result.choices[0].message.model_extra or {}
    assert str(extra["reasoning_content"]).startswith("Let me think")


async def test_text_directive_and_max_tokens(client: openai.AsyncOpenAI) -> None:
    result = await client.chat.completions.create(
        model="m", messages=user("[[mock:text=one two three four]]"), max_completion_tokens=2
    )
    assert result.choices[0].message.content == "one two"
    assert result.choices[0].finish_reason == "length"


@pytest.mark.parametrize(
    ("code", "exc"),
    [
        (400, openai.BadRequestError),
        (404, openai.NotFoundError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
async def test_error_directive(client: openai.AsyncOpenAI, code: int, exc: type[Exception]) -> None:
    with pytest.raises(exc) as info:
        await client.chat.completions.create(model="m", messages=user(f"[[mock:error={code}]]"))
    assert isinstance(info.value, openai.APIStatusError)
    assert info.value.status_code == code
    if code == 429:
        assert info.value.response.headers["retry-after"] == "1"
        assert info.value.code == "rate_limit_exceeded"


async def test_auth_failure(upstream: MockUpstream) -> None:
    async with openai.AsyncOpenAI(
        base_url=upstream.base_url + "/v1", api_key="wrong", max_retries=0
    ) as bad:
        with pytest.raises(openai.AuthenticationError) as info:
            await bad.chat.completions.create(model="m", messages=user("hi"))
    assert info.value.code == "invalid_api_key"


async def test_midstream_error_raises(client: openai.AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="m", messages=user("[[mock:midstream_error]]"), stream=True
    )
    seen = 0
    with pytest.raises(openai.APIError):
        async for _ in stream:
            seen += 1
    assert seen >= 1


async def test_drop_after_cuts_connection(client: openai.AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="m", messages=user("[[mock:drop_after=2]]"), stream=True
    )
    seen = 0
    with pytest.raises(openai.APIConnectionError):
        async for _ in stream:
            seen += 1
    assert seen == 2


async def test_no_usage(client: openai.AsyncOpenAI) -> None:
    result = await client.chat.completions.create(model="m", messages=user("[[mock:no_usage]]"))
    assert result.usage is None


async def test_legacy_completions(client: openai.AsyncOpenAI) -> None:
    result = await client.completions.create(model="m", prompt="say hi")
    assert result.choices[0].text == "Hello from mock! You said: say hi"
    assert result.usage is not None and result.usage.prompt_tokens == 2
    stream = await client.completions.create(model="m", prompt="say hi", stream=True)
    text = "".join([c.choices[0].text async for c in stream])
    assert text == "Hello from mock! You said: say hi"


async def test_models(client: openai.AsyncOpenAI) -> None:
    models = [m.id async for m in client.models.list()]
    assert "gpt-4o" in models
    assert (await client.models.retrieve("anything")).id == "anything"


async def test_embeddings_float_and_base64(client: openai.AsyncOpenAI) -> None:
    floats = await client.embeddings.create(
        model="text-embedding-3-small", input=["alpha", "beta"], encoding_format="float"
    )
    default = await client.embeddings.create(model="text-embedding-3-small", input=["alpha", "b"])
    assert [d.index for d in floats.data] == [0, 1]
    assert len(floats.data[0].embedding) == 1536
    assert default.data[0].embedding == floats.data[0].embedding  # SDK asked for base64
    assert default.data[1].embedding != floats.data[1].embedding
    norm = sum(x * x for x in floats.data[0].embedding)
    assert abs(norm - 1) < 1e-5
    small = await client.embeddings.create(model="m", input=[1, 2, 3], dimensions=8)
    assert len(small.data[0].embedding) == 8 and small.usage.prompt_tokens == 3


async def test_embeddings_base64_is_little_endian_float32(upstream: MockUpstream) -> None:
    body = {"model": "m", "input": "alpha", "encoding_format": "base64", "dimensions": 4}
    async with (
        aiohttp.ClientSession(headers={"Authorization": "Bearer mock-key"}) as session,
        session.post(upstream.base_url + "/v1/embeddings", json=body) as r,
    ):
        data = (await r.json())["data"][0]["embedding"]
    body["encoding_format"] = "float"
    async with (
        aiohttp.ClientSession(headers={"Authorization": "Bearer mock-key"}) as session,
        session.post(upstream.base_url + "/v1/embeddings", json=body) as r,
    ):
        floats = (await r.json())["data"][0]["embedding"]
    assert list(struct.unpack("<4f", base64.b64decode(data))) == floats


async def test_images_b64_and_url(client: openai.AsyncOpenAI, upstream: MockUpstream) -> None:
    generated = await client.images.generate(model="gpt-image-1", prompt="a cat", n=2)
    assert generated.data is not None and len(generated.data) == 2
    png = base64.b64decode(generated.data[0].b64_json or "")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert generated.usage is not None and generated.usage.input_tokens == 2
    legacy = await client.images.generate(model="dall-e-3", prompt="a dog", response_format="url")
    assert legacy.data is not None and legacy.data[0].url is not None
    assert legacy.data[0].url.startswith(upstream.base_url + "/files/")
    async with aiohttp.ClientSession() as session, session.get(legacy.data[0].url) as r:
        assert r.headers["Content-Type"] == "image/png"
        assert (await r.read()) == png


async def test_image_edit_multipart(client: openai.AsyncOpenAI, upstream: MockUpstream) -> None:
    generated = await client.images.generate(model="gpt-image-1", prompt="x")
    assert generated.data is not None
    png = base64.b64decode(generated.data[0].b64_json or "")
    upstream.clear_requests()
    edited = await client.images.edit(
        model="gpt-image-1",
        image=[("a.png", png, "image/png"), ("b.png", png, "image/png")],
        mask=("m.png", png, "image/png"),
        prompt="add a hat",
    )
    assert edited.data is not None and edited.data[0].b64_json
    assert upstream.requests[-1]["path"] == "/v1/images/edits"
    assert upstream.requests[-1]["body_size"] > len(png) * 3


async def test_speech_streams_audio(client: openai.AsyncOpenAI) -> None:
    async with client.audio.speech.with_streaming_response.create(
        model="tts-1", voice="alloy", input="hello world", response_format="wav"
    ) as response:
        assert response.headers["content-type"] == "audio/wav"
        pieces = [piece async for piece in response.iter_bytes()]
    audio = b"".join(pieces)
    assert audio[:4] == b"RIFF" and audio[8:12] == b"WAVE"
    mp3 = await client.audio.speech.create(model="tts-1", voice="alloy", input="hi")
    assert mp3.response.headers["content-type"] == "audio/mpeg"
    assert len(mp3.content) > 400


async def test_transcriptions(client: openai.AsyncOpenAI) -> None:
    rate = 16_000
    wav = (
        b"RIFF"
        + struct.pack("<I", 36 + rate * 2)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
        + b"data"
        + struct.pack("<I", rate * 2)
        + bytes(rate * 2)
    )  # one second of silence
    upload = ("clip.wav", wav, "audio/wav")
    result = await client.audio.transcriptions.create(model="whisper-1", file=upload)
    assert result.text == f"Mock transcription of clip.wav, {len(wav)} bytes."
    usage: Any = result.usage
    assert usage.type == "duration" and usage.seconds == 1.0
    srt = await client.audio.transcriptions.create(
        model="whisper-1", file=upload, response_format="srt"
    )
    assert "00:00:00,000 --> 00:00:01,000" in str(srt)
    verbose = await client.audio.transcriptions.create(
        model="whisper-1",
        file=upload,
        response_format="verbose_json",
        timestamp_granularities=["word"],
    )
    assert verbose.duration == 1.0 and verbose.words is not None and len(verbose.words) == 6
    text = await client.audio.transcriptions.create(
        model="whisper-1", file=upload, response_format="text"
    )
    assert str(text).startswith("Mock transcription")


async def test_rerank(upstream: MockUpstream) -> None:
    body = {
        "model": "rerank-x",
        "query": "red apple pie",
        "documents": ["blue sky", {"text": "apple pie recipe"}, "red apple"],
        "top_n": 2,
        "return_documents": True,
    }
    headers = {"Authorization": "Bearer mock-key"}
    async with (
        aiohttp.ClientSession() as session,
        session.post(upstream.base_url + "/v1/rerank", json=body, headers=headers) as r,
    ):
        result = await r.json()
    assert [x["index"] for x in result["results"]] == [1, 2]
    assert result["results"][0]["document"] == {"text": "apple pie recipe"}
    assert result["results"][0]["relevance_score"] == pytest.approx(2 / 3, abs=1e-5)


async def test_responses_non_stream(client: openai.AsyncOpenAI) -> None:
    response = await client.responses.create(model="gpt-x", input="hi there", instructions="Be")
    assert response.output_text == "Hello from mock! You said: hi there"
    assert response.usage is not None and response.usage.input_tokens == 3
    assert response.status == "completed"


async def test_responses_stream_with_tools_and_reasoning(client: openai.AsyncOpenAI) -> None:
    tool: Any = {
        "type": "function",
        "name": "get_weather",
        "strict": False,
        "parameters": WEATHER_TOOL["function"]["parameters"],
    }
    async with client.responses.stream(
        model="gpt-x",
        input=[{"role": "user", "content": "weather [[mock:tool]]"}],
        tools=[tool],
        reasoning={"effort": "low", "summary": "auto"},
    ) as stream:
        kinds = [event.type async for event in stream]
        final = await stream.get_final_response()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.reasoning_summary_text.delta" in kinds
    assert "response.function_call_arguments.delta" in kinds
    calls = [item for item in final.output if item.type == "function_call"]
    assert len(calls) == 1 and jsonutil.loads(calls[0].arguments)["city"] == "Oslo"
    assert final.usage is not None and final.usage.output_tokens_details.reasoning_tokens > 0


async def test_responses_stream_text(client: openai.AsyncOpenAI) -> None:
    async with client.responses.stream(model="gpt-x", input="stream it") as stream:
        deltas = [e.delta async for e in stream if e.type == "response.output_text.delta"]
        final = await stream.get_final_response()
    assert "".join(deltas) == final.output_text == "Hello from mock! You said: stream it"


async def test_realtime_text_and_usage(client: openai.AsyncOpenAI) -> None:
    async with client.realtime.connect(model="gpt-realtime") as conn:
        created = await conn.recv()
        assert created.type == "session.created"
        await conn.conversation.item.create(
            item={
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "hello realtime"}],
            }
        )
        await conn.response.create()
        deltas: list[str] = []
        async for event in conn:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            if event.type == "response.done":
                usage = event.response.usage
                break
    assert "".join(deltas) == "Hello from mock! You said: hello realtime"
    assert usage is not None and usage.output_tokens == 7 and usage.input_tokens == 2


async def test_realtime_rejects_bad_key(upstream: MockUpstream) -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.WSServerHandshakeError) as info:
            await session.ws_connect(
                upstream.base_url + "/v1/realtime?model=m",
                headers={"Authorization": "Bearer nope"},
            )
    assert info.value.status == 401


async def test_transcription_stream(client: openai.AsyncOpenAI) -> None:
    stream = await client.audio.transcriptions.create(
        model="gpt-4o-transcribe", file=("a.mp3", b"\xff\xfb" * 800, "audio/mpeg"), stream=True
    )
    events = [event async for event in stream]
    deltas = "".join(e.delta for e in events if e.type == "transcript.text.delta")
    done = events[-1]
    assert done.type == "transcript.text.done"
    assert deltas == done.text == "Mock transcription of a.mp3, 1600 bytes."
    assert done.usage is not None and done.usage.type == "tokens"


async def test_image_streams_send_partial_images_then_the_image(
    client: openai.AsyncOpenAI,
) -> None:
    generated = await client.images.generate(
        model="gpt-image-1", prompt="a fox", stream=True, partial_images=2
    )
    events = [event async for event in generated]
    kinds = [e.type for e in events]
    assert kinds == ["image_generation.partial_image"] * 2 + ["image_generation.completed"]
    done = events[-1]
    assert done.type == "image_generation.completed" and done.b64_json
    assert done.usage.output_tokens == 100 + 2 * 100  # the image and its partial images
    edited = await client.images.edit(
        model="gpt-image-1", image=("a.png", PNG, "image/png"), prompt="a hat", stream=True
    )
    assert [e.type async for e in edited] == ["image_edit.completed"]  # no partials asked


async def test_speech_sse(upstream: MockUpstream) -> None:
    body = {"model": "gpt-4o-mini-tts", "input": "hi", "voice": "alloy", "stream_format": "sse"}
    async with (
        aiohttp.ClientSession(headers={"Authorization": "Bearer mock-key"}) as session,
        session.post(upstream.base_url + "/v1/audio/speech", json=body) as r,
    ):
        raw = (await r.read()).decode()
    events = [jsonutil.loads(e.removeprefix("data: ")) for e in raw.split("\n\n") if e]
    assert {e["type"] for e in events[:-1]} == {"speech.audio.delta"}
    assert events[-1]["type"] == "speech.audio.done" and events[-1]["usage"]["input_tokens"] == 1
    audio = b"".join(base64.b64decode(e["audio"]) for e in events[:-1])
    assert audio.startswith(b"ID3")


async def test_chat_n_choices_stream_interleaves(upstream: MockUpstream) -> None:
    body = {"model": "m", "messages": user("two [[mock:chunks=2]]"), "stream": True, "n": 2}
    async with (
        aiohttp.ClientSession(headers={"Authorization": "Bearer mock-key"}) as session,
        session.post(upstream.base_url + "/v1/chat/completions", json=body) as r,
    ):
        raw = (await r.read()).decode()
    chunks = [jsonutil.loads(e[6:]) for e in raw.split("\n\n") if e and e != "data: [DONE]"]
    assert [c["choices"][0]["index"] for c in chunks] == [0, 1] * 4


async def test_realtime_beta_names_and_tool_call(upstream: MockUpstream) -> None:
    headers = {"Authorization": "Bearer mock-key", "OpenAI-Beta": "realtime=v1"}
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(upstream.base_url + "/v1/realtime?model=m", headers=headers) as ws,
    ):
        assert (await ws.receive_json())["type"] == "session.created"
        tool = {
            "type": "function",
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        }
        await ws.send_json({"type": "session.update", "session": {"tools": [tool]}})
        assert (await ws.receive_json())["type"] == "session.updated"
        item = {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "find [[mock:tool]]"}],
        }
        await ws.send_json({"type": "conversation.item.create", "item": item})
        assert (await ws.receive_json())["type"] == "conversation.item.created"
        await ws.send_json({"type": "input_audio_buffer.append", "audio": "AAAA" * 4800})
        await ws.send_json({"type": "response.create"})
        kinds: list[str] = []
        while not kinds or kinds[-1] != "response.done":
            event = await ws.receive_json()
            kinds.append(event["type"])
    assert "response.function_call_arguments.delta" in kinds
    done = event["response"]
    assert done["output"][0]["type"] == "function_call"
    assert done["output"][0]["arguments"] == '{"q":"Oslo"}'
    assert done["usage"]["input_token_details"]["audio_tokens"] == 3


async def _commit_and_collect(ws: aiohttp.ClientWebSocketResponse, pcm: bytes) -> list[Any]:
    await ws.send_json(
        {"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()}
    )
    await ws.send_json({"type": "input_audio_buffer.commit"})
    events: list[Any] = []
    while (
        not events or events[-1]["type"] != "conversation.item.input_audio_transcription.completed"
    ):
        events.append(await ws.receive_json())
    return events


async def _commit_and_collect_none(ws: aiohttp.ClientWebSocketResponse) -> list[str]:
    """Transcription off: a commit answers committed and the item events only."""
    await ws.send_json({"type": "input_audio_buffer.commit"})
    kinds = [(await ws.receive_json())["type"]]
    while kinds[-1] not in ("conversation.item.done", "conversation.item.created"):
        kinds.append((await ws.receive_json())["type"])
    return kinds


@pytest.mark.parametrize(
    ("beta", "session", "usage"),
    [
        (
            True,
            {"input_audio_transcription": {"model": "whisper-1"}},
            {"type": "duration", "seconds": 1.5},
        ),
        (
            False,
            {
                "type": "realtime",
                "audio": {"input": {"transcription": {"model": "gpt-4o-transcribe"}}},
            },
            {
                "type": "tokens",
                "input_tokens": 15,
                "input_token_details": {"text_tokens": 0, "audio_tokens": 15},
                "output_tokens": 7,
                "total_tokens": 22,
            },
        ),
    ],
)
async def test_realtime_input_transcription_with_usage(
    upstream: MockUpstream, beta: bool, session: dict[str, Any], usage: dict[str, Any]
) -> None:
    headers = {"Authorization": "Bearer mock-key"} | (
        {"OpenAI-Beta": "realtime=v1"} if beta else {}
    )
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(upstream.base_url + "/v1/realtime?model=m", headers=headers) as ws,
    ):
        assert (await ws.receive_json())["type"] == "session.created"
        untranscribed = await _commit_and_collect_none(ws)
        assert "conversation.item.input_audio_transcription.completed" not in untranscribed
        await ws.send_json({"type": "session.update", "session": session})
        assert (await ws.receive_json())["type"] == "session.updated"
        events = await _commit_and_collect(ws, bytes(72_000))  # 1.5 s of 24 kHz pcm16
    kinds = [e["type"] for e in events]
    assert kinds[0] == "input_audio_buffer.committed"
    assert "conversation.item.input_audio_transcription.delta" in kinds
    done = events[-1]
    assert done["item_id"] == events[0]["item_id"] and done["content_index"] == 0
    assert done["transcript"] == "Mock transcript of 1.5 seconds of audio."
    assert done["usage"] == usage
