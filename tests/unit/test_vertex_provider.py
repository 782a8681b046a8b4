"""Golden tests for the Vertex AI provider (tests/golden/vertex_provider/*.json), in the
fixture schema of tests/golden/anthropic_provider (IR encoded by tests/unit/_golden_ir.py):

  request_*   input {"request": IR, "target"}   -> expected {"upstream": ...} or {"error"}
  response_*  input {"body"} or {"raw"}         -> expected {"response": IR} or {"error"}
  stream_*    input {"sse": [lines]}            -> expected {"events": [IR ...]}
  classify_*  input {"status", "body"}          -> expected GatewayError (with "status")

The Gemini bodies are checked against google-genai's own request types and the Claude
bodies against the anthropic SDK's, so a golden cannot bless a body the vendors refuse.
"""

import random
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as genai_types
from pydantic import TypeAdapter

from switchgate import jsonutil
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.vertex import VertexProvider, stream_publisher
from switchgate.providers.vertex_embed import build_predict_request, parse_predict_response
from tests.unit._golden_ir import dump, load

CASES = Path(__file__).resolve().parent.parent / "golden" / "vertex_provider"
REQUEST: Any = load({"_type": "ChatRequest", "model": "alias", "messages": []})
CLAUDE_PARAMS: Any = TypeAdapter(MessageCreateParamsNonStreaming)


def _cases(prefix: str) -> list[Any]:
    files = sorted(CASES.glob(f"{prefix}_*.json"))
    assert files, f"no {prefix}_* fixtures"
    return [pytest.param(jsonutil.loads(f.read_bytes()), id=f.stem) for f in files]


def _error(err: GatewayError) -> dict[str, Any]:
    return {**dump(err), "status": err.status}


def _upstream(up: UpstreamRequest) -> dict[str, Any]:
    return {
        "method": up.method,
        "url": up.url,
        "headers": up.headers,
        "body": jsonutil.loads(up.body),
    }


def _split(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), k=min(len(data) - 1, rng.randint(1, 30))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def _check_with_sdk_types(up: dict[str, Any]) -> None:
    body = up["body"]
    if ":rawPredict" in up["url"] or ":streamRawPredict" in up["url"]:
        assert body.pop("anthropic_version") == "vertex-2023-10-16"
        assert "model" not in body
        CLAUDE_PARAMS.validate_python({**body, "model": "m", "stream": False})
    else:
        known = {"contents", "systemInstruction", "generationConfig", "toolConfig", "tools"}
        assert set(body) <= known, set(body) - known
        genai_types.GenerationConfig.model_validate(body.get("generationConfig", {}))
        for tool in body.get("tools", []):
            genai_types.Tool.model_validate(tool)
        for content in body["contents"]:
            assert content["role"] in ("user", "model")  # Vertex requires the role
            genai_types.Content.model_validate(content)


@pytest.mark.parametrize("case", _cases("request"))
def test_build_chat_request(case: dict[str, Any]) -> None:
    request, target = load(case["input"]["request"]), Target(**case["input"]["target"])
    if "error" in case["expected"]:
        with pytest.raises(GatewayError) as info:
            VertexProvider().build_chat_request(request, target)
        assert _error(info.value) == case["expected"]["error"]
        return
    upstream = _upstream(VertexProvider().build_chat_request(request, target))
    assert upstream == case["expected"]["upstream"]
    _check_with_sdk_types(upstream)


@pytest.mark.parametrize("case", _cases("response"))
def test_parse_chat_response(case: dict[str, Any]) -> None:
    given, expected = case["input"], case["expected"]
    raw = given["raw"].encode() if "raw" in given else jsonutil.dumps(given["body"])
    if "response" in expected:
        assert dump(VertexProvider().parse_chat_response(raw, REQUEST)) == expected["response"]
    else:
        with pytest.raises(GatewayError) as info:
            VertexProvider().parse_chat_response(raw, REQUEST)
        assert _error(info.value) == expected["error"]


@pytest.mark.parametrize("case", _cases("stream"))
def test_stream_decoder(case: dict[str, Any]) -> None:
    data = ("\n".join(case["input"]["sse"]) + "\n").encode()
    expected = case["expected"]["events"]

    def decode(chunks: list[bytes]) -> Any:
        decoder = VertexProvider().chat_stream_decoder(REQUEST)
        return dump([e for c in chunks for e in decoder.feed(c)] + decoder.finish())

    assert decode([data]) == expected
    assert decode([data[i : i + 1] for i in range(len(data))]) == expected
    for seed in range(10):
        assert decode(_split(data, random.Random(seed))) == expected, seed


@pytest.mark.parametrize("case", _cases("classify"))
def test_classify_error(case: dict[str, Any]) -> None:
    given = case["input"]
    body = given["body"] if isinstance(given["body"], str) else jsonutil.dumps_str(given["body"])
    err = VertexProvider().classify_error(given["status"], body.encode())
    assert _error(err) == case["expected"]
    assert "ya29." not in err.message and "PRIVATE KEY" not in err.message


# ---------------------------------------------------------------- small properties


@pytest.mark.parametrize(
    ("head", "publisher"),
    [
        (b"event: message_start\n", "anthropic"),
        (b'data: {"type": "message_start"}\n', "anthropic"),
        (b': keep-alive\n\ndata: {"candidates": []}\n', "google"),
        (b'data: {"error": {"code": 429}}\r\n', "google"),
        (b'data: {"candidates', None),  # the first line is not whole yet
        (b"", None),
    ],
)
def test_stream_publisher(head: bytes, publisher: str | None) -> None:
    assert stream_publisher(head) == publisher


def test_empty_stream_is_an_error() -> None:
    decoder = VertexProvider().chat_stream_decoder(REQUEST)
    assert decoder.feed(b"") == []
    events = dump(decoder.finish())
    assert events[-1]["_type"] == "StreamError"


def test_predict_request_and_response() -> None:
    up = build_predict_request(["hello world"], 256, "https://x/v1/m:predict", {"a": "b"}, "QA")
    assert jsonutil.loads(up.body) == {
        "instances": [{"content": "hello world", "task_type": "QA"}],
        "parameters": {"outputDimensionality": 256},
    }
    answer = {
        "predictions": [
            {"embeddings": {"values": [0.5, -1], "statistics": {"token_count": 3.0}}},
            {"embeddings": {"values": [1], "statistics": {"token_count": 2, "truncated": True}}},
        ],
        "metadata": {"billableCharacterCount": 10},
    }
    assert parse_predict_response(jsonutil.dumps(answer)) == ([[0.5, -1.0], [1.0]], 5)
    with pytest.raises(GatewayError):
        parse_predict_response(b'{"predictions": [{"values": [1]}]}')
    with pytest.raises(ValueError):
        build_predict_request(["a", "b"], None, "u", {})


def test_claude_has_no_embeddings() -> None:
    target = Target(
        "https://aiplatform.googleapis.com",
        "ya29.t",
        "claude-sonnet-4-5@20250929",
        {"authorization": "Bearer ya29.t"},
        options={"project": "p"},
    )
    with pytest.raises(GatewayError) as info:
        VertexProvider().build_embeddings_request(["x"], None, target)
    assert info.value.status == 400
