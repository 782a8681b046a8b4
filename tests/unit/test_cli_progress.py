"""Progress bars on long CLI work: drawn on a terminal only, per migration applied and per
catalogue item imported; scripts and pipes see clean output."""

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

from switchgate.cli.progress import Progress, progress
from switchgate.storage import migrate
from switchgate.storage.db import Database
from tests.support import ROOT, gateway_env


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_is_drawn_on_a_terminal_and_erased_at_the_end() -> None:
    out = Tty()
    assert list(progress(range(4), 4, "work", out)) == [0, 1, 2, 3]
    text = out.getvalue()
    assert "work [" + "#" * 30 + "] 4/4" in text
    assert text.endswith(" " * 40 + "\r")  # erased: what follows starts on a clean line


def test_no_bar_when_not_a_terminal() -> None:
    out = io.StringIO()
    bar = Progress(3, "work", out)
    for _ in range(3):
        bar.advance()
    bar.close()
    assert out.getvalue() == ""


async def test_upgrade_reports_each_migration_applied(tmp_path: Path) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}")
    steps: list[tuple[int, int]] = []
    try:
        await migrate.upgrade(db, on_step=lambda done, total: steps.append((done, total)))
    finally:
        await db.dispose()
    total = len(list((migrate.MIGRATIONS_DIR / "versions").glob("*.py")))
    assert migrate.pending_steps(None) == total
    assert steps == [(i, total) for i in range(1, total + 1)]
    assert migrate.pending_steps(migrate.head_revision()) == 0


def test_catalogue_import_and_migration_show_a_bar_on_a_terminal(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("\n".join(f'[prices."m{i}"]\ninput = "1"\noutput = "2"' for i in range(5)))
    master, slave = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "switchgate", "config", str(config)],
            env=gateway_env(tmp_path, None),
            stdout=subprocess.PIPE,
            stderr=slave,
            cwd=ROOT,
            timeout=60,
            check=True,
        )
        os.close(slave)
        terminal = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            terminal += chunk
    finally:
        os.close(master)
    shown = terminal.decode()
    assert "migrating the database [" in shown and "importing [" in shown
    assert "5/5" in shown
    assert result.stdout.decode().splitlines() == [f"price m{i} set" for i in range(5)]
