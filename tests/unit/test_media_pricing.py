"""billing/media_pricing.py: exact integer costs for the non-chat endpoints (table-driven)."""

from decimal import Decimal
from typing import Any

import pytest

from switchgate.billing.media_pricing import (
    billable_seconds,
    describe_extra,
    image_cost,
    image_hold,
    image_unit_price,
    input_token_cost,
    media_extra,
    minutes_cost,
    parse_image_price,
    speech_cost,
    transcription_cost,
    transcription_hold,
)
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage
from switchgate.money import MoneyError

U = 10**12  # units per USD
IMAGES = Price(
    "img",
    kind="image",
    per_request=7,
    extra={"image": 40 * U // 1000, "image:1024x1024:hd": 80 * U // 1000, "image:1792x1024": 120},
)
ONLY_SIZED = Price("img2", extra={"image:1024x1024": 5, "image:512x512": 3})
TOKENS = Price("gpt-image", input=5, output=40, per_request=1)


@pytest.mark.parametrize(
    ("price", "size", "quality", "expected"),
    [
        (IMAGES, "1024x1024", "hd", 80 * U // 1000),  # size and quality
        (IMAGES, "1792x1024", "hd", 120),  # size only
        (IMAGES, "1792x1024", None, 120),
        (IMAGES, "1024x1024", "standard", 40 * U // 1000),  # the `image` fallback
        (IMAGES, None, None, 40 * U // 1000),
        (ONLY_SIZED, "256x256", None, 5),  # no match, no fallback: the dearest
        (ONLY_SIZED, "512x512", "low", 3),
        (TOKENS, "1024x1024", "high", None),  # no image keys
    ],
)
def test_image_unit_price(price: Price, size: Any, quality: Any, expected: int | None) -> None:
    assert image_unit_price(price, size, quality) == expected


@pytest.mark.parametrize(
    ("price", "images", "size", "quality", "usage", "expected"),
    [
        (IMAGES, 2, "1024x1024", "hd", None, 2 * 80 * U // 1000 + 7),
        (IMAGES, 3, "1792x1024", None, Usage(100, 100), 3 * 120 + 7),  # per image wins
        (TOKENS, 1, "1024x1024", "high", Usage(10, 100), 10 * 5 + 100 * 40 + 1),
        (TOKENS, 1, None, None, None, 1),  # nothing known: per_request only
        (IMAGES, 0, "1024x1024", "hd", None, 7),
    ],
)
def test_image_cost(
    price: Price, images: int, size: Any, quality: Any, usage: Usage | None, expected: int
) -> None:
    assert image_cost(price, images, size, quality, usage) == expected


def test_image_hold_covers_every_size() -> None:
    assert image_hold(IMAGES, 2, 1000, 8000) == 2 * 80 * U // 1000 + 7
    assert image_hold(TOKENS, 2, 10, 100) == 10 * 5 + 200 * 40 + 1
    for size, quality in (("1024x1024", "hd"), ("1792x1024", "x"), (None, None)):
        assert image_hold(IMAGES, 1, 0, 0) >= image_cost(IMAGES, 1, size, quality, None)


@pytest.mark.parametrize(
    ("price", "characters", "tokens", "expected"),
    [
        (Price("tts", extra={"per_character": 15_000_000}), 11, 3, 11 * 15_000_000),
        (Price("tts", extra={"per_character": 2}, per_request=5, input=100), 10, 3, 25),
        (Price("tts", input=100, per_request=5), 10, 3, 305),  # no character price: tokens
    ],
)
def test_speech_cost(price: Price, characters: int, tokens: int, expected: int) -> None:
    assert speech_cost(price, characters, tokens) == expected


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [(0, 0), (2.5, 3), ("3.0", 3), (3.0001, 4), (Decimal("59.999"), 60), (60, 60), (0.001, 1)],
)
def test_billable_seconds_round_up(duration: Any, seconds: int) -> None:
    assert billable_seconds(duration) == seconds


@pytest.mark.parametrize("bad", [-1, "abc", float("nan"), float("inf")])
def test_billable_seconds_rejects_nonsense(bad: Any) -> None:
    with pytest.raises(ValueError):
        billable_seconds(bad)


@pytest.mark.parametrize(
    ("per_minute", "seconds", "expected"),
    [
        (6 * 10**9, 3, 3 * 10**8),  # $0.006/min, 3 s: exact
        (7, 1, 1),  # 7/60 of a unit rounds UP to 1
        (7, 60, 7),
        (61, 61, 63),  # 62.01... -> 63
        (10**9, 0, 0),
    ],
)
def test_minutes_cost(per_minute: int, seconds: int, expected: int) -> None:
    assert minutes_cost(per_minute, seconds) == expected


WHISPER = Price("whisper", extra={"per_minute": 6 * 10**9}, per_request=1)
GPT_STT = Price("gpt-4o-transcribe", input=2, output=10)


@pytest.mark.parametrize(
    ("price", "seconds", "usage", "expected"),
    [
        (WHISPER, 3, None, 3 * 10**8 + 1),
        (WHISPER, 3, Usage(100, 100), 3 * 10**8 + 1),  # per minute wins over tokens
        (WHISPER, None, None, 1),
        (GPT_STT, 3, Usage(30, 7), 30 * 2 + 7 * 10),
        (GPT_STT, None, None, 0),
    ],
)
def test_transcription_cost(
    price: Price, seconds: int | None, usage: Usage | None, expected: int
) -> None:
    assert transcription_cost(price, seconds, usage) == expected


def test_transcription_hold_takes_the_dearer_metering() -> None:
    both = Price("m", input=1, output=1, per_request=2, extra={"per_minute": 600})
    assert transcription_hold(both, 60, 10, 10) == 600 + 2
    assert transcription_hold(both, 1, 100, 100) == 200 + 2
    assert transcription_hold(GPT_STT, 5, 10, 10) == 10 * 2 + 10 * 10


def test_input_token_cost() -> None:
    assert input_token_cost(Price("e", input=3, per_request=4), 10) == 34


def test_media_extra_from_operator_input() -> None:
    extra = media_extra(
        per_image="0.04",
        image_prices=[("1024x1024:hd", "0.08"), ("1792x1024", "0.12")],
        per_1m_characters="15",
        per_minute="0.006",
    )
    assert extra == {
        "image": 40_000_000_000,
        "image:1024x1024:hd": 80_000_000_000,
        "image:1792x1024": 120_000_000_000,
        "per_character": 15_000_000,
        "per_minute": 6_000_000_000,
    }
    assert media_extra() == {}
    described = describe_extra(extra)
    assert "per_1m_characters 15" in described and "per_minute 0.006" in described
    assert "image:1024x1024:hd 0.08" in described


@pytest.mark.parametrize(
    "kwargs",
    [
        {"per_image": "-1"},
        {"per_image": "abc"},
        {"image_prices": {"a:b:c": "1"}},
        {"image_prices": {":hd": "1"}},
        {"per_1m_characters": "0.0000001"},  # finer than one unit per character
    ],
)
def test_media_extra_refuses_bad_input(kwargs: dict[str, Any]) -> None:
    with pytest.raises(MoneyError):
        media_extra(**kwargs)


def test_parse_image_price() -> None:
    assert parse_image_price("1024x1024:hd=0.08") == ("1024x1024:hd", "0.08")
    with pytest.raises(MoneyError):
        parse_image_price("1024x1024")
