"""Balance: redeem a code, the ledger history, the model catalogue with prices."""

from typing import Any

from starlette.requests import Request

from switchgate.billing import prices as price_service
from switchgate.billing import redemption
from switchgate.billing.pricing import Price
from switchgate.console import queries
from switchgate.console.api.registry import STR, USD, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, int_param, json_body
from switchgate.money import (
    format_usd_exact,
    per_million_to_unit_price,
    unit_price_to_per_million,
    usd_to_units,
)


async def redeem(request: Request, actor: Actor) -> dict[str, Any]:
    code = str((await json_body(request)).get("code") or "")
    if not code.strip():
        raise ApiError(400, "enter a code", "invalid")
    async with gw(request).db.begin() as conn:
        amount, balance = await redemption.redeem(conn, actor.user_id, code, actor.email)
    return {"amount_usd": format_usd_exact(amount), "balance_usd": format_usd_exact(balance)}


async def ledger(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.connect() as conn:
        items, cursor = await queries.ledger_page(
            conn,
            actor.user_id,
            int_param(request, "before_id"),
            request.query_params.get("kind") or None,
            int_param(request, "limit", 50) or 50,
        )
    return {"items": items, "next_before_id": cursor}


def _price_view(price: Price, served: bool) -> dict[str, Any]:
    return {
        "model": price.model,
        "kind": price.kind,
        "served": served,
        "input_per_1m": unit_price_to_per_million(price.input),
        "output_per_1m": unit_price_to_per_million(price.output),
        "cache_read_per_1m": unit_price_to_per_million(price.cache_read)
        if price.cache_read is not None
        else None,
        "cache_write_per_1m": unit_price_to_per_million(price.cache_write)
        if price.cache_write is not None
        else None,
        "per_request_usd": format_usd_exact(price.per_request),
        "other": {name: _extra_usd(name, units) for name, units in sorted(price.extra.items())},
    }


def _extra_usd(name: str, units: int) -> str:
    """Other unit prices as USD: per 1M for characters and tokens, else per item."""
    if "character" in name or "token" in name:
        return unit_price_to_per_million(units) + " per 1M"
    return format_usd_exact(units)


async def models(request: Request, actor: Actor) -> dict[str, Any]:
    """Served models for everyone; admins also see priced models no channel serves."""
    catalog = gw(request).catalog
    served = set(catalog.models())
    items = [
        _price_view(price, name in served)
        for name, price in sorted(catalog.prices.items())
        if name in served or actor.is_admin
    ]
    unpriced = sorted(set(catalog.channels_by_model) - set(catalog.prices))
    return {"items": items, "unpriced": unpriced if actor.is_admin else []}


def _per_m(value: Any) -> int | None:
    return None if value in (None, "") else per_million_to_unit_price(str(value))


async def set_price(request: Request, actor: Actor) -> dict[str, Any]:
    model = str(request.path_params["model"]).strip()
    body = await json_body(request)
    if not model:
        raise ApiError(400, "a model name is needed", "invalid")
    async with gw(request).db.begin() as conn:
        await price_service.set_price(
            conn,
            model,
            kind=str(body.get("kind") or "chat"),
            input=_per_m(body.get("input_per_1m")) or 0,
            output=_per_m(body.get("output_per_1m")) or 0,
            cache_read=_per_m(body.get("cache_read_per_1m")),
            cache_write=_per_m(body.get("cache_write_per_1m")),
            per_request=usd_to_units(str(body["per_request_usd"]))
            if body.get("per_request_usd")
            else 0,
        )
    return {"ok": True}


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
)

ROUTES = [
    ApiRoute(
        "POST",
        "/api/redeem",
        redeem,
        "Redeem a code; one ledger row of kind redeem",
        "billing",
        body=obj("code", code=STR),
    ),
    ApiRoute(
        "GET",
        "/api/ledger",
        ledger,
        "Balance history, newest first (kind: credits | charge | topup | adjust | redeem)",
        "billing",
        query=("before_id", "kind", "limit"),
    ),
    ApiRoute("GET", "/api/models", models, "The model catalogue, prices in USD per 1M", "models"),
    ApiRoute(
        "PUT",
        "/api/prices/{model:path}",
        set_price,
        "Set a model's price (USD per 1M tokens)",
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
