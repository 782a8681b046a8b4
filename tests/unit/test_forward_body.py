"""Passthrough forwards the parsed body encoded again, never the client's own bytes:
duplicate keys cannot smuggle a value past validation (issue 20)."""

from typing import Any

import pytest

from switchgate import jsonutil
from switchgate.providers.anthropic import AnthropicProvider
from switchgate.providers.base import Target
from switchgate.providers.forward import forward_json
from switchgate.providers.gemini import GeminiProvider
from switchgate.providers.openai import OpenAIProvider

# Odd spacing, key order and escapes a re-encoding would not keep.
RAW = (
    b' {"model" : "m",\n "messages":[{"role":"user","content":"caf\\u00e9 \\ud83d\\ude00"}]'
    b',"n":1.0}'
)


def _body() -> dict[str, Any]:
    body = jsonutil.loads(RAW)
    assert isinstance(body, dict)
    return body


def test_an_unchanged_body_is_encoded_again() -> None:
    """Issue 20: never the client's bytes (see test_duplicate_keys_cannot_smuggle)."""
    body = _body()
    out = forward_json(RAW, body, dict(body))
    assert out == jsonutil.dumps(body) and jsonutil.loads(out) == body


def test_added_keys_are_encoded_with_the_body() -> None:
    body = _body()
    out = forward_json(RAW, body, {**body, "stream_options": {"include_usage": True}})
    assert jsonutil.loads(out) == {**body, "stream_options": {"include_usage": True}}


@pytest.mark.parametrize(
    "raw",
    [
        b'{"model":"cheap","messages":[],"model":"dear"}',
        b'{"model":"m","messages":[{"role":"user","content":"a","content":"b"}]}',
        b'{"model":"m","max_tokens":1,"messages":[],"max_tokens":100000}',
    ],
)
def test_duplicate_keys_cannot_smuggle_a_value_upstream(raw: bytes) -> None:
    """What the upstream gets holds each key once, with the value the gateway validated
    and billed (orjson reads the last one), whatever the upstream's parser prefers."""
    body = jsonutil.loads(raw)
    out = forward_json(raw, body, dict(body))
    assert out.count(b'"model"') == 1 and out.count(b'"content"') <= 1
    assert out.count(b'"max_tokens"') <= 1
    assert jsonutil.loads(out) == body


@pytest.mark.parametrize(
    "change",
    [
        lambda b: {**b, "model": "other"},  # a changed value
        lambda b: {k: v for k, v in b.items() if k != "n"},  # a removed key
        lambda b: {**b, "model": "other", "extra": 1},  # changed and added
    ],
)
def test_changes_to_existing_keys_are_re_encoded(change: Any) -> None:
    body = _body()
    forwarded = change(body)
    out = forward_json(RAW, body, forwarded)
    assert out == jsonutil.dumps(forwarded)


def test_without_raw_bytes_the_body_is_encoded() -> None:
    assert forward_json(None, {"a": 1}, {"a": 1}) == b'{"a":1}'
    assert forward_json(b"{}", {}, {"a": 1}) == b'{"a":1}'


def test_providers_forward_the_parsed_body_never_the_clients_bytes() -> None:
    target = Target("http://up/v1", "k", "m")
    openai = OpenAIProvider().build_passthrough(_body(), target, {}, RAW)
    assert openai.body is not RAW and jsonutil.loads(openai.body) == _body()
    stream_raw = RAW[:-1] + b',"stream":true}'
    streamed = OpenAIProvider().build_passthrough(
        jsonutil.loads(stream_raw), target, {}, stream_raw
    )
    assert jsonutil.loads(streamed.body)["stream_options"] == {"include_usage": True}
    renamed = OpenAIProvider().build_passthrough(_body(), Target("http://up/v1", "k", "x"), {}, RAW)
    assert jsonutil.loads(renamed.body)["model"] == "x"

    smuggled = b'{"model":"m","max_tokens":1,"messages":[],"max_tokens":99999}'
    anthropic = AnthropicProvider().build_passthrough(
        jsonutil.loads(smuggled), target, {}, smuggled
    )
    assert anthropic.body.count(b"max_tokens") == 1
    assert jsonutil.loads(anthropic.body)["max_tokens"] == 99999

    gemini_raw = b'{"contents": [{"parts": [{"text": "hi"}]}], "contents": []}'
    gemini = GeminiProvider().build_passthrough(
        jsonutil.loads(gemini_raw), Target("http://g", "k", "gemini-x"), {}, gemini_raw
    )
    assert gemini.body.count(b"contents") == 1
