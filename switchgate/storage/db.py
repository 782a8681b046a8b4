"""The async engine: SQLite (WAL) by default, PostgreSQL via asyncpg when configured."""

import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from switchgate.storage.tables import kv

CONFIG_VERSION_KEY = "config_version"


def now_ms() -> int:
    return int(time.time() * 1000)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # Let SQLAlchemy, not the driver, emit BEGIN (see _sqlite_begin).
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(conn: Any) -> None:
    # Every transaction takes the write lock up front, so a read-then-write never
    # fails with SQLITE_BUSY halfway; waiting writers queue on busy_timeout.
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def _private_file(path: Path) -> None:
    """The SQLite file (balances, hashes, sessions) readable by its owner only: created
    0600 (SQLite gives its -wal and -shm files the same mode), an existing one tightened."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)


class Database:
    """Owns the engine. `begin()` yields a connection inside one transaction."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            path = url.split("///", 1)[-1].split("?", 1)[0]
            if path and path != ":memory:" and not path.startswith("file:"):
                _private_file(Path(path))
            self.engine: AsyncEngine = create_async_engine(url, pool_size=4, max_overflow=4)
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.engine.sync_engine, "begin", _sqlite_begin)
        else:
            self.engine = create_async_engine(url, pool_size=5, max_overflow=10, pool_pre_ping=True)

    @asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.begin() as conn:
            yield conn

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncConnection]:
        async with self.engine.connect() as conn:
            yield conn

    async def dispose(self) -> None:
        await self.engine.dispose()

    async def config_version(self) -> int:
        async with self.engine.connect() as conn:
            value = await conn.scalar(select(kv.c.value).where(kv.c.key == CONFIG_VERSION_KEY))
        return int(value) if value is not None else 0


async def bump_config_version(conn: AsyncConnection) -> None:
    """Tell every running gateway process that channels, prices or tokens changed."""
    current = await conn.scalar(select(kv.c.value).where(kv.c.key == CONFIG_VERSION_KEY))
    if current is None:
        await conn.execute(kv.insert().values(key=CONFIG_VERSION_KEY, value="1"))
    else:
        await conn.execute(
            update(kv).where(kv.c.key == CONFIG_VERSION_KEY).values(value=str(int(current) + 1))
        )
