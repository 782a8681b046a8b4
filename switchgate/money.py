"""Exact money: every amount is an integer count of pico-dollars (1 USD = 10**12 units).

Prices are stored per single base unit (one token, one character, one image, one
second, one request) in the same units, so a cost is always `quantity * price`:
an exact integer product, never a float. A price of $0.000001 per 1M tokens is one
unit per token, the finest price per token the catalogue can hold.

Amounts are 64-bit signed integers in storage, so one balance holds at most
about 9.2 million USD (MAX_AMOUNT). Prices are capped well below that (MAX_TOKEN_PRICE,
MAX_ITEM_PRICE) and refused above it when set; one request's charge is capped at
MAX_CHARGE, so no price or usage can make a charge the storage cannot hold.
"""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Final

UNITS_PER_USD: Final = 10**12
TOKENS_PER_MILLION: Final = 10**6
MAX_AMOUNT: Final = 2**63 - 1
# The dearest price per token (or per character): $10,000 per 1M.
MAX_TOKEN_PRICE: Final = 10**10
# The dearest price per item (image, request, minute of audio): $10,000.
MAX_ITEM_PRICE: Final = 10**16
# The most one request is ever charged: $1,000,000 (a larger computed cost is charged at
# this cap, logged and counted; see billing/recorder.py).
MAX_CHARGE: Final = 10**18


class MoneyError(ValueError):
    """An amount or price that cannot be represented exactly."""


def _decimal(text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation as exc:
        raise MoneyError(f"not a number: {text!r}") from exc
    if not value.is_finite():
        raise MoneyError(f"not a finite number: {text!r}")
    return value


def usd_to_units(text: str, *, allow_negative: bool = False) -> int:
    """Parse a USD amount such as "10.50" into units, exactly (at most 12 decimals)."""
    value = _decimal(text) * UNITS_PER_USD
    if value != value.to_integral_value():
        raise MoneyError(f"{text!r} has more than 12 decimal places")
    units = int(value)
    if units < 0 and not allow_negative:
        raise MoneyError(f"amount must not be negative: {text!r}")
    if abs(units) > MAX_AMOUNT:
        raise MoneyError(f"amount too large: {text!r}")
    return units


def per_million_to_unit_price(text: str) -> int:
    """Parse a price in USD per 1M base units (e.g. "0.15") into units per base unit."""
    value = _decimal(text) * UNITS_PER_USD / TOKENS_PER_MILLION
    if value < 0:
        raise MoneyError(f"price must not be negative: {text!r}")
    if value != value.to_integral_value():
        raise MoneyError(f"{text!r} per 1M is finer than $0.000001 per 1M")
    if value > MAX_TOKEN_PRICE:
        raise MoneyError(
            f"price too large: {text!r} per 1M (at most "
            f"{unit_price_to_per_million(MAX_TOKEN_PRICE)} per 1M)"
        )
    return int(value)


def per_item_to_unit_price(text: str) -> int:
    """Parse a price in USD per single item (image, request, minute) into units."""
    units = usd_to_units(text)
    if units > MAX_ITEM_PRICE:
        raise MoneyError(
            f"price too large: {text!r} per item (at most {format_usd_exact(MAX_ITEM_PRICE)})"
        )
    return units


def check_price(name: str, units: int, *, per_token: bool) -> int:
    """A stored price must be a non-negative integer within its cap (MoneyError if not):
    what parsing above guarantees, checked again where prices are written."""
    if isinstance(units, bool) or not isinstance(units, int) or units < 0:
        raise MoneyError(f"price {name} must be a non-negative number of units, got {units!r}")
    cap = MAX_TOKEN_PRICE if per_token else MAX_ITEM_PRICE
    if units > cap:
        if per_token:
            shown = f"{unit_price_to_per_million(units)} USD per 1M (at most "
            shown += f"{unit_price_to_per_million(cap)})"
        else:
            shown = f"{format_usd_exact(units)} USD (at most {format_usd_exact(cap)})"
        raise MoneyError(f"price {name} too large: {shown}")
    return units


def format_usd(units: int, places: int = 6) -> str:
    """Render units as a USD string, e.g. 1_500_000_000_000 -> "1.500000".

    `places=12` is exact; fewer places round half away from zero for display only.
    """
    value = Decimal(units).scaleb(-12)  # exact: no division, no context precision
    quantum = Decimal(1).scaleb(-places)
    return format(value.quantize(quantum, rounding=ROUND_HALF_UP), "f")  # away from zero


def format_usd_exact(units: int) -> str:
    """Render units as USD with all 12 decimals, trailing zeros trimmed to 2 places."""
    sign = "-" if units < 0 else ""
    whole, frac = divmod(abs(units), UNITS_PER_USD)
    frac_text = f"{frac:012d}".rstrip("0")
    frac_text = frac_text.ljust(2, "0")
    return f"{sign}{whole}.{frac_text}"


def unit_price_to_per_million(price: int) -> str:
    """Render a per-unit price as USD per 1M units (the form operators type)."""
    value = Decimal(price) * TOKENS_PER_MILLION / UNITS_PER_USD
    return format(value.normalize(), "f")
