"""The first start: make sure an admin account exists and say how to sign in."""

import logging
import secrets
from typing import Final

from sqlalchemy import select, update

from switchgate.accounts import site_settings
from switchgate.accounts.passwords import hash_password
from switchgate.accounts.service import create_user, normalise_email
from switchgate.settings import Settings
from switchgate.storage.db import Database
from switchgate.storage.tables import users

log = logging.getLogger("switchgate")

HINT_KEY: Final = "first_admin_hint"  # the e-mail of a generated admin, until it signs in
DEFAULT_ADMIN_EMAIL: Final = "admin@localhost"


async def ensure_admin(db: Database, settings: Settings) -> None:
    """Create the first admin if there is none: from SWITCHGATE_ADMIN_EMAIL /
    SWITCHGATE_ADMIN_PASSWORD, or with a generated password printed to the log once."""
    async with db.begin() as conn:
        if await conn.scalar(select(users.c.id).where(users.c.role == "admin").limit(1)):
            return
        email = normalise_email(settings.admin_email or DEFAULT_ADMIN_EMAIL)
        password = settings.admin_password or secrets.token_urlsafe(12)
        existing = await conn.scalar(select(users.c.id).where(users.c.email == email))
        if existing is not None:
            await conn.execute(
                update(users)
                .where(users.c.id == existing)
                .values(role="admin", password_hash=hash_password(password))
            )
        else:
            user = await create_user(conn, email, password, admin=True)
            await conn.execute(
                update(users).where(users.c.id == user.id).values(email_verified=True)
            )
        if settings.admin_password:
            log.warning("created the admin account %s (password from settings)", email)
            return
        await site_settings.set_value(conn, HINT_KEY, email)
    log.warning(
        "created the first admin account: e-mail %s, password %s -- sign in at /console "
        "and change the password (this is shown only once)",
        email,
        password,
    )
