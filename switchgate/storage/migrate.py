"""Apply Alembic migrations (the same ones on SQLite and PostgreSQL)."""

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection

from switchgate.storage.db import Database

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection) -> None:
    command.upgrade(alembic_config(connection), "head")


async def upgrade(db: Database) -> None:
    """Bring the schema to the newest revision; safe to call on every start."""
    async with db.engine.begin() as conn:
        await conn.run_sync(_upgrade)
