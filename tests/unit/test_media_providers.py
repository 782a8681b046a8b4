"""providers/openai_media.py, embeddings.py, rerank.py: golden fixtures under
tests/golden/media_provider/ plus the readers the relay bills from.

Fixture kinds, by file-name prefix:
  rerank_request_*   {kind, target, request}           -> the UpstreamRequest (body parsed)
  rerank_answer_*    {request, answer}                 -> {tokens, reply}
  gemini_embed_*     {action, model, upstream_model, body} -> {parsed, openai_body}
  passthrough_*      {kind, path, target, body, stream_usage?} -> the UpstreamRequest
"""

import base64
import dataclasses
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from switchgate import jsonutil
from switchgate.core.usage import Usage
from switchgate.dialects.openai_media.requests import parse_rerank
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import OpenAIShaped
from switchgate.providers.embeddings import (
    check_translatable,
    gemini_reply,
    openai_body,
    openai_reply,
    openai_vectors,
    pack_floats,
    parse_gemini_embed,
    unpack_floats,
)
from switchgate.providers.openai_media import (
    ImageStreamMeter,
    StreamUsageMeter,
    completion_text,
    form_request,
    image_result,
    passthrough_json,
    transcript_meter,
    wav_seconds,
)
from switchgate.providers.registry import provider_kinds
from switchgate.providers.rerank import parse_rerank_answer, rerank_reply
from switchgate.testing.mock_upstream.assets import wav_header
from switchgate.wire.forms import Form, Upload, parse_form

KINDS = provider_kinds()


def _shaped(kind: str) -> OpenAIShaped:
    api = KINDS[kind].openai_shaped("embeddings")
    assert api is not None
    return api


GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "media_provider"
CASES = sorted(p.stem for p in GOLDEN.glob("*.json"))


def _target(raw: dict[str, Any]) -> Target:
    return Target(**raw)


def _request_json(request: UpstreamRequest) -> dict[str, Any]:
    return {
        "method": request.method,
        "url": request.url,
        "headers": request.headers,
        "body": jsonutil.loads(request.body),
    }


def _run(case: str, data: dict[str, Any]) -> Any:
    if case.startswith("rerank_request_"):
        reranker = KINDS[data["kind"]].rerank()  # the kind's own adapter
        assert reranker is not None
        request = reranker.build_rerank_request(
            parse_rerank(data["request"]), _target(data["target"])
        )
        return _request_json(request)
    if case.startswith("rerank_answer_"):
        request = parse_rerank(data["request"])
        result = parse_rerank_answer(jsonutil.dumps(data["answer"]), request)
        reply = rerank_reply(result, request.model, result.tokens or 0)
        return {"tokens": result.tokens, "reply": reply}
    if case.startswith("gemini_embed_"):
        call = parse_gemini_embed(data["body"], data["action"], data["model"])
        body = openai_body(call.texts, data["upstream_model"], call.dimensions)
        return {"parsed": dataclasses.asdict(call), "openai_body": body}
    if case.startswith("passthrough_"):
        request = passthrough_json(
            _shaped(data["kind"]),
            _target(data["target"]),
            data["path"],
            data["body"],
            stream_usage=data.get("stream_usage", False),
        )
        return _request_json(request)
    raise AssertionError(f"unknown fixture kind: {case}")


@pytest.mark.parametrize("case", CASES)
def test_golden(case: str) -> None:
    fixture = jsonutil.loads((GOLDEN / f"{case}.json").read_bytes())
    assert _run(case, fixture["input"]) == fixture["expected"]


# ---------------------------------------------------------------- OpenAI media


def test_azure_and_openai_urls() -> None:
    target = Target("https://x.openai.azure.com/", "k", "dep/1")
    assert _shaped("azure").openai_url(target, "audio/speech") == (
        "https://x.openai.azure.com/openai/deployments/dep%2F1/audio/speech?api-version=2024-10-21"
    )
    assert _shaped("openai").openai_url(Target("http://h/v1/", "k", "m"), "images/edits") == (
        "http://h/v1/images/edits"
    )


def test_form_request_rewrites_the_model_and_keeps_the_rest() -> None:
    form = Form(
        fields=(("model", "alias"), ("response_format", "srt")),
        files=(Upload("file", "a.wav", "audio/wav", b"RIFFdata"),),
    )
    request = form_request(
        _shaped("openai"), Target("http://h/v1", "k", "whisper-1"), "audio/x", form
    )
    assert request.headers["authorization"] == "Bearer k"
    parsed = parse_form(request.body, request.headers["content-type"])
    assert parsed.fields == (("model", "whisper-1"), ("response_format", "srt"))
    assert parsed.files == form.files


def test_image_result() -> None:
    body = {"data": [{"b64_json": "x"}, {"b64_json": "y"}], "size": "1024x1536", "quality": "high"}
    body["usage"] = {"input_tokens": 3, "output_tokens": 200, "total_tokens": 203}
    result = image_result(jsonutil.dumps(body))
    assert result is not None
    assert (result.images, result.size, result.quality) == (2, "1024x1536", "high")
    assert result.usage == Usage(input_tokens=3, output_tokens=200)
    assert image_result(b"not json") is None
    legacy = image_result(b'{"data": [{"url": "u"}]}')
    assert legacy is not None and legacy.usage is None and legacy.size is None


@pytest.mark.parametrize(
    ("body", "seconds", "usage"),
    [
        ({"text": "t", "usage": {"type": "duration", "seconds": 2.5}}, Decimal("2.5"), None),
        ({"text": "t", "duration": 61.25, "segments": []}, Decimal("61.25"), None),
        (
            {"text": "t", "usage": {"type": "tokens", "input_tokens": 14, "output_tokens": 3}},
            None,
            Usage(14, 3),
        ),
        ({"text": "t"}, None, None),
    ],
)
def test_transcript_meter(body: dict[str, Any], seconds: Decimal | None, usage: Any) -> None:
    meter = transcript_meter(jsonutil.dumps(body))
    assert (meter.seconds, meter.usage) == (seconds, usage)


def test_wav_seconds_is_exact() -> None:
    assert wav_seconds(wav_header(48_000 * 2) + bytes(48_000 * 2)) == Decimal(2)  # 48 kB/s
    assert wav_seconds(wav_header(36_000) + bytes(36_000)) == Decimal("0.75")
    assert wav_seconds(b"ID3\x04 not a wav") is None


def test_stream_usage_meter_reads_completions_and_transcripts() -> None:
    meter = StreamUsageMeter()
    stream = (
        b'data: {"choices":[{"index":0,"text":"Hel"}]}\n\ndata: {"choices":[{"text":"lo"}]}\r\n\r\n'
        b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n'
        b"data: [DONE]\n\n"
    )
    for i in range(0, len(stream), 7):  # split anywhere
        meter.feed(stream[i : i + 7])
    assert meter.text() == "Hello" and meter.usage == Usage(3, 2)
    transcript = StreamUsageMeter()
    transcript.feed(
        b'data: {"type":"transcript.text.delta","delta":"hi"}\n\n'
        b'data: {"type":"transcript.text.done","text":"hi",'
        b'"usage":{"type":"duration","seconds":3.5}}\n\n'
    )
    done = transcript.transcript()
    assert transcript.text() == "hi" and done.seconds == Decimal("3.5") and done.usage is None


def test_image_stream_meter_counts_completed_images() -> None:
    meter = ImageStreamMeter()
    meter.feed(
        b'event: image_generation.partial_image\ndata: {"type":"image_generation.partial_image",'
        b'"b64_json":"x","partial_image_index":0}\n\n'
        b'event: image_generation.completed\ndata: {"type":"image_generation.completed",'
        b'"b64_json":"y","size":"1024x1536","quality":"low",'
        b'"usage":{"input_tokens":5,"output_tokens":272,"total_tokens":277}}\n\n'
    )
    assert (meter.images, meter.size, meter.quality) == (1, "1024x1536", "low")
    assert meter.usage == Usage(5, 272) and meter.partials == 0


def test_image_stream_meter_counts_the_partial_images_after_the_last_completed() -> None:
    meter = ImageStreamMeter()
    partial = b'event: image_edit.partial_image\ndata: {"type":"image_edit.partial_image"}\n\n'
    meter.feed(partial * 2)
    assert (meter.images, meter.partials, meter.usage) == (0, 2, None)
    meter.feed(b'data: {"type":"image_edit.completed","usage":{"output_tokens":300}}\n\n')
    meter.feed(partial)
    assert (meter.images, meter.partials, meter.usage) == (1, 1, Usage(0, 300))


def test_completion_text() -> None:
    body = b'{"choices":[{"text":"a"},{"text":"b"},{"nope":1}]}'
    assert completion_text(body) == "ab" and completion_text(b"[]") == ""


# ---------------------------------------------------------------- embeddings


def test_base64_is_little_endian_float32() -> None:
    values = [0.5, -1.0, 3.25]
    packed = pack_floats(values)
    assert base64.b64decode(packed) == struct.pack("<3f", *values)
    assert unpack_floats(packed) == values


def test_openai_vectors_in_index_order_floats_or_base64() -> None:
    body = {
        "data": [
            {"index": 1, "embedding": pack_floats([2.0])},
            {"index": 0, "embedding": [1.0]},
        ],
        "usage": {"prompt_tokens": 4, "total_tokens": 4},
    }
    vectors, usage = openai_vectors(jsonutil.dumps(body))
    assert vectors == [[1.0], [2.0]] and usage is not None and usage.input_tokens == 4
    with pytest.raises(GatewayError):
        openai_vectors(b'{"data": [{"index": 0}]}')


def test_replies_in_both_shapes() -> None:
    reply = openai_reply([[1.0, 2.0]], "m", "base64", 3)
    assert reply["data"][0]["embedding"] == pack_floats([1.0, 2.0])
    assert reply["usage"] == {"prompt_tokens": 3, "total_tokens": 3}
    assert openai_reply([[1.0]], "m", "float", 1)["data"][0]["embedding"] == [1.0]
    assert gemini_reply([[1.0]], "embedContent") == {"embedding": {"values": [1.0]}}
    assert gemini_reply([[1.0], [2.0]], "batchEmbedContents") == {
        "embeddings": [{"values": [1.0]}, {"values": [2.0]}]
    }


def test_gemini_calls_an_openai_channel_cannot_serve() -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}
    media = parse_gemini_embed({"content": {"parts": [{"text": "a"}, image]}}, "embedContent", "m")
    mixed = parse_gemini_embed(
        {
            "requests": [
                {"content": {"parts": [{"text": "a"}]}, "outputDimensionality": 4},
                {"content": {"parts": [{"text": "b"}]}},
            ]
        },
        "batchEmbedContents",
        "m",
    )
    for call in (media, mixed):
        with pytest.raises(GatewayError):
            check_translatable(call)
    with pytest.raises(GatewayError):
        parse_gemini_embed(
            {"requests": [{"model": "models/other", "content": {"parts": [{"text": "a"}]}}]},
            "batchEmbedContents",
            "m",
        )
    with pytest.raises(GatewayError):
        parse_gemini_embed({"requests": []}, "batchEmbedContents", "m")


def test_wav_seconds_ignores_a_forged_byte_rate_and_data_size() -> None:
    """Issue 20 #9: 120 s of 16 kHz mono 16-bit audio whose header claims a byte rate
    100 times too high (and a tiny data size) is still 120 s."""
    audio = bytes(16_000 * 2 * 120)
    honest = wav_header(len(audio), 16_000) + audio
    assert wav_seconds(honest) == Decimal(120)
    forged = bytearray(honest)
    struct.pack_into("<I", forged, 28, 16_000 * 2 * 100)  # byte rate
    struct.pack_into("<I", forged, 40, 1000)  # data size
    assert wav_seconds(bytes(forged)) == Decimal(120)
    # A forged sample rate with an honest byte rate: the longer reading wins too.
    forged = bytearray(honest)
    struct.pack_into("<I", forged, 24, 16_000 * 100)
    assert wav_seconds(bytes(forged)) == Decimal(120)
