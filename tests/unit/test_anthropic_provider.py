"""Golden tests for the Anthropic provider (tests/golden/anthropic_provider/*.json).

Fixture kinds, by file-name prefix:
  request_*      input {"request": IR, "target"}          -> expected {"upstream": ...} or {"error"}
  passthrough_*  input {"body", "target", "headers"}      -> expected upstream request
  response_*     input {"body"} or {"raw"}                -> expected {"response" | "error",
                                                              "usage_from_body"}
  stream_*       input {"sse": [lines], "crlf"?, "unterminated"?}
                                                          -> expected {"events", "meter_usage",
                                                              "meter_text"}
  classify_*     input {"status", "body"}                 -> expected GatewayError
"""

import random
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from pydantic import TypeAdapter

from switchgate import jsonutil
from switchgate.core.accumulate import Accumulator
from switchgate.core.events import Finish, StreamError, StreamEvent
from switchgate.dialects.anthropic_messages import AnthropicStreamEncoder
from switchgate.errors import GatewayError
from switchgate.providers.anthropic import AnthropicProvider, messages_url
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import ChatProvider
from tests.unit.test_anthropic_dialect import (
    error_json,
    ir_from_json,
    ir_to_json,
    load_cases,
    parse_sse,
)

CASES = Path(__file__).resolve().parent.parent / "golden" / "anthropic_provider"
PROVIDER = AnthropicProvider()
REQUEST: Any = ir_from_json({"_type": "ChatRequest", "model": "alias", "messages": []})
CREATE_PARAMS: Any = TypeAdapter(MessageCreateParamsNonStreaming)
STREAM_EVENT: Any = TypeAdapter(RawMessageStreamEvent)


def _deep(value: Any) -> Any:
    """Materialise pydantic's lazy validators (Iterable fields) so every item is checked."""
    if isinstance(value, dict):
        return {k: _deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [_deep(v) for v in value]
    return value


def _upstream_json(upstream: UpstreamRequest) -> dict[str, Any]:
    body = jsonutil.loads(upstream.body)
    return {
        "method": upstream.method,
        "url": upstream.url,
        "headers": upstream.headers,
        "body": body,
    }


def _sse_bytes(given: dict[str, Any]) -> bytes:
    sep = "\r\n" if given.get("crlf") else "\n"
    return (sep.join(given["sse"]) + ("" if given.get("unterminated") else sep)).encode()


def _split(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), k=min(len(data) - 1, rng.randint(1, 40))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def test_is_a_chat_provider() -> None:
    provider: ChatProvider = PROVIDER
    assert (provider.kind, provider.dialect) == ("anthropic", "anthropic")


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("https://api.anthropic.com", "https://api.anthropic.com/v1/messages"),
        ("https://api.anthropic.com/", "https://api.anthropic.com/v1/messages"),
        (
            "https://proxy.example.com/anthropic/v1",
            "https://proxy.example.com/anthropic/v1/messages",
        ),
        (
            "https://proxy.example.com/anthropic/v1//",
            "https://proxy.example.com/anthropic/v1/messages",
        ),
    ],
)
def test_messages_url(base: str, url: str) -> None:
    assert messages_url(base) == url


# --- requests --------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "request"))
def test_build_chat_request(case: dict[str, Any]) -> None:
    request, target = ir_from_json(case["input"]["request"]), Target(**case["input"]["target"])
    if "error" in case["expected"]:
        with pytest.raises(GatewayError) as info:
            PROVIDER.build_chat_request(request, target)
        assert error_json(info.value) == case["expected"]["error"]
        return
    upstream = PROVIDER.build_chat_request(request, target)
    assert _upstream_json(upstream) == case["expected"]["upstream"]
    _deep(CREATE_PARAMS.validate_python({**jsonutil.loads(upstream.body), "stream": False}))


def test_sdk_validation_catches_a_bad_body() -> None:
    """The request validation above can fail: an unsigned thinking block is rejected."""
    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}]}],
    }
    with pytest.raises(ValueError):
        _deep(CREATE_PARAMS.validate_python(body))


@pytest.mark.parametrize("case", load_cases(CASES, "passthrough"))
def test_build_passthrough(case: dict[str, Any]) -> None:
    given = case["input"]
    upstream = PROVIDER.build_passthrough(
        given["body"], Target(**given["target"]), given["headers"]
    )
    assert _upstream_json(upstream) == case["expected"]
    assert given["body"]["model"] == "alias"  # the client's body is not mutated


# --- responses -------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "response"))
def test_parse_chat_response(case: dict[str, Any]) -> None:
    given, expected = case["input"], case["expected"]
    raw = given["raw"].encode() if "raw" in given else jsonutil.dumps(given["body"])
    if "response" in expected:
        Message.model_validate_json(raw)  # the fixture is a real Anthropic response
        assert ir_to_json(PROVIDER.parse_chat_response(raw, REQUEST)) == expected["response"]
    else:
        with pytest.raises(GatewayError) as info:
            PROVIDER.parse_chat_response(raw, REQUEST)
        assert error_json(info.value) == expected["error"]
    assert ir_to_json(PROVIDER.usage_from_body(raw)) == expected["usage_from_body"]


# --- streams ---------------------------------------------------------------------------


def _decode(chunks: list[bytes]) -> list[StreamEvent]:
    decoder = PROVIDER.chat_stream_decoder(REQUEST)
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.finish()


@pytest.mark.parametrize("case", load_cases(CASES, "stream"))
def test_stream_decoder(case: dict[str, Any]) -> None:
    data = _sse_bytes(case["input"])
    for event in parse_sse(data + (b"\n\n" if case["input"].get("unterminated") else b"")):
        if event["event"] not in ("ping", "error"):
            STREAM_EVENT.validate_python(event["data"])  # the fixture is a real stream
    expected = case["expected"]["events"]
    assert ir_to_json(_decode([data])) == expected
    assert ir_to_json(_decode([data[i : i + 1] for i in range(len(data))])) == expected
    for seed in range(20):
        assert ir_to_json(_decode(_split(data, random.Random(seed)))) == expected, seed


@pytest.mark.parametrize("case", load_cases(CASES, "stream"))
def test_usage_meter(case: dict[str, Any]) -> None:
    data = _sse_bytes(case["input"])
    for seed in range(5):
        meter = PROVIDER.usage_meter()
        for chunk in _split(data, random.Random(seed)):
            meter.feed(chunk)
        assert ir_to_json(meter.usage()) == case["expected"]["meter_usage"]
        assert meter.output_text() == case["expected"]["meter_text"]


@pytest.mark.parametrize("case", load_cases(CASES, "stream"))
def test_stream_round_trip_through_the_dialect(case: dict[str, Any]) -> None:
    """A stream -> IR -> A stream: the SDK accumulates the same content and stop reason."""
    data = _sse_bytes(case["input"])
    events = _decode([data])
    if any(isinstance(e, StreamError) for e in events):
        return
    encoder = AnthropicStreamEncoder(REQUEST)
    again = b"".join(encoder.encode(e) for e in events) + encoder.close()

    def accumulate(raw: bytes) -> dict[str, Any]:
        snapshot, bufs = None, {}
        for item in parse_sse(raw):
            if item["event"] != "ping":
                event = STREAM_EVENT.validate_python(item["data"])
                snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=bufs)
        assert snapshot is not None
        return snapshot.to_dict(exclude_none=True)

    ending = b"\n\n" if case["input"].get("unterminated") else b""
    original, rebuilt = accumulate(data + ending), accumulate(again)
    keep = ("text", "thinking", "redacted_thinking", "tool_use")
    original["content"] = [b for b in original["content"] if b["type"] in keep]
    for block in original["content"]:
        block.pop("citations", None)
    assert rebuilt["content"] == original["content"]
    for key in ("id", "stop_reason", "stop_sequence"):
        assert rebuilt.get(key) == original.get(key), key
    for key in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        assert rebuilt["usage"].get(key, 0) == original["usage"].get(key, 0), key
    # The IR folds into the response the non-stream path would give, with the same finish.
    accumulator = Accumulator()
    for event in events:
        accumulator.add(event)
    finishes = [e.reason for e in events if isinstance(e, Finish)]
    assert accumulator.response().finish_reason == finishes[-1]


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "classify"))
def test_classify_error(case: dict[str, Any]) -> None:
    given = case["input"]
    body = given["body"] if isinstance(given["body"], str) else jsonutil.dumps_str(given["body"])
    err = PROVIDER.classify_error(given["status"], body.encode())
    assert error_json(err) == case["expected"]
    assert "sk-ant" not in err.message and "https://" not in err.message
