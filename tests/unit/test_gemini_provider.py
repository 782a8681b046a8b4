"""The Gemini provider adapter beyond its golden cases (request building, passthrough,
responses, streams, errors), which tests/unit/test_provider_conformance.py runs from
tests/golden/gemini_provider/: replay / round-trip properties, embeddings, reframing."""

import itertools
import random
from typing import Any

import pytest

from switchgate import jsonutil
from switchgate.core.accumulate import Accumulator
from switchgate.core.content import TextPart, ToolCallPart, ToolResultPart
from switchgate.core.events import StreamError, StreamEvent
from switchgate.core.request import ChatRequest, Message
from switchgate.core.response import FinishReason
from switchgate.core.usage import Usage
from switchgate.dialects.gemini_generate import gemini_to_core_request
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import ChatProvider
from switchgate.providers.gemini import GeminiProvider, build_gemini_body
from switchgate.providers.gemini_embed import build_embed_request, parse_embed_response
from switchgate.providers.gemini_stream import GeminiSseToArray
from tests.unit.gemini_golden_support import cases, from_json, load, to_json

AREA = "gemini_provider"
PROVIDER = GeminiProvider()


def _error_json(err: GatewayError) -> dict[str, Any]:
    return {"error": to_json(err)}


def _target(data: dict[str, Any]) -> Target:
    target: Target = from_json(Target, data)
    return target


def _upstream_json(up: UpstreamRequest) -> dict[str, Any]:
    return {
        "method": up.method,
        "url": up.url,
        "headers": up.headers,
        "body": jsonutil.loads(up.body),
    }


def _raw(body: Any) -> bytes:
    return body.encode() if isinstance(body, str) else jsonutil.dumps(body)


def test_protocol_conformance() -> None:
    provider: ChatProvider = PROVIDER
    assert provider.kind == "gemini" and provider.dialect == "gemini"


# ---------------------------------------------------------------- building requests


def test_build_round_trips_a_gemini_request() -> None:
    """G body -> IR -> G body gives the same request back (modulo synthesised ids)."""
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Checking", "thoughtSignature": "VA=="},
                    {
                        "functionCall": {"name": "w", "args": {"c": "P"}, "id": "a1"},
                        "thoughtSignature": "Uw==",
                    },
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "w", "response": {"output": "sun"}, "id": "a1"}}
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "sys"}]},
        "tools": [
            {"functionDeclarations": [{"name": "w", "parametersJsonSchema": {"type": "object"}}]},
            {"googleSearch": {}},
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["w"]}},
        "generationConfig": {
            "temperature": 0.5,
            "maxOutputTokens": 99,
            "responseMimeType": "application/json",
            "thinkingConfig": {"thinkingBudget": 0},
            "responseLogprobs": True,
        },
        "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "OFF"}],
    }
    rebuilt = build_gemini_body(gemini_to_core_request(body, "gemini-2.5-flash"))
    assert rebuilt == body


# ---------------------------------------------------------------- passthrough


def test_passthrough_rejects_odd_actions() -> None:
    target = Target("https://g.example", "k", "m")
    with pytest.raises(GatewayError):
        PROVIDER.build_passthrough({}, target, {":action": "generateContent?key=x"})


# ---------------------------------------------------------------- parsing responses


def test_synthesised_ids_are_stable_and_distinct() -> None:
    body = _raw(load(cases(AREA, "response_function_calls")[0])["input"]["body"])
    request = ChatRequest(model="m", messages=())
    first = PROVIDER.parse_chat_response(body, request)
    again = PROVIDER.parse_chat_response(body, request)
    calls = [p for p in first.parts if isinstance(p, ToolCallPart)]
    assert first == again
    assert len({c.id for c in calls}) == len(calls)
    for call in calls:
        assert call.id == "fc-given" or (call.id.startswith("call_") and len(call.id) == 29)
    other = jsonutil.loads(body)
    other["responseId"] = "another-response"
    moved = PROVIDER.parse_chat_response(jsonutil.dumps(other), request)
    assert next(p.id for p in moved.parts if isinstance(p, ToolCallPart)) != calls[0].id


def test_usage_from_body() -> None:
    body = {
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 4,
            "thoughtsTokenCount": 6,
        }
    }
    assert PROVIDER.usage_from_body(jsonutil.dumps(body)) == Usage(10, 10, reasoning_tokens=6)
    array = [{"candidates": []}, body, {"candidates": []}]
    assert PROVIDER.usage_from_body(jsonutil.dumps(array)) == Usage(10, 10, reasoning_tokens=6)
    assert PROVIDER.usage_from_body(b"{}") is None
    assert PROVIDER.usage_from_body(b"garbage") is None


# ---------------------------------------------------------------- streams


def _decode(request: ChatRequest, pieces: list[bytes]) -> list[StreamEvent]:
    decoder = PROVIDER.chat_stream_decoder(request)
    events: list[StreamEvent] = []
    for piece in pieces:
        events += decoder.feed(piece)
    return events + decoder.finish()


def _splits(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = (
        sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 40))))
        if len(data) > 1
        else []
    )
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def test_stream_and_whole_response_agree() -> None:
    """Accumulating the decoded stream equals parsing the same content as one response."""
    request = ChatRequest(model="m", messages=())
    stream = load(cases(AREA, "stream_tools_crlf")[0])["input"]["sse"].encode()
    accumulator = Accumulator()
    for event in _decode(request, [stream]):
        accumulator.add(event)
    streamed = accumulator.response()
    chunks = [
        jsonutil.loads(line[6:])
        for line in stream.decode().splitlines()
        if line.startswith("data: ")
    ]
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    whole = dict(
        chunks[-1],
        candidates=[{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
    )
    parsed = PROVIDER.parse_chat_response(jsonutil.dumps(whole), request)
    assert streamed.parts == parsed.parts
    assert streamed.finish_reason == parsed.finish_reason == FinishReason.TOOL_CALLS
    assert streamed.usage == parsed.usage and streamed.id == parsed.id


def test_usage_meter_reads_passthrough_stream() -> None:
    data = load(cases(AREA, "stream_tools_crlf")[0])["input"]["sse"].encode()
    meter = PROVIDER.usage_meter()
    for i in range(0, len(data), 7):
        meter.feed(data[i : i + 7])
    assert meter.usage() == Usage(30, 30, reasoning_tokens=5)
    assert (
        meter.output_text()
        == 'Planningget_weather{"city":"Paris"}get_weather{"city":"Rome"}get_time{"tz":"CET"}'
    )


def test_sse_to_array_reframer() -> None:
    reframer = GeminiSseToArray()
    data = b'data: {"a":1}\r\n\r\n: ping\n\ndata: {"b":2}\n\ndata: {"c":3}'
    out = (
        b"".join(reframer.feed(data[i : i + 3]) for i in range(0, len(data), 3)) + reframer.close()
    )
    assert out == b'[{"a":1},\r\n{"b":2},\r\n{"c":3}]'
    assert jsonutil.loads(out) == [{"a": 1}, {"b": 2}, {"c": 3}]
    assert GeminiSseToArray().close() == b"[]"


def test_stream_error_event_is_last() -> None:
    data = load(cases(AREA, "stream_error")[0])["input"]["sse"].encode()
    events = _decode(ChatRequest(model="m", messages=()), [data])
    assert isinstance(events[-1], StreamError)
    assert events[-1].error.kind is ErrorKind.UPSTREAM_OVERLOADED


# ---------------------------------------------------------------- errors


def test_classified_errors_keep_no_keys_or_hosts() -> None:
    for path in cases(AREA, "classify_"):
        item = load(path)["input"]
        message = PROVIDER.classify_error(item["status"], _raw(item["body"])).message
        assert "AIza" not in message and "ya29" not in message
        assert "internal-proxy" not in message


# ---------------------------------------------------------------- embeddings


def test_embeddings() -> None:
    target = Target("https://generativelanguage.googleapis.com/", "secret", "gemini-embedding-001")
    upstream = build_embed_request(["a", "b"], target, dimensions=256, task_type="RETRIEVAL_QUERY")
    assert upstream.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents"
    )
    assert upstream.headers["x-goog-api-key"] == "secret" and "secret" not in upstream.url
    assert jsonutil.loads(upstream.body) == {
        "requests": [
            {
                "model": "models/gemini-embedding-001",
                "content": {"parts": [{"text": text}]},
                "taskType": "RETRIEVAL_QUERY",
                "outputDimensionality": 256,
            }
            for text in ("a", "b")
        ]
    }
    plain = jsonutil.loads(build_embed_request(["x"], target).body)
    assert plain == {
        "requests": [
            {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "x"}]}}
        ]
    }
    body = b'{"embeddings": [{"values": [0.1, -2, 3]}, {"values": []}]}'
    assert parse_embed_response(body) == [[0.1, -2.0, 3.0], []]
    with pytest.raises(GatewayError):
        parse_embed_response(b'{"embedding": {"values": [1]}}')
    with pytest.raises(GatewayError):
        build_embed_request([], target)


def test_tool_results_without_a_call_fail_clearly() -> None:
    request = ChatRequest(
        model="m", messages=(Message("user", (ToolResultPart("nope", (TextPart("x"),)),)),)
    )
    with pytest.raises(GatewayError) as info:
        build_gemini_body(request)
    assert info.value.kind is ErrorKind.INVALID_REQUEST
