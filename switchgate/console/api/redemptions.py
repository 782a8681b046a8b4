"""Admin: batches of single-use redemption codes, and their CSV export."""

import csv
import io
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from switchgate.billing import redemption
from switchgate.console.api.registry import INT, STR, USD, ApiRoute, obj
from switchgate.console.csv_safe import safe_row
from switchgate.console.deps import Actor, ApiError, gw, json_body
from switchgate.money import format_usd_exact, usd_to_units


async def list_batches(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.connect() as conn:
        rows = await redemption.list_batches(conn)
    for row in rows:
        row["amount_usd"] = format_usd_exact(int(str(row.pop("amount"))))
        row["used"] = int(str(row["used"] or 0))
    return {"items": rows}


async def generate(request: Request, actor: Actor) -> dict[str, Any]:
    body = await json_body(request)
    try:
        count = int(body.get("count") or 0)
    except (TypeError, ValueError) as exc:
        raise ApiError(400, "count must be a whole number", "invalid") from exc
    state = gw(request)
    async with state.db.begin() as conn:
        batch = await redemption.generate(
            conn,
            state.box,
            count=count,
            amount=usd_to_units(str(body.get("amount_usd") or "0")),
            note=str(body.get("note") or "").strip() or None,
            actor=actor.email,
        )
    return {
        "batch": batch.batch,
        "codes": batch.codes,
        "amount_usd": format_usd_exact(batch.amount),
    }


async def export(request: Request, actor: Actor) -> Response:
    state = gw(request)
    batch = str(request.path_params["batch"])
    async with state.db.connect() as conn:
        rows = await redemption.export_batch(conn, state.box, batch)
    if not rows:
        raise ApiError(404, "no such batch", "not_found")
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["code", "amount_usd", "status", "used_by", "used_at", "created_at"])
    for r in rows:
        writer.writerow(
            safe_row(
                [
                    r["code"],
                    format_usd_exact(int(str(r["amount"]))),
                    r["status"],
                    r["used_by"] or "",
                    r["used_at"] or "",
                    r["created_at"],
                ]
            )
        )
    return Response(
        buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="codes-{batch}.csv"'},
    )


async def disable(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.begin() as conn:
        count = await redemption.disable_unused(conn, str(request.path_params["batch"]))
    return {"disabled": count}


ROUTES = [
    ApiRoute("GET", "/api/redemptions", list_batches, "Batches of codes", "redemptions", True),
    ApiRoute(
        "POST",
        "/api/redemptions",
        generate,
        "Generate a batch of single-use codes (the answer lists them)",
        "redemptions",
        True,
        body=obj("count", "amount_usd", count=INT, amount_usd=USD, note=STR),
    ),
    ApiRoute(
        "GET",
        "/api/redemptions/{batch}/codes.csv",
        export,
        "A batch's codes as CSV",
        "redemptions",
        True,
        produces="text/csv",
    ),
    ApiRoute(
        "POST",
        "/api/redemptions/{batch}/disable",
        disable,
        "Disable a batch's unused codes",
        "redemptions",
        True,
    ),
]
