"""A finished request's Record, and the rows the recorder writes for it."""

from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncConnection

_INT32: Final = 2**31 - 1  # the request log's token and latency columns


@dataclass(slots=True)
class Record:
    request_id: str
    created_at: int
    user_id: int | None
    token_id: int | None
    model: str | None
    dialect: str
    endpoint: str
    status: int
    cost: int = 0
    upstream_model: str | None = None
    channel_id: int | None = None
    stream: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    usage_estimated: bool = False
    latency_ms: int = 0
    ttft_ms: int | None = None
    client_ip: str | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    attempts: int = 0  # times this record failed to be written alone
    upstream_attempts: int = 0  # requests sent upstream (failovers and retries included)


async def insert_many(conn: AsyncConnection, table: Table, rows: list[dict[str, Any]]) -> None:
    """One executemany of a plain INSERT, compiled once and given to the driver as is.

    `conn.execute(table.insert(), rows)` runs SQLAlchemy's parameter processing for every
    row: ~35 us a record on the event loop, i.e. a 10-30 ms stall of every request in
    flight at each flush under load. Every value here is already what the driver takes
    (int, str, bool, None), so there is nothing to process."""
    compiled = table.insert().compile(dialect=conn.dialect, column_keys=list(rows[0]))
    names = compiled.positiontup
    params = rows if names is None else [tuple(row[n] for n in names) for row in rows]
    await conn.exec_driver_sql(compiled.string, params)


def _int32(value: int) -> int:
    return value if 0 <= value <= _INT32 else min(max(value, 0), _INT32)


def _cut(value: str | None, size: int) -> str | None:
    return value if value is None or len(value) <= size else value[:size]


def log_row(r: Record) -> dict[str, Any]:
    """The request log row, every value cut to what its column holds (a log row must
    never be the reason a charge is not written)."""
    return {
        "request_id": r.request_id,
        "created_at": r.created_at,
        "user_id": r.user_id,
        "token_id": r.token_id,
        "model": _cut(r.model, 200),
        "upstream_model": _cut(r.upstream_model, 200),
        "channel_id": r.channel_id,
        "dialect": _cut(r.dialect, 32),
        "endpoint": _cut(r.endpoint, 64),
        "stream": r.stream,
        "status": r.status,
        "input_tokens": _int32(r.input_tokens),
        "output_tokens": _int32(r.output_tokens),
        "cache_read_tokens": _int32(r.cache_read_tokens),
        "cache_write_tokens": _int32(r.cache_write_tokens),
        "reasoning_tokens": _int32(r.reasoning_tokens),
        "usage_estimated": r.usage_estimated,
        "cost": r.cost,
        "latency_ms": _int32(r.latency_ms),
        "ttft_ms": None if r.ttft_ms is None else _int32(r.ttft_ms),
        "client_ip": _cut(r.client_ip, 64),
        "error": r.error,
        "upstream_attempts": min(r.upstream_attempts, 32_767),
    }
