"""console/api/prices.py: a price edit merges into the stored price (never drops a field
the form did not send), clears what is sent empty, and refuses bad input clearly."""

from typing import Any

import pytest

from switchgate.billing.pricing import Price, charges_nothing
from switchgate.console.api.prices import merge_price, price_view
from switchgate.console.deps import ApiError

U = 10**12
DALL = Price(
    "dall",
    kind="image",
    per_request=0,
    extra={"image": 40 * U // 1000, "image:1024x1024:hd": 80 * U // 1000},
)


def test_an_edit_that_sends_only_token_fields_keeps_the_image_prices() -> None:
    merged = merge_price(DALL, {"kind": "image", "input_per_1m": "5", "output_per_1m": ""})
    assert merged.extra == DALL.extra
    assert merged.input == 5 * U // 10**6 and merged.output == 0


def test_saving_the_view_unchanged_is_a_no_op_for_every_kind() -> None:
    prices = [
        DALL,
        Price("gpt", input=1_000_000, output=2_000_000, cache_read=500_000, cache_write=3),
        Price("tts", kind="tts", extra={"per_character": 15_000_000}),
        Price("whisper", kind="stt", extra={"per_minute": 6 * U // 1000}, per_request=7),
        Price("rr", kind="rerank", per_request=2 * U // 1000),
    ]
    for price in prices:
        view = price_view(price)
        body = {k: v for k, v in view.items() if k not in ("model", "priced", "summary")}
        assert merge_price(price, body) == price


@pytest.mark.parametrize(
    ("body", "extra"),
    [
        ({"per_image_usd": "0.05"}, {**DALL.extra, "image": 5 * U // 100}),
        ({"per_image_usd": None}, {"image:1024x1024:hd": 80 * U // 1000}),
        ({"image_prices": {"512x512": "0.01"}}, {"image": 40 * U // 1000, "image:512x512": 10**10}),
        ({"image_prices": {}}, {"image": 40 * U // 1000}),
        ({"per_1m_characters": "15"}, {**DALL.extra, "per_character": 15_000_000}),
        ({"per_minute_usd": "0.006"}, {**DALL.extra, "per_minute": 6 * U // 1000}),
    ],
)
def test_media_fields_set_and_clear(body: dict[str, Any], extra: dict[str, int]) -> None:
    assert merge_price(DALL, body).extra == extra


def test_cache_prices_clear_back_to_the_input_price() -> None:
    price = Price("gpt", input=10, output=20, cache_read=5)
    assert merge_price(price, {"cache_read_per_1m": ""}).cache_read is None
    assert merge_price(price, {}).cache_read == 5


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"inptu_per_1m": "1"}, "unknown price field(s): inptu_per_1m"),
        ({"kind": "video"}, "unknown price kind"),
        ({"input_per_1m": "-1"}, "input_per_1m"),
        ({"per_image_usd": "abc"}, "per_image_usd"),
        ({"per_image_usd": True}, "USD amount"),
        ({"image_prices": {"a:b:c": "1"}}, "SIZE or SIZE:QUALITY"),
        ({"image_prices": ["1024x1024"]}, "must be an object"),
    ],
)
def test_bad_input_is_a_clear_400(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ApiError) as caught:
        merge_price(DALL, body)
    assert caught.value.status == 400 and message in caught.value.message


def test_a_price_with_nothing_above_zero_charges_nothing() -> None:
    assert charges_nothing(Price("x", kind="image"))
    assert charges_nothing(Price("x", kind="image", extra={"image": 0}))
    assert not charges_nothing(DALL)
    assert not charges_nothing(Price("x", per_request=1))


@pytest.mark.parametrize(
    ("price", "summary"),
    [
        (DALL, ["$0.04 per image", "1024x1024:hd: $0.08 per image"]),
        (Price("t", kind="tts", extra={"per_character": 15_000_000}), ["$15 per 1M characters"]),
        (
            Price("w", kind="stt", extra={"per_minute": 6 * U // 1000}),
            ["$0.006 per minute of audio"],
        ),
        (Price("g", input=1_000_000, output=2_500_000), ["$1 in / $2.5 out per 1M tokens"]),
        (Price("r", kind="rerank", per_request=2 * U // 1000), ["$0.002 per request"]),
        (Price("free", kind="image"), ["no price set"]),
    ],
)
def test_the_summary_names_the_real_units(price: Price, summary: list[str]) -> None:
    assert price_view(price)["summary"] == summary
