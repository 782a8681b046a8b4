"""Request logs: filtered, paginated newest first (keyset on (created_at, id)), and CSV."""

import csv
import io
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse

from switchgate.console import queries
from switchgate.console.api.registry import ApiRoute
from switchgate.console.csv_safe import safe_row
from switchgate.console.deps import Actor, ApiError, gw, int_param

QUERY = ("model", "token_id", "status", "since", "until", "cursor", "limit", "user_id")
CSV_COLUMNS = (
    "created_at",
    "request_id",
    "model",
    "token_name",
    "endpoint",
    "status",
    "stream",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "reasoning_tokens",
    "cost_usd",
    "latency_ms",
    "ttft_ms",
    "client_ip",
    "error",
)


def _filter(request: Request, actor: Actor) -> queries.LogFilter:
    user_id: int | None = actor.user_id
    wanted = request.query_params.get("user_id")
    if wanted:
        actor.require_admin()  # only admins look at other users' logs
        user_id = None if wanted == "all" else int_param(request, "user_id")
    before = None
    cursor = request.query_params.get("cursor")
    if cursor:
        at, _, row_id = cursor.partition(":")
        if not (at.isdigit() and row_id.isdigit()):
            raise ApiError(400, "bad cursor", "invalid")
        before = (int(at), int(row_id))
    return queries.LogFilter(
        user_id=user_id,
        model=request.query_params.get("model") or None,
        token_id=int_param(request, "token_id"),
        status=request.query_params.get("status") or None,
        since=int_param(request, "since"),
        until=int_param(request, "until"),
        before=before,
    )


async def list_logs(request: Request, actor: Actor) -> dict[str, Any]:
    f = _filter(request, actor)
    async with gw(request).db.connect() as conn:
        items, cursor = await queries.search_logs(conn, f, int_param(request, "limit", 50) or 50)
    return {"items": items, "next_cursor": cursor}


async def export_csv(request: Request, actor: Actor) -> StreamingResponse:
    f = _filter(request, actor)
    async with gw(request).db.connect() as conn:
        rows = await queries.stream_logs(conn, f)

    async def body() -> AsyncIterator[str]:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(CSV_COLUMNS)
        for n, row in enumerate(rows):
            item = queries.log_row(row)
            writer.writerow(safe_row([item.get(c) for c in CSV_COLUMNS]))
            if n % 500 == 0:
                yield buffer.getvalue()
                buffer.seek(0)
                buffer.truncate()
        yield buffer.getvalue()

    return StreamingResponse(
        body(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="switchgate-logs.csv"'},
    )


ROUTES = [
    ApiRoute(
        "GET",
        "/api/logs",
        list_logs,
        "Your requests, newest first; status ok | error | a code; since/until epoch ms; "
        "pass next_cursor as cursor for the next page; admins may pass user_id (or all)",
        "logs",
        query=QUERY,
    ),
    ApiRoute(
        "GET",
        "/api/logs.csv",
        export_csv,
        "The same rows as CSV (up to 100,000)",
        "logs",
        query=QUERY,
        produces="text/csv",
    ),
]
