"""Apply Alembic migrations (the same ones on SQLite and PostgreSQL).

Alembic (and its ~0.15 s of imports) is loaded only when the schema is behind: a start
against an up-to-date database reads `alembic_version` and compares it with the newest
revision found in `migrations/versions/`.

Several processes may start at once (replicas of a rollout, a migration Job next to
them): the upgrade runs in one transaction that first takes a lock, and re-reads the
revision under it, so exactly one of them migrates and the others find the work done.
On PostgreSQL the lock is a transaction-scoped advisory lock; on SQLite every
transaction already begins with `BEGIN IMMEDIATE` (storage/db.py), which serialises
writers the same way. A database already migrated by a newer release ("ahead") is left
alone: under the expand/contract rule (docs/deploy.md) old code runs on the new schema.
"""

import logging
import re
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sqlalchemy import Connection, text

from switchgate.storage.db import Database

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("switchgate.migrate")

# pg_advisory_xact_lock key: any constant every switchgate process agrees on.
LOCK_KEY = 0x5347_4D49_4752  # "SGMIGR"
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_REVISION = re.compile(r'^(down_revision|revision)\s*(?::[^=]*)?=\s*["\']?([\w-]+|None)', re.M)


def alembic_config(connection: Connection | None = None) -> "Config":
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


@cache
def _revisions() -> tuple[frozenset[str], str]:
    """Every revision this code knows, and the one no other names as its down_revision."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        found = dict(_REVISION.findall(path.read_text()))
        revisions.add(found["revision"])
        if found.get("down_revision", "None") != "None":
            parents.add(found["down_revision"])
    heads = revisions - parents
    if len(heads) != 1:
        raise RuntimeError(f"migrations must have exactly one head, found {sorted(heads)}")
    return frozenset(revisions), heads.pop()


@cache
def _parents() -> dict[str, str | None]:
    found = (
        dict(_REVISION.findall(p.read_text())) for p in (MIGRATIONS_DIR / "versions").glob("*.py")
    )
    return {
        f["revision"]: None if f.get("down_revision", "None") == "None" else f["down_revision"]
        for f in found
    }


def pending_steps(revision: str | None) -> int:
    """How many migrations lie between `revision` (None: an empty database) and the head."""
    parents, steps = _parents(), 0
    current: str | None = _revisions()[1]
    while current is not None and current != revision:
        steps += 1
        current = parents.get(current)
    return steps


def head_revision() -> str:
    """The one revision no other migration names as its down_revision."""
    return _revisions()[1]


SchemaStatus = Literal["head", "behind", "ahead", "empty"]


def schema_status(revision: str | None) -> SchemaStatus:
    """Where a database at `revision` stands relative to this code.

    "ahead": a revision this code does not know, i.e. a newer release migrated it. By the
    expand/contract rule (docs/deploy.md) the old code still works on it, so it counts as
    ready and `upgrade` leaves it alone.
    """
    known, head = _revisions()
    if revision is None:
        return "empty"
    if revision == head:
        return "head"
    return "behind" if revision in known else "ahead"


def _current_revision(connection: Connection) -> str | None:
    if not connection.dialect.has_table(connection, "alembic_version"):
        return None  # a new database
    rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    return str(rows[0][0]) if len(rows) == 1 else None


def _upgrade(connection: Connection, on_step: Callable[[int, int], None] | None = None) -> None:
    if connection.dialect.name == "postgresql":
        # Held until this transaction ends: concurrent upgrades queue here.
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
    revision = _current_revision(connection)
    status = schema_status(revision)
    if status == "ahead":
        log.warning("database schema %s is newer than this release's %s", revision, head_revision())
    if status in ("head", "ahead"):
        return
    from alembic import command

    config = alembic_config(connection)
    if on_step is not None:
        total, done = pending_steps(revision), [0]

        def applied(**_: object) -> None:
            done[0] += 1
            on_step(done[0], total)

        config.attributes["on_version_apply"] = applied
    command.upgrade(config, "head")


async def current_status(db: Database) -> SchemaStatus:
    async with db.engine.connect() as conn:
        return schema_status(await conn.run_sync(_current_revision))


async def upgrade(db: Database, on_step: Callable[[int, int], None] | None = None) -> None:
    """Bring the schema to the newest revision; safe to call on every start, from any
    number of processes at once. `on_step(done, total)` after each migration applied."""
    if await current_status(db) in ("head", "ahead"):
        return  # the usual restart: no lock, no write transaction
    async with db.engine.begin() as conn:
        await conn.run_sync(partial(_upgrade, on_step=on_step))
