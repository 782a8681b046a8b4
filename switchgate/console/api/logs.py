"""Request logs: filtered, paginated newest first (keyset on (created_at, id)), and CSV."""

import csv
import io
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse

from switchgate.billing.pricing import Price
from switchgate.console import queries
from switchgate.console.api.registry import ApiRoute
from switchgate.console.csv_safe import safe_row
from switchgate.console.deps import Actor, ApiError, gw, int_param
from switchgate.core.usage import Usage
from switchgate.money import format_usd_exact

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


def cost_breakdown(price: Price | None, row: dict[str, Any], cost: int) -> list[dict[str, str]]:
    """The charge split by what it paid for, at the model's current price. Token parts
    that do not fit the charge (the price changed since) give no breakdown at all; what
    the token parts and the per-request price leave over is the media part (images,
    characters, minutes)."""
    if price is None or cost <= 0:
        return []
    usage = Usage(
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        cache_read_tokens=row["cache_read_tokens"],
        cache_write_tokens=row["cache_write_tokens"],
    )
    parts = [
        ("input tokens", usage.uncached_input_tokens * price.input),
        ("cached input tokens", usage.cache_read_tokens * price.cache_read_price),
        ("cache-write tokens", usage.cache_write_tokens * price.cache_write_price),
        ("output tokens", usage.output_tokens * price.output),
        ("per request", price.per_request),
    ]
    if price.extra:  # media prices: tokens are billed only when no media price applied
        parts = [p for p in parts if p[0] == "per request"]
    rest = cost - sum(units for _, units in parts)
    if rest < 0:
        return []
    if rest:
        parts.append(("images, characters or minutes", rest))
    return [{"part": name, "usd": format_usd_exact(units)} for name, units in parts if units]


async def log_detail(request: Request, actor: Actor) -> dict[str, Any]:
    """One request (by its x-request-id): yours, or anyone's for admins."""
    state = gw(request)
    async with state.db.connect() as conn:
        row = await queries.log_by_request_id(
            conn, str(request.path_params["request_id"]), None if actor.is_admin else actor.user_id
        )
    if row is None:
        message = "no request with this id in your log (it may take a second)"
        raise ApiError(404, message, "not_found")
    item = queries.log_row(row)
    cost = int(row.cost)
    channel_id = item.pop("channel_id", None)
    upstream_model = item.pop("upstream_model", None)
    if actor.is_admin:
        names = {c.id: c.name for c in state.catalog.channels}
        item["channel"] = (
            {"id": channel_id, "name": names.get(channel_id, f"#{channel_id} (removed)")}
            if channel_id
            else None
        )
        item["upstream_model"] = upstream_model
    item["stopped"] = item["status"] == queries.STOPPED
    item["attempts"] = item.pop("upstream_attempts") or None  # 0: not sent, or logged before
    item["cost_breakdown"] = cost_breakdown(
        state.catalog.prices.get(item["model"] or ""), item, cost
    )
    return item


ROUTES = [
    ApiRoute(
        "GET",
        "/api/logs",
        list_logs,
        "Your requests, newest first; status ok | error | stopped | a code; since/until epoch ms; "
        "pass next_cursor as cursor for the next page; admins may pass user_id (or all)",
        "logs",
        query=QUERY,
    ),
    ApiRoute(
        "GET",
        "/api/logs/{request_id}",
        log_detail,
        "One request by its x-request-id: dialect, channel (admins), attempts, tokens by "
        "kind, cost and its breakdown, latency and time to first token",
        "logs",
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
