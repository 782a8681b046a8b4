"""`switchgate migrate` started by several processes at once (replicas of a rollout, a
migration Job beside them) on one new database: every one exits 0, the schema ends at
head once, and the upgrade ran exactly once."""

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from switchgate.storage import migrate
from switchgate.storage.db import Database
from tests.support import IN_CI, ROOT, gateway_env, postgres_available, postgres_database

RACERS = 4


def _race(data_dir: Path, database_url: str | None) -> None:
    env = gateway_env(data_dir, database_url)
    env["SWITCHGATE_LOG_LEVEL"] = "info"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "switchgate", "migrate"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for _ in range(RACERS)
    ]
    outputs = [p.communicate(timeout=120)[0].decode(errors="replace") for p in procs]
    failed = [out for p, out in zip(procs, outputs, strict=True) if p.returncode != 0]
    assert not failed, failed[0]

    async def versions() -> list[str]:
        db = Database(database_url or f"sqlite+aiosqlite:///{data_dir / 'switchgate.db'}")
        try:
            async with db.connect() as conn:
                rows = await conn.execute(text("SELECT version_num FROM alembic_version"))
                return [str(r[0]) for r in rows]
        finally:
            await db.dispose()

    assert asyncio.run(versions()) == [migrate.head_revision()]


def test_concurrent_migrate_on_sqlite(tmp_path: Path) -> None:
    _race(tmp_path, None)


@pytest.mark.postgres
def test_concurrent_migrate_on_postgres(tmp_path: Path) -> None:
    if not postgres_available():
        if IN_CI:
            pytest.fail("PostgreSQL is required in CI but is not reachable on 127.0.0.1:5432")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    with postgres_database() as url:
        _race(tmp_path, url)
