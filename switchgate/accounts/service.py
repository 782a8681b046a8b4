"""User and token management: the functions the CLI and the console both call."""

import asyncio
import ipaddress
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate import jsonutil
from switchgate.accounts.keys import generate_token, hash_token, visible_prefix
from switchgate.accounts.passwords import hash_password
from switchgate.storage.db import bump_config_version, now_ms
from switchgate.storage.tables import sessions, tokens, users


class AccountError(ValueError):
    """A management request that cannot be carried out (shown to the operator as is)."""


@dataclass(frozen=True)
class User:
    id: int
    email: str
    role: str
    status: str
    balance: int


EMAIL_MAX = 320  # the users.email column; control characters and spaces are refused too


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    if (
        "@" not in email
        or email.startswith("@")
        or email.endswith("@")
        or len(email) > EMAIL_MAX
        or any(c.isspace() or not c.isprintable() for c in email)
    ):
        raise AccountError(f"not an e-mail address: {email[:EMAIL_MAX]!r}")
    return email


async def create_user(
    conn: AsyncConnection,
    email: str,
    password: str | None = None,
    *,
    admin: bool = False,
    password_hash: str | None = None,
) -> User:
    """A new user; `password_hash` instead of `password` when it was hashed already
    (off the event loop, before the transaction: see signin.sign_up)."""
    email = normalise_email(email)
    if await conn.scalar(select(users.c.id).where(users.c.email == email)) is not None:
        raise AccountError(f"a user with e-mail {email} already exists")
    result = await conn.execute(
        users.insert().values(
            email=email,
            password_hash=password_hash or (hash_password(password) if password else None),
            role="admin" if admin else "user",
            status="active",
            email_verified=False,
            balance=0,
            lease_seq=0,
            created_at=now_ms(),
        )
    )
    user_id = int(result.inserted_primary_key[0])  # type: ignore[index]
    return User(user_id, email, "admin" if admin else "user", "active", 0)


async def get_user(conn: AsyncConnection, email: str) -> User:
    row = (
        await conn.execute(
            select(users.c.id, users.c.email, users.c.role, users.c.status, users.c.balance).where(
                users.c.email == normalise_email(email)
            )
        )
    ).first()
    if row is None:
        raise AccountError(f"no user with e-mail {email.strip().lower()}")
    return User(row.id, row.email, row.role, row.status, row.balance)


async def count_users(conn: AsyncConnection) -> int:
    return int(await conn.scalar(select(func.count()).select_from(users)) or 0)


def _validate_ips(allowed_ips: list[str] | None) -> list[str] | None:
    if not allowed_ips:
        return None
    for entry in allowed_ips:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError as exc:
            raise AccountError(f"not an IP address or CIDR range: {entry!r}") from exc
    return allowed_ips


@dataclass(frozen=True)
class NewToken:
    id: int
    token: str  # the only time the plain token exists
    prefix: str


async def create_token(
    conn: AsyncConnection,
    user_id: int,
    name: str = "",
    *,
    expires_at: int | None = None,
    quota_limit: int | None = None,
    allowed_models: list[str] | None = None,
    allowed_ips: list[str] | None = None,
    rpm_limit: int | None = None,
    tpm_limit: int | None = None,
) -> NewToken:
    if quota_limit is not None and quota_limit < 0:
        raise AccountError("the spending limit must not be negative")
    _check_rates(rpm_limit, tpm_limit)
    plain = generate_token()
    result = await conn.execute(
        tokens.insert().values(
            user_id=user_id,
            name=name,
            key_hash=hash_token(plain),
            key_prefix=visible_prefix(plain),
            status="active",
            expires_at=expires_at,
            quota_limit=quota_limit,
            quota_used=0,
            allowed_models=jsonutil.dumps_str(allowed_models) if allowed_models else None,
            allowed_ips=jsonutil.dumps_str(_validate_ips(allowed_ips)) if allowed_ips else None,
            rpm_limit=rpm_limit,
            tpm_limit=tpm_limit,
            created_at=now_ms(),
        )
    )
    await bump_config_version(conn)
    return NewToken(int(result.inserted_primary_key[0]), plain, visible_prefix(plain))  # type: ignore[index]


async def set_token_status(
    conn: AsyncConnection, token_id: int, status: str, *, owner: int | None = None
) -> None:
    """Change a token's status; with `owner`, only if that user owns the token."""
    if status not in ("active", "disabled", "deleted"):
        raise AccountError(f"unknown token status {status!r}")
    query = update(tokens).where(tokens.c.id == token_id, tokens.c.status != "deleted")
    if owner is not None:
        query = query.where(tokens.c.user_id == owner)
    result = await conn.execute(query.values(status=status))
    if result.rowcount == 0:
        raise AccountError(f"no token with id {token_id}")
    await bump_config_version(conn)


_UNSET: Any = object()


async def update_token(
    conn: AsyncConnection,
    token_id: int,
    *,
    owner: int,
    name: str | None = None,
    expires_at: int | None = _UNSET,
    quota_limit: int | None = _UNSET,
    allowed_models: list[str] | None = _UNSET,
    allowed_ips: list[str] | None = _UNSET,
    rpm_limit: int | None = _UNSET,
    tpm_limit: int | None = _UNSET,
) -> None:
    """Edit the user's own token; fields left out keep their value (None clears one)."""
    values: dict[str, Any] = {}
    if name is not None:
        values["name"] = name[:200]
    if expires_at is not _UNSET:
        values["expires_at"] = expires_at
    if quota_limit is not _UNSET:
        if quota_limit is not None and quota_limit < 0:
            raise AccountError("the spending limit must not be negative")
        values["quota_limit"] = quota_limit
    if allowed_models is not _UNSET:
        values["allowed_models"] = jsonutil.dumps_str(allowed_models) if allowed_models else None
    if allowed_ips is not _UNSET:
        checked = _validate_ips(allowed_ips)
        values["allowed_ips"] = jsonutil.dumps_str(checked) if checked else None
    if rpm_limit is not _UNSET:
        if rpm_limit is not None and rpm_limit < 1:
            raise AccountError("the requests-per-minute limit must be at least 1")
        values["rpm_limit"] = rpm_limit
    if tpm_limit is not _UNSET:
        _check_rates(None, tpm_limit)
        values["tpm_limit"] = tpm_limit
    mine = (tokens.c.id == token_id, tokens.c.user_id == owner, tokens.c.status != "deleted")
    if not values:  # nothing to change, but the same answer as an edit: no id probing
        if await conn.scalar(select(tokens.c.id).where(*mine)) is None:
            raise AccountError(f"no token with id {token_id}")
        return
    result = await conn.execute(
        update(tokens)
        .where(tokens.c.id == token_id, tokens.c.user_id == owner, tokens.c.status != "deleted")
        .values(**values)
    )
    if result.rowcount == 0:
        raise AccountError(f"no token with id {token_id}")
    await bump_config_version(conn)


async def list_tokens(
    conn: AsyncConnection, user_id: int, *, include_session_tokens: bool = True
) -> list[dict[str, object]]:
    query = (
        select(
            tokens.c.id,
            tokens.c.name,
            tokens.c.key_prefix,
            tokens.c.status,
            tokens.c.created_at,
            tokens.c.last_used_at,
            tokens.c.quota_used,
            tokens.c.expires_at,
            tokens.c.quota_limit,
            tokens.c.allowed_models,
            tokens.c.allowed_ips,
            tokens.c.rpm_limit,
            tokens.c.tpm_limit,
        )
        .where(tokens.c.user_id == user_id, tokens.c.status != "deleted")
        .order_by(tokens.c.id)
    )
    if not include_session_tokens:
        session_tokens = select(sessions.c.playground_token_id).where(
            sessions.c.playground_token_id.is_not(None)
        )
        query = query.where(tokens.c.id.not_in(session_tokens))
    rows = await conn.execute(query)
    return [dict(row._mapping) for row in rows]


async def get_user_by_id(conn: AsyncConnection, user_id: int) -> User:
    row = (
        await conn.execute(
            select(users.c.id, users.c.email, users.c.role, users.c.status, users.c.balance).where(
                users.c.id == user_id
            )
        )
    ).first()
    if row is None:
        raise AccountError(f"no user with id {user_id}")
    return User(row.id, row.email, row.role, row.status, row.balance)


async def set_user_status(conn: AsyncConnection, user_id: int, status: str) -> None:
    """Disable or re-enable an account; its tokens stop working within one poll interval."""
    if status not in ("active", "disabled"):
        raise AccountError(f"unknown user status {status!r}")
    result = await conn.execute(update(users).where(users.c.id == user_id).values(status=status))
    if result.rowcount == 0:
        raise AccountError(f"no user with id {user_id}")
    await bump_config_version(conn)


async def set_user_role(conn: AsyncConnection, user_id: int, role: str) -> None:
    if role not in ("user", "admin"):
        raise AccountError(f"unknown role {role!r}")
    result = await conn.execute(update(users).where(users.c.id == user_id).values(role=role))
    if result.rowcount == 0:
        raise AccountError(f"no user with id {user_id}")
    await bump_config_version(conn)


async def set_password(conn: AsyncConnection, user_id: int, password: str) -> None:
    check_password_strength(password)
    await set_password_hash(conn, user_id, hash_password(password))


async def hash_new_password(password: str) -> str:
    """Check and hash a new password in a worker thread (argon2 takes tens of ms: not on
    the event loop, and not while a database transaction is open)."""
    check_password_strength(password)
    return await asyncio.to_thread(hash_password, password)


async def set_password_hash(conn: AsyncConnection, user_id: int, password_hash: str) -> None:
    await conn.execute(
        update(users).where(users.c.id == user_id).values(password_hash=password_hash)
    )


def check_password_strength(password: str) -> None:
    if len(password) < 8:
        raise AccountError("the password must have at least 8 characters")
    if len(password) > 1024:
        raise AccountError("the password is too long")


def _check_rates(rpm_limit: int | None, tpm_limit: int | None) -> None:
    if rpm_limit is not None and rpm_limit < 1:
        raise AccountError("the requests-per-minute limit must be at least 1")
    if tpm_limit is not None and tpm_limit < 1:
        raise AccountError("the tokens-per-minute limit must be at least 1")


async def set_user_rates(
    conn: AsyncConnection, user_id: int, rpm_limit: int | None, tpm_limit: int | None
) -> None:
    """Requests and tokens per minute over all of a user's tokens (None: no limit)."""
    _check_rates(rpm_limit, tpm_limit)
    await conn.execute(
        update(users).where(users.c.id == user_id).values(rpm_limit=rpm_limit, tpm_limit=tpm_limit)
    )
    await bump_config_version(conn)
