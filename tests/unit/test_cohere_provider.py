"""Golden tests for the Cohere provider (tests/golden/cohere_provider/*.json).

Fixture kinds, by file-name prefix:
  request_*         input {"request": IR, "target"}     -> expected {"upstream"} or {"error"}
  response_*        input {"body"} or {"raw"}           -> expected {"response" | "error",
                                                           "usage_from_body"}
  stream_*          input {"sse": [lines], "crlf"?, "unterminated"?} -> expected {"events"}
  classify_*        input {"status", "body"}            -> expected GatewayError
  embed_request_*   input {"texts", "dimensions", "target"} -> expected {"upstream"} or {"error"}
  embed_response_*  input {"body"} or {"raw"}           -> expected {"vectors", "input_tokens"}
                                                           or {"error"}

Every request body must pass both the official Cohere SDK's types and the fake
upstream's checks (switchgate/testing/mock_upstream/cohere_wire.py); every response and
stream fixture must parse with the SDK's types (it is a real Cohere shape).
"""

import random
from pathlib import Path
from typing import Any

import cohere
import pytest
from pydantic import TypeAdapter

from switchgate import jsonutil
from switchgate.core.accumulate import Accumulator
from switchgate.core.events import Finish, StreamError, StreamEvent
from switchgate.errors import GatewayError
from switchgate.providers.base import Target
from switchgate.providers.capabilities import (
    ChatProvider,
    EmbeddingsProvider,
    NativeDialect,
    OptionChecker,
    RerankProvider,
)
from switchgate.providers.cohere import CohereProvider
from switchgate.providers.cohere_response import usage_from_body
from switchgate.providers.registry import provider_kinds
from switchgate.testing.mock_upstream.cohere_wire import chat_violation, embed_violation
from tests.unit.test_anthropic_dialect import (
    error_json,
    ir_from_json,
    ir_to_json,
    load_cases,
    parse_sse,
)
from tests.unit.test_anthropic_provider import _split, _sse_bytes, _upstream_json

CASES = Path(__file__).resolve().parent.parent / "golden" / "cohere_provider"
PROVIDER = CohereProvider()
REQUEST: Any = ir_from_json({"_type": "ChatRequest", "model": "alias", "messages": []})
MESSAGES: Any = TypeAdapter(cohere.ChatMessages)
TOOLS: Any = TypeAdapter(list[cohere.ToolV2])
FORMAT: Any = TypeAdapter(cohere.ResponseFormatV2)
THINKING: Any = TypeAdapter(cohere.Thinking)
STREAM_EVENT: Any = TypeAdapter(cohere.V2ChatStreamResponse)
KEYS = (
    "co-test-key",
    "0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T",
    "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa1234",
)


def _sdk_valid(body: dict[str, Any]) -> None:
    """The body as the official SDK types it (each typed field validates)."""
    MESSAGES.validate_python(body["messages"])
    if "tools" in body:
        TOOLS.validate_python(body["tools"])
    if "response_format" in body:
        FORMAT.validate_python(body["response_format"])
    if "thinking" in body:
        THINKING.validate_python(body["thinking"])


def _decode(chunks: list[bytes]) -> list[StreamEvent]:
    decoder = PROVIDER.chat_stream_decoder(REQUEST)
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.finish()


def test_capabilities_and_registry() -> None:
    kind = provider_kinds()["cohere"]
    assert isinstance(kind.adapter, CohereProvider)
    assert kind.chat() is kind.adapter and kind.embeddings() is kind.adapter
    assert kind.rerank() is kind.adapter and kind.native() is None  # nothing passed through
    for capability in (ChatProvider, EmbeddingsProvider, RerankProvider):
        assert isinstance(PROVIDER, capability)
    assert not isinstance(PROVIDER, NativeDialect)
    assert kind.default_base_url == "https://api.cohere.com"


def test_channel_options_are_checked_through_the_registry() -> None:
    kind = provider_kinds()["cohere"]
    assert isinstance(PROVIDER, OptionChecker)
    for value in ("search_document", "search_query", "classification", "clustering"):
        kind.check_options({"input_type": value})
    kind.check_options({"other": "left alone"})
    with pytest.raises(ValueError, match="allowed: classification, clustering, search_doc"):
        kind.check_options({"input_type": "search"})
    provider_kinds()["openai"].check_options({"input_type": "anything"})  # not its option


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
    body = jsonutil.loads(upstream.body)
    _sdk_valid(body)
    assert chat_violation(body) is None


def test_sdk_and_fake_catch_a_bad_body() -> None:
    """The checks above can fail: an OpenAI-style field or a bad message is refused."""
    assert chat_violation({"model": "m", "messages": [{"role": "user", "content": "x"}], "n": 2})
    assert chat_violation({"model": "m", "messages": [{"role": "user", "content": "x"}], "p": 1})
    bad = [{"role": "tool", "tool_call_id": "nope", "content": "x"}]
    assert chat_violation({"model": "m", "messages": bad})
    with pytest.raises(ValueError):
        MESSAGES.validate_python([{"role": "user", "content": [{"type": "image", "url": "x"}]}])


# --- responses -------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "response"))
def test_parse_chat_response(case: dict[str, Any]) -> None:
    given, expected = case["input"], case["expected"]
    raw = given["raw"].encode() if "raw" in given else jsonutil.dumps(given["body"])
    if "body" in given and "message" in given["body"] and "finish_reason" in given["body"]:
        cohere.V2ChatResponse.model_validate_json(raw)  # the fixture is a real Cohere answer
    if "response" in expected:
        assert ir_to_json(PROVIDER.parse_chat_response(raw, REQUEST)) == expected["response"]
    else:
        with pytest.raises(GatewayError) as info:
            PROVIDER.parse_chat_response(raw, REQUEST)
        assert error_json(info.value) == expected["error"]
    assert ir_to_json(usage_from_body(raw)) == expected["usage_from_body"]


# --- streams ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "stream"))
def test_stream_decoder(case: dict[str, Any]) -> None:
    data = _sse_bytes(case["input"])
    for event in parse_sse(data + (b"\n\n" if case["input"].get("unterminated") else b"")):
        assert event["event"] == event["data"]["type"]
        STREAM_EVENT.validate_python(event["data"])  # the fixture is a real Cohere stream
    expected = case["expected"]["events"]
    assert ir_to_json(_decode([data])) == expected
    assert ir_to_json(_decode([data[i : i + 1] for i in range(len(data))])) == expected
    for seed in range(20):
        assert ir_to_json(_decode(_split(data, random.Random(seed)))) == expected, seed


@pytest.mark.parametrize("case", load_cases(CASES, "stream"))
def test_stream_folds_like_a_whole_answer(case: dict[str, Any]) -> None:
    events = _decode([_sse_bytes(case["input"])])
    if any(isinstance(e, StreamError) for e in events):
        return
    accumulator = Accumulator()
    for event in events:
        accumulator.add(event)
    finishes = [e.reason for e in events if isinstance(e, Finish)]
    assert len(finishes) == 1 and accumulator.response().finish_reason == finishes[0]


def test_stream_and_whole_answer_agree() -> None:
    """The same answer streamed and whole gives the same parts, finish and usage."""
    stream = jsonutil.loads((CASES / "stream_tool_calls.json").read_bytes())
    accumulator = Accumulator()
    for event in _decode([_sse_bytes(stream["input"])]):
        accumulator.add(event)
    streamed = accumulator.response()
    body = {
        "id": "29f14a5a-11de-4cae-9800-25e4747408ea",
        "finish_reason": "TOOL_CALL",
        "message": {
            "role": "assistant",
            "tool_plan": "I will check.",
            "tool_calls": [
                {
                    "id": "get_weather_nsz5zm3w56q3",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{\n    "city": "Oslo"\n}'},
                },
                {
                    "id": "get_time_k2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                },
            ],
        },
        "usage": {"billed_units": {"input_tokens": 50, "output_tokens": 26}},
    }
    whole = PROVIDER.parse_chat_response(jsonutil.dumps(body), REQUEST)
    assert streamed.parts == whole.parts
    assert streamed.finish_reason == whole.finish_reason
    assert streamed.usage == whole.usage


# --- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "classify"))
def test_classify_error(case: dict[str, Any]) -> None:
    given = case["input"]
    body = given["body"] if isinstance(given["body"], str) else jsonutil.dumps_str(given["body"])
    err = PROVIDER.classify_error(given["status"], body.encode())
    assert error_json(err) == case["expected"]
    assert not any(key in err.message for key in KEYS) and "https://" not in err.message


# --- embeddings ------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "embed_request"))
def test_build_embeddings_request(case: dict[str, Any]) -> None:
    given = case["input"]
    target = Target(**given["target"])
    if "error" in case["expected"]:
        with pytest.raises(GatewayError) as info:
            PROVIDER.build_embeddings_request(given["texts"], given["dimensions"], target)
        assert error_json(info.value) == case["expected"]["error"]
        return
    upstream = PROVIDER.build_embeddings_request(given["texts"], given["dimensions"], target)
    assert _upstream_json(upstream) == case["expected"]["upstream"]
    assert embed_violation(jsonutil.loads(upstream.body)) is None


def test_embeddings_batch_limit() -> None:
    assert PROVIDER.embeddings_batch_limit == 96
    target = Target("https://api.cohere.com", "k", "embed-v4.0")
    PROVIDER.build_embeddings_request(["x"] * 96, None, target)
    with pytest.raises(ValueError):
        PROVIDER.build_embeddings_request(["x"] * 97, None, target)


@pytest.mark.parametrize("case", load_cases(CASES, "embed_response"))
def test_parse_embeddings_response(case: dict[str, Any]) -> None:
    given, expected = case["input"], case["expected"]
    raw = given["raw"].encode() if "raw" in given else jsonutil.dumps(given["body"])
    if "error" in expected:
        with pytest.raises(GatewayError) as info:
            PROVIDER.parse_embeddings_response(raw)
        assert error_json(info.value) == expected["error"]
        return
    cohere.EmbedByTypeResponse.model_validate_json(raw)  # a real Cohere answer
    result = PROVIDER.parse_embeddings_response(raw)
    assert {"vectors": result.vectors, "input_tokens": result.input_tokens} == expected
