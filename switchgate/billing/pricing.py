"""Pure pricing: a model's price and a usage in, an exact integer cost out."""

from dataclasses import dataclass, field

from switchgate.core.usage import Usage


@dataclass(frozen=True, slots=True)
class Price:
    """Units (pico-USD) per single base unit; cache prices default to the input price."""

    model: str
    kind: str = "chat"
    input: int = 0
    output: int = 0
    cache_read: int | None = None
    cache_write: int | None = None
    per_request: int = 0
    # Media prices in units by name (image, image:SIZE[:QUALITY], per_character,
    # per_minute): see billing/media_pricing.py.
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def cache_read_price(self) -> int:
        return self.input if self.cache_read is None else self.cache_read

    @property
    def cache_write_price(self) -> int:
        return self.input if self.cache_write is None else self.cache_write


def charges_nothing(price: Price) -> bool:
    """True when no part of the price is above zero: serving the model would be free by
    mistake (e.g. an image model whose per-image price was never set), so it is refused."""
    return not (
        price.input
        or price.output
        or price.per_request
        or price.cache_read
        or price.cache_write
        or any(price.extra.values())
    )


def token_cost(price: Price, usage: Usage) -> int:
    """What a token-metered call costs: each token class at its own price, plus per-request."""
    return (
        usage.uncached_input_tokens * price.input
        + usage.cache_read_tokens * price.cache_read_price
        + usage.cache_write_tokens * price.cache_write_price
        + usage.output_tokens * price.output
        + price.per_request
    )


def token_hold(price: Price, input_tokens: int, max_output_tokens: int) -> int:
    """The worst case a call can cost, reserved before it starts."""
    worst_input_price = max(price.input, price.cache_write_price)
    return input_tokens * worst_input_price + max_output_tokens * price.output + price.per_request


def estimate_input_tokens(body_size: int) -> int:
    """An upper-bound guess from the request size (about 3 bytes per token or more)."""
    return body_size // 3 + 16
