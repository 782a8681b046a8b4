"""Console sessions: a random cookie value, stored only as its SHA-256, with a CSRF token
and (created on first use) a per-session playground token."""

import hashlib
import secrets
from dataclasses import dataclass
from typing import Final

from sqlalchemy import ColumnElement, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.accounts import csrf
from switchgate.accounts.service import create_token, set_token_status
from switchgate.storage.db import now_ms
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import sessions, users

COOKIE: Final = "sg_session"
TTL_MS: Final = 14 * 24 * 3600 * 1000
PLAYGROUND_TOKEN_NAME: Final = "playground"


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


@dataclass(frozen=True)
class Session:
    id: str  # the hash
    user_id: int
    email: str
    role: str
    email_verified: bool
    csrf: str
    expires_at: int
    playground_token_id: int | None
    playground_token_enc: str | None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


async def create(
    conn: AsyncConnection, user_id: int, ip: str | None, user_agent: str | None
) -> str:
    """A new session; returns the cookie value (the only time it exists in plain)."""
    await purge_expired(conn, user_id)
    value = secrets.token_urlsafe(32)
    now = now_ms()
    await conn.execute(
        sessions.insert().values(
            id=_hash(value),
            user_id=user_id,
            csrf=csrf.new_token(),
            created_at=now,
            expires_at=now + TTL_MS,
            ip=ip,
            user_agent=(user_agent or "")[:300],
        )
    )
    return value


async def load(conn: AsyncConnection, cookie_value: str | None) -> Session | None:
    """The session behind a cookie, if it is live and its user is active."""
    if not cookie_value:
        return None
    row = (
        await conn.execute(
            select(
                sessions.c.id,
                sessions.c.user_id,
                sessions.c.csrf,
                sessions.c.expires_at,
                sessions.c.playground_token_id,
                sessions.c.playground_token_enc,
                users.c.email,
                users.c.role,
                users.c.status,
                users.c.email_verified,
            )
            .join(users, users.c.id == sessions.c.user_id)
            .where(sessions.c.id == _hash(cookie_value))
        )
    ).first()
    if row is None or row.expires_at <= now_ms() or row.status != "active":
        return None
    return Session(
        id=row.id,
        user_id=row.user_id,
        email=row.email,
        role=row.role,
        email_verified=bool(row.email_verified),
        csrf=row.csrf,
        expires_at=row.expires_at,
        playground_token_id=row.playground_token_id,
        playground_token_enc=row.playground_token_enc,
    )


async def _drop(conn: AsyncConnection, condition: ColumnElement[bool]) -> None:
    rows = await conn.execute(select(sessions.c.playground_token_id).where(condition))
    for (token_id,) in rows.all():
        if token_id is not None:
            await set_token_status(conn, token_id, "deleted")
    await conn.execute(delete(sessions).where(condition))


async def destroy(conn: AsyncConnection, session_id: str) -> None:
    await _drop(conn, sessions.c.id == session_id)


async def destroy_all(conn: AsyncConnection, user_id: int) -> None:
    """Sign the user out everywhere (password change, account disabled)."""
    await _drop(conn, sessions.c.user_id == user_id)


async def purge_expired(conn: AsyncConnection, user_id: int) -> None:
    await _drop(conn, (sessions.c.user_id == user_id) & (sessions.c.expires_at <= now_ms()))


async def playground_token(conn: AsyncConnection, box: SecretBox, session: Session) -> str:
    """The session's own API token for the playground, created on first use. It expires
    with the session and is deleted at sign-out; it is not listed among the user's tokens."""
    if session.playground_token_enc:
        return box.decrypt(session.playground_token_enc)
    new = await create_token(
        conn, session.user_id, PLAYGROUND_TOKEN_NAME, expires_at=session.expires_at
    )
    await conn.execute(
        update(sessions)
        .where(sessions.c.id == session.id)
        .values(playground_token_id=new.id, playground_token_enc=box.encrypt(new.token))
    )
    return new.token
