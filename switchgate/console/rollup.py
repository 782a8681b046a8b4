"""Hourly rollups of the request log for the admin dashboard.

A finished UTC hour is summarised once into `usage_hourly` (requests, errors, stopped,
tokens and spend per user, model and channel) and `latency_hourly` (a histogram of total
latency per model and channel, successful requests only, and of time to first token,
successful streamed requests only: as `switchgate_time_to_first_token_seconds` in
/metrics, so the two agree), and marked in `rollup_hours`. The dashboard reads the
rollups for finished hours and asks the request log directly only for the hours not
rolled up yet (the current one, and the last one for a few minutes while late batches
land), so a 90-day view never scans 90 days of
log rows. Rolling up happens when the dashboard asks (admins only), not on the request path.

Errors are statuses >= 400 except 499 (the client stopped: counted as stopped).
Percentiles come from the histogram (`BUCKETS_MS` edges), interpolated inside a bucket.
"""

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from sqlalchemy import and_, case, func, insert, literal, select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.storage.tables import latency_hourly, request_logs, rollup_hours, usage_hourly

HOUR_MS: Final = 3_600_000
GRACE_MS: Final = 5 * 60_000  # an hour is rolled up this long after it ends
STOPPED: Final = 499
# Upper edges of the latency buckets (ms); the last bucket is everything above.
BUCKETS_MS: Final = (
    5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000,
    5000, 7500, 10_000, 15_000, 20_000, 30_000, 60_000, 120_000, 300_000,
)  # fmt: skip
METRICS: Final = ("latency", "ttft")


@dataclass
class Usage:
    requests: int = 0
    errors: int = 0
    stopped: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: int = 0

    def add(self, other: "Usage") -> None:
        self.requests += other.requests
        self.errors += other.errors
        self.stopped += other.stopped
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost += other.cost


@dataclass
class Histogram:
    counts: dict[int, int] = field(default_factory=dict)  # bucket -> requests

    def add(self, bucket: int, count: int) -> None:
        self.counts[bucket] = self.counts.get(bucket, 0) + count

    def merge(self, other: "Histogram") -> None:
        for bucket, count in other.counts.items():
            self.add(bucket, count)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def percentile(self, q: float) -> int | None:
        """The q-quantile (0..1) in ms, linear inside its bucket; None when empty."""
        total = self.total
        if not total:
            return None
        rank = q * total
        seen = 0
        for bucket in sorted(self.counts):
            count = self.counts[bucket]
            if seen + count >= rank:
                low = BUCKETS_MS[bucket - 1] if bucket > 0 else 0
                if bucket >= len(BUCKETS_MS):
                    return low
                high = BUCKETS_MS[bucket]
                return round(low + (high - low) * (rank - seen) / count)
            seen += count
        return BUCKETS_MS[-1]


def bucket_of(ms: int) -> int:
    return bisect_right(BUCKETS_MS, ms)


@dataclass(frozen=True)
class UsageRow:
    hour: int
    user_id: int
    model: str
    channel_id: int
    usage: Usage


@dataclass(frozen=True)
class LatencyRow:
    hour: int
    model: str
    channel_id: int
    metric: str
    bucket: int
    count: int


@dataclass
class Rollup:
    usage: list[UsageRow] = field(default_factory=list)
    latency: list[LatencyRow] = field(default_factory=list)


def _bucket_expr(column: Any) -> Any:
    return case(
        *((column < edge, index) for index, edge in enumerate(BUCKETS_MS)),
        else_=len(BUCKETS_MS),
    )


def _hour_expr() -> Any:
    return func.floor(request_logs.c.created_at / HOUR_MS)


async def from_log(conn: AsyncConnection, since: int, until: int) -> Rollup:
    """Summarise the request log between since and until (epoch ms, whole hours)."""
    hour = _hour_expr()
    model = func.coalesce(request_logs.c.model, literal(""))
    channel = func.coalesce(request_logs.c.channel_id, literal(0))
    status = request_logs.c.status
    window = and_(request_logs.c.created_at >= since, request_logs.c.created_at < until)
    usage = await conn.execute(
        select(
            hour.label("hour"),
            func.coalesce(request_logs.c.user_id, literal(0)).label("user_id"),
            model.label("model"),
            channel.label("channel_id"),
            func.count().label("requests"),
            func.sum(case((and_(status >= 400, status != STOPPED), 1), else_=0)).label("errors"),
            func.sum(case((status == STOPPED, 1), else_=0)).label("stopped"),
            func.sum(request_logs.c.input_tokens).label("input_tokens"),
            func.sum(request_logs.c.output_tokens).label("output_tokens"),
            func.sum(request_logs.c.cost).label("cost"),
        )
        .where(window)
        .group_by(hour, request_logs.c.user_id, model, channel)
    )
    out = Rollup()
    for r in usage:
        numbers = Usage(
            int(r.requests),
            int(r.errors or 0),
            int(r.stopped or 0),
            int(r.input_tokens or 0),
            int(r.output_tokens or 0),
            int(r.cost or 0),
        )
        out.usage.append(
            UsageRow(
                int(r.hour) * HOUR_MS, int(r.user_id), str(r.model), int(r.channel_id), numbers
            )
        )
    streamed = request_logs.c.stream.is_(True)
    columns = (
        ("latency", request_logs.c.latency_ms, status < 400),
        ("ttft", request_logs.c.ttft_ms, and_(status < 400, streamed)),
    )
    for metric, column, counted in columns:
        bucket = _bucket_expr(column)
        rows = await conn.execute(
            select(
                hour.label("hour"),
                model.label("model"),
                channel.label("channel_id"),
                bucket.label("bucket"),
                func.count().label("n"),
            )
            .where(window, counted, column.is_not(None))
            .group_by(hour, model, channel, bucket)
        )
        out.latency.extend(
            LatencyRow(int(r.hour) * HOUR_MS, str(r.model), int(r.channel_id), metric,
                       int(r.bucket), int(r.n))
            for r in rows
        )  # fmt: skip
    return out


def _spans(hours: Sequence[int]) -> Iterable[tuple[int, int]]:
    """Runs of consecutive hours as (since, until) in ms."""
    start = prev = None
    for h in hours:
        if start is None:
            start = prev = h
        elif h == prev + HOUR_MS:  # type: ignore[operator]
            prev = h
        else:
            yield start, prev + HOUR_MS  # type: ignore[operator]
            start = prev = h
    if start is not None:
        yield start, prev + HOUR_MS  # type: ignore[operator]


async def catch_up(conn: AsyncConnection, since: int, now: int) -> int:
    """Roll up every finished hour from `since` on that is not rolled up yet; returns how
    many hours were added. Call inside its own `db.begin()`: when two processes race, the
    second insert of an hour fails on rollup_hours' key (IntegrityError) and that whole
    transaction rolls back, leaving the first one's rows."""
    first = since // HOUR_MS * HOUR_MS
    done_until = (now - GRACE_MS) // HOUR_MS * HOUR_MS
    if done_until <= first:
        return 0
    rolled = set(
        (
            await conn.execute(
                select(rollup_hours.c.hour).where(
                    rollup_hours.c.hour >= first, rollup_hours.c.hour < done_until
                )
            )
        ).scalars()
    )
    missing = [h for h in range(first, done_until, HOUR_MS) if h not in rolled]
    if not missing:
        return 0
    await conn.execute(insert(rollup_hours), [{"hour": h, "rolled_at": now} for h in missing])
    for start, end in _spans(missing):
        await _store(conn, await from_log(conn, start, end))
    return len(missing)


async def _store(conn: AsyncConnection, summary: Rollup) -> None:
    if summary.usage:
        await conn.execute(
            insert(usage_hourly),
            [
                {
                    "hour": r.hour,
                    "user_id": r.user_id,
                    "model": r.model,
                    "channel_id": r.channel_id,
                    "requests": r.usage.requests,
                    "errors": r.usage.errors,
                    "stopped": r.usage.stopped,
                    "input_tokens": r.usage.input_tokens,
                    "output_tokens": r.usage.output_tokens,
                    "cost": r.usage.cost,
                }
                for r in summary.usage
            ],
        )
    if summary.latency:
        await conn.execute(
            insert(latency_hourly),
            [
                {
                    "hour": r.hour,
                    "model": r.model,
                    "channel_id": r.channel_id,
                    "metric": r.metric,
                    "bucket": r.bucket,
                    "count": r.count,
                }
                for r in summary.latency
            ],
        )


async def read(conn: AsyncConnection, since: int, now: int) -> Rollup:
    """Rolled-up hours from `since`, plus the request log for the hours not rolled up yet."""
    first = since // HOUR_MS * HOUR_MS
    usage = await conn.execute(
        select(usage_hourly).where(usage_hourly.c.hour >= first, usage_hourly.c.hour < now)
    )
    out = Rollup()
    for r in usage:
        out.usage.append(
            UsageRow(
                int(r.hour),
                int(r.user_id),
                str(r.model),
                int(r.channel_id),
                Usage(r.requests, r.errors, r.stopped, r.input_tokens, r.output_tokens, r.cost),
            )
        )
    latency = await conn.execute(
        select(latency_hourly).where(latency_hourly.c.hour >= first, latency_hourly.c.hour < now)
    )
    out.latency.extend(
        LatencyRow(int(r.hour), str(r.model), int(r.channel_id), str(r.metric), int(r.bucket),
                   int(r._mapping["count"]))
        for r in latency
    )  # fmt: skip
    rolled_until = await conn.scalar(select(func.max(rollup_hours.c.hour)))
    live_from = max(first, int(rolled_until) + HOUR_MS if rolled_until is not None else first)
    if live_from < now:
        live = await from_log(conn, live_from, now + 1)
        out.usage.extend(live.usage)
        out.latency.extend(live.latency)
    return out
