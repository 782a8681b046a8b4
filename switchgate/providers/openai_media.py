"""Upstream side of OpenAI's own media surfaces (embeddings, images, audio, legacy
completions) for every kind whose adapter is OpenAIShaped (providers/capabilities.py):
passthrough bodies, re-encoded forms, and what the gateway reads back from the answers
to bill them. Pure, no I/O. The address and the auth header are the adapter's
(`openai_url`, `auth_headers`): `{base}/{path}` for OpenAI-compatible servers, Azure's
per-deployment URL with `api-key`.
"""

import struct
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from switchgate import jsonutil
from switchgate.core.usage import Usage, reported_count
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import OpenAIShaped
from switchgate.providers.meters import BlockMeter, usage_key_pattern
from switchgate.providers.openai_response import usage_from_openai
from switchgate.wire.forms import Form, encode_form
from switchgate.wire.sse import SSEParser


def json_request(
    api: OpenAIShaped, target: Target, path: str, body: dict[str, Any]
) -> UpstreamRequest:
    headers = {**api.auth_headers(target), "content-type": "application/json"}
    if body.get("stream") is True:
        headers["accept"] = "text/event-stream"
    headers.update(target.extra_headers)
    return UpstreamRequest("POST", api.openai_url(target, path), headers, jsonutil.dumps(body))


def passthrough_json(
    api: OpenAIShaped,
    target: Target,
    path: str,
    body: dict[str, Any],
    *,
    stream_usage: bool = False,
) -> UpstreamRequest:
    """The client's body with `model` rewritten; with `stream_usage`, a stream also asks
    for its usage chunk (`stream_options.include_usage`)."""
    out = {**body, "model": target.upstream_model}
    if stream_usage and out.get("stream") is True:
        options = out.get("stream_options")
        out["stream_options"] = {
            **(options if isinstance(options, dict) else {}),
            "include_usage": True,
        }
    return json_request(api, target, path, out)


def form_request(api: OpenAIShaped, target: Target, path: str, form: Form) -> UpstreamRequest:
    """The client's multipart form, re-encoded with `model` rewritten."""
    content_type, body = encode_form(form.with_field("model", target.upstream_model))
    headers = {**api.auth_headers(target), "content-type": content_type}
    headers.update(target.extra_headers)
    return UpstreamRequest("POST", api.openai_url(target, path), headers, body)


# ---------------------------------------------------------------- reading answers


def _json(body: bytes) -> Any:
    try:
        return jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        return None


def _int(container: Any, key: str) -> int:
    return reported_count(container.get(key) if isinstance(container, dict) else None, key)


def body_usage(body: bytes) -> Usage | None:
    """`usage` of a completions or embeddings answer (OpenAI token names)."""
    data = _json(body)
    return usage_from_openai(data.get("usage")) if isinstance(data, dict) else None


def completion_text(body: bytes) -> str:
    data = _json(body)
    choices = data.get("choices") if isinstance(data, dict) else None
    return "".join(
        c["text"]
        for c in (choices if isinstance(choices, list) else ())
        if isinstance(c, dict) and isinstance(c.get("text"), str)
    )


def media_usage(raw: Any) -> Usage | None:
    """Images and gpt-4o transcriptions: `{input_tokens, output_tokens, ...}`."""
    if not isinstance(raw, dict) or raw.get("type") == "duration":
        return None
    if "input_tokens" not in raw and "output_tokens" not in raw:
        return None
    return Usage(input_tokens=_int(raw, "input_tokens"), output_tokens=_int(raw, "output_tokens"))


@dataclass(frozen=True, slots=True)
class ImageResult:
    images: int
    size: str | None  # what the upstream says it made, when it says
    quality: str | None
    usage: Usage | None


def image_result(body: bytes) -> ImageResult | None:
    data = _json(body)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    size, quality = data.get("size"), data.get("quality")
    return ImageResult(
        images=len(data["data"]),
        size=size if isinstance(size, str) else None,
        quality=quality if isinstance(quality, str) else None,
        usage=media_usage(data.get("usage")),
    )


def _duration(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        result = Decimal(str(value))
    except InvalidOperation:
        return None
    return result if result.is_finite() and result >= 0 else None


@dataclass(frozen=True, slots=True)
class TranscriptMeter:
    seconds: Decimal | None = None  # the audio's duration, as the upstream reports it
    usage: Usage | None = None


def transcript_meter(body: bytes) -> TranscriptMeter:
    """Duration (verbose_json `duration`, or json `usage: {type: duration, seconds}`) and
    token usage (`usage: {type: tokens, ...}`) from a JSON transcription answer."""
    data = _json(body)
    if not isinstance(data, dict):
        return TranscriptMeter()
    usage = data.get("usage")
    seconds = _duration(data.get("duration"))
    if seconds is None and isinstance(usage, dict) and usage.get("type") == "duration":
        seconds = _duration(usage.get("seconds"))
    return TranscriptMeter(seconds, media_usage(usage))


def wav_seconds(data: bytes) -> Decimal | None:
    """The duration of a PCM WAV file, or None if it isn't one.

    The header is the client's: a forged byte-rate field (or a small `data` size) must not
    shorten what is billed. Every byte after the `data` chunk's header counts, at the
    smaller of the declared byte rate and sample rate x channels x bits / 8 (what a decoder
    plays), so the longer of the two readings is billed."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    pos, rates = 12, tuple[int, ...]()
    while pos + 8 <= len(data):
        kind = data[pos : pos + 4]
        size = struct.unpack_from("<I", data, pos + 4)[0]
        if kind == b"fmt " and pos + 24 <= len(data):
            channels, sample_rate, byte_rate, _align, bits = struct.unpack_from(
                "<HIIHH", data, pos + 10
            )
            rates = tuple(r for r in (byte_rate, sample_rate * channels * bits // 8) if r > 0)
        elif kind == b"data":
            if not rates:
                return None
            return Decimal(len(data) - pos - 8) / Decimal(min(rates))
        pos += 8 + size + (size & 1)
    return None


class StreamUsageMeter(BlockMeter):
    """Usage and output text of a passed-through stream in the OpenAI SSE framing: legacy
    completions (`choices[].text` + the usage chunk) and transcription streams
    (`transcript.text.delta` ... `transcript.text.done` with `usage`). Usage is read as it
    comes, the text lazily (providers.meters)."""

    usage_pattern = usage_key_pattern("usage")

    def __init__(self) -> None:
        super().__init__()
        self.usage: Usage | None = None
        self.raw_usage: Any = None

    def text(self) -> str:
        return self._collected_text()

    def transcript(self) -> "TranscriptMeter":
        """What a transcription stream's `transcript.text.done` reported."""
        raw = self.raw_usage if isinstance(self.raw_usage, dict) else {}
        seconds = _duration(raw.get("seconds")) if raw.get("type") == "duration" else None
        return TranscriptMeter(seconds, self.usage)

    def _take_usage(self, event: str | None, payload: dict[str, Any]) -> bool:
        raw = payload.get("usage")
        if not isinstance(raw, dict):
            return False
        self.raw_usage = raw
        if raw.get("type") != "duration":
            self.usage = media_usage(raw) or usage_from_openai(raw)
        return True

    def _take_text(self, event: str | None, payload: dict[str, Any], out: list[str]) -> None:
        delta = payload.get("delta")
        if payload.get("type") == "transcript.text.delta" and isinstance(delta, str):
            out.append(delta)
        choices = payload.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and isinstance(choice.get("text"), str):
                out.append(choice["text"])


class ImageStreamMeter:
    """Image streams (`stream: true`, gpt-image): each `image_generation.completed` /
    `image_edit.completed` event is one image, with its size, quality and usage;
    `partials` counts the `*.partial_image` events since the last of them (what a stream
    that ends early delivered without a usage)."""

    def __init__(self) -> None:
        self._sse = SSEParser()
        self.images = 0
        self.partials = 0
        self.size: str | None = None
        self.quality: str | None = None
        self.usage: Usage | None = None

    def feed(self, data: bytes) -> None:
        for event in self._sse.feed(data):
            chunk = _json(event.data.encode())
            kind = chunk.get("type") if isinstance(chunk, dict) else None
            if not isinstance(kind, str) or not kind.endswith(".completed"):
                if isinstance(kind, str) and kind.endswith(".partial_image"):
                    self.partials += 1
                continue
            assert isinstance(chunk, dict)
            self.images += 1
            self.partials = 0  # the completed image's usage counts its partial images
            size, quality = chunk.get("size"), chunk.get("quality")
            self.size = size if isinstance(size, str) else self.size
            self.quality = quality if isinstance(quality, str) else self.quality
            usage = media_usage(chunk.get("usage"))
            if usage is not None:
                before = self.usage or Usage()
                self.usage = Usage(
                    input_tokens=before.input_tokens + usage.input_tokens,
                    output_tokens=before.output_tokens + usage.output_tokens,
                )
