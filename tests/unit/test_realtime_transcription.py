"""Realtime input-audio transcription: usage parsing, pricing, and the per-session meter."""

import logging
from decimal import Decimal
from typing import Any

import pytest

from switchgate.billing.pricing import Price
from switchgate.billing.realtime_transcription import (
    COMPLETED,
    TranscriptionUsage,
    session_transcription,
    transcription_charge,
    transcription_usage,
)
from switchgate.catalog import Catalog
from switchgate.core.usage import Usage
from switchgate.relay.realtime_transcription import (
    TranscriptionCharge,
    TranscriptionMeter,
    transcription_price,
)
from switchgate.routing.channels import Channel
from switchgate.tokenizer import Tokenizer

TOKENS = {
    "type": "tokens",
    "input_tokens": 18,
    "output_tokens": 7,
    "total_tokens": 25,
    "input_token_details": {"text_tokens": 3, "audio_tokens": 15},
}
PER_MINUTE = Price("whisper-1", kind="stt", extra={"per_minute": 6_000_000_000})  # $0.006
PER_TOKEN = Price("gpt-4o-transcribe", kind="stt", input=2_500_000, output=10_000_000)


# ---------------------------------------------------------------- usage parsing


def test_tokens_form() -> None:
    assert transcription_usage(TOKENS) == TranscriptionUsage(
        tokens=Usage(input_tokens=18, output_tokens=7), audio_tokens=15
    )


@pytest.mark.parametrize(
    ("details", "audio"),
    [
        (None, 18),  # no breakdown: all input is audio
        ({"text_tokens": 3}, 15),  # audio = input - text
        ({"text_tokens": 99}, 0),
        ({"audio_tokens": 500}, 18),  # never more than the input
        ({"audio_tokens": "15", "text_tokens": -1}, 18),  # garbage details are ignored
        ("garbage", 18),
    ],
)
def test_tokens_form_audio_share(details: Any, audio: int) -> None:
    raw = {"type": "tokens", "input_tokens": 18, "output_tokens": 7, "input_token_details": details}
    usage = transcription_usage(raw)
    assert usage is not None and usage.tokens == Usage(18, 7) and usage.audio_tokens == audio


def test_tokens_form_without_type_and_with_garbage_counts() -> None:
    usage = transcription_usage({"input_tokens": 10, "output_tokens": True})
    assert usage is not None and usage.tokens == Usage(10, 0) and usage.audio_tokens == 10
    usage = transcription_usage({"type": "tokens", "input_tokens": -5, "output_tokens": 4})
    assert usage is not None and usage.tokens == Usage(0, 4) and usage.audio_tokens == 0


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ({"type": "duration", "seconds": 1.5}, Decimal("1.5")),
        ({"type": "duration", "seconds": 3}, Decimal(3)),
        ({"type": "duration", "seconds": 0}, Decimal(0)),
        ({"seconds": 2.25}, Decimal("2.25")),  # no type: read by shape
    ],
)
def test_duration_form(raw: Any, seconds: Decimal) -> None:
    assert transcription_usage(raw) == TranscriptionUsage(seconds=seconds)


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "usage",
        [TOKENS],
        42,
        {},
        {"type": "tokens"},  # neither count
        {"type": "tokens", "input_tokens": "12", "output_tokens": None},
        {"type": "duration"},
        {"type": "duration", "seconds": "1.5"},
        {"type": "duration", "seconds": -1.0},
        {"type": "duration", "seconds": float("inf")},
        {"type": "duration", "seconds": float("nan")},
        {"type": "duration", "seconds": True},
        {"type": "duration", "input_tokens": 4, "output_tokens": 4},
        {"type": "characters", "input_tokens": 4},  # an unknown form
    ],
)
def test_missing_or_garbage_usage_is_none(raw: Any) -> None:
    assert transcription_usage(raw) is None


# ---------------------------------------------------------------- pricing


def test_duration_at_a_per_minute_price_rounds_up_like_audio_transcriptions() -> None:
    usage = TranscriptionUsage(seconds=Decimal("1.5"))  # 2 whole seconds
    assert transcription_charge(PER_MINUTE, usage, 99) == (200_000_000, Usage())
    priced = Price("w", extra={"per_minute": 7}, per_request=5)
    # 7 * 2 / 60 = 0.23 -> 1 unit, never 0
    assert transcription_charge(priced, usage, 0) == (1 + 5, Usage())


def test_tokens_at_token_prices() -> None:
    usage = transcription_usage(TOKENS)
    assert usage is not None
    cost, recorded = transcription_charge(PER_TOKEN, usage, 0)
    assert cost == 18 * 2_500_000 + 7 * 10_000_000
    assert recorded == Usage(18, 7)


def test_duration_at_token_prices_is_estimated_tokens() -> None:
    usage = TranscriptionUsage(seconds=Decimal("2.1"))  # 3 whole seconds -> 30 audio tokens
    cost, recorded = transcription_charge(PER_TOKEN, usage, 6)
    assert recorded == Usage(30, 6, estimated=True)
    assert cost == 30 * 2_500_000 + 6 * 10_000_000


def test_tokens_at_a_per_minute_price_estimate_the_duration_from_audio_tokens() -> None:
    usage = transcription_usage(TOKENS)  # 15 audio tokens -> 2 seconds (rounded up)
    assert usage is not None
    cost, recorded = transcription_charge(PER_MINUTE, usage, 0)
    assert cost == 200_000_000
    assert recorded == Usage(18, 7, estimated=True)


# ---------------------------------------------------------------- session settings


@pytest.mark.parametrize(
    ("session", "expected"),
    [
        ({"audio": {"input": {"transcription": {"model": "whisper-1"}}}}, (True, "whisper-1")),
        ({"audio": {"input": {"transcription": None}}}, (True, None)),
        ({"audio": {"input": {"transcription": {"language": "en"}}}}, (True, None)),
        (
            {"input_audio_transcription": {"model": "gpt-4o-transcribe"}},
            (True, "gpt-4o-transcribe"),
        ),
        ({"input_audio_transcription": None}, (True, None)),
        ({"audio": {"input": {"format": {"type": "audio/pcm"}}}}, (False, None)),
        ({"instructions": "Be kind."}, (False, None)),
        (None, (False, None)),
        ("session", (False, None)),
    ],
)
def test_session_transcription(session: Any, expected: tuple[bool, str | None]) -> None:
    assert session_transcription(session) == expected


# ---------------------------------------------------------------- the per-session meter


def _catalog() -> tuple[Catalog, Channel]:
    realtime = Channel(1, "rt", "openai", "http://x", "k", ("gpt-rt",))
    media = Channel(
        2,
        "media",
        "openai",
        "http://x",
        "k",
        ("whisper-mock", "transcribe-mock"),
        model_map={"whisper-mock": "whisper-1", "transcribe-mock": "gpt-4o-transcribe"},
    )
    prices = {
        "gpt-rt": Price("gpt-rt", input=1, output=2),
        "whisper-mock": PER_MINUTE,
        "transcribe-mock": PER_TOKEN,
        "gpt-4o-transcribe": Price("gpt-4o-transcribe", input=1, output=1),
    }
    return Catalog.build([realtime, media], prices, 0), realtime


def test_price_by_name_then_by_a_channel_alias() -> None:
    catalog, channel = _catalog()
    assert transcription_price(catalog, channel, "gpt-4o-transcribe") == (
        "gpt-4o-transcribe",
        catalog.prices["gpt-4o-transcribe"],
    )
    assert transcription_price(catalog, channel, "whisper-1") == ("whisper-mock", PER_MINUTE)
    assert transcription_price(catalog, None, "whisper-1") == ("whisper-mock", PER_MINUTE)
    assert transcription_price(catalog, channel, "gpt-4o-mini-transcribe") is None


def _completed(item: str, usage: Any, transcript: str = "one two three") -> dict[str, Any]:
    event = {"type": COMPLETED, "item_id": item, "content_index": 0, "transcript": transcript}
    return event | ({"usage": usage} if usage is not None else {})


def test_meter_learns_the_model_and_charges_each_item_once() -> None:
    catalog, channel = _catalog()
    meter, tokenizer = TranscriptionMeter("test"), Tokenizer()
    meter.learn_from_client(
        '{"type":"session.update","session":{"audio":{"input":{"transcription":'
        '{"model":"whisper-1"}}}}}'
    )
    assert meter.model == "whisper-1"
    meter.learn({"instructions": "partial update"})  # does not mention transcription
    assert meter.model == "whisper-1"
    event = _completed("item_1", {"type": "duration", "seconds": 0.4})
    assert meter.charge(event, catalog, channel, tokenizer) == TranscriptionCharge(
        "whisper-mock", "whisper-1", 100_000_000, Usage()
    )
    assert meter.charge(event, catalog, channel, tokenizer) is None  # repeated: not again
    other = _completed("item_1", {"type": "duration", "seconds": 0.4}) | {"content_index": 1}
    assert meter.charge(other, catalog, channel, tokenizer) is not None
    meter.learn({"input_audio_transcription": {"model": "gpt-4o-transcribe"}})  # beta echo
    charge = meter.charge(_completed("item_2", TOKENS), catalog, channel, tokenizer)
    assert charge == TranscriptionCharge("gpt-4o-transcribe", "gpt-4o-transcribe", 25, Usage(18, 7))
    meter.learn({"audio": {"input": {"transcription": None}}})
    assert meter.model is None


def test_meter_records_unpriced_or_unreadable_at_zero_and_warns_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    catalog, channel = _catalog()
    meter, tokenizer = TranscriptionMeter("user 7"), Tokenizer()
    meter.learn({"audio": {"input": {"transcription": {"model": "gpt-4o-mini-transcribe"}}}})
    with caplog.at_level(logging.WARNING, logger="switchgate.realtime"):
        charges = [
            meter.charge(_completed(f"item_{n}", TOKENS), catalog, channel, tokenizer)
            for n in range(3)
        ]
        missing = [
            meter.charge(_completed(f"bad_{n}", usage), catalog, channel, tokenizer)
            for n, usage in enumerate([None, {"type": "duration", "seconds": "x"}])
        ]
    name = "gpt-4o-mini-transcribe"
    assert charges == [TranscriptionCharge(name, name, 0, Usage(18, 7))] * 3
    assert missing == [TranscriptionCharge(name, name, 0, None)] * 2
    messages = [r.getMessage() for r in caplog.records]
    assert sum("'gpt-4o-mini-transcribe' has no price" in m for m in messages) == 1
    assert sum("without readable usage" in m for m in messages) == 1
    assert all("user 7" in m for m in messages)
    unknown = TranscriptionMeter("u")  # transcription on, but the model never seen
    charge = unknown.charge(_completed("i", TOKENS), catalog, channel, tokenizer)
    assert charge == TranscriptionCharge(None, None, 0, Usage(18, 7))
