"""`/readyz` reasons, checked against real (and really unreachable) databases and Redis;
`/healthz` and `/readyz` on a running gateway need no token and write no request log."""

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from switchgate.readiness import readiness
from switchgate.settings import Settings
from switchgate.state import AppState
from switchgate.storage import migrate
from tests.support import dead_port


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[AppState]:
    s = AppState.create(Settings(data_dir=tmp_path))
    await migrate.upgrade(s.db)
    s.ready = True
    yield s
    await s.db.dispose()
    if s.redis is not None:
        await s.redis.aclose()


async def _answer(state: AppState) -> tuple[int, dict[str, str]]:
    response = await readiness(state)
    return response.status_code, json.loads(bytes(response.body))


async def test_ready_at_head(state: AppState) -> None:
    assert await _answer(state) == (200, {"status": "ready", "schema": "head"})


async def test_starting_and_draining_are_not_ready(state: AppState) -> None:
    state.ready = False
    status, body = await _answer(state)
    assert (status, body["status"]) == (503, "starting")
    state.ready, state.draining = True, True
    status, body = await _answer(state)
    assert (status, body["status"]) == (503, "draining")


async def test_schema_behind_is_not_ready_but_ahead_is(state: AppState) -> None:
    async with state.db.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = '0002'"))
    status, body = await _answer(state)
    assert (status, body["status"]) == (503, "migrations-pending")
    assert "switchgate migrate" in body["reason"]
    # A newer release migrated the database (expand/contract): old replicas keep serving.
    async with state.db.begin() as conn:
        await conn.execute(text("UPDATE alembic_version SET version_num = '9999_future'"))
    assert await _answer(state) == (200, {"status": "ready", "schema": "ahead"})
    await migrate.upgrade(state.db)  # and `upgrade` leaves it alone instead of failing


async def test_empty_database_is_not_ready(tmp_path: Path) -> None:
    s = AppState.create(Settings(data_dir=tmp_path))
    s.ready = True
    try:
        status, body = await _answer(s)
    finally:
        await s.db.dispose()
    assert (status, body["status"]) == (503, "migrations-pending")


async def test_unreachable_database(tmp_path: Path) -> None:
    url = f"postgresql+asyncpg://nobody@127.0.0.1:{dead_port()}/none"
    s = AppState.create(Settings(data_dir=tmp_path, database_url=url))
    s.ready = True
    try:
        status, body = await _answer(s)
    finally:
        await s.db.dispose()
    assert (status, body["status"]) == (503, "unavailable")
    assert body["reason"].startswith("database unreachable")


async def test_unreachable_redis(tmp_path: Path) -> None:
    s = AppState.create(Settings(data_dir=tmp_path, redis_url=f"redis://127.0.0.1:{dead_port()}/0"))
    await migrate.upgrade(s.db)
    s.ready = True
    try:
        status, body = await _answer(s)
    finally:
        await s.db.dispose()
        assert s.redis is not None
        await s.redis.aclose()
    assert (status, body["status"]) == (503, "unavailable")
    assert body["reason"].startswith("redis unreachable")
