"""The Vertex AI provider beyond what the conformance suite checks of its goldens
(tests/golden/vertex_provider, run by tests/unit/test_provider_conformance.py): the
request goldens' bodies are also checked against google-genai's own request types and
the anthropic SDK's, so a golden cannot bless a body the vendors refuse; the stream
sniffing, the :predict shapes and the per-model embedding batch limits.
"""

from pathlib import Path
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from google.genai import types as genai_types
from pydantic import TypeAdapter

from switchgate import jsonutil
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import ModelBatchLimit
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
        build_predict_request(["a", "b"], None, "u", {})  # one text: gemini-embedding models
    assert (
        len(
            jsonutil.loads(build_predict_request(["a"] * 8, None, "u", {}, limit=8).body)[
                "instances"
            ]
        )
        == 8
    )


@pytest.mark.parametrize(
    ("model", "limit"),
    [
        ("gemini-embedding-001", 1),
        ("publishers/google/models/gemini-embedding-001", 1),
        ("text-embedding-005", 8),
        ("text-multilingual-embedding-002", 8),
    ],
)
def test_embedding_batch_limit_follows_the_model(model: str, limit: int) -> None:
    provider = VertexProvider()
    assert isinstance(provider, ModelBatchLimit)
    assert provider.embeddings_batch_limit_for(model) == limit
    target = Target(
        "https://aiplatform.googleapis.com",
        "ya29.t",
        model,
        {"authorization": "Bearer ya29.t"},
        options={"project": "p"},
    )
    provider.build_embeddings_request(["x"] * limit, None, target)
    with pytest.raises(ValueError):
        provider.build_embeddings_request(["x"] * (limit + 1), None, target)


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
