"""Bedrock-specific checks on the goldens in tests/golden/bedrock_provider/ (the
conformance suite, tests/unit/test_provider_conformance.py, replays them all against the
adapter): every signed request golden is verified by the fake upstream's SigV4 check and
its body by botocore's own validator for the bedrock-runtime service model; each
stream golden's readable frames encode to exactly its `body_base64`; embeddings batch
by model. Requests are signed at a fixed clock (FROZEN), as in the conformance suite."""

import base64
import datetime
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest

from switchgate import jsonutil
from switchgate.core.accumulate import Accumulator
from switchgate.core.events import Finish, StreamError, StreamEvent
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.bedrock import BedrockProvider
from switchgate.testing.mock_upstream.bedrock_wire import check_sigv4, frame, shape_problem
from tests.unit.test_anthropic_dialect import error_json, ir_from_json, ir_to_json, load_cases

CASES = Path(__file__).resolve().parent.parent / "golden" / "bedrock_provider"
PROVIDER = BedrockProvider()
REQUEST: Any = ir_from_json({"_type": "ChatRequest", "model": "alias", "messages": []})
ONE_TURN: Any = {
    "_type": "ChatRequest",
    "model": "a",
    "messages": [
        {"_type": "Message", "role": "user", "parts": [{"_type": "TextPart", "text": "x"}]}
    ],
}
FROZEN = datetime.datetime(2026, 11, 25, 12, 0, 0, tzinfo=datetime.UTC)


def frozen_clock() -> Any:
    return mock.patch("botocore.auth.get_current_datetime", return_value=FROZEN)


def upstream_json(upstream: UpstreamRequest) -> dict[str, Any]:
    return {
        "method": upstream.method,
        "url": upstream.url,
        "headers": upstream.headers,
        "body": jsonutil.loads(upstream.body),
    }


def eventstream_bytes(given: dict[str, Any]) -> bytes:
    data = b"".join(
        frame(f["headers"], jsonutil.dumps(f["payload"]) if f["payload"] is not None else b"")
        for f in given["eventstream"]
    )
    if given.get("corrupt"):  # one flipped payload byte: the message CRC no longer matches
        data = data[:-6] + bytes([data[-6] ^ 0xFF]) + data[-5:]
    return data


def sent_headers(upstream: UpstreamRequest) -> dict[str, str]:
    """The headers as the HTTP client sends them (it adds `host` from the URL)."""
    return {**upstream.headers, "host": urlsplit(upstream.url).netloc}


def _check_signature(upstream: UpstreamRequest) -> None:
    if upstream.headers.get("Authorization", "").startswith("AWS4-HMAC-SHA256"):
        headers = sent_headers(upstream)
        assert check_sigv4("POST", upstream.url, headers, upstream.body, FROZEN) is None


# --- requests --------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "request"))
def test_build_chat_request(case: dict[str, Any]) -> None:
    request, target = ir_from_json(case["input"]["request"]), Target(**case["input"]["target"])
    with frozen_clock():
        if "error" in case["expected"]:
            with pytest.raises(GatewayError) as info:
                PROVIDER.build_chat_request(request, target)
            assert error_json(info.value) == case["expected"]["error"]
            return
        upstream = PROVIDER.build_chat_request(request, target)
    assert upstream_json(upstream) == case["expected"]["upstream"]
    _check_signature(upstream)
    # The body fits the bedrock-runtime service model (botocore's own validator).
    model = target.upstream_model
    assert shape_problem("Converse", jsonutil.loads(upstream.body), model) is None


def test_shape_check_catches_a_bad_body() -> None:
    """The shape check above can fail: an OpenAI-style content part is no ContentBlock."""
    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
    assert "Unknown parameter" in (shape_problem("Converse", body, "m") or "")


def test_tampered_signature_is_refused() -> None:
    request = ir_from_json(ONE_TURN)
    target = Target(
        "https://bedrock-runtime.eu-west-1.amazonaws.com",
        "AKIAMOCKBEDROCK00001:mock/Bedrock+Secret/Key0000000000000000",
        "meta.llama3-1-8b-instruct-v1:0",
    )
    with frozen_clock():
        upstream = PROVIDER.build_chat_request(request, target)
    headers = sent_headers(upstream)
    assert check_sigv4("POST", upstream.url, headers, upstream.body, FROZEN) is None
    tampered = upstream.body.replace(b'"x"', b'"y"')
    failure = check_sigv4("POST", upstream.url, headers, tampered, FROZEN)
    assert failure is not None and failure.error_type == "InvalidSignatureException"
    other_host = {**headers, "host": "bedrock-runtime.us-east-1.amazonaws.com"}
    failure = check_sigv4("POST", upstream.url, other_host, upstream.body, FROZEN)
    assert failure is not None and failure.error_type == "InvalidSignatureException"
    later = FROZEN + datetime.timedelta(minutes=6)
    failure = check_sigv4("POST", upstream.url, headers, upstream.body, later)
    assert failure is not None and failure.message == "Signature expired."


# --- streams ---------------------------------------------------------------------------


def _decode(chunks: list[bytes]) -> list[StreamEvent]:
    decoder = PROVIDER.chat_stream_decoder(REQUEST)
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return events + decoder.finish()


@pytest.mark.parametrize("case", load_cases(CASES, "stream"))
def test_stream_frames(case: dict[str, Any]) -> None:
    """The readable frames are the bytes replayed (by botocore's parser, in the adapter)."""
    data = eventstream_bytes(case["input"])
    assert base64.b64decode(case["input"]["body_base64"]) == data
    events = _decode([data])
    assert ir_to_json(events) == case["expected"]["events"]
    if not any(isinstance(e, StreamError) for e in events):
        accumulator = Accumulator()  # folds into what the non-stream path would give
        for event in events:
            accumulator.add(event)
        finishes = [e.reason for e in events if isinstance(e, Finish)]
        assert accumulator.response().finish_reason == finishes[-1]


# --- embeddings ------------------------------------------------------------------------


@pytest.mark.parametrize("case", load_cases(CASES, "embed_request"))
def test_build_embeddings_request(case: dict[str, Any]) -> None:
    given = case["input"]
    target = Target(**given["target"])
    with frozen_clock():
        if "error" in case["expected"]:
            with pytest.raises(GatewayError) as info:
                PROVIDER.build_embeddings_request(given["texts"], given["dimensions"], target)
            assert error_json(info.value) == case["expected"]["error"]
            return
        upstream = PROVIDER.build_embeddings_request(given["texts"], given["dimensions"], target)
    assert upstream_json(upstream) == case["expected"]["upstream"]
    _check_signature(upstream)


@pytest.mark.parametrize(
    ("model", "limit"),
    [
        ("amazon.titan-embed-text-v2:0", 1),
        ("amazon.titan-embed-text-v1", 1),
        ("cohere.embed-english-v3", 96),
        ("cohere.embed-multilingual-v3", 96),
        ("cohere.embed-v4:0", 96),
    ],
)
def test_embeddings_batch_limit_by_model(model: str, limit: int) -> None:
    assert PROVIDER.embeddings_batch_limit_for(model) == limit


def test_signed_host_is_the_one_sent() -> None:
    """A base URL with an explicit default port: the client sends `host: name:443`, so
    that is what is signed (botocore alone would sign the name without the port)."""
    request = ir_from_json(ONE_TURN)
    target = Target(
        "https://bedrock-runtime.us-east-1.amazonaws.com:443",
        "AKIAMOCKBEDROCK00001:mock/Bedrock+Secret/Key0000000000000000",
        "amazon.nova-micro-v1:0",
    )
    with frozen_clock():
        upstream = PROVIDER.build_chat_request(request, target)
    assert "host" not in upstream.headers
    headers = sent_headers(upstream)
    assert headers["host"].endswith(":443")
    assert check_sigv4("POST", upstream.url, headers, upstream.body, FROZEN) is None
