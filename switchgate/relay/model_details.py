"""The extra fields of `GET /v1/models?details=true`: what the gateway knows about each
served model (its own price, and the catalogue's context window, output limit and
capabilities), in the field names OpenRouter-style clients read. Without `details` the
list stays the plain OpenAI shape."""

from decimal import Decimal
from typing import Any

from switchgate.catalog import Catalog
from switchgate.money import UNITS_PER_USD

DETAIL_VALUES = ("1", "true", "yes")


def _usd_per_unit(units: int) -> str:
    return format((Decimal(units) / UNITS_PER_USD).normalize(), "f")


def model_details(model: str, catalog: Catalog) -> dict[str, Any]:
    out: dict[str, Any] = {}
    price = catalog.prices.get(model)
    if price is not None:
        pricing = {"prompt": _usd_per_unit(price.input), "completion": _usd_per_unit(price.output)}
        if price.cache_read is not None:
            pricing["input_cache_read"] = _usd_per_unit(price.cache_read)
        if price.cache_write is not None:
            pricing["input_cache_write"] = _usd_per_unit(price.cache_write)
        if price.per_request:
            pricing["request"] = _usd_per_unit(price.per_request)
        out["pricing"] = pricing
    limits = catalog.limits.get(model)
    if limits is not None:
        out["context_length"] = limits.context_window
        out["top_provider"] = {
            "context_length": limits.context_window,
            "max_completion_tokens": limits.max_output,
        }
        if limits.capabilities is not None:
            out["capabilities"] = sorted(limits.capabilities)
    return out
