"""The OpenAI provider (kind "openai") and Azure OpenAI (kind "azure") beyond their golden
cases, which tests/unit/test_provider_conformance.py runs from
tests/golden/openai_provider/ (the common fixture schema; azure cases say `"kind": "azure"`).
Synthesised tool-call ids (`call_` + 24 hex) are written there as "<synthesised>".
"""

import re
from typing import Any

import pytest

from switchgate import jsonutil
from switchgate.core.accumulate import Accumulator
from switchgate.core.content import FilePart, ToolCallPart
from switchgate.core.events import StreamEvent, ToolCallStart
from switchgate.core.request import ChatRequest, Message
from switchgate.core.usage import Usage
from switchgate.dialects.openai_chat import openai_chat_to_core_request
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target
from switchgate.providers.openai import AzureOpenAIProvider, OpenAIProvider
from tests.unit._golden_ir import cases, load

AREA = "openai_provider"
SYNTHESISED = re.compile(r"^call_[0-9a-f]{24}$")
PROVIDERS = {"openai": OpenAIProvider(), "azure": AzureOpenAIProvider()}
REQUEST = ChatRequest("gpt-4o", ())


def decode_stream(data: bytes) -> list[StreamEvent]:
    decoder = OpenAIProvider().chat_stream_decoder(REQUEST)
    return decoder.feed(data) + decoder.finish()


def _stream(name: str) -> bytes:
    text: str = dict(cases(AREA, name))[name]["input"]["sse"]
    return text.encode()


def _ids(value: Any) -> str:
    return value if isinstance(value, str) else ""


@pytest.mark.parametrize(("name", "case"), cases(AREA, "request"), ids=_ids)
def test_request_body_bytes_keep_the_key_order(name: str, case: dict[str, Any]) -> None:
    """The conformance suite compares parsed bodies; the bytes keep the golden's order."""
    inp, expected = case["input"], case["expected"]["upstream"]
    provider = PROVIDERS[inp.get("kind", "openai")]
    up = provider.build_chat_request(load(inp["request"]), Target(**inp["target"]))
    assert up.body == jsonutil.dumps(expected["body"])


def test_classified_errors_never_leak_keys_or_urls() -> None:
    for _, case in cases(AREA, "classify"):
        item = case["input"]
        err = OpenAIProvider().classify_error(item["status"], item["body"].encode())
        assert "sk-" not in err.message and "http" not in err.message, err.message
        assert "abc.def" not in err.message
    retryable = {s for s in range(400, 600) if OpenAIProvider().classify_error(s, b"").retryable}
    assert retryable == set(range(400, 600)) - {400, 404, 409, 413, 422}  # client faults stay
    assert {OpenAIProvider().classify_error(s, b"").status for s in (401, 402, 403)} == {502}
    assert OpenAIProvider().classify_error(529, b"").kind is ErrorKind.UPSTREAM_OVERLOADED


def test_stream_events_fold_to_the_same_response_as_the_non_stream_body() -> None:
    acc = Accumulator()
    for event in decode_stream(_stream("stream_tool_calls")):
        acc.add(event)
    resp = acc.response()
    assert [p.arguments for p in resp.parts if isinstance(p, ToolCallPart)] == [
        '{"city":"Oslo"}',
        '{"city":"Paris"}',
    ]
    assert resp.usage == Usage(input_tokens=50, output_tokens=20)


def test_synthesised_stream_ids_are_stable_within_a_stream() -> None:
    events = decode_stream(_stream("stream_tool_quirks"))
    ids = [e.id for e in events if isinstance(e, ToolCallStart)]
    assert ids[0] == "call_x" and SYNTHESISED.match(ids[1]) and ids[2] == "g1"


def test_passthrough_rewrites_model_and_forces_usage_without_copying_deeply() -> None:
    messages = [{"role": "user", "content": "hi"}]
    body = {
        "model": "alias",
        "messages": messages,
        "stream": True,
        "stream_options": {"include_obfuscation": False},
    }
    target = Target("https://api.example.com/v1", "sk-x", "gpt-4o-real", {"x-a": "1"})
    up = OpenAIProvider().build_passthrough(body, target, {"authorization": "Bearer client-token"})
    sent = jsonutil.loads(up.body)
    assert sent == {
        "model": "gpt-4o-real",
        "messages": messages,
        "stream": True,
        "stream_options": {"include_obfuscation": False, "include_usage": True},
    }
    assert body["model"] == "alias" and body["stream_options"] == {"include_obfuscation": False}
    assert up.url == "https://api.example.com/v1/chat/completions"
    assert up.headers == {
        "authorization": "Bearer sk-x",
        "content-type": "application/json",
        "accept": "text/event-stream",
        "x-a": "1",
    }
    plain = OpenAIProvider().build_passthrough({"model": "a", "messages": messages}, target, {})
    assert jsonutil.loads(plain.body) == {"model": "gpt-4o-real", "messages": messages}


def test_azure_passthrough_uses_deployment_url_and_api_key() -> None:
    target = Target("https://acme.openai.azure.com", "azkey", "my deploy", api_version="2025-01-01")
    up = AzureOpenAIProvider().build_passthrough({"model": "x", "messages": []}, target, {})
    assert up.url == (
        "https://acme.openai.azure.com/openai/deployments/my%20deploy/chat/completions"
        "?api-version=2025-01-01"
    )
    assert up.headers["api-key"] == "azkey" and "authorization" not in up.headers
    assert AzureOpenAIProvider().kind == "azure" and AzureOpenAIProvider().dialect == "openai"


def test_usage_from_body() -> None:
    [(_, case)] = cases(AREA, "response_text")
    usage = OpenAIProvider().usage_from_body(jsonutil.dumps(case["input"]["body"]))
    assert usage == Usage(input_tokens=20, output_tokens=5, cache_read_tokens=16)
    assert OpenAIProvider().usage_from_body(b"not json") is None
    assert OpenAIProvider().usage_from_body(b'{"choices": []}') is None


@pytest.mark.parametrize("name", ["stream_text", "stream_tool_calls", "stream_reasoning_deepseek"])
def test_usage_meter_reads_usage_and_text_from_split_stream(name: str) -> None:
    data = _stream(name)
    meter = OpenAIProvider().usage_meter()
    for i in range(0, len(data), 7):
        meter.feed(data[i : i + 7])
    expected = {
        "stream_text": (Usage(input_tokens=9, output_tokens=3, cache_read_tokens=4), "Café ☕ ok"),
        "stream_tool_calls": (
            Usage(input_tokens=50, output_tokens=20),
            'get_weather{"city":"Oslo"}get_weather{"city":"Paris"}',
        ),
        "stream_reasoning_deepseek": (
            Usage(input_tokens=12, output_tokens=30, reasoning_tokens=25),
            "Thinking.Answer",
        ),
    }[name]
    assert (meter.usage(), meter.output_text()) == expected


def test_usage_meter_without_usage() -> None:
    meter = OpenAIProvider().usage_meter()
    meter.feed(
        b'data: {"choices":[{"index":0,"delta":{"content":"x"}}],"usage":null}\n\ndata: [DONE]\n\n'
    )
    assert meter.usage() is None and meter.output_text() == "x"


OPENAI_BODIES = [
    {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 5,
        "temperature": 0.5,
    },
    {
        "model": "m",
        "messages": [
            {"role": "system", "content": "sys"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {
                        "type": "image_url",
                        "image_url": {"url": "data:image/png;base64,AAA=", "detail": "low"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "hmm",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": "done"},
        ],
        "tools": [
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "max_completion_tokens": 100,
        "stream": True,
        "stream_options": {"include_usage": True},
        "logprobs": True,
        "reasoning_effort": "low",
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "x", "schema": {"type": "object"}, "strict": True},
        },
    },
]


@pytest.mark.parametrize("body", OPENAI_BODIES)
def test_openai_body_survives_decode_then_build(body: dict[str, Any]) -> None:
    request = openai_chat_to_core_request(body)
    target = Target("https://api.example.com/v1", "k", "m")
    rebuilt = jsonutil.loads(OpenAIProvider().build_chat_request(request, target).body)
    assert rebuilt == body


def test_file_by_url_cannot_go_to_openai() -> None:
    request = ChatRequest("m", (Message("user", (FilePart(url="https://x/a.pdf"),)),))
    with pytest.raises(GatewayError) as info:
        OpenAIProvider().build_chat_request(request, Target("https://h/v1", "k", "m"))
    assert info.value.kind is ErrorKind.INVALID_REQUEST and info.value.param == "messages[0]"
