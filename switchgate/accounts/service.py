"""User and token management: the functions the CLI and the console both call."""

import ipaddress
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate import jsonutil
from switchgate.accounts.keys import generate_token, hash_token, visible_prefix
from switchgate.accounts.passwords import hash_password
from switchgate.storage.db import bump_config_version, now_ms
from switchgate.storage.tables import tokens, users


class AccountError(ValueError):
    """A management request that cannot be carried out (shown to the operator as is)."""


@dataclass(frozen=True)
class User:
    id: int
    email: str
    role: str
    status: str
    balance: int


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    if "@" not in email or email.startswith("@") or email.endswith("@") or " " in email:
        raise AccountError(f"not an e-mail address: {email!r}")
    return email


async def create_user(
    conn: AsyncConnection, email: str, password: str | None = None, *, admin: bool = False
) -> User:
    email = normalise_email(email)
    if await conn.scalar(select(users.c.id).where(users.c.email == email)) is not None:
        raise AccountError(f"a user with e-mail {email} already exists")
    result = await conn.execute(
        users.insert().values(
            email=email,
            password_hash=hash_password(password) if password else None,
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
) -> NewToken:
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
            created_at=now_ms(),
        )
    )
    await bump_config_version(conn)
    return NewToken(int(result.inserted_primary_key[0]), plain, visible_prefix(plain))  # type: ignore[index]


async def set_token_status(conn: AsyncConnection, token_id: int, status: str) -> None:
    if status not in ("active", "disabled", "deleted"):
        raise AccountError(f"unknown token status {status!r}")
    result = await conn.execute(update(tokens).where(tokens.c.id == token_id).values(status=status))
    if result.rowcount == 0:
        raise AccountError(f"no token with id {token_id}")
    await bump_config_version(conn)


async def list_tokens(conn: AsyncConnection, user_id: int) -> list[dict[str, object]]:
    rows = await conn.execute(
        select(
            tokens.c.id,
            tokens.c.name,
            tokens.c.key_prefix,
            tokens.c.status,
            tokens.c.created_at,
            tokens.c.last_used_at,
            tokens.c.quota_used,
        )
        .where(tokens.c.user_id == user_id, tokens.c.status != "deleted")
        .order_by(tokens.c.id)
    )
    return [dict(row._mapping) for row in rows]
