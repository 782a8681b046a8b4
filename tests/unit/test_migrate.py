"""Start-up skips Alembic when the schema is already at the newest revision."""

from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text

from switchgate.storage import migrate
from switchgate.storage.db import Database


def test_head_revision_agrees_with_alembic() -> None:
    scripts = ScriptDirectory.from_config(migrate.alembic_config())
    assert migrate.head_revision() == scripts.get_current_head()


async def test_upgrade_runs_alembic_only_when_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'm.db'}")
    try:
        await migrate.upgrade(db)  # a new database: Alembic creates everything
        async with db.connect() as conn:
            version = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
        assert version == [(migrate.head_revision(),)]

        calls: list[str] = []
        monkeypatch.setattr(command, "upgrade", lambda config, rev: calls.append(rev))
        await migrate.upgrade(db)
        assert calls == []  # up to date: Alembic not consulted

        async with db.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = '0002'"))
        await migrate.upgrade(db)
        assert calls == ["head"]
    finally:
        await db.engine.dispose()
