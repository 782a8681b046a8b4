"""A request's hold against the balance and the token's limit, and the guard that grows it
while an answer outgrows it (billing/holds.py, billing/output_guard.py), on a real
SQLite database."""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from switchgate.accounts.auth import TokenCache
from switchgate.accounts.service import create_token, create_user
from switchgate.billing.holds import Hold
from switchgate.billing.leases import BalanceBook
from switchgate.billing.ledger import add_entry
from switchgate.billing.output_guard import MIN_CHECK_BYTES, OutputGuard, ends_event
from switchgate.billing.recorder import Record, Recorder
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError
from switchgate.storage import migrate
from switchgate.storage.db import Database


@dataclass
class Fx:
    db: Database
    book: BalanceBook
    recorder: Recorder
    cache: TokenCache
    token: str
    token_id: int
    user_id: int

    async def hold(self) -> Hold:
        principal = await self.cache.resolve(self.token)
        assert principal is not None
        return Hold(self.book, self.recorder.token_spend, principal)

    def record(self, cost: int, n: int) -> None:
        self.recorder.add(
            Record(f"req-{n}", 1, self.user_id, self.token_id, "m", "openai", "chat", 200, cost)
        )


@pytest.fixture
async def fx(tmp_path: Path) -> AsyncIterator[Fx]:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'holds.db'}")
    await migrate.upgrade(db)
    async with db.begin() as conn:
        user = await create_user(conn, "holder@example.com")
        token = await create_token(conn, user.id, "t", quota_limit=100)
        await add_entry(conn, user.id, 1000, "topup")
    recorder = Recorder(db, "h", flush_seconds=3600)
    try:
        yield Fx(
            db,
            BalanceBook(db, "h", chunk=10),
            recorder,
            TokenCache(db, recorder.token_spend),
            token.token,
            token.id,
            user.id,
        )
    finally:
        await db.engine.dispose()


async def test_token_limit_counts_holds_in_flight_until_the_charge_is_queued(fx: Fx) -> None:
    first, second, third = await fx.hold(), await fx.hold(), await fx.hold()
    await first.take(60)
    with pytest.raises(GatewayError) as info:
        await second.take(60)  # 60 held + 60 > 100, though nothing is spent yet
    assert info.value.code == "token_quota_exceeded"
    assert fx.recorder.token_spend.in_flight(fx.token_id) == 60  # the refused one took nothing
    assert first.settle(30) == 30
    await second.take(60)  # 30 settled (not yet queued) + 60 <= 100
    with pytest.raises(GatewayError):
        await third.take(11)  # 30 + 60 + 11 > 100
    fx.record(30, 1)  # the charge is queued: the 30 move from settled to spent, once
    with pytest.raises(GatewayError):
        await third.take(11)
    await third.take(10)
    assert fx.recorder.token_spend.in_flight(fx.token_id) == 70


async def test_a_hold_grows_while_the_balance_allows(fx: Fx) -> None:
    hold = await fx.hold()
    await hold.take(50)
    assert await hold.extend(40) and hold.amount == 90
    assert not await hold.extend(20)  # the token's limit (100) is reached first
    assert hold.amount == 90
    await hold.cover(90)  # covered: nothing to do
    with pytest.raises(GatewayError) as info:
        await hold.cover(500)
    assert info.value.code == "insufficient_quota" and "not delivered" in info.value.message
    assert hold.capped and hold.settle(500) == 90  # charged at most what it held


def _guard(hold: Hold, text: list[str], held_tokens: int = 10) -> OutputGuard:
    return OutputGuard(hold, 1, held_tokens, lambda s: len(s.split()), lambda: "".join(text), Usage)


async def test_the_guard_checks_only_when_the_bytes_could_outgrow_the_hold(fx: Fx) -> None:
    hold = await fx.hold()
    await hold.take(10)
    text: list[str] = []
    guard = _guard(hold, text)
    assert not guard.due(MIN_CHECK_BYTES - 1)  # 10 tokens held, but checks are 4 KiB apart
    assert guard.due(1)
    text.append("a " * 30)  # 30 tokens delivered, 10 held: grows by max(20, 10)
    await guard.check()
    assert hold.amount == 30 and guard.delivered_tokens == 30
    assert not guard.due(MIN_CHECK_BYTES - 1)
    text.append("b " * 200)  # 230 tokens: more than the balance's limit allows
    assert guard.due(1)
    with pytest.raises(GatewayError) as info:
        await guard.check()
    assert "answer was stopped" in info.value.message and hold.capped
    held = hold.amount
    assert held < 230 and hold.settle(230) == held  # charged what it held, not more


async def test_the_guard_takes_the_upstreams_running_count(fx: Fx) -> None:
    hold = await fx.hold()
    await hold.take(10)
    guard = OutputGuard(hold, 1, 10, len, str, lambda: Usage(output_tokens=50))
    guard.due(MIN_CHECK_BYTES)
    await guard.check()  # no text yet, but the upstream says 50 tokens (Gemini's thoughts)
    assert hold.amount == 50


async def test_a_free_output_is_never_checked(fx: Fx) -> None:
    guard = OutputGuard(await fx.hold(), 0, 10, len, str, Usage)
    assert not guard.due(1 << 40)


def test_events_end_at_a_blank_line() -> None:
    assert ends_event(b'data: {"a":1}\n\n') and ends_event(b"data: x\r\n\r\n")
    assert not ends_event(b'data: {"a":') and not ends_event(b"event: x\n")


# --- hold.reserve(): the one async context manager every surface takes its hold with ---


@dataclass
class _Outcome:
    cost: int = -1


async def test_reserve_settles_once_on_success_with_the_cost_at_exit(fx: Fx) -> None:
    hold, outcome, usage = await fx.hold(), _Outcome(), [0]
    async with hold.reserve(60, lambda: usage[0] * 2, outcome):
        assert hold.amount == 60 and fx.book.open_holds == 1
        usage[0] = 20  # known only once the answer is in
    assert outcome.cost == 40 and hold.amount == 0 and fx.book.open_holds == 0
    assert fx.recorder.token_spend.in_flight(fx.token_id) == 40  # the charge, not the hold


class _Boom(Exception):
    pass


async def test_reserve_settles_on_an_error_and_on_cancellation(fx: Fx) -> None:
    hold, outcome = await fx.hold(), _Outcome()
    with pytest.raises(_Boom):
        async with hold.reserve(50, lambda: 7, outcome):
            raise _Boom
    assert outcome.cost == 7 and fx.book.open_holds == 0

    hold, outcome = await fx.hold(), _Outcome()
    entered = asyncio.Event()

    async def call() -> None:
        async with hold.reserve(30, lambda: 3, outcome):
            entered.set()
            await asyncio.sleep(3600)  # the client is gone: the task is cancelled

    task = asyncio.create_task(call())
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcome.cost == 3 and fx.book.open_holds == 0 and hold.amount == 0
    assert fx.recorder.token_spend.in_flight(fx.token_id) == 10


async def test_reserve_that_cannot_take_holds_and_settles_nothing(fx: Fx) -> None:
    hold, outcome, ran = await fx.hold(), _Outcome(), []
    with pytest.raises(GatewayError):
        async with hold.reserve(101, lambda: 5, outcome):  # over the token's limit (100)
            ran.append(1)
    assert not ran and outcome.cost == -1 and fx.book.open_holds == 0
    assert fx.recorder.token_spend.in_flight(fx.token_id) == 0


async def test_reserve_charges_nothing_when_the_cost_fails_and_is_used_once(fx: Fx) -> None:
    hold, outcome = await fx.hold(), _Outcome()

    def broken() -> int:
        raise KeyError("price")

    async with hold.reserve(20, broken, outcome):
        with pytest.raises(RuntimeError, match="already reserved"):
            hold.reserve(5)
    assert outcome.cost == 0 and fx.book.open_holds == 0
    with pytest.raises(RuntimeError, match=r"needs hold\.reserve"):
        async with hold:
            pass
    async with hold.reserve(10):  # reusable once settled; no cost: charged 0
        await hold.take(5)  # a long-lived hold may grow inside its block
        assert hold.settle(4) == 4 and hold.amount == 0  # and settle charges as it goes
        await hold.take(10)
    assert fx.book.open_holds == 0 and fx.recorder.token_spend.in_flight(fx.token_id) == 4
