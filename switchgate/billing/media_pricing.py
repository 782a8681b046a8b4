"""Pure pricing for the non-chat endpoints: embeddings, images, speech, transcription, rerank.

Every price is an integer number of units (pico-USD); every cost is an exact integer.
Token-metered parts reuse `pricing.token_cost` (the `input` / `output` token prices).
Media prices live in `Price.extra`, keyed by what they are charged for:

    key                       value                          set by
    image                     units per image (any size)     --per-image USD
    image:SIZE                units per image of that size   --image-price SIZE=USD
    image:SIZE:QUALITY        units per image                --image-price SIZE:QUALITY=USD
    per_character             units per input character      --per-1m-characters USD (per 1M)
    per_minute                units per minute of audio      --per-minute USD

Rules (docs/endpoints.md explains them for operators):
- Images: when the price has any `image*` key, each returned image costs the most specific
  match (SIZE:QUALITY, then SIZE, then `image`); a size/quality with no match costs the
  dearest image price (never free by mistake). Without image keys, the upstream's token
  usage is billed at the token prices. `per_request` is always added.
- Speech: `per_character` x characters of `input` when set, else the input's tokens at the
  `input` price.
- Transcription: `per_minute` when set and the duration is known: the duration is rounded
  UP to whole seconds and `per_minute * seconds / 60` rounded UP to the next unit, so a
  price per minute never needs to divide by 60. Otherwise the upstream's token usage.
- Rerank and embeddings: tokens x `input` (+ `per_request`).
"""

from collections.abc import Iterable, Mapping
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Final

from switchgate.billing.pricing import Price, token_cost
from switchgate.core.usage import Usage
from switchgate.money import (
    MoneyError,
    format_usd_exact,
    per_million_to_unit_price,
    unit_price_to_per_million,
    usd_to_units,
)

IMAGE: Final = "image"
PER_CHARACTER: Final = "per_character"
PER_MINUTE: Final = "per_minute"
SECONDS_PER_MINUTE: Final = 60
# Audio tokens per second of speech, for estimates only: the input tokens of a per-token
# transcription the upstream reported no usage for, the duration of one that reported only
# tokens (Realtime transcription at a per-minute price).
AUDIO_TOKENS_PER_SECOND: Final = 10


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


# ---------------------------------------------------------------- images


def image_prices(price: Price) -> dict[str, int]:
    return {k: v for k, v in price.extra.items() if k == IMAGE or k.startswith(IMAGE + ":")}


def image_unit_price(price: Price, size: str | None, quality: str | None) -> int | None:
    """Units per image for this size and quality; None when the price has no image keys."""
    prices = image_prices(price)
    if not prices:
        return None
    size, quality = size or "auto", quality or "auto"
    for key in (f"{IMAGE}:{size}:{quality}", f"{IMAGE}:{size}", IMAGE):
        if key in prices:
            return prices[key]
    return max(prices.values())


def image_cost(
    price: Price, images: int, size: str | None, quality: str | None, usage: Usage | None
) -> int:
    unit = image_unit_price(price, size, quality)
    if unit is not None:
        return images * unit + price.per_request
    if usage is not None:
        return token_cost(price, usage)
    return price.per_request


def image_hold(price: Price, n: int, input_tokens: int, output_tokens_per_image: int) -> int:
    """Worst case for `n` images: the dearest image price, or tokens when none is set."""
    prices = image_prices(price)
    if prices:
        return n * max(prices.values()) + price.per_request
    usage = Usage(input_tokens=input_tokens, output_tokens=n * output_tokens_per_image)
    return token_cost(price, usage)


# ---------------------------------------------------------------- embeddings, rerank


def input_token_cost(price: Price, tokens: int) -> int:
    """Embeddings and rerank: tokens at the input price, plus per_request."""
    return tokens * price.input + price.per_request


# ---------------------------------------------------------------- audio


def speech_cost(price: Price, characters: int, input_tokens: int) -> int:
    per_character = price.extra.get(PER_CHARACTER, 0)
    if per_character:
        return characters * per_character + price.per_request
    return input_tokens * price.input + price.per_request


def billable_seconds(duration: float | int | str | Decimal) -> int:
    """A reported duration rounded UP to whole seconds (decimal, so 3.2 means 3.2)."""
    try:
        value = duration if isinstance(duration, Decimal) else Decimal(str(duration))
    except InvalidOperation as exc:
        raise ValueError(f"not a duration: {duration!r}") from exc
    if not value.is_finite() or value < 0:
        raise ValueError(f"not a duration: {duration!r}")
    return int(value.to_integral_value(rounding=ROUND_CEILING))


def minutes_cost(units_per_minute: int, seconds: int) -> int:
    """`units_per_minute * seconds / 60`, rounded UP to the next unit."""
    return _ceil_div(units_per_minute * seconds, SECONDS_PER_MINUTE)


def transcription_cost(price: Price, seconds: int | None, usage: Usage | None) -> int:
    per_minute = price.extra.get(PER_MINUTE, 0)
    if per_minute and seconds is not None:
        return minutes_cost(per_minute, seconds) + price.per_request
    if usage is not None:
        return token_cost(price, usage)
    return price.per_request


def transcription_hold(price: Price, seconds: int, input_tokens: int, output_tokens: int) -> int:
    """Worst case: whichever of the two meterings costs more for these estimates."""
    per_minute = price.extra.get(PER_MINUTE, 0)
    by_time = minutes_cost(per_minute, seconds) if per_minute else 0
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens)
    by_tokens = token_cost(price, usage) - price.per_request
    return max(by_time, by_tokens) + price.per_request


# ---------------------------------------------------------------- operator input


def media_extra(
    *,
    per_image: str | None = None,
    image_prices: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    per_1m_characters: str | None = None,
    per_minute: str | None = None,
) -> dict[str, int]:
    """The `extra` map for the operator's media options (USD strings in, units out).

    `image_prices` maps "SIZE" or "SIZE:QUALITY" to USD per image."""
    extra: dict[str, int] = {}
    if per_image is not None:
        extra[IMAGE] = usd_to_units(per_image)
    pairs = image_prices.items() if isinstance(image_prices, Mapping) else image_prices
    for raw, usd in pairs:
        spec = raw.strip()
        parts = spec.split(":")
        if not spec or len(parts) > 2 or not all(parts):
            raise MoneyError(f"image price key must be SIZE or SIZE:QUALITY, got {raw!r}")
        extra[f"{IMAGE}:{spec}"] = usd_to_units(usd)
    if per_1m_characters is not None:
        extra[PER_CHARACTER] = per_million_to_unit_price(per_1m_characters)
    if per_minute is not None:
        extra[PER_MINUTE] = usd_to_units(per_minute)
    return extra


def parse_image_price(text: str) -> tuple[str, str]:
    """`SIZE:QUALITY=USD` (or `SIZE=USD`) -> (key, usd)."""
    key, sep, usd = text.partition("=")
    if not sep or not key.strip() or not usd.strip():
        raise MoneyError(f"--image-price must look like SIZE:QUALITY=USD, got {text!r}")
    return key.strip(), usd.strip()


def describe_extra(extra: Mapping[str, int]) -> str:
    """The media prices in the units operators type them in (for `prices list`)."""
    out: list[str] = []
    for key in sorted(extra):
        value = extra[key]
        if key == PER_CHARACTER:
            out.append(f"per_1m_characters {unit_price_to_per_million(value)}")
        elif key == PER_MINUTE:
            out.append(f"per_minute {format_usd_exact(value)}")
        elif key == IMAGE or key.startswith(IMAGE + ":"):
            out.append(f"{key} {format_usd_exact(value)}")
        else:
            out.append(f"{key} {value}")
    return ", ".join(out)
