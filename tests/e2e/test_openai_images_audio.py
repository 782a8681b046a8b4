"""Images and audio end to end with the official openai SDK: generations (url and
b64_json), multipart edits, streamed speech, transcriptions in every response format,
and the 400s for bad uploads. Each test checks the exact charge."""

import time

import openai
import pytest

from switchgate.testing.mock_upstream.assets import PNG
from tests.conftest import Gateway
from tests.e2e.media_helpers import PER_TOKEN, client, log_rows, usd, wav
from tests.support import wait_for

START = 10 * 10**12  # every new user starts with $10
IMAGE, IMAGE_HD_1024, IMAGE_1792 = usd("0.04"), usd("0.08"), usd("0.12")  # dall-mock
IMAGE_IN, IMAGE_OUT = 5 * PER_TOKEN, 40 * PER_TOKEN  # image-mock: $5 / $40 per 1M tokens
TTS_PER_CHARACTER = 15 * PER_TOKEN  # tts-mock: $15 per 1M characters
WHISPER_PER_MINUTE = usd("0.006")
STT_IN, STT_OUT = PER_TOKEN * 25 // 10, 10 * PER_TOKEN  # transcribe-mock


def minutes_cost(seconds: int) -> int:
    return -(-WHISPER_PER_MINUTE * seconds // 60)


# ---------------------------------------------------------------- images


def test_generate_url_billed_per_image_by_size_and_quality(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    reply = client(gateway_any, token).images.generate(
        model="dall-mock", prompt="a red fox", n=2, size="1024x1024", quality="hd",
        response_format="url",
    )  # fmt: skip
    assert len(reply.data) == 2
    assert all((d.url or "").startswith(gateway_any.mock_url + "/files/") for d in reply.data)
    assert wait_for(lambda: gateway_any.balance(email) == START - 2 * IMAGE_HD_1024)
    rows = wait_for(lambda: log_rows(gateway_any, email))
    assert rows[0]["endpoint"] == "images.generations" and rows[0]["cost"] == 2 * IMAGE_HD_1024


def test_generate_b64_json_and_the_price_fallbacks(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)
    wide = sdk.images.generate(
        model="dall-mock", prompt="wide", size="1792x1024", response_format="b64_json"
    )
    assert wide.data[0].b64_json and wide.data[0].url is None
    small = sdk.images.generate(model="dall-mock", prompt="small", size="256x256")
    assert len(small.data) == 1
    assert wait_for(lambda: gateway.balance(email) == START - IMAGE_1792 - IMAGE)


def test_generate_token_priced_image_model(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    reply = client(gateway, token).images.generate(model="image-mock", prompt="a tiny robot")
    assert reply.data[0].b64_json and reply.usage is not None
    cost = reply.usage.input_tokens * IMAGE_IN + reply.usage.output_tokens * IMAGE_OUT
    assert wait_for(lambda: gateway.balance(email) == START - cost)


def test_edit_with_one_and_with_several_images(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)
    one = sdk.images.edit(
        model="dall-mock",
        image=("in.png", PNG, "image/png"),
        mask=("mask.png", PNG, "image/png"),
        prompt="add a hat",
        response_format="b64_json",
    )
    assert one.data[0].b64_json
    several = sdk.images.edit(
        model="image-mock",
        image=[("a.png", PNG, "image/png"), ("b.png", PNG, "application/octet-stream")],
        prompt="merge these two",
    )
    assert several.usage is not None
    tokens = several.usage.input_tokens * IMAGE_IN + several.usage.output_tokens * IMAGE_OUT
    assert wait_for(lambda: gateway.balance(email) == START - IMAGE - tokens)
    rows = wait_for(lambda: len(log_rows(gateway, email)) == 2 and log_rows(gateway, email))
    assert [r["endpoint"] for r in rows] == ["images.edits", "images.edits"]


BAD_IMAGES = {
    "empty": (("a.png", b"", "image/png"), "is empty"),
    "text": (("a.txt", b"hello", "text/plain"), "must be an image"),
    "not-an-image": (("a.png", b"hello, not a png", "image/png"), "is not a PNG"),
    "too-large": (("a.png", PNG + bytes(20 * 1024 * 1024), "image/png"), "larger than"),
}


@pytest.mark.parametrize("case", list(BAD_IMAGES))
def test_bad_image_uploads_are_400(gateway: Gateway, case: str) -> None:
    email, token = gateway.new_user()
    upload, message = BAD_IMAGES[case]
    with pytest.raises(openai.BadRequestError) as err:
        client(gateway, token).images.edit(model="dall-mock", image=upload, prompt="x")
    assert message in str(err.value)
    assert err.value.body["param"] == "image"  # type: ignore[index]
    rows = wait_for(lambda: log_rows(gateway, email))
    assert rows[0]["status"] == 400 and rows[0]["cost"] == 0
    assert gateway.balance(email) == START


def test_images_for_a_model_without_an_image_channel_is_404(gateway: Gateway) -> None:
    _, token = gateway.new_user()
    with pytest.raises(openai.NotFoundError):
        client(gateway, token).images.generate(model="claude-mock", prompt="x")


# ---------------------------------------------------------------- speech


def test_speech_is_streamed_chunk_by_chunk(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    text = "read this aloud [[mock:chunks=4]][[mock:interval=300]]"
    arrivals: list[float] = []
    audio = b""
    started = time.monotonic()
    with client(gateway_any, token).audio.speech.with_streaming_response.create(
        model="tts-mock", voice="alloy", input=text
    ) as response:
        assert response.headers["content-type"] == "audio/mpeg"
        for chunk in response.iter_bytes():
            arrivals.append(time.monotonic() - started)
            audio += chunk
    assert audio.startswith(b"ID3") and len(arrivals) >= 2
    assert arrivals[-1] - arrivals[0] >= 0.6, "chunks arrive as the upstream sends them"
    assert wait_for(lambda: gateway_any.balance(email) == START - len(text) * TTS_PER_CHARACTER)
    rows = wait_for(lambda: log_rows(gateway_any, email))
    assert rows[0]["endpoint"] == "audio.speech" and rows[0]["ttft_ms"] is not None


def test_speech_formats_and_errors(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    sdk = client(gateway, token)
    wav_audio = sdk.audio.speech.create(
        model="tts-mock", voice="alloy", input="wave", response_format="wav"
    )
    assert wav_audio.response.headers["content-type"] == "audio/wav"
    assert wav_audio.content.startswith(b"RIFF")
    with pytest.raises(openai.BadRequestError):
        sdk.audio.speech.create(model="tts-mock", voice="alloy", input="")
    assert wait_for(lambda: gateway.balance(email) == START - 4 * TTS_PER_CHARACTER)


# ---------------------------------------------------------------- transcriptions


def test_transcriptions_in_every_format_bill_per_second(gateway_any: Gateway) -> None:
    email, token = gateway_any.new_user()
    sdk = client(gateway_any, token)
    audio = ("speech.wav", wav(2.5), "audio/wav")  # 2.5 s -> 3 billable seconds
    as_json = sdk.audio.transcriptions.create(model="whisper-mock", file=audio)
    assert as_json.text.startswith("Mock transcription of speech.wav")
    text = sdk.audio.transcriptions.create(model="whisper-mock", file=audio, response_format="text")
    assert isinstance(text, str) and text.startswith("Mock transcription")
    srt = sdk.audio.transcriptions.create(model="whisper-mock", file=audio, response_format="srt")
    assert srt.startswith("1\n00:00:00,000 --> 00:00:02,500")
    vtt = sdk.audio.transcriptions.create(model="whisper-mock", file=audio, response_format="vtt")
    assert vtt.startswith("WEBVTT")
    verbose = sdk.audio.transcriptions.create(
        model="whisper-mock",
        file=audio,
        response_format="verbose_json",
        timestamp_granularities=["word"],
    )
    assert verbose.duration == 2.5 and verbose.words
    assert wait_for(lambda: gateway_any.balance(email) == START - 5 * minutes_cost(3))
    rows = wait_for(lambda: len(log_rows(gateway_any, email)) == 5 and log_rows(gateway_any, email))
    assert {r["endpoint"] for r in rows} == {"audio.transcriptions"}
    assert not any(r["usage_estimated"] for r in rows)


def test_translations_work_like_transcriptions(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    reply = client(gateway, token).audio.translations.create(
        model="whisper-mock", file=("hola.wav", wav(1.2), "audio/wav")
    )
    assert reply.text.startswith("Mock translation of hola.wav")
    assert wait_for(lambda: gateway.balance(email) == START - minutes_cost(2))
    assert wait_for(lambda: log_rows(gateway, email))[0]["endpoint"] == "audio.translations"


def test_transcription_of_compressed_audio_estimates_its_length(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    mp3 = b"ID3\x04" + bytes(64_000 - 4)  # 4 s at the estimate's 16 kB/s
    text = client(gateway, token).audio.transcriptions.create(
        model="whisper-mock", file=("a.mp3", mp3, "audio/mpeg"), response_format="text"
    )
    assert text
    assert wait_for(lambda: gateway.balance(email) == START - minutes_cost(4))
    assert wait_for(lambda: log_rows(gateway, email))[0]["usage_estimated"] is True


def test_transcription_billed_by_reported_tokens(gateway: Gateway) -> None:
    email, token = gateway.new_user()
    reply = client(gateway, token).audio.transcriptions.create(
        model="transcribe-mock", file=("a.wav", wav(1.0), "audio/wav")
    )
    usage = reply.usage
    assert usage is not None and usage.type == "tokens"
    cost = usage.input_tokens * STT_IN + usage.output_tokens * STT_OUT
    assert wait_for(lambda: gateway.balance(email) == START - cost)


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (("a.wav", b"", "audio/wav"), "is empty"),
        (("a.png", PNG, "image/png"), "must be audio"),
        (("a.wav", bytes(26 * 1024 * 1024), "audio/wav"), "larger than"),
    ],
)
def test_bad_audio_uploads_are_400(
    gateway: Gateway, upload: tuple[str, bytes, str], message: str
) -> None:
    email, token = gateway.new_user()
    with pytest.raises(openai.BadRequestError) as err:
        client(gateway, token).audio.transcriptions.create(model="whisper-mock", file=upload)
    assert message in str(err.value)
    assert gateway.balance(email) == START
