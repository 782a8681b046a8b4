"""Read-only queries behind the console: usage series, request logs, ledger, users.

Every per-user query filters on user_id first, so it is served by the (user_id,
created_at) indexes and one user can never read another's rows.
"""

from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import Select, and_, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.money import format_usd_exact
from switchgate.storage.db import now_ms
from switchgate.storage.tables import ledger, request_logs, tokens, users

DAY_MS: Final = 86_400_000
MAX_PAGE: Final = 200
STOPPED: Final = 499  # the client went away (a user's own Stop): not an error


def _is_error() -> Any:
    return and_(request_logs.c.status >= 400, request_logs.c.status != STOPPED)


async def daily_usage(conn: AsyncConnection, user_id: int, days: int = 30) -> list[dict[str, Any]]:
    """Spend, requests and errors per UTC day over the last `days` days (oldest first)."""
    today = now_ms() // DAY_MS
    since = (today - days + 1) * DAY_MS
    day = func.floor(request_logs.c.created_at / DAY_MS)
    rows = await conn.execute(
        select(
            day.label("day"),
            func.coalesce(func.sum(request_logs.c.cost), 0).label("spend"),
            func.count().label("requests"),
            func.sum(case((_is_error(), 1), else_=0)).label("errors"),
        )
        .where(request_logs.c.user_id == user_id, request_logs.c.created_at >= since)
        .group_by(day)
    )
    found = {int(r.day): r for r in rows}
    out = []
    for n in range(today - days + 1, today + 1):
        r = found.get(n)
        out.append(
            {
                "day": n * DAY_MS,
                "spend_usd": format_usd_exact(int(r.spend) if r else 0),
                "requests": int(r.requests) if r else 0,
                "errors": int(r.errors or 0) if r else 0,
            }
        )
    return out


@dataclass(frozen=True)
class LogFilter:
    user_id: int | None  # None: every user (admins only)
    model: str | None = None
    token_id: int | None = None
    status: str | None = None  # ok | error | a status code
    since: int | None = None
    until: int | None = None
    before: tuple[int, int] | None = None  # (created_at, id) of the last row seen


def _log_query(f: LogFilter) -> Select[Any]:
    query = select(
        request_logs.c.id,
        request_logs.c.request_id,
        request_logs.c.created_at,
        request_logs.c.user_id,
        request_logs.c.token_id,
        tokens.c.name.label("token_name"),
        request_logs.c.model,
        request_logs.c.endpoint,
        request_logs.c.dialect,
        request_logs.c.stream,
        request_logs.c.status,
        request_logs.c.input_tokens,
        request_logs.c.output_tokens,
        request_logs.c.cache_read_tokens,
        request_logs.c.reasoning_tokens,
        request_logs.c.cost,
        request_logs.c.latency_ms,
        request_logs.c.ttft_ms,
        request_logs.c.client_ip,
        request_logs.c.error,
    ).outerjoin(tokens, tokens.c.id == request_logs.c.token_id)
    conditions = []
    if f.user_id is not None:
        conditions.append(request_logs.c.user_id == f.user_id)
    if f.model:
        conditions.append(request_logs.c.model == f.model)
    if f.token_id is not None:
        conditions.append(request_logs.c.token_id == f.token_id)
    if f.status == "ok":
        conditions.append(request_logs.c.status < 400)
    elif f.status == "error":
        conditions.append(_is_error())
    elif f.status == "stopped":
        conditions.append(request_logs.c.status == STOPPED)
    elif f.status and f.status.isdigit():
        conditions.append(request_logs.c.status == int(f.status))
    if f.since is not None:
        conditions.append(request_logs.c.created_at >= f.since)
    if f.until is not None:
        conditions.append(request_logs.c.created_at < f.until)
    if f.before is not None:
        at, row_id = f.before
        conditions.append(
            or_(
                request_logs.c.created_at < at,
                and_(request_logs.c.created_at == at, request_logs.c.id < row_id),
            )
        )
    return query.where(*conditions).order_by(
        request_logs.c.created_at.desc(), request_logs.c.id.desc()
    )


async def log_by_request_id(
    conn: AsyncConnection, request_id: str, user_id: int | None
) -> Any | None:
    """The log row of one request (index ix_logs_request_id); user_id None: any user's."""
    query = (
        _log_query(LogFilter(user_id=user_id))
        .add_columns(
            request_logs.c.channel_id,
            request_logs.c.upstream_model,
            request_logs.c.cache_write_tokens,
            request_logs.c.usage_estimated,
            request_logs.c.upstream_attempts,
        )
        .where(request_logs.c.request_id == request_id)
    )
    return (await conn.execute(query.limit(1))).first()


def log_row(row: Any) -> dict[str, Any]:
    item = dict(row._mapping)
    item["cost_usd"] = format_usd_exact(int(item.pop("cost")))
    return item


async def search_logs(
    conn: AsyncConnection, f: LogFilter, limit: int = 50
) -> tuple[list[dict[str, Any]], str | None]:
    """One page, newest first, and the cursor for the next page (None at the end)."""
    limit = max(1, min(limit, MAX_PAGE))
    rows = (await conn.execute(_log_query(f).limit(limit + 1))).all()
    items = [log_row(r) for r in rows[:limit]]
    cursor = None
    if len(rows) > limit:
        last = rows[limit - 1]
        cursor = f"{last.created_at}:{last.id}"
    return items, cursor


async def stream_logs(conn: AsyncConnection, f: LogFilter, limit: int = 100_000) -> list[Any]:
    return list((await conn.execute(_log_query(f).limit(limit))).all())


async def recent_errors(conn: AsyncConnection, user_id: int, limit: int = 10) -> list[Any]:
    items, _ = await search_logs(conn, LogFilter(user_id=user_id, status="error"), limit)
    return items


async def ledger_page(
    conn: AsyncConnection, user_id: int, before_id: int | None, kind: str | None, limit: int = 50
) -> tuple[list[dict[str, Any]], int | None]:
    query = select(
        ledger.c.id,
        ledger.c.created_at,
        ledger.c.kind,
        ledger.c.amount,
        ledger.c.note,
        ledger.c.actor,
        ledger.c.request_id,
    ).where(ledger.c.user_id == user_id)
    if before_id is not None:
        query = query.where(ledger.c.id < before_id)
    if kind == "credits":
        query = query.where(ledger.c.kind != "charge")
    elif kind:
        query = query.where(ledger.c.kind == kind)
    limit = max(1, min(limit, MAX_PAGE))
    rows = (await conn.execute(query.order_by(ledger.c.id.desc()).limit(limit + 1))).all()
    items = []
    for r in rows[:limit]:
        item = dict(r._mapping)
        item["amount_usd"] = format_usd_exact(int(item.pop("amount")))
        items.append(item)
    return items, (rows[limit - 1].id if len(rows) > limit else None)


async def search_users(
    conn: AsyncConnection, q: str, offset: int, limit: int = 50
) -> tuple[list[dict[str, Any]], int]:
    condition = users.c.email.contains(q.strip().lower()) if q.strip() else None
    query = select(
        users.c.id,
        users.c.email,
        users.c.role,
        users.c.status,
        users.c.email_verified,
        users.c.balance,
        users.c.created_at,
    )
    count = select(func.count()).select_from(users)
    if condition is not None:
        query, count = query.where(condition), count.where(condition)
    rows = await conn.execute(query.order_by(users.c.id).offset(offset).limit(limit))
    items = []
    for r in rows:
        item = dict(r._mapping)
        item["balance_usd"] = format_usd_exact(int(item.pop("balance")))
        items.append(item)
    return items, int(await conn.scalar(count) or 0)
