"""Hypothesis on every dialect decoder, every translator and every upstream stream decoder:
whatever comes in, the answer is a result or a GatewayError (which the relay turns into
the dialect's error), never another exception, a traceback or a hang.

The budget is fixed for CI (SWITCHGATE_FUZZ_EXAMPLES, default 60 examples per test,
a few seconds in all); docs/security.md gives the longer run."""

import json
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from switchgate import jsonutil
from switchgate.core.request import ChatRequest
from switchgate.dialects.anthropic_messages.dialect import AnthropicMessagesDialect
from switchgate.dialects.gemini_generate.dialect import GeminiGenerateDialect
from switchgate.dialects.openai_chat.dialect import OpenAIChatDialect
from switchgate.dialects.openai_responses.dialect import OpenAIResponsesDialect
from switchgate.errors import GatewayError
from switchgate.providers.anthropic import AnthropicProvider
from switchgate.providers.base import Target
from switchgate.providers.cohere import CohereProvider
from switchgate.providers.gemini import GeminiProvider
from switchgate.providers.openai import OpenAIProvider
from switchgate.providers.vertex import VertexProvider

EXAMPLES = int(os.environ.get("SWITCHGATE_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=os.environ.get("SWITCHGATE_FUZZ_RANDOM") != "1",
)

DIALECTS: dict[str, Any] = {
    "openai": OpenAIChatDialect(),
    "anthropic": AnthropicMessagesDialect(),
    "gemini": GeminiGenerateDialect(),
    "responses": OpenAIResponsesDialect(),
}
HEADERS = {":model": "fuzz-model", ":action": "generateContent"}
PROVIDERS = {
    "openai": OpenAIProvider(),
    "anthropic": AnthropicProvider(),
    "gemini": GeminiProvider(),
    "cohere": CohereProvider(),
    "vertex": VertexProvider(),
}
TARGET = Target("http://127.0.0.1:9/v1", "k", "fuzz-upstream")
# Targets as a kind's Authorizer completes them (vertex: a bearer token, both publishers).
_VERTEX = Target(
    "http://127.0.0.1:9",
    "k",
    "fuzz-upstream",
    {"authorization": "Bearer t"},
    options={"project": "p"},
)
TARGETS: dict[str, tuple[Target, ...]] = {
    "vertex": (_VERTEX, replace(_VERTEX, upstream_model="claude-fuzz@1")),
}

scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text()
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=25,
)
KEYS = [
    "model",
    "messages",
    "role",
    "content",
    "text",
    "type",
    "system",
    "max_tokens",
    "max_output_tokens",
    "n",
    "stream",
    "tools",
    "tool_choice",
    "parts",
    "contents",
    "generationConfig",
    "candidateCount",
    "input",
    "instructions",
    "image_url",
    "source",
    "data",
    "inline_data",
    "function_call",
    "tool_calls",
    "stop",
    "temperature",
]
keyed_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=30,
)
# Bodies that look like requests (a model, a message list) so decoding gets deep.
shaped = st.fixed_dictionaries(
    {"model": st.text(max_size=20) | st.just("m")},
    optional={
        "messages": st.lists(
            st.fixed_dictionaries(
                {"role": st.sampled_from(["user", "assistant", "system", "tool", "x"])},
                optional={"content": keyed_values},
            ),
            max_size=4,
        ),
        "contents": st.lists(keyed_values, max_size=3),
        "input": keyed_values,
        "max_tokens": scalars,
        "n": scalars,
        "tools": keyed_values,
        "generationConfig": keyed_values,
        "stream": scalars,
    },
)


def _decode(name: str, body: Any) -> ChatRequest | None:
    try:
        request: ChatRequest = DIALECTS[name].decode_request(body, HEADERS)
    except GatewayError:
        return None
    return request


def _translate(request: ChatRequest) -> None:
    for name, provider in PROVIDERS.items():
        for target in TARGETS.get(name, (TARGET,)):
            try:
                built = provider.build_chat_request(request, target)
            except GatewayError:
                continue
            if built.body is not None:
                jsonutil.loads(built.body)  # what goes upstream is JSON


@FUZZ
@given(st.sampled_from(sorted(DIALECTS)), json_values | shaped)
def test_decoders_and_translators_never_raise_anything_else(name: str, body: Any) -> None:
    request = _decode(name, body)
    if request is not None:
        _translate(request)


@FUZZ
@given(st.sampled_from(sorted(DIALECTS)), st.binary(max_size=200) | st.text(max_size=200))
def test_raw_bytes_are_refused_cleanly(name: str, raw: Any) -> None:
    """The relay parses with jsonutil first; anything that parses goes to the decoder."""
    try:
        body = jsonutil.loads(raw)
    except jsonutil.JSONDecodeError:
        return
    _decode(name, body)


def _sse(events: list[Any]) -> bytes:
    out = b""
    for event in events:
        data = event if isinstance(event, bytes) else json.dumps(event).encode()
        out += b"data: " + data + b"\n\n"
    return out


upstream_events = st.lists(
    keyed_values
    | st.binary(max_size=40)
    | st.fixed_dictionaries(
        {
            "type": st.sampled_from(
                [
                    "message_start",
                    "content_block_start",
                    "content_block_delta",
                    "message_delta",
                    "message_stop",
                    "error",
                    "ping",
                    "content_block_stop",
                    "message-start",
                    "content-start",
                    "content-delta",
                    "tool-plan-delta",
                    "tool-call-start",
                    "tool-call-delta",
                    "message-end",
                ]
            )
        },
        optional={
            "delta": keyed_values,
            "message": keyed_values,
            "usage": keyed_values,
            "index": scalars,
            "content_block": keyed_values,
        },
    )
    | st.fixed_dictionaries(
        {"choices": st.lists(keyed_values, max_size=2)},
        optional={"usage": keyed_values, "candidates": keyed_values, "usageMetadata": keyed_values},
    ),
    max_size=6,
)


def _request() -> ChatRequest:
    request = _decode("openai", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert request is not None
    return request


@FUZZ
@given(st.sampled_from(sorted(PROVIDERS)), upstream_events, st.integers(1, 64))
def test_upstream_stream_decoders_never_raise_anything_else(
    name: str, events: list[Any], cut: int
) -> None:
    decoder = PROVIDERS[name].chat_stream_decoder(_request())
    data = _sse(events)
    chunks = [data[i : i + cut] for i in range(0, len(data), cut)]  # split anywhere
    try:
        for chunk in chunks:
            decoder.feed(chunk)
        decoder.finish()
    except GatewayError:
        pass


@FUZZ
@given(st.sampled_from(sorted(PROVIDERS)), keyed_values | st.binary(max_size=100))
def test_upstream_answers_are_read_or_refused(name: str, answer: Any) -> None:
    body = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
    try:
        PROVIDERS[name].parse_chat_response(body, _request())
    except GatewayError:
        pass


def test_the_budget_is_what_ci_runs() -> None:
    checks: list[Callable[..., None]] = [
        test_decoders_and_translators_never_raise_anything_else,
        test_upstream_stream_decoders_never_raise_anything_else,
    ]
    assert all(callable(c) for c in checks) and EXAMPLES >= 1
