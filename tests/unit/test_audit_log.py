"""The audit log is append-only in the database itself (triggers from migration 0007):
UPDATE, DELETE (and TRUNCATE on PostgreSQL) fail on SQLite and PostgreSQL alike."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import delete, select, text, update
from sqlalchemy.exc import DBAPIError

from switchgate.audit.actions import MASK, Entry, list_entries, masked, record
from switchgate.storage.db import Database
from switchgate.storage.migrate import upgrade
from switchgate.storage.tables import audit_log
from tests.support import IN_CI, postgres_available, postgres_database


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"
        return
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI")
        pytest.skip("PostgreSQL is not reachable")
    with postgres_database() as url:
        yield url


async def test_rows_can_be_added_but_never_changed(database_url: str) -> None:
    db = Database(database_url)
    try:
        await upgrade(db)
        async with db.begin() as conn:
            await record(conn, Entry("admin@example.com", "PUT /api/settings", "/api/settings"))
            await record(conn, Entry("cli", "cli balance add", "ann@example.com", ip="10.0.0.1"))
        changes = [
            update(audit_log).values(actor="someone-else"),
            delete(audit_log),
        ]
        if not db.is_sqlite:
            changes.append(text("TRUNCATE audit_log"))  # type: ignore[arg-type]
        for change in changes:
            with pytest.raises(DBAPIError, match="append-only"):
                async with db.begin() as conn:
                    await conn.execute(change)
        async with db.connect() as conn:
            rows = await list_entries(conn)
            assert [r["actor"] for r in rows] == ["cli", "admin@example.com"]
            assert await conn.scalar(select(audit_log.c.ip).where(audit_log.c.actor == "cli")) == (
                "10.0.0.1"
            )
    finally:
        await db.dispose()


def test_secrets_are_masked_at_any_depth() -> None:
    body = {
        "name": "main",
        "api_key": "sk-live-123",
        "smtp_password": "hunter2",
        "github_client_secret": "s",
        "nested": [{"token": "t", "fine": 1}],
        "empty_key": "",
    }
    assert masked(body) == {
        "name": "main",
        "api_key": MASK,
        "smtp_password": MASK,
        "github_client_secret": MASK,
        "nested": [{"token": MASK, "fine": 1}],
        "empty_key": "",
    }
