"""`switchgate secret-key rotate`: with the new key current and the old one in
SWITCHGATE_SECRET_KEY_PREVIOUS, every stored secret is re-encrypted with the new key; a
value no configured key can read aborts the whole rotation; a second run changes nothing."""

import asyncio
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from sqlalchemy import select

from switchgate.storage.db import Database, now_ms
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import channels, site_settings
from tests.support import gateway_env, run_cli


def _sealed(data_dir: Path) -> list[str]:
    async def read() -> list[str]:
        db = Database(f"sqlite+aiosqlite:///{data_dir / 'switchgate.db'}")
        try:
            async with db.connect() as conn:
                keys = (await conn.execute(select(channels.c.api_key_enc))).scalars().all()
                secret = select(site_settings.c.value).where(site_settings.c.secret.is_(True))
                return [*keys, *(await conn.execute(secret)).scalars().all()]
        finally:
            await db.dispose()

    return asyncio.run(read())


def _plain(values: list[str], key: str) -> list[str]:
    box = SecretBox.load(key, Path("/nonexistent"))
    return [box.decrypt(v) for v in values]


def test_rotate_re_encrypts_every_secret(tmp_path: Path) -> None:
    old, new, stranger = (
        run_cli(gateway_env(tmp_path, None), "secret-key", "generate").stdout.strip()
        for _ in range(3)
    )
    assert len({old, new, stranger}) == 3
    env = gateway_env(tmp_path, None) | {"SWITCHGATE_SECRET_KEY": old}
    for name in ("a", "b"):
        run_cli(
            env,
            "channels",
            "add",
            name,
            "--kind",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--key",
            f"sk-upstream-{name}",
            "--models",
            "m",
        )

    async def add_secret_setting() -> None:
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'switchgate.db'}")
        box = SecretBox.load(old, tmp_path)
        try:
            async with db.begin() as conn:
                await conn.execute(
                    site_settings.insert().values(
                        key="smtp_password",
                        value=box.encrypt("mail-pass"),
                        secret=True,
                        updated_at=now_ms(),
                    )
                )
        finally:
            await db.dispose()

    asyncio.run(add_secret_setting())
    expected = ["sk-upstream-a", "sk-upstream-b", "mail-pass"]
    assert _plain(_sealed(tmp_path), old) == expected
    with pytest.raises(InvalidTag):
        _plain(_sealed(tmp_path), new)

    # A key nobody configured: refused, nothing changed.
    lost = env | {"SWITCHGATE_SECRET_KEY": stranger}
    refused = run_cli(lost, "secret-key", "rotate", check=False)
    assert refused.returncode == 2 and "nothing was changed" in refused.stderr
    assert _plain(_sealed(tmp_path), old) == expected

    rotating = env | {"SWITCHGATE_SECRET_KEY": new, "SWITCHGATE_SECRET_KEY_PREVIOUS": old}
    done = run_cli(rotating, "secret-key", "rotate")
    assert "3 secrets now use the current key" in done.stdout
    assert _plain(_sealed(tmp_path), new) == expected  # the old key is no longer needed
    again = run_cli(rotating, "secret-key", "rotate")
    assert "0 secrets now use the current key" in again.stdout
    # The CLI reads channels with the new key alone.
    listed = run_cli(env | {"SWITCHGATE_SECRET_KEY": new}, "channels", "list")
    assert "a" in listed.stdout
