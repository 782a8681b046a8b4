"""console/rollup.py on a real SQLite database: finished hours are summarised once (per
user, model and channel, with latency histograms), unfinished hours are read live from
the request log, stopped requests are not errors, and percentiles come out of the
histogram within their bucket."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, insert, select

from switchgate.console import rollup
from switchgate.console.api.stats import summarise
from switchgate.console.rollup import BUCKETS_MS, HOUR_MS, Histogram, bucket_of
from switchgate.storage import migrate
from switchgate.storage.db import Database
from switchgate.storage.tables import request_logs, rollup_hours, usage_hourly
from tests.support import IN_CI, postgres_available, postgres_database

NOW = 1_000 * HOUR_MS + 30 * 60_000  # half past an hour


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'r.db'}"
        return
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI")
        pytest.skip("PostgreSQL is not reachable")
    with postgres_database() as url:
        yield url


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    await migrate.upgrade(database)
    yield database
    await database.engine.dispose()


def log(
    at: int,
    *,
    user: int = 1,
    model: str = "m",
    channel: int | None = 1,
    status: int = 200,
    cost: int = 10,
    latency: int = 100,
    ttft: int | None = 40,
    stream: bool = True,
) -> dict[str, object]:
    return {
        "request_id": f"r{at}-{user}-{status}-{latency}", "created_at": at, "user_id": user,
        "model": model, "channel_id": channel, "dialect": "openai", "endpoint": "chat",
        "status": status, "input_tokens": 3, "output_tokens": 5, "cost": cost,
        "latency_ms": latency, "ttft_ms": ttft, "stream": stream,
    }  # fmt: skip


async def test_finished_hours_are_rolled_up_once_and_the_current_hour_read_live(
    db: Database,
) -> None:
    two_hours_ago = NOW - 2 * HOUR_MS
    rows = [
        log(two_hours_ago, latency=100),
        log(two_hours_ago + 1, latency=200, user=2, model="n", channel=None),
        log(two_hours_ago + 2, status=502, cost=0, latency=3000),
        log(two_hours_ago + 3, status=499, cost=4, latency=900, ttft=None),
        log(NOW - 60_000, latency=50, cost=7),  # this hour: not rolled up yet
    ]
    async with db.begin() as conn:
        await conn.execute(insert(request_logs), rows)
    since = NOW - 3 * HOUR_MS
    async with db.begin() as conn:
        assert await rollup.catch_up(conn, since, NOW) == 3  # the three finished hours
    async with db.begin() as conn:
        assert await rollup.catch_up(conn, since, NOW) == 0
        assert await conn.scalar(select(func.count()).select_from(rollup_hours)) == 3
        assert await conn.scalar(select(func.sum(usage_hourly.c.requests))) == 4
    async with db.connect() as conn:
        data = await rollup.read(conn, since, NOW)
    total = summarise(data, lambda *_: "all").row("all")
    assert total["requests"] == 5 and total["errors"] == 1 and total["stopped"] == 1
    assert total["spend_usd"] == f"0.{31:012d}".rstrip("0")
    by_model = summarise(data, lambda _h, model, *_: model)
    assert by_model.row("n")["requests"] == 1
    by_channel = summarise(data, lambda _h, _m, channel, _u: channel)
    assert by_channel.row(0)["requests"] == 1  # no channel
    # Latency of successful requests only: 50, 100, 200 ms.
    assert total["p50_ms"] is not None and 100 <= total["p50_ms"] < 150  # the [100, 150) bucket
    assert total["ttft_p50_ms"] is not None and 30 <= total["ttft_p50_ms"] <= 50


async def test_time_to_first_token_counts_streamed_answers_only(db: Database) -> None:
    """As /metrics does: a whole (non-streamed) answer has a first byte, not a first token."""
    hour = NOW - 2 * HOUR_MS
    rows = [log(hour + i, ttft=800, latency=900) for i in range(3)]
    rows += [log(hour + 10 + i, ttft=6, latency=7, stream=False) for i in range(5)]
    async with db.begin() as conn:
        await conn.execute(insert(request_logs), rows)
    for live in (True, False):  # read from the log, then from the rolled-up hours
        async with db.begin() as conn:
            if not live:
                await rollup.catch_up(conn, NOW - 3 * HOUR_MS, NOW)
            data = await rollup.read(conn, NOW - 3 * HOUR_MS, NOW)
        total = summarise(data, lambda *_: "all").row("all")
        assert total["requests"] == 8
        assert total["ttft_p50_ms"] is not None and 750 <= total["ttft_p50_ms"] <= 1000
        assert total["p50_ms"] is not None and total["p50_ms"] <= 10  # latency: all eight
        hist = sum(r.count for r in data.latency if r.metric == "ttft")
        assert hist == 3


def test_percentiles_interpolate_inside_their_bucket() -> None:
    hist = Histogram()
    for ms in (12, 14, 16, 18, 1200):
        hist.add(bucket_of(ms), 1)
    p50 = hist.percentile(0.5)
    assert p50 is not None and 10 <= p50 <= 20
    p95 = hist.percentile(0.95)
    assert p95 is not None and 1000 <= p95 <= 1500
    assert Histogram().percentile(0.5) is None
    beyond = Histogram({bucket_of(10**7): 3})
    assert beyond.percentile(0.5) == BUCKETS_MS[-1]
