"""Admin: the audit log (newest first, paged by id) and its CSV export."""

import csv
import io
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from switchgate.audit import actions
from switchgate.console.api.registry import ApiRoute
from switchgate.console.csv_safe import safe_row
from switchgate.console.deps import Actor, gw, int_param

QUERY = ("before_id", "limit", "actor", "action")
CSV_COLUMNS = ("id", "created_at", "actor", "action", "target", "ip", "detail")
CSV_ROWS = 100_000


async def _entries(request: Request, limit: int) -> list[dict[str, Any]]:
    async with gw(request).db.connect() as conn:
        return await actions.list_entries(
            conn,
            limit=limit,
            before_id=int_param(request, "before_id"),
            actor=request.query_params.get("actor") or None,
            action=request.query_params.get("action") or None,
        )


async def list_audit(request: Request, actor: Actor) -> dict[str, Any]:
    limit = int_param(request, "limit", 50) or 50
    items = await _entries(request, min(limit, 500))
    next_id = items[-1]["id"] if len(items) == min(limit, 500) else None
    return {"items": items, "next_before_id": next_id}


async def export_csv(request: Request, actor: Actor) -> Response:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for item in await _entries(request, CSV_ROWS):
        writer.writerow(safe_row([item.get(c) for c in CSV_COLUMNS]))
    return Response(
        buffer.getvalue(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="switchgate-audit.csv"'},
    )


ROUTES = [
    ApiRoute(
        "GET",
        "/api/audit",
        list_audit,
        "The audit log of admin actions, newest first (page with before_id)",
        "audit",
        admin=True,
        query=QUERY,
    ),
    ApiRoute(
        "GET",
        "/api/audit.csv",
        export_csv,
        "The audit log as CSV",
        "audit",
        admin=True,
        query=QUERY,
        produces="text/csv",
    ),
]
