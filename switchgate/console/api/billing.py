"""Balance: redeem a code, the ledger history."""

from typing import Any

from starlette.requests import Request

from switchgate.billing import redemption
from switchgate.console import queries
from switchgate.console.api.registry import STR, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, int_param, json_body
from switchgate.money import (
    format_usd_exact,
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
]
