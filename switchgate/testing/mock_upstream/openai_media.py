"""OpenAI images (§2.3: generations, multipart edits, `GET /files/{name}.png`, streamed as
SSE with partial images for `stream: true`) and audio
(§2.4: speech as streamed bytes or SSE, multipart transcriptions and translations)."""

import base64
import time
from typing import Any, Final

from aiohttp import web
from multidict import MultiDictProxy

from switchgate import jsonutil

from .assets import AUDIO_TYPES, PNG, speech_audio, wav_duration
from .auth import bearer_ok
from .directives import Directives, parse_directives
from .errors import openai_error
from .httpkit import json_response, pause, send_stream, sse
from .reply import count_words, split_text
from .state import MockState

PNG_B64: Final = base64.b64encode(PNG).decode()
IMAGE_OUTPUT_TOKENS: Final = 100  # per generated image (gpt-image usage)
PARTIAL_IMAGE_OUTPUT_TOKENS: Final = 100  # per partial image of a stream, as OpenAI bills
BYTES_PER_SECOND_GUESS: Final = 16_000  # 128 kbit/s, for audio that isn't a parseable WAV
_TEXT_FORMATS: Final = ("text", "srt", "vtt")
_LABELS: Final = {"transcribe": "transcription", "translate": "translation"}


def _fmt_time(seconds: float, sep: str) -> str:
    ms = round(seconds * 1000)
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, ms = divmod(rest, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}{sep}{ms:03d}"


def transcript_body(fmt: str, text: str, duration: float) -> str:
    if fmt == "srt":
        return f"1\n{_fmt_time(0, ',')} --> {_fmt_time(duration, ',')}\n{text}\n\n"
    if fmt == "vtt":
        return f"WEBVTT\n\n{_fmt_time(0, '.')} --> {_fmt_time(duration, '.')}\n{text}\n\n"
    return text


def verbose_transcript(text: str, duration: float, task: str, words_wanted: bool) -> dict[str, Any]:
    segment = {
        "id": 0,
        "seek": 0,
        "start": 0.0,
        "end": duration,
        "text": text,
        "tokens": [1, 2, 3],
        "temperature": 0.0,
        "avg_logprob": -0.1,
        "compression_ratio": 1.0,
        "no_speech_prob": 0.0,
    }
    result: dict[str, Any] = {
        "task": task,
        "language": "english",
        "duration": duration,
        "text": text,
        "segments": [segment],
        "usage": {"type": "duration", "seconds": round(duration, 3)},
    }
    if words_wanted:
        words = text.split()
        step = duration / max(1, len(words))
        result["words"] = [
            {"word": w, "start": round(i * step, 3), "end": round((i + 1) * step, 3)}
            for i, w in enumerate(words)
        ]
    return result


def transcription_token_usage(duration: float, text: str) -> dict[str, Any]:
    """A `tokens` usage as gpt-4o-transcribe reports it (10 audio tokens per second); the
    Realtime input transcription reports the same."""
    audio = max(1, round(duration * 10))
    output = count_words(text)
    return {
        "type": "tokens",
        "input_tokens": audio,
        "input_token_details": {"text_tokens": 0, "audio_tokens": audio},
        "output_tokens": output,
        "total_tokens": audio + output,
    }


def _str(form: MultiDictProxy[Any], name: str, default: str = "") -> str:
    value = form.get(name)
    return value if isinstance(value, str) else default


class OpenAIMedia:
    """Handlers for images, files and audio."""

    def __init__(self, state: MockState) -> None:
        self.state = state

    async def _prelude(self, text: str) -> tuple[Directives, web.Response | None]:
        d = parse_directives(text)
        await pause(d.latency_ms if d.latency_ms is not None else self.state.config.latency_ms)
        return d, (openai_error(d.error) if d.error is not None else None)

    def _images(self, request: web.Request, fields: dict[str, Any], prompt: str) -> dict[str, Any]:
        model = str(fields.get("model") or "dall-e-2")
        n = fields.get("n")
        count = int(n) if isinstance(n, int | str) and str(n).isdigit() and 0 < int(n) <= 10 else 1
        legacy = model.startswith("dall-e")
        fmt = (fields.get("response_format") or "url") if legacy else "b64_json"
        number = self.state.next_id()
        data: list[dict[str, Any]] = []
        for i in range(count):
            if fmt == "b64_json":
                item: dict[str, Any] = {"b64_json": PNG_B64}
            else:
                item = {"url": f"{request.scheme}://{request.host}/files/img-{number}-{i}.png"}
            if model == "dall-e-3":
                item["revised_prompt"] = prompt
            data.append(item)
        result: dict[str, Any] = {"created": int(time.time()), "data": data}
        if not legacy:
            words = max(1, count_words(prompt))
            output = IMAGE_OUTPUT_TOKENS * count
            result["usage"] = {
                "input_tokens": words,
                "output_tokens": output,
                "total_tokens": words + output,
                "input_tokens_details": {"text_tokens": words, "image_tokens": 0},
            }
            result["output_format"] = fields.get("output_format") or "png"
            result["size"] = fields.get("size") or "1024x1024"
            result["quality"] = fields.get("quality") or "high"
        return result

    async def _image_stream(
        self, request: web.Request, fields: dict[str, Any], prompt: str, kind: str
    ) -> web.StreamResponse:
        """gpt-image `stream: true`: per image, `partial_images` (0-3)
        `{kind}.partial_image` events, then `{kind}.completed` with the image's usage
        (each partial image counts PARTIAL_IMAGE_OUTPUT_TOKENS more), each with its
        `event:` name."""
        partials = str(fields.get("partial_images") or 0)
        if not partials.isdigit() or int(partials) > 3:
            return openai_error(400, "'partial_images' must be 0 to 3.", param="partial_images")
        result = self._images(request, {**fields, "model": "gpt-image-1"}, prompt)
        common = {
            "background": fields.get("background") or "auto",
            "output_format": result["output_format"],
            "quality": result["quality"],
            "size": result["size"],
        }
        words = max(1, count_words(prompt))
        output = IMAGE_OUTPUT_TOKENS + PARTIAL_IMAGE_OUTPUT_TOKENS * int(partials)
        usage = {
            "input_tokens": words,
            "input_tokens_details": {"text_tokens": words, "image_tokens": 0},
            "output_tokens": output,
            "total_tokens": words + output,
        }
        events: list[bytes] = []
        for _ in result["data"]:
            for index in range(int(partials)):
                partial = {
                    "type": f"{kind}.partial_image",
                    "b64_json": PNG_B64,
                    "created_at": int(time.time()),
                    "partial_image_index": index,
                    **common,
                }
                events.append(sse(jsonutil.dumps(partial), partial["type"]))
            done = {
                "type": f"{kind}.completed",
                "b64_json": PNG_B64,
                "created_at": int(time.time()),
                "usage": usage,
                **common,
            }
            events.append(sse(jsonutil.dumps(done), done["type"]))
        return await send_stream(request, events)

    async def generations(self, request: web.Request) -> web.StreamResponse:
        body = await self.state.intake(request)
        if not bearer_ok(request, self.state.config.accepted):
            return openai_error(401)
        if not isinstance(body, dict) or not isinstance(body.get("prompt"), str):
            return openai_error(400, "'prompt' is a required property.", param="prompt")
        _, early = await self._prelude(body["prompt"])
        if early is None and body.get("stream") is True:
            return await self._image_stream(request, body, body["prompt"], "image_generation")
        return early or json_response(self._images(request, body, body["prompt"]))

    async def edits(self, request: web.Request) -> web.StreamResponse:
        if not bearer_ok(request, self.state.config.accepted):
            self.state.record(request, request.content_length or 0)
            return openai_error(401)
        form = await request.post()
        self.state.record(request, request.content_length or 0)
        images = form.getall("image[]", []) + form.getall("image", [])
        prompt = _str(form, "prompt")
        if not images or isinstance(images[0], str):
            return openai_error(400, "'image' is a required file.", param="image")
        if not prompt:
            return openai_error(400, "'prompt' is a required property.", param="prompt")
        _, early = await self._prelude(prompt)
        if early is None and _str(form, "stream") == "true":
            return await self._image_stream(request, dict(form), prompt, "image_edit")
        return early or json_response(self._images(request, dict(form), prompt))

    async def file(self, request: web.Request) -> web.StreamResponse:
        return web.Response(body=PNG, content_type="image/png")

    async def speech(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return openai_error(401)
        if not isinstance(body, dict) or not isinstance(body.get("input"), str):
            return openai_error(400, "'input' is a required property.", param="input")
        d, early = await self._prelude(body["input"])
        if early is not None:
            return early
        fmt = body.get("response_format") or "mp3"
        if fmt not in AUDIO_TYPES:
            return openai_error(400, f"Invalid response_format: {fmt}", param="response_format")
        words = count_words(body["input"])
        audio = speech_audio(fmt, min(5.0, 0.2 + 0.1 * words))
        chunks = d.chunks or state.config.chunk_count
        interval = d.interval_ms if d.interval_ms is not None else state.config.chunk_interval_ms
        size = -(-len(audio) // max(1, chunks))
        pieces = [audio[i : i + size] for i in range(0, len(audio), size)]
        if body.get("stream_format") == "sse":
            events = [
                sse(
                    jsonutil.dumps(
                        {"type": "speech.audio.delta", "audio": base64.b64encode(p).decode()}
                    )
                )
                for p in pieces
            ]
            usage = {"input_tokens": words, "output_tokens": len(pieces), "total_tokens": 0}
            usage["total_tokens"] = words + len(pieces)
            events.append(sse(jsonutil.dumps({"type": "speech.audio.done", "usage": usage})))
            return await send_stream(request, events, interval_ms=interval, drop_after=d.drop_after)
        resp = web.StreamResponse(headers={"Content-Type": AUDIO_TYPES[fmt]})
        await resp.prepare(request)
        for i, piece in enumerate(pieces):
            if i:
                await pause(interval)
            await resp.write(piece)
        await resp.write_eof()
        return resp

    async def transcriptions(self, request: web.Request) -> web.StreamResponse:
        return await self._audio_text(request, "transcribe")

    async def translations(self, request: web.Request) -> web.StreamResponse:
        return await self._audio_text(request, "translate")

    async def _audio_text(self, request: web.Request, task: str) -> web.StreamResponse:
        state = self.state
        if not bearer_ok(request, state.config.accepted):
            state.record(request, request.content_length or 0)
            return openai_error(401)
        form = await request.post()
        state.record(request, request.content_length or 0)
        upload = form.get("file")
        model = _str(form, "model")
        if not isinstance(upload, web.FileField) or not model:
            return openai_error(400, "'file' and 'model' are required.", param="file")
        data = upload.file.read()
        prompt = _str(form, "prompt")
        d, early = await self._prelude(prompt)
        if early is not None:
            return early
        duration = wav_duration(data) or len(data) / BYTES_PER_SECOND_GUESS
        duration = round(duration, 3)
        text = (
            d.text
            or state.config.reply_text
            or f"Mock {_LABELS[task]} of {upload.filename or 'audio'}, {len(data)} bytes."
        )
        fmt = _str(form, "response_format", "json")
        if _str(form, "stream") == "true" and task == "transcribe":
            deltas = [
                sse(jsonutil.dumps({"type": "transcript.text.delta", "delta": p}))
                for p in split_text(text, d.chunks or state.config.chunk_count)
            ]
            done: dict[str, Any] = {"type": "transcript.text.done", "text": text}
            done["usage"] = transcription_token_usage(duration, text)
            return await send_stream(request, [*deltas, sse(jsonutil.dumps(done))])
        if fmt in _TEXT_FORMATS:
            return web.Response(
                text=transcript_body(fmt, text, duration), content_type="text/plain"
            )
        if fmt == "verbose_json":
            granularities = form.getall("timestamp_granularities[]", [])
            return json_response(verbose_transcript(text, duration, task, "word" in granularities))
        result: dict[str, Any] = {"text": text}
        if not d.no_usage:
            result["usage"] = (
                {"type": "duration", "seconds": duration}
                if model.startswith("whisper")
                else transcription_token_usage(duration, text)
            )
        return json_response(result)
