"""A token's spending limit sees every charge of this process, whether or not it is in the
database yet and however often the token cache is emptied (billing/token_spend.py)."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event as sqlalchemy_event

from switchgate.accounts.auth import Principal, TokenCache
from switchgate.accounts.service import create_token, create_user
from switchgate.billing.recorder import Record, Recorder
from switchgate.billing.token_spend import TokenSpend
from switchgate.errors import GatewayError
from switchgate.relay import policy
from switchgate.storage import migrate
from switchgate.storage.db import Database


def test_charges_move_from_unwritten_to_written() -> None:
    spend = TokenSpend()
    spend.charged(7, 5)
    spend.charged(7, 3)
    spend.charged(8, 0)  # free calls change nothing
    assert spend.since(7, 0) == 8 and spend.since(8, 0) == 0
    spend.written({7: 5})
    assert spend.generation == 1
    assert spend.since(7, 0) == 8  # loaded before the commit: sees neither
    assert spend.since(7, spend.mark(7)) == 3  # loaded after it: the 5 are in quota_used
    spend.written({7: 3})
    assert spend.since(7, spend.mark(7)) == 0


def _log_to(statements: list[str]) -> Any:
    def log(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    return log


class Fixture:
    def __init__(self, db: Database, token: str, token_id: int, user_id: int) -> None:
        self.db, self.token, self.token_id, self.user_id = db, token, token_id, user_id
        self.recorder = Recorder(db, "test-holder", flush_seconds=3600)
        self.cache = TokenCache(db, self.recorder.token_spend)

    def charge(self, cost: int, n: int) -> None:
        self.recorder.add(
            Record(
                request_id=f"req-{n}",
                created_at=1,
                user_id=self.user_id,
                token_id=self.token_id,
                model="m",
                dialect="openai",
                endpoint="chat",
                status=200,
                cost=cost,
            )
        )

    async def check(self) -> Principal:
        return policy.check_principal(
            await self.cache.resolve(self.token), None, self.recorder.token_spend
        )


@pytest.fixture
async def fx(tmp_path: Path) -> AsyncIterator[Fixture]:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'spend.db'}")
    await migrate.upgrade(db)
    async with db.begin() as conn:
        user = await create_user(conn, "spender@example.com")
        token = await create_token(conn, user.id, "t", quota_limit=10)
    try:
        yield Fixture(db, token.token, token.id, user.id)
    finally:
        await db.engine.dispose()


async def test_emptying_the_cache_before_a_flush_forgets_no_charge(fx: Fixture) -> None:
    await fx.check()
    fx.charge(6, 1)
    fx.cache.clear()  # a config change elsewhere, before the charge reached the database
    await fx.check()  # 6 of 10
    fx.charge(4, 2)
    fx.cache.clear()
    with pytest.raises(GatewayError) as info:
        await fx.check()  # 10 of 10, none of it written yet
    assert info.value.code == "token_quota_exceeded"


async def test_limit_is_exact_across_flushes_and_reloads(fx: Fixture) -> None:
    fx.charge(6, 1)
    await fx.check()  # loaded with quota_used 0, 6 unwritten
    await fx.recorder.flush()  # quota_used 6 in the database; this principal still says 0
    await fx.check()
    fx.cache.clear()
    principal = await fx.check()  # reloaded: quota_used 6, nothing counted twice
    assert principal.quota_used == 6
    fx.charge(3, 2)
    await fx.check()  # 9 of 10
    fx.charge(1, 3)
    await fx.recorder.flush()
    with pytest.raises(GatewayError):
        await fx.check()
    fx.cache.clear()
    with pytest.raises(GatewayError):
        await fx.check()


async def test_a_flush_during_the_read_makes_the_cache_read_again(
    fx: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    fx.charge(6, 1)
    reads = 0
    read = fx.cache._read

    async def read_with_a_flush_in_between(key_hash: str) -> Principal | None:
        nonlocal reads
        reads += 1
        principal = await read(key_hash)  # sees quota_used 0 ...
        if reads == 1:
            await fx.recorder.flush()  # ... and the 6 are committed before the read returns
        return principal

    monkeypatch.setattr(fx.cache, "_read", read_with_a_flush_in_between)
    principal = await fx.check()
    assert reads == 2
    assert principal.quota_used == 6
    assert fx.recorder.token_spend.since(fx.token_id, principal.spend_mark) == 0


async def test_spend_of_other_processes_counts_after_a_refresh(fx: Fixture) -> None:
    other = Fixture(fx.db, fx.token, fx.token_id, fx.user_id)  # a second worker
    await fx.check()
    await other.check()
    other.charge(7, 1)
    await other.recorder.flush()  # the other worker's 7 are in the database
    fx.charge(2, 2)  # 9 of 10 in truth; this worker still knows only its own 2
    await fx.check()
    await fx.cache.refresh_spend()
    principal = await fx.check()  # 7 + 2: still under the limit, nothing counted twice
    assert principal.quota_used == 7
    fx.charge(1, 3)
    with pytest.raises(GatewayError):
        await fx.check()  # 10 of 10
    await fx.recorder.flush()
    await fx.cache.refresh_spend()  # 10 read back from the database, none twice
    principal = fx.cache._known[next(iter(fx.cache._known))]
    assert principal.quota_used == 10
    assert fx.recorder.token_spend.since(fx.token_id, principal.spend_mark) == 0


async def test_refresh_reads_only_tokens_with_a_limit(fx: Fixture) -> None:
    async with fx.db.begin() as conn:
        free = await create_token(conn, fx.user_id, "no limit")
    await fx.cache.resolve(free.token)
    await fx.check()
    statements: list[str] = []
    engine = fx.db.engine.sync_engine
    sqlalchemy_event.listen(engine, "before_cursor_execute", _log_to(statements))
    await fx.cache.refresh_spend()
    selects = [s for s in statements if s.startswith("SELECT")]
    assert len(selects) == 1 and selects[0].count("?") == 1  # one id: the limited one
