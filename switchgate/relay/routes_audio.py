"""POST /v1/audio/speech, /v1/audio/transcriptions and /v1/audio/translations
(protocols §2.4), for OpenAI-compatible and Azure channels.

Speech: the JSON body is passed through (model rewritten) and the upstream's audio is
streamed back chunk by chunk as it arrives, with the upstream's content type. Its cost is
known before the call (characters, or input tokens), so the hold is exact; it is charged
once the first audio byte reached the client (a stream cut later is still charged).

Transcriptions (and translations, the same shape): the multipart form is re-encoded
(model rewritten, the checked upload and every other field unchanged); the answer (JSON,
text, srt, vtt, or an SSE stream when `stream=true`) is relayed with the upstream's
content type. Duration for per-minute prices: the upstream's (`duration`, or
`usage.seconds`), else the WAV header of the upload, else an estimate from the file size
(the log row says `usage_estimated`).
"""

from collections.abc import Callable, Mapping
from dataclasses import replace
from decimal import Decimal
from typing import Final

from switchgate.billing.media_pricing import (
    AUDIO_TOKENS_PER_SECOND,
    PER_MINUTE,
    billable_seconds,
    speech_cost,
    transcription_cost,
    transcription_hold,
)
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage
from switchgate.dialects.openai_media.requests import parse_speech
from switchgate.dialects.openai_media.uploads import Transcription, parse_transcription
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.openai_media import (
    StreamUsageMeter,
    TranscriptMeter,
    form_request,
    passthrough_json,
    transcript_meter,
    wav_seconds,
)
from switchgate.providers.registry import AUDIO, ProviderKind
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import Delivery, Exchange, MediaEndpoint, handle_media, openai_shaped
from switchgate.relay.stream_check import STREAM_ENDS
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.state import AppState
from switchgate.wire.forms import parse_form

# Compressed audio of unknown length: assume at least 4 kB per second (32 kbit/s) for the
# hold (an upper bound of the duration for the usual codecs) and 16 kB per second
# (128 kbit/s) to estimate a duration the upstream didn't report.
HOLD_BYTES_PER_SECOND: Final = 4_000
ESTIMATE_BYTES_PER_SECOND: Final = 16_000


def _headers(response: UpstreamResponse, default: str) -> list[tuple[bytes, bytes]]:
    content_type = response.headers.get("content-type", default)
    return [(b"content-type", content_type.encode("latin-1"))]


class SpeechExchange(Exchange):
    endpoint = AUDIO

    def __init__(self, model: str, body: dict[str, object], characters: int, tokens: int):
        super().__init__(model, stream=True)
        self.body = body
        self.characters = characters
        self.tokens = tokens

    def hold(self, price: Price) -> int:
        return speech_cost(price, self.characters, self.tokens)

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        return passthrough_json(openai_shaped(kind, AUDIO), target, "audio/speech", dict(self.body))

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        headers = _headers(response, "audio/mpeg")
        sse = headers[0][1].startswith(b"text/event-stream")  # `stream_format: "sse"`
        try:
            if sse:  # checked: garbled or unfinished ends with an error event
                await delivery.stream(
                    response, headers, in_band_errors=True, end=STREAM_ENDS["speech"]
                )
            else:
                await delivery.stream(response, headers)
        finally:
            if delivery.outcome.ttft is not None:  # audio reached the client
                cost = speech_cost(delivery.price, self.characters, self.tokens)
                delivery.bill(cost, Usage(input_tokens=self.tokens, estimated=True))


class TranscriptionExchange(Exchange):
    endpoint = AUDIO

    def __init__(
        self, call: Transcription, default_output_tokens: int, state: AppState, path: str
    ) -> None:
        super().__init__(call.model, stream=call.stream)
        self.call = call
        self.path = path
        self.wav = wav_seconds(call.upload.data)
        self.default_output_tokens = default_output_tokens
        self.state = state

    def _estimate(self, bytes_per_second: int) -> Decimal:
        if self.wav is not None:
            return self.wav
        return Decimal(len(self.call.upload.data)) / Decimal(bytes_per_second)

    def hold(self, price: Price) -> int:
        seconds = billable_seconds(self._estimate(HOLD_BYTES_PER_SECOND))
        tokens = seconds * AUDIO_TOKENS_PER_SECOND * 2
        return transcription_hold(price, seconds, tokens, self.default_output_tokens)

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        return form_request(openai_shaped(kind, AUDIO), target, self.path, self.call.form)

    def _bill(
        self, delivery: Delivery, meter: TranscriptMeter, text: str, *, finished: bool = True
    ) -> None:
        """`finished`: False for a stream that ended before its `transcript.text.done`
        (or with an error): billed as estimated, whatever it reported."""
        seconds, guessed = meter.seconds or self.wav, not finished
        if seconds is None:
            seconds, guessed = self._estimate(ESTIMATE_BYTES_PER_SECOND), True
        whole_seconds = billable_seconds(seconds)
        if delivery.price.extra.get(PER_MINUTE, 0) > 0:  # billed by time
            usage = meter.usage or Usage()
            usage = replace(usage, estimated=True) if guessed else usage
        else:
            usage = meter.usage or Usage(
                input_tokens=whole_seconds * AUDIO_TOKENS_PER_SECOND,
                output_tokens=self.state.tokenizer.count(text),
                estimated=True,
            )
            usage = usage if finished else replace(usage, estimated=True)
        delivery.bill(transcription_cost(delivery.price, whole_seconds, usage), usage)

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        content_type = response.headers.get("content-type", "application/json")
        if content_type.startswith("text/event-stream"):
            stream_meter = StreamUsageMeter()
            try:
                await delivery.stream(
                    response,
                    _headers(response, content_type),
                    meter=stream_meter.feed,
                    in_band_errors=True,
                    end=STREAM_ENDS["transcription"],
                )
            finally:
                # Cut short (an upstream failure, the client gone): what reached the
                # client, estimated; nothing when nothing did.
                if delivery.finished or delivery.delivered:
                    meter = stream_meter.transcript()
                    text = stream_meter.text()
                    self._bill(delivery, meter, text, finished=delivery.finished)
            return
        data = await read_all(response)
        is_json = content_type.startswith("application/json")
        meter = transcript_meter(data) if is_json else TranscriptMeter()
        self._bill(delivery, meter, data.decode("utf-8", "replace"))
        await delivery.whole(data, content_type)


def _speech(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
    body = parse_json_object(raw)
    request = parse_speech(body)
    tokens = state.tokenizer.count(request.input)
    return SpeechExchange(request.model, body, len(request.input), tokens)


def _audio_text(path: str) -> Callable[[AppState, bytes, Mapping[str, str]], Exchange]:
    def prepare(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
        call = parse_transcription(parse_form(raw, headers.get("content-type")))
        return TranscriptionExchange(call, state.settings.default_hold_output_tokens, state, path)

    return prepare


SPEECH = MediaEndpoint(name="audio.speech", what="speech", prepare=_speech)
TRANSCRIPTIONS = MediaEndpoint(
    name="audio.transcriptions",
    what="transcriptions",
    prepare=_audio_text("audio/transcriptions"),
)
TRANSLATIONS = MediaEndpoint(
    name="audio.translations", what="translations", prepare=_audio_text("audio/translations")
)


async def speech(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(SPEECH, state, scope, receive, send)


async def transcriptions(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(TRANSCRIPTIONS, state, scope, receive, send)


async def translations(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(TRANSLATIONS, state, scope, receive, send)
