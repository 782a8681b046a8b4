"""Password sign-up and sign-in, e-mail verification and password-reset tokens."""

import asyncio
import hashlib
import secrets
from dataclasses import dataclass
from typing import Final

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.accounts.passwords import hash_password, verify_password
from switchgate.accounts.service import (
    AccountError,
    User,
    create_user,
    hash_new_password,
    normalise_email,
)
from switchgate.storage.db import Database, now_ms
from switchgate.storage.tables import email_tokens, users

VERIFY_TTL_MS: Final = 48 * 3600 * 1000
RESET_TTL_MS: Final = 3600 * 1000
# Verified against when the e-mail is unknown, so both cases take the same time.
_DUMMY_HASH: Final = hash_password("switchgate-no-such-user")


class SigninRefused(AccountError):
    """Wrong e-mail or password (deliberately not saying which)."""


@dataclass(frozen=True)
class SignedIn:
    user_id: int
    email: str
    email_verified: bool


async def sign_up(db: Database, email: str, password: str) -> User:
    """A new account with a password, hashed before the transaction opens."""
    hashed = await hash_new_password(password)
    async with db.begin() as conn:
        return await create_user(conn, email, password_hash=hashed)


async def authenticate(db: Database, email: str, password: str) -> SignedIn:
    """The account for `email` and `password`. The row is read, the connection given back,
    then argon2 runs in a worker thread: no database connection (or SQLite write lock) is
    held during the slow verify, and the event loop keeps serving."""
    row = None
    try:
        email = normalise_email(email)
    except AccountError:
        email = ""
    if email:
        async with db.connect() as conn:
            row = (
                await conn.execute(
                    select(
                        users.c.id, users.c.password_hash, users.c.status, users.c.email_verified
                    ).where(users.c.email == email)
                )
            ).first()
    stored = row.password_hash if row is not None and row.password_hash else None
    ok = await asyncio.to_thread(verify_password, stored or _DUMMY_HASH, password)
    if row is None or stored is None or not ok:
        raise SigninRefused("wrong e-mail or password")
    if row.status != "active":
        raise AccountError("this account is disabled; ask the operator")
    return SignedIn(row.id, email, bool(row.email_verified))


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue_email_token(conn: AsyncConnection, user_id: int, purpose: str) -> str:
    """A single-use token for a link sent by e-mail (purpose: verify | reset)."""
    token = secrets.token_urlsafe(32)
    now = now_ms()
    ttl = VERIFY_TTL_MS if purpose == "verify" else RESET_TTL_MS
    await conn.execute(
        email_tokens.insert().values(
            token_hash=_hash(token),
            user_id=user_id,
            purpose=purpose,
            created_at=now,
            expires_at=now + ttl,
        )
    )
    return token


async def use_email_token(conn: AsyncConnection, token: str, purpose: str) -> int:
    """Spend a token (once, even under concurrent use); returns its user id."""
    now = now_ms()
    condition = (
        (email_tokens.c.token_hash == _hash(token))
        & (email_tokens.c.purpose == purpose)
        & email_tokens.c.used_at.is_(None)
        & (email_tokens.c.expires_at > now)
    )
    user_id = await conn.scalar(select(email_tokens.c.user_id).where(condition))
    result = await conn.execute(update(email_tokens).where(condition).values(used_at=now))
    if user_id is None or result.rowcount != 1:
        raise AccountError("this link is invalid, was already used, or has expired")
    return int(user_id)


async def mark_verified(conn: AsyncConnection, user_id: int) -> None:
    await conn.execute(update(users).where(users.c.id == user_id).values(email_verified=True))


async def user_id_for_email(conn: AsyncConnection, email: str) -> int | None:
    try:
        email = normalise_email(email)
    except AccountError:
        return None
    found = await conn.scalar(
        select(users.c.id).where(users.c.email == email, users.c.status == "active")
    )
    return None if found is None else int(found)
