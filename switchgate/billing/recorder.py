"""Writes charges and request logs in batches, off the request path; no input can stop it.

Each finished request becomes one Record. Every `flush_seconds` (or sooner when many are
waiting) the Recorder writes a batch in ONE transaction: ledger rows for the charges,
the balance decrements, this holder's lease decrements, token spend, and request logs.

When a batch fails because of the database (connection, locks, disk, schema:
`database_trouble`), it stays queued and is retried with backoff: nothing is lost while
the database is away. When it fails because of what is in it (a value or a constraint the
database refuses), it is written in halves, recursively, so every good record is written
and a failing one is left alone. A record that fails alone `MAX_ATTEMPTS` times is
recorded in `failed_charges` with the reason, logged as an error and counted (metric),
and the queue moves on. `close()` flushes what is left, retrying for up to
`close_seconds`, then logs what it could not write and returns, so the leases are still
handed back.
"""

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Final

from sqlalchemy import select, update
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from switchgate.billing.record_rows import Record as Record  # re-exported
from switchgate.billing.record_rows import insert_many, log_row
from switchgate.billing.token_spend import TokenSpend
from switchgate.money import MAX_AMOUNT, MAX_CHARGE
from switchgate.storage.db import Database, now_ms
from switchgate.storage.tables import (
    balance_leases,
    failed_charges,
    ledger,
    request_logs,
    tokens,
    users,
)

log = logging.getLogger("switchgate.recorder")

MAX_ATTEMPTS: Final = 3  # a record failing alone this often is recorded as failed
# Alert kinds passed to `Recorder.alerts` (the metrics count them).
CHARGE_FAILED: Final = "charge_failed"
CHARGE_CAPPED: Final = "charge_capped"
RECORDS_LOST: Final = "records_lost"

# The width of request_logs.model / upstream_model: a client-chosen model name longer than
# that must not reach the batch (PostgreSQL refuses the row, and with it the batch).
NAME_LIMIT = 200


def clip_name(name: str) -> str:
    """`name` cut to NAME_LIMIT characters, marked with an ellipsis when cut."""
    return name if len(name) <= NAME_LIMIT else name[: NAME_LIMIT - 1] + "\u2026"


class ChargeRefused(Exception):
    """The database would take the batch but not this charge (e.g. no such user, or the
    balance would pass the smallest amount a 64-bit column holds)."""


def database_trouble(exc: BaseException) -> bool:
    """Whether a failed write is the database's fault (retry it all later), not the fault
    of a record in it (isolate that record). PostgreSQL says which by SQLSTATE: classes 22
    (data exception) and 23 (integrity) are the data's, every other one (connection,
    resources, operator intervention, serialization, schema) the database's."""
    if isinstance(exc, DBAPIError):
        if exc.connection_invalidated:
            return True
        state = getattr(exc.orig, "sqlstate", None)
        if isinstance(state, str) and state:
            return state[:2] not in ("22", "23")
        return isinstance(exc, OperationalError | InterfaceError)
    return isinstance(exc, OSError | TimeoutError | DisconnectionError | PoolTimeout)


class Recorder:
    def __init__(
        self,
        db: Database,
        holder: str,
        flush_seconds: float,
        batch_size: int = 1000,
        *,
        close_seconds: float = 10.0,
    ):
        self._db = db
        self._holder = holder
        self._flush_seconds = flush_seconds
        self._batch_size = batch_size
        self._close_seconds = close_seconds
        self._queue: list[Record] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._flush_lock = asyncio.Lock()
        self.flushed = 0
        self.failed = 0  # records given up on (in failed_charges, or only in the log)
        self.observers: list[Callable[[Record], None]] = []
        self.flush_observers: list[Callable[[float], None]] = []  # seconds per batch written
        self.alerts: list[Callable[[str], None]] = []  # called with an alert kind
        self.token_spend = TokenSpend()  # what tokens' quota_used does not show yet

    def observe_only(self, record: Record) -> None:
        """Show a record to the observers (metrics, logs) without writing it: a call that
        never authenticated has no user to log it under."""
        for observe in self.observers:
            observe(record)

    def add(self, record: Record) -> None:
        if record.model is not None and len(record.model) > NAME_LIMIT:
            record.model = clip_name(record.model)
        if record.upstream_model is not None and len(record.upstream_model) > NAME_LIMIT:
            record.upstream_model = clip_name(record.upstream_model)
        if not 0 <= record.cost <= MAX_CHARGE:
            self._cap(record)
        for observe in self.observers:
            observe(record)
        if record.cost and record.user_id is not None and record.token_id is not None:
            self.token_spend.charged(record.token_id, record.cost)
        self._queue.append(record)
        if len(self._queue) >= self._batch_size:
            self._wake.set()

    def _cap(self, record: Record) -> None:
        """A cost no charge may have: negative (never a credit) or above MAX_CHARGE."""
        capped = min(max(record.cost, 0), MAX_CHARGE)
        log.error(
            "request %s: cost %d units is outside 0..%d; charged %d",
            record.request_id,
            record.cost,
            MAX_CHARGE,
            capped,
        )
        record.extra["uncapped_cost"] = record.cost
        record.cost = capped
        self._alert(CHARGE_CAPPED)

    def _alert(self, kind: str) -> None:
        for alert in self.alerts:
            alert(kind)

    @property
    def pending(self) -> int:
        return len(self._queue)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="recorder")

    async def _run(self) -> None:
        delay = self._flush_seconds
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=delay)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self.flush()
                delay = self._flush_seconds
            except Exception:
                log.exception("writing request records failed; will retry")
                delay = min(max(delay * 2, 0.5), 30.0)

    async def flush(self) -> None:
        """Write what is queued, then once more what arrived meanwhile (so a quiet
        gateway's records still land at once), and leave the rest for the next flush:
        draining until empty kept a busy gateway writing tiny batches back to back
        (~50 transactions a second instead of 2-4). Raises only when the database does
        not answer (everything not yet written stays queued)."""
        async with self._flush_lock:
            for _ in range(2):
                todo = len(self._queue)
                while todo > 0:
                    batch = self._queue[: min(self._batch_size, todo)]
                    todo -= len(batch)
                    started = time.perf_counter()
                    try:
                        await self._write(batch)
                    except Exception as exc:
                        if database_trouble(exc):
                            raise
                        log.warning("a batch of %d records failed (%r); splitting", len(batch), exc)
                        await self._write_apart(batch)
                    else:
                        self._written(len(batch))
                        for observe in self.flush_observers:
                            observe(time.perf_counter() - started)

    def _written(self, count: int) -> None:
        del self._queue[:count]
        self.flushed += count

    async def _write_apart(self, batch: list[Record]) -> None:
        """`batch` (at the head of the queue) failed: write its halves, recursively, down
        to the record that fails alone."""
        if len(batch) == 1:
            await self._suspect(batch[0])
            return
        middle = len(batch) // 2
        for part in (batch[:middle], batch[middle:]):
            try:
                await self._write(part)
            except Exception as exc:
                if database_trouble(exc):
                    raise
                await self._write_apart(part)
            else:
                self._written(len(part))

    async def _suspect(self, record: Record) -> None:
        """The record at the head of the queue failed alone."""
        try:
            await self._write([record])
        except Exception as exc:
            if database_trouble(exc):
                raise
            reason = f"{type(exc).__name__}: {exc}"
        else:
            self._written(1)
            return
        del self._queue[0]
        record.attempts += 1
        if record.attempts < MAX_ATTEMPTS:
            self._queue.append(record)  # tried again at the next pass, after the others
            return
        self.failed += 1
        self._alert(CHARGE_FAILED)
        log.error(
            "charge of request %s (user %s, cost %d units) could not be written: %s",
            record.request_id,
            record.user_id,
            record.cost,
            reason,
        )
        await self._record_failure(record, reason)

    async def _record_failure(self, record: Record, reason: str) -> None:
        row = {
            "request_id": record.request_id[:64],
            "user_id": record.user_id,
            "token_id": record.token_id,
            "cost": str(record.extra.get("uncapped_cost", record.cost)),
            "reason": reason[:2000],
            "created_at": record.created_at,
            "failed_at": now_ms(),
        }
        logged = log_row(record)
        logged["error"] = f"charge not written: {reason}"[:500]
        for rows in ((row, logged), (row, None)):
            try:
                async with self._db.begin() as conn:
                    # Idempotent: a first try whose commit reported an error may have
                    # landed; a second row would be a second retry-able charge.
                    written = await conn.scalar(
                        select(failed_charges.c.id).where(
                            failed_charges.c.request_id == row["request_id"]
                        )
                    )
                    if written is not None:
                        return
                    await conn.execute(failed_charges.insert().values(**rows[0]))
                    if rows[1] is not None:
                        await insert_many(conn, request_logs, [rows[1]])
                return
            except Exception:
                log.exception("recording the failed charge of %s failed", record.request_id)

    async def _write(self, batch: list[Record]) -> None:
        charges: dict[int, int] = defaultdict(int)
        token_spend: dict[int, int] = defaultdict(int)
        token_seen: dict[int, int] = {}
        ledger_rows: list[dict[str, Any]] = []
        for r in batch:
            if r.token_id is not None:
                token_seen[r.token_id] = max(token_seen.get(r.token_id, 0), r.created_at)
            if r.cost and r.user_id is not None:
                charges[r.user_id] += r.cost
                if r.token_id is not None:
                    token_spend[r.token_id] += r.cost
                ledger_rows.append(
                    {
                        "user_id": r.user_id,
                        "amount": -r.cost,
                        "kind": "charge",
                        "request_id": r.request_id,
                        "note": f"{r.endpoint} {r.model}",
                        "actor": None,
                        "created_at": r.created_at,
                    }
                )
        log_rows = [log_row(r) for r in batch]
        async with self._db.begin() as conn:
            if ledger_rows:
                await insert_many(conn, ledger, ledger_rows)
            for user_id, amount in charges.items():
                # The floor keeps the balance inside its 64-bit column (SQLite would turn
                # it into a float, PostgreSQL refuse it): such a charge fails alone.
                charged = await conn.execute(
                    update(users)
                    .where(users.c.id == user_id, users.c.balance >= amount - MAX_AMOUNT)
                    .values(balance=users.c.balance - amount)
                )
                if charged.rowcount != 1:
                    raise ChargeRefused(
                        f"user {user_id} does not exist or the balance cannot go"
                        f" {amount} units lower"
                    )
                await conn.execute(
                    update(balance_leases)
                    .where(
                        balance_leases.c.user_id == user_id, balance_leases.c.holder == self._holder
                    )
                    .values(amount=balance_leases.c.amount - amount)
                )
            for token_id, seen in token_seen.items():
                spent = token_spend.get(token_id, 0)
                await conn.execute(
                    update(tokens)
                    .where(tokens.c.id == token_id, tokens.c.quota_used <= MAX_AMOUNT - spent)
                    .values(quota_used=tokens.c.quota_used + spent, last_used_at=seen)
                )
            await insert_many(conn, request_logs, log_rows)
        self.token_spend.written(token_spend)

    async def close(self) -> None:
        """Stop the loop and write what is left. Gives up after `close_seconds` of
        failures (the database is away): what could not be written is logged, one line
        per record, and counted, so the caller can still hand the leases back."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        deadline = time.monotonic() + self._close_seconds
        delay = 0.1
        while self._queue:
            try:
                await self.flush()
            except Exception:
                if time.monotonic() + delay > deadline:
                    self._give_up()
                    return
                log.exception("writing request records at shutdown failed; will retry")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _give_up(self) -> None:
        lost, self._queue = self._queue, []
        self.failed += len(lost)
        self._alert(RECORDS_LOST)
        log.error("shutting down with %d records the database would not take", len(lost))
        for r in lost:
            log.error(
                "unwritten record: request %s user %s token %s cost %d units",
                r.request_id,
                r.user_id,
                r.token_id,
                r.cost,
            )
