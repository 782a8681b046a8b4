"""Issue 20, low findings: CSV formula injection, token limits checked on creation, the
SQLite file's mode."""

import asyncio
import stat
from pathlib import Path

import pytest

from switchgate.accounts.service import AccountError, create_token, create_user
from switchgate.console.csv_safe import safe_cell, safe_row
from switchgate.storage.db import Database
from switchgate.storage.migrate import upgrade


@pytest.mark.parametrize(
    "cell", ['=HYPERLINK("http://x","y")', "+1+cmd", "-2+3", "@SUM(A1)", "\tx", "\r=1"]
)
def test_formulas_are_quoted(cell: str) -> None:
    assert safe_cell(cell) == "'" + cell


def test_plain_values_and_numbers_stay() -> None:
    assert safe_row(["gpt-4o", "-0.25", "+3", 12, None, "a=b"]) == [
        "gpt-4o",
        "-0.25",
        "+3",
        12,
        None,
        "a=b",
    ]


def test_the_sqlite_file_is_private(tmp_path: Path) -> None:
    db_path = tmp_path / "data" / "switchgate.db"

    async def run() -> None:
        db = Database(f"sqlite+aiosqlite:///{db_path}")
        try:
            await upgrade(db)
        finally:
            await db.dispose()

    asyncio.run(run())
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
    db_path.chmod(0o644)  # an older install: tightened at the next start
    Database(f"sqlite+aiosqlite:///{db_path}")
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("field", "value"), [("rpm_limit", -1), ("rpm_limit", 0), ("quota_limit", -5)]
)
def test_token_creation_checks_its_limits(tmp_path: Path, field: str, value: int) -> None:
    async def run() -> None:
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 't.db'}")
        try:
            await upgrade(db)
            async with db.begin() as conn:
                user = await create_user(conn, "ann@example.com")
                with pytest.raises(AccountError, match="limit"):
                    await create_token(conn, user.id, "t", **{field: value})
        finally:
            await db.dispose()

    asyncio.run(run())
