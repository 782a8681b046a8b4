"""Apply Alembic migrations (the same ones on SQLite and PostgreSQL).

Alembic (and its ~0.15 s of imports) is loaded only when the schema is behind: a start
against an up-to-date database reads `alembic_version` and compares it with the newest
revision found in `migrations/versions/`.
"""

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text

from switchgate.storage.db import Database

if TYPE_CHECKING:
    from alembic.config import Config

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
def head_revision() -> str:
    """The one revision no other migration names as its down_revision."""
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
    return heads.pop()


def _current_revision(connection: Connection) -> str | None:
    if not connection.dialect.has_table(connection, "alembic_version"):
        return None  # a new database
    rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    return str(rows[0][0]) if len(rows) == 1 else None


def _upgrade(connection: Connection) -> None:
    if _current_revision(connection) == head_revision():
        return
    from alembic import command

    command.upgrade(alembic_config(connection), "head")


async def upgrade(db: Database) -> None:
    """Bring the schema to the newest revision; safe to call on every start."""
    async with db.engine.begin() as conn:
        await conn.run_sync(_upgrade)
