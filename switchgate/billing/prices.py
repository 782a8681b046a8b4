"""The price catalogue: management functions and loading into Price values."""

from collections.abc import Mapping

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate import jsonutil
from switchgate.billing.media_pricing import PER_CHARACTER
from switchgate.billing.pricing import Price
from switchgate.money import check_price
from switchgate.storage.db import bump_config_version, now_ms
from switchgate.storage.tables import prices

PRICE_KINDS = ("chat", "embedding", "image", "tts", "stt", "rerank", "realtime")


async def set_price(
    conn: AsyncConnection,
    model: str,
    *,
    kind: str = "chat",
    input: int = 0,
    output: int = 0,
    cache_read: int | None = None,
    cache_write: int | None = None,
    per_request: int = 0,
    extra: Mapping[str, int] | None = None,
    source: str | None = None,
) -> None:
    """Create or replace a model's price. `source` None marks the operator's own price;
    the catalogue import passes `catalogue:<date>`."""
    if kind not in PRICE_KINDS:
        raise ValueError(f"unknown price kind {kind!r}; known: {', '.join(PRICE_KINDS)}")
    _check_prices(input, output, cache_read, cache_write, per_request, extra or {})
    values = {
        "kind": kind,
        "input": input,
        "output": output,
        "cache_read": cache_read,
        "cache_write": cache_write,
        "per_request": per_request,
        "extra": jsonutil.dumps_str(dict(extra or {})),
        "updated_at": now_ms(),
        "source": source,
    }
    result = await conn.execute(update(prices).where(prices.c.model == model).values(**values))
    if result.rowcount == 0:
        await conn.execute(prices.insert().values(model=model, **values))
    await bump_config_version(conn)


def _check_prices(
    input: int,
    output: int,
    cache_read: int | None,
    cache_write: int | None,
    per_request: int,
    extra: Mapping[str, int],
) -> None:
    """Refuse a price the columns (or a request's charge) could not hold: MoneyError, a
    ValueError every entry point (CLI, config file, console API) shows as a clear error."""
    for name, value in (("input", input), ("output", output)):
        check_price(name, value, per_token=True)
    for name, maybe in (("cache_read", cache_read), ("cache_write", cache_write)):
        if maybe is not None:
            check_price(name, maybe, per_token=True)
    check_price("per_request", per_request, per_token=False)
    for name, value in extra.items():
        check_price(name, value, per_token=name == PER_CHARACTER)


async def delete_price(conn: AsyncConnection, model: str) -> bool:
    result = await conn.execute(delete(prices).where(prices.c.model == model))
    await bump_config_version(conn)
    return bool(result.rowcount)


async def load_prices(conn: AsyncConnection) -> dict[str, Price]:
    rows = await conn.execute(select(prices))
    return {
        row.model: Price(
            model=row.model,
            kind=row.kind,
            input=row.input,
            output=row.output,
            cache_read=row.cache_read,
            cache_write=row.cache_write,
            per_request=row.per_request,
            extra=jsonutil.loads(row.extra),
        )
        for row in rows
    }


async def price_sources(conn: AsyncConnection, models: list[str]) -> dict[str, str | None]:
    """The source of each existing price among `models` (None: the operator's own)."""
    if not models:
        return {}
    rows = await conn.execute(
        select(prices.c.model, prices.c.source).where(prices.c.model.in_(models))
    )
    return {row.model: row.source for row in rows}
