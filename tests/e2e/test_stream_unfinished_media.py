"""Issue 14 #5 for the media streams: speech as SSE (`stream_format: "sse"`), streamed
image generations and edits (`stream: true`, partial images) and streamed transcriptions.
An upstream stream that ends cleanly without its last event (`speech.audio.done`,
`image_generation.completed` / `image_edit.completed`, `transcript.text.done`), or that
sends an event that is not JSON, ends the client's stream with OpenAI's in-band error
event (`data: {"error": {...}}`: the SDK raises, or its SSE decoder reads it), and what
was delivered is charged, estimated where the usage never came. A whole stream passes
untouched and is billed as reported. Real sockets, the fake upstream's `end_after` and
`invalid_after` faults, the official openai SDK, the ledger."""

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai._streaming import SSEDecoder

from switchgate.testing.mock_upstream.assets import PNG
from tests.conftest import Gateway
from tests.e2e.billing_support import charges, logs
from tests.e2e.media_helpers import PER_TOKEN, client, usd, wav
from tests.e2e.routing_support import Upstream, start_gateway, start_upstream
from tests.support import wait_for

START = 5 * 10**12  # $5
TTS_PER_CHARACTER = 15 * PER_TOKEN  # $15 per 1M characters
IMAGE_IN, IMAGE_OUT = 5 * PER_TOKEN, 40 * PER_TOKEN
STT_IN, STT_OUT = PER_TOKEN * 25 // 10, 10 * PER_TOKEN
PER_MINUTE = usd("0.006")
UNFINISHED = "ended before the answer was finished"
GARBLED = "not valid JSON"
# fault -> (the mock's config, what the client's error says); 2 events, then the fault
FAULTS = {
    "end": ({"end_after": 2}, UNFINISHED),
    "garbled": ({"invalid_after": 2}, GARBLED),
}

CONFIG = """
[[channels]]
name = "media"
kind = "openai"
base_url = "{url}/v1"
key = "mock-key"
models = ["tts-x", "img-x", "stt-x", "stt-min"]

[prices."tts-x"]
kind = "tts"
per_1m_characters = "15"

[prices."img-x"]
kind = "image"
input = "5"
output = "40"

[prices."stt-x"]
kind = "stt"
input = "2.5"
output = "10"

[prices."stt-min"]
kind = "stt"
per_minute = "0.006"
"""


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, Upstream]]:
    upstream = start_upstream(tmp_path_factory.mktemp("media-unfinished"))
    try:
        gw = start_gateway(
            tmp_path_factory.mktemp("media-unfinished-gw"), CONFIG.format(url=upstream.url)
        )
        try:
            yield gw, upstream
        finally:
            gw.process.stop()
    finally:
        upstream.process.stop()


def _row(gw: Gateway, email: str) -> Any:
    assert wait_for(lambda: len(logs(gw, email)) == 1, timeout=15)
    row = logs(gw, email)[0]
    assert wait_for(lambda: charges(gw, email) == (1, row.cost), timeout=15), "one charge row"
    assert gw.balance(email) == START - row.cost  # and the ledger sums to it
    return row


def _failed(row: Any, message: str) -> None:
    assert row.error and message in row.error, row.error
    assert row.usage_estimated and row.cost > 0


# ---------------------------------------------------------------- speech


SPEECH = "one two three four five six seven eight nine ten"


def _speech_events(gw: Gateway, token: str) -> list[dict[str, Any]]:
    """The SSE speech answer, read with the SDK's own SSE decoder."""
    with client(gw, token).audio.speech.with_streaming_response.create(
        model="tts-x", voice="alloy", input=SPEECH, stream_format="sse"
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        return [json.loads(e.data) for e in SSEDecoder().iter_bytes(response.iter_bytes())]


@pytest.mark.parametrize("fault", list(FAULTS))
def test_speech_stream_ending_early_ends_with_an_error_event(
    setup: tuple[Gateway, Upstream], fault: str
) -> None:
    gw, upstream = setup
    config, message = FAULTS[fault]
    upstream.faults(**config)
    email, token = gw.new_user(balance_usd=5)
    events = _speech_events(gw, token)
    assert [e.get("type") for e in events[:-1]] == ["speech.audio.delta"] * 2
    error = events[-1]["error"]  # OpenAI's in-band error, the last event
    assert message in error["message"] and error["type"]
    row = _row(gw, email)
    _failed(row, message)
    # audio reached the client: the input is charged in full (known before the call)
    assert row.cost == len(SPEECH) * TTS_PER_CHARACTER


def test_a_whole_speech_stream_passes_untouched(setup: tuple[Gateway, Upstream]) -> None:
    gw, upstream = setup
    upstream.faults()
    email, token = gw.new_user(balance_usd=5)
    events = _speech_events(gw, token)
    assert events[-1]["type"] == "speech.audio.done" and "error" not in events[-1]
    row = _row(gw, email)
    assert row.error is None and row.cost == len(SPEECH) * TTS_PER_CHARACTER


# ---------------------------------------------------------------- images


PROMPT = "a small red fox in the snow"


def _image_stream(gw: Gateway, token: str, edit: bool) -> Iterator[Any]:
    sdk = client(gw, token)
    if edit:
        return iter(
            sdk.images.edit(
                model="img-x",
                image=("in.png", PNG, "image/png"),
                prompt=PROMPT,
                stream=True,
                partial_images=3,
            )
        )
    return iter(sdk.images.generate(model="img-x", prompt=PROMPT, stream=True, partial_images=3))


@pytest.mark.parametrize("edit", [False, True], ids=["generation", "edit"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_image_stream_ending_early_raises_and_bills_the_partial_images(
    setup: tuple[Gateway, Upstream], fault: str, edit: bool
) -> None:
    gw, upstream = setup
    config, message = FAULTS[fault]
    upstream.faults(**config)
    email, token = gw.new_user(balance_usd=5)
    got: list[str] = []
    with pytest.raises(openai.APIError, match=message):
        for event in _image_stream(gw, token, edit):
            got.append(event.type)
    kind = "image_edit" if edit else "image_generation"
    assert got == [f"{kind}.partial_image"] * 2
    row = _row(gw, email)
    _failed(row, message)
    # no usage came: the prompt's tokens and 100 output tokens per partial image delivered
    assert row.input_tokens > 0 and row.output_tokens == 2 * 100
    assert row.cost == row.input_tokens * IMAGE_IN + row.output_tokens * IMAGE_OUT


@pytest.mark.parametrize("edit", [False, True], ids=["generation", "edit"])
def test_a_whole_image_stream_is_billed_as_reported(
    setup: tuple[Gateway, Upstream], edit: bool
) -> None:
    gw, upstream = setup
    upstream.faults()
    email, token = gw.new_user(balance_usd=5)
    events = list(_image_stream(gw, token, edit))
    kind = "image_edit" if edit else "image_generation"
    assert [e.type for e in events] == [f"{kind}.partial_image"] * 3 + [f"{kind}.completed"]
    usage = events[-1].usage
    row = _row(gw, email)
    assert row.error is None and not row.usage_estimated
    assert (row.input_tokens, row.output_tokens) == (usage.input_tokens, usage.output_tokens)
    assert row.cost == usage.input_tokens * IMAGE_IN + usage.output_tokens * IMAGE_OUT


# ---------------------------------------------------------------- transcriptions


def _transcribe(gw: Gateway, token: str, model: str) -> Iterator[Any]:
    audio = ("speech.wav", wav(2.5), "audio/wav")  # 2.5 s -> 3 billable seconds
    sdk = client(gw, token)
    return iter(sdk.audio.transcriptions.create(model=model, file=audio, stream=True))


@pytest.mark.parametrize("fault", list(FAULTS))
def test_transcription_stream_ending_early_raises_and_bills_what_was_delivered(
    setup: tuple[Gateway, Upstream], fault: str
) -> None:
    gw, upstream = setup
    config, message = FAULTS[fault]
    upstream.faults(**config)
    email, token = gw.new_user(balance_usd=5)
    got: list[str] = []
    with pytest.raises(openai.APIError, match=message):
        for event in _transcribe(gw, token, "stt-x"):
            assert event.type == "transcript.text.delta"
            got.append(event.delta)
    assert len(got) == 2 and "".join(got)
    row = _row(gw, email)
    _failed(row, message)
    # no usage came: 10 audio tokens per second of the upload, the delivered text's tokens
    assert row.input_tokens == 3 * 10 and row.output_tokens > 0
    assert row.cost == row.input_tokens * STT_IN + row.output_tokens * STT_OUT


def test_transcription_stream_at_a_per_minute_price(setup: tuple[Gateway, Upstream]) -> None:
    gw, upstream = setup
    upstream.faults(end_after=2)
    email, token = gw.new_user(balance_usd=5)
    with pytest.raises(openai.APIError, match=UNFINISHED):
        list(_transcribe(gw, token, "stt-min"))
    row = _row(gw, email)
    _failed(row, UNFINISHED)
    assert row.cost == -(-PER_MINUTE * 3 // 60)  # the upload's 3 s, from its WAV header


def test_a_whole_transcription_stream_is_billed_as_reported(
    setup: tuple[Gateway, Upstream],
) -> None:
    gw, upstream = setup
    upstream.faults()
    email, token = gw.new_user(balance_usd=5)
    events = list(_transcribe(gw, token, "stt-x"))
    assert events[-1].type == "transcript.text.done"
    usage = events[-1].usage
    row = _row(gw, email)
    assert row.error is None and not row.usage_estimated
    assert row.cost == usage.input_tokens * STT_IN + usage.output_tokens * STT_OUT


# ---------------------------------------------------------------- the client leaves


@pytest.mark.parametrize("edit", [False, True], ids=["generation", "edit"])
def test_a_client_leaving_an_image_stream_is_billed_what_it_was_sent(
    setup: tuple[Gateway, Upstream], edit: bool
) -> None:
    """The upstream sends two partial images and goes quiet; the client reads them and
    hangs up: charged the prompt and 100 output tokens per partial image, estimated
    (it was charged nothing: the stream counted as finished with no image)."""
    gw, upstream = setup
    upstream.faults(stall_after=2)
    email, token = gw.new_user(balance_usd=5)
    stream = _image_stream(gw, token, edit)
    kind = "image_edit" if edit else "image_generation"
    assert [next(stream).type for _ in range(2)] == [f"{kind}.partial_image"] * 2
    stream.close()  # type: ignore[attr-defined]
    row = _row(gw, email)
    assert row.status == 499 and row.usage_estimated
    assert row.input_tokens > 0 and row.output_tokens == 2 * 100
    assert row.cost == row.input_tokens * IMAGE_IN + row.output_tokens * IMAGE_OUT
    upstream.faults()


def test_a_client_leaving_a_transcription_stream_is_billed_estimated(
    setup: tuple[Gateway, Upstream],
) -> None:
    gw, upstream = setup
    upstream.faults(stall_after=2)
    email, token = gw.new_user(balance_usd=5)
    stream = _transcribe(gw, token, "stt-min")
    assert [next(stream).type for _ in range(2)] == ["transcript.text.delta"] * 2
    stream.close()  # type: ignore[attr-defined]
    row = _row(gw, email)
    assert row.status == 499 and row.usage_estimated  # was billed as a finished answer
    assert row.cost == -(-PER_MINUTE * 3 // 60)
    upstream.faults()
