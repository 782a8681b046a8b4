"""The charge writer can't be stopped by one bad record (billing/recorder.py): a record the
database refuses is isolated, recorded in failed_charges and alerted on, everyone else
is charged, a database that does not answer keeps everything queued, and close() gives
up in bounded time so the leases are still handed back. On SQLite and PostgreSQL."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from switchgate.accounts.service import create_token, create_user
from switchgate.billing.leases import BalanceBook
from switchgate.billing.ledger import add_entry, balance_and_ledger_sum
from switchgate.billing.recorder import (
    CHARGE_CAPPED,
    CHARGE_FAILED,
    MAX_ATTEMPTS,
    RECORDS_LOST,
    Record,
    Recorder,
)
from switchgate.money import MAX_AMOUNT, MAX_CHARGE, UNITS_PER_USD
from switchgate.storage import migrate
from switchgate.storage.db import Database
from switchgate.storage.tables import balance_leases, failed_charges, ledger, request_logs
from tests.support import IN_CI, postgres_available, postgres_database


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'rec.db'}"
        return
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI")
        pytest.skip("PostgreSQL is not reachable")
    with postgres_database() as url:
        yield url


def _record(n: int, user_id: int | None, token_id: int | None, cost: int) -> Record:
    return Record(
        request_id=f"req-{n}",
        created_at=1000 + n,
        user_id=user_id,
        token_id=token_id,
        model="m",
        dialect="openai",
        endpoint="chat",
        status=200,
        cost=cost,
        input_tokens=3,
        output_tokens=5,
    )


async def _setup(db: Database) -> tuple[int, int, int]:
    await migrate.upgrade(db)
    async with db.begin() as conn:
        user = await create_user(conn, "payer@example.com")
        other = await create_user(conn, "poisoned@example.com")
        token = await create_token(conn, user.id, "t")
        await add_entry(conn, user.id, 10 * UNITS_PER_USD, "topup")
    return user.id, other.id, token.id


async def _count(db: Database, table: object, *where: object) -> int:
    async with db.connect() as conn:
        return int(await conn.scalar(select(func.count()).select_from(table).where(*where)) or 0)  # type: ignore[arg-type]


async def test_a_poisoned_record_is_isolated_and_everyone_else_is_charged(
    database_url: str,
) -> None:
    db = Database(database_url)
    try:
        user_id, other_id, token_id = await _setup(db)
        # The other user owes nearly the most a 64-bit balance can: no charge fits.
        async with db.begin() as conn:
            await add_entry(conn, other_id, -(MAX_AMOUNT - 5), "adjust")
        recorder = Recorder(db, "holder-a", flush_seconds=3600, batch_size=64)
        alerts: list[str] = []
        recorder.alerts.append(alerts.append)
        recorder.add(_record(0, other_id, None, 1000))  # refused: the balance would overflow
        recorder.add(_record(1, 424242, None, 1000))  # refused: no such user
        for n in range(2, 22):
            recorder.add(_record(n, user_id, token_id, 7))
        await recorder.flush()
        # Everyone else is charged at the first flush, whatever the order.
        assert await _count(db, ledger, ledger.c.kind == "charge") == 20
        async with db.connect() as conn:
            balance, total = await balance_and_ledger_sum(conn, user_id)
        assert balance == total == 10 * UNITS_PER_USD - 20 * 7
        # The two bad records are tried again, then given up on.
        for _ in range(MAX_ATTEMPTS):
            await recorder.flush()
        assert recorder.pending == 0 and recorder.failed == 2
        assert alerts == [CHARGE_FAILED, CHARGE_FAILED]
        async with db.connect() as conn:
            rows = (await conn.execute(select(failed_charges).order_by("request_id"))).all()
            for uid in (user_id, other_id):
                balance, total = await balance_and_ledger_sum(conn, uid)
                assert balance == total
        assert [(r.request_id, r.user_id, r.cost) for r in rows] == [
            ("req-0", other_id, "1000"),
            ("req-1", 424242, "1000"),
        ]
        assert "ChargeRefused" in rows[0].reason
        # Their request logs are written too, saying why.
        assert await _count(db, request_logs) == 22
        assert (
            await _count(db, request_logs, request_logs.c.error.like("charge not written:%")) == 2
        )
        # And the writer goes on charging.
        recorder.add(_record(30, user_id, token_id, 11))
        await recorder.flush()
        assert await _count(db, ledger, ledger.c.kind == "charge") == 21
    finally:
        await db.dispose()


async def test_costs_outside_the_bounds_are_capped_never_credited(database_url: str) -> None:
    db = Database(database_url)
    try:
        user_id, _, token_id = await _setup(db)
        recorder = Recorder(db, "holder-a", flush_seconds=3600)
        alerts: list[str] = []
        recorder.alerts.append(alerts.append)
        recorder.add(_record(1, user_id, token_id, -999_999_999_997))  # a "credit"
        huge = _record(2, user_id, token_id, 10**12 * 10**7)  # 1e12 tokens at $10 / 1M
        huge.output_tokens = 10**12  # no 32-bit log column holds it
        recorder.add(huge)
        await recorder.flush()
        assert alerts == [CHARGE_CAPPED, CHARGE_CAPPED]
        async with db.connect() as conn:
            amounts = (
                await conn.execute(select(ledger.c.amount).where(ledger.c.kind == "charge"))
            ).scalars()
            assert sorted(amounts) == [-MAX_CHARGE]  # the credit was charged 0: no row
            balance, total = await balance_and_ledger_sum(conn, user_id)
            tokens_logged = await conn.scalar(select(func.max(request_logs.c.output_tokens)))
        assert balance == total == 10 * UNITS_PER_USD - MAX_CHARGE
        assert tokens_logged == 2**31 - 1
    finally:
        await db.dispose()


async def test_a_database_that_does_not_answer_loses_nothing_and_close_still_hands_back_leases(
    database_url: str,
) -> None:
    db = Database(database_url)
    try:
        user_id, _, token_id = await _setup(db)
        book = BalanceBook(db, "holder-a", chunk=UNITS_PER_USD)
        await book.hold(user_id, 1000)
        assert await _count(db, balance_leases) == 1
        recorder = Recorder(db, "holder-a", flush_seconds=3600, close_seconds=0.5)
        alerts: list[str] = []
        recorder.alerts.append(alerts.append)
        for n in range(5):
            recorder.add(_record(n, user_id, token_id, 10))
        broken = Database("sqlite+aiosqlite:////nonexistent-dir/x.db")
        recorder._db = broken  # the database goes away
        with pytest.raises(Exception):  # noqa: B017 - whatever the driver raises
            await recorder.flush()
        assert recorder.pending == 5 and recorder.failed == 0  # kept, not given up on
        await recorder.close()  # gives up after close_seconds ...
        assert recorder.pending == 0 and recorder.failed == 5 and alerts == [RECORDS_LOST]
        await book.close()  # ... so the leases can still be handed back
        assert await _count(db, balance_leases) == 0
        await broken.dispose()
        # Back again: a new recorder writes normally.
        recorder = Recorder(db, "holder-a", flush_seconds=3600)
        recorder.add(_record(9, user_id, token_id, 10))
        await recorder.close()
        assert await _count(db, ledger, ledger.c.kind == "charge") == 1
    finally:
        await db.dispose()


async def test_a_batch_with_a_poisoned_record_is_split_not_written_row_by_row(
    database_url: str,
) -> None:
    """Isolation costs about 2*log2(batch) transactions, not one per record."""
    db = Database(database_url)
    try:
        user_id, _, token_id = await _setup(db)
        recorder = Recorder(db, "holder-a", flush_seconds=3600, batch_size=1000)
        writes = 0
        write = recorder._write

        async def counting(batch: list[Record]) -> None:
            nonlocal writes
            writes += 1
            await write(batch)

        recorder._write = counting  # type: ignore[method-assign]
        for n in range(512):
            recorder.add(_record(n, user_id if n != 300 else 999_999, token_id, 1))
        await recorder.flush()
        assert await _count(db, ledger, ledger.c.kind == "charge") == 511
        assert writes <= 2 + 2 * 10 + 2
        assert recorder.pending == 1  # the bad one, kept for another try
    finally:
        await db.dispose()
