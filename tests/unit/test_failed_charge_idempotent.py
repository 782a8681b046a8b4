"""A failed charge is recorded once and applied at most once (billing/recorder.py,
billing/failed_charges.py): a failure row whose commit reported an error but landed is
not written a second time, and `charges retry` of a request that already has a charge
row is refused with a clear message, the row kept, nothing charged. SQLite and
PostgreSQL."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.billing.failed_charges import RetryRefused, retry_failed
from switchgate.billing.ledger import balance_and_ledger_sum
from switchgate.billing.recorder import Recorder
from switchgate.storage.db import Database
from switchgate.storage.tables import failed_charges, ledger, request_logs
from tests.unit.test_recorder_isolation import _count, _record, _setup
from tests.unit.test_recorder_isolation import database_url as database_url  # fixture


class CommitThenFail:
    """A database whose first transaction commits, then reports a lost connection: the
    caller cannot tell whether it landed."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.failed = False

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        async with self._db.begin() as conn:
            yield conn
        if not self.failed:
            self.failed = True
            raise OperationalError("COMMIT", None, Exception("connection lost"))


async def test_a_failure_whose_commit_is_unclear_is_recorded_once(database_url: str) -> None:
    db = Database(database_url)
    try:
        user_id, _, token_id = await _setup(db)
        recorder = Recorder(db, "holder-a", flush_seconds=3600)
        flaky = CommitThenFail(db)
        recorder._db = flaky  # type: ignore[assignment]
        await recorder._record_failure(_record(7, user_id, token_id, 40), "ChargeRefused: x")
        assert flaky.failed
        assert await _count(db, failed_charges) == 1
        assert await _count(db, request_logs) == 1
    finally:
        await db.dispose()


async def test_retry_of_a_request_already_charged_is_refused(database_url: str) -> None:
    db = Database(database_url)
    try:
        user_id, _, token_id = await _setup(db)
        recorder = Recorder(db, "holder-a", flush_seconds=3600)
        record = _record(3, user_id, token_id, 25)
        recorder.add(record)
        await recorder.flush()  # charged
        await recorder._record_failure(record, "ChargeRefused: a duplicate failure")
        async with db.connect() as conn:
            charge_id = int(await conn.scalar(select(failed_charges.c.id)) or 0)
            before = await balance_and_ledger_sum(conn, user_id)
        with pytest.raises(RetryRefused, match="request req-3 already has a charge row"):
            async with db.begin() as conn:
                await retry_failed(conn, charge_id, actor="cli")
        async with db.connect() as conn:
            assert await balance_and_ledger_sum(conn, user_id) == before
        assert await _count(db, ledger, ledger.c.kind == "charge") == 1
        assert await _count(db, failed_charges) == 1  # rolled back: still listed
    finally:
        await db.dispose()
