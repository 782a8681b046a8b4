"""Passthrough forwards the client's own bytes unless a top-level value changes."""

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


def test_unchanged_body_is_forwarded_byte_for_byte() -> None:
    body = _body()
    assert forward_json(RAW, body, dict(body)) is RAW


def test_added_keys_are_spliced_in_front_of_the_clients_bytes() -> None:
    body = _body()
    out = forward_json(RAW, body, {**body, "stream_options": {"include_usage": True}})
    assert out == (
        b' {"stream_options":{"include_usage":true},"model" : "m",\n "messages":'
        b'[{"role":"user","content":"caf\\u00e9 \\ud83d\\ude00"}],"n":1.0}'
    )
    assert jsonutil.loads(out) == {**body, "stream_options": {"include_usage": True}}


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


def test_providers_forward_the_clients_bytes() -> None:
    target = Target("http://up/v1", "k", "m")
    openai = OpenAIProvider().build_passthrough(_body(), target, {}, RAW)
    assert openai.body is RAW
    stream_raw = RAW[:-1] + b',"stream":true}'
    streamed = OpenAIProvider().build_passthrough(
        jsonutil.loads(stream_raw), target, {}, stream_raw
    )
    assert streamed.body == b' {"stream_options":{"include_usage":true},' + stream_raw[2:]
    renamed = OpenAIProvider().build_passthrough(_body(), Target("http://up/v1", "k", "x"), {}, RAW)
    assert jsonutil.loads(renamed.body)["model"] == "x"

    anthropic = AnthropicProvider().build_passthrough(_body(), target, {}, RAW)
    assert anthropic.body is RAW

    gemini_raw = b'{"contents": [{"parts": [{"text": "hi"}]}]}'
    gemini = GeminiProvider().build_passthrough(
        jsonutil.loads(gemini_raw), Target("http://g", "k", "gemini-x"), {}, gemini_raw
    )
    assert gemini.body is gemini_raw
