"""The model catalogue with every kind of price, and editing prices from the console.

A price update MERGES into the stored price: a field the body leaves out keeps its value,
so a form that shows only some fields (or an older script) never drops the others, e.g.
an image model's per-image price. A field sent as null or "" is cleared (a cache price
then falls back to the input price; a media price is removed).
"""

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final

from starlette.requests import Request

from switchgate.billing import prices as price_service
from switchgate.billing.media_pricing import IMAGE, PER_CHARACTER, PER_MINUTE, image_prices
from switchgate.billing.pricing import Price, charges_nothing
from switchgate.catalog import Catalog
from switchgate.console.api.registry import USD, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, json_body
from switchgate.money import (
    MoneyError,
    format_usd_exact,
    per_million_to_unit_price,
    unit_price_to_per_million,
    usd_to_units,
)


def _per_m(units: int | None) -> str | None:
    return None if units is None else unit_price_to_per_million(units)


def _usd(units: int | None) -> str | None:
    return None if units is None else format_usd_exact(units)


def _money(units: int, per_million: bool = False) -> str:
    text = unit_price_to_per_million(units) if per_million else format_usd_exact(units)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"${text}"


def price_summary(price: Price) -> list[str]:
    """The price in words, in the units it is charged in ("$0.04 per image", "$1 in /
    $2 out per 1M tokens"); never "$0 / $0 per 1M" for a model charged otherwise."""
    extra = price.extra
    out = []
    if IMAGE in extra:
        out.append(f"{_money(extra[IMAGE])} per image")
    for key, units in sorted(image_prices(price).items()):
        if key != IMAGE:
            out.append(f"{key.removeprefix(IMAGE + ':')}: {_money(units)} per image")
    if PER_CHARACTER in extra:
        out.append(f"{_money(extra[PER_CHARACTER], True)} per 1M characters")
    if PER_MINUTE in extra:
        out.append(f"{_money(extra[PER_MINUTE])} per minute of audio")
    if price.input and price.output:
        pair = f"{_money(price.input, True)} in / {_money(price.output, True)} out"
        out.append(f"{pair} per 1M tokens")
    elif price.input:
        out.append(f"{_money(price.input, True)} per 1M input tokens")
    elif price.output:
        out.append(f"{_money(price.output, True)} per 1M output tokens")
    if price.cache_read is not None:
        out.append(f"cached input {_money(price.cache_read, True)} per 1M")
    if price.cache_write is not None:
        out.append(f"cache writes {_money(price.cache_write, True)} per 1M")
    if price.per_request:
        out.append(f"{_money(price.per_request)} per request")
    return out or ["no price set"]


def price_view(price: Price) -> dict[str, Any]:
    """Every price of a model in the units operators type (USD per 1M tokens/characters,
    USD per image, minute, request)."""
    extra = price.extra
    sizes = {k.removeprefix(IMAGE + ":"): v for k, v in image_prices(price).items() if k != IMAGE}
    return {
        "model": price.model,
        "kind": price.kind,
        "input_per_1m": unit_price_to_per_million(price.input),
        "output_per_1m": unit_price_to_per_million(price.output),
        "cache_read_per_1m": _per_m(price.cache_read),
        "cache_write_per_1m": _per_m(price.cache_write),
        "per_request_usd": format_usd_exact(price.per_request),
        "per_image_usd": _usd(extra.get(IMAGE)),
        "image_prices": {size: format_usd_exact(v) for size, v in sorted(sizes.items())},
        "per_1m_characters": _per_m(extra.get(PER_CHARACTER)),
        "per_minute_usd": _usd(extra.get(PER_MINUTE)),
        "priced": not charges_nothing(price),
        "summary": price_summary(price),
    }


def catalog_items(catalog: Catalog, *, include_unserved: bool) -> list[dict[str, Any]]:
    served = set(catalog.models())
    return [
        {**price_view(price), "served": name in served}
        for name, price in sorted(catalog.prices.items())
        if name in served or include_unserved
    ]


async def models(request: Request, actor: Actor) -> dict[str, Any]:
    """Served models for everyone; admins also see priced models no channel serves."""
    catalog = gw(request).catalog
    unpriced = sorted(set(catalog.channels_by_model) - set(catalog.prices))
    return {
        "items": catalog_items(catalog, include_unserved=actor.is_admin),
        "unpriced": unpriced if actor.is_admin else [],
    }


def _text(value: Any, name: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ApiError(400, f'{name} must be a USD amount such as "1.50"', "invalid")
    return str(value).strip()


def _parsed(value: Any, name: str, parse: Callable[[str], int]) -> int | None:
    text = _text(value, name)
    if text is None:
        return None
    try:
        return parse(text)
    except MoneyError as exc:
        raise ApiError(400, f"{name}: {exc}", "invalid") from exc


def _image_sizes(value: Any) -> dict[str, int]:
    if value is None or value == "":
        return {}
    if not isinstance(value, Mapping):
        example = '{"1024x1024:hd": "0.08"}'
        raise ApiError(400, f"image_prices must be an object like {example}", "invalid")
    out: dict[str, int] = {}
    for raw, usd in value.items():
        spec = str(raw).strip()
        parts = spec.split(":")
        if not spec or len(parts) > 2 or not all(p.strip() for p in parts):
            message = f"image price key must be SIZE or SIZE:QUALITY, got {raw!r}"
            raise ApiError(400, message, "invalid")
        units = _parsed(usd, f"image_prices[{spec}]", usd_to_units)
        if units is not None:
            out[f"{IMAGE}:{spec}"] = units
    return out


# body field -> (how to parse it, which attribute or extra key it sets)
_TOKEN_FIELDS: Final = {
    "input_per_1m": "input",
    "output_per_1m": "output",
    "cache_read_per_1m": "cache_read",
    "cache_write_per_1m": "cache_write",
}
_EXTRA_FIELDS: Final[dict[str, tuple[str, Callable[[str], int]]]] = {
    "per_image_usd": (IMAGE, usd_to_units),
    "per_1m_characters": (PER_CHARACTER, per_million_to_unit_price),
    "per_minute_usd": (PER_MINUTE, usd_to_units),
}
FIELDS: Final = frozenset(
    {"kind", "per_request_usd", "image_prices", *_TOKEN_FIELDS, *_EXTRA_FIELDS}
)


def merge_price(old: Price, body: Mapping[str, Any]) -> Price:
    """`old` with the fields `body` names changed (pure; see the module docstring)."""
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise ApiError(400, f"unknown price field(s): {', '.join(unknown)}", "invalid")
    kind = str(body.get("kind") or old.kind)
    if kind not in price_service.PRICE_KINDS:
        known = ", ".join(price_service.PRICE_KINDS)
        raise ApiError(400, f"unknown price kind {kind!r}; known: {known}", "invalid")
    changes: dict[str, Any] = {"kind": kind}
    for name, attr in _TOKEN_FIELDS.items():
        if name in body:
            units = _parsed(body[name], name, per_million_to_unit_price)
            changes[attr] = units if attr.startswith("cache") else units or 0
    if "per_request_usd" in body:
        changes["per_request"] = _parsed(body["per_request_usd"], "per_request_usd", usd_to_units)
        changes["per_request"] = changes["per_request"] or 0
    extra = dict(old.extra)
    for name, (key, parse) in _EXTRA_FIELDS.items():
        if name in body:
            units = _parsed(body[name], name, parse)
            extra.pop(key, None)
            if units is not None:
                extra[key] = units
    if "image_prices" in body:
        extra = {k: v for k, v in extra.items() if not k.startswith(IMAGE + ":")}
        extra.update(_image_sizes(body["image_prices"]))
    return replace(old, **changes, extra=extra)


async def set_price(request: Request, actor: Actor) -> dict[str, Any]:
    model = str(request.path_params["model"]).strip()
    if not model:
        raise ApiError(400, "a model name is needed", "invalid")
    body = await json_body(request)
    state = gw(request)
    async with state.db.begin() as conn:
        old = (await price_service.load_prices(conn)).get(model) or Price(model=model)
        new = merge_price(old, body)
        await price_service.set_price(
            conn,
            model,
            kind=new.kind,
            input=new.input,
            output=new.output,
            cache_read=new.cache_read,
            cache_write=new.cache_write,
            per_request=new.per_request,
            extra=new.extra,
        )
    return {"ok": True, "price": price_view(new)}


async def delete_price(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.begin() as conn:
        found = await price_service.delete_price(conn, str(request.path_params["model"]))
    if not found:
        raise ApiError(404, "no price for this model", "not_found")
    return {"ok": True}


PRICE_BODY = obj(
    kind={"enum": list(price_service.PRICE_KINDS)},
    input_per_1m=USD,
    output_per_1m=USD,
    cache_read_per_1m=USD,
    cache_write_per_1m=USD,
    per_request_usd=USD,
    per_image_usd=USD,
    image_prices={
        "type": ["object", "null"],
        "additionalProperties": USD,
        "description": 'USD per image by "SIZE" or "SIZE:QUALITY"; replaces all of them',
    },
    per_1m_characters={"type": "string", "description": "USD per 1M input characters"},
    per_minute_usd=USD,
)

ROUTES = [
    ApiRoute(
        "GET",
        "/api/models",
        models,
        "The model catalogue with every price (USD per 1M tokens/characters, per image, "
        "per minute, per request)",
        "models",
    ),
    ApiRoute(
        "PUT",
        "/api/prices/{model:path}",
        set_price,
        'Set a model\'s prices; fields left out keep their value, null or "" clears one',
        "models",
        admin=True,
        body=PRICE_BODY,
    ),
    ApiRoute(
        "DELETE",
        "/api/prices/{model:path}",
        delete_price,
        "Remove a model's price (the model stops being served)",
        "models",
        admin=True,
    ),
]
