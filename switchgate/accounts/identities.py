"""Sign-in methods from OAuth providers, linked to accounts (several per account)."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.accounts.service import AccountError, create_user, normalise_email
from switchgate.storage.db import now_ms
from switchgate.storage.tables import oauth_identities, users


@dataclass(frozen=True)
class ProviderIdentity:
    """Who the provider says signed in."""

    provider: str
    subject: str
    email: str | None
    email_verified: bool
    name: str | None = None


class SignupLimited(AccountError):
    """Too many sign-ups from the client's network; `wait` is the seconds to wait."""

    def __init__(self, wait: int) -> None:
        super().__init__("too many sign-ups from your network")
        self.wait = wait


# Counts one sign-up attempt: None if allowed, else the seconds to wait (not counted).
SignupGate = Callable[[], Awaitable[int | None]]


async def link(conn: AsyncConnection, user_id: int, ident: ProviderIdentity) -> None:
    owner = await conn.scalar(
        select(oauth_identities.c.user_id).where(
            oauth_identities.c.provider == ident.provider,
            oauth_identities.c.subject == ident.subject,
        )
    )
    if owner is not None:
        if int(owner) != user_id:
            raise AccountError(
                f"this {ident.provider} account is already linked to another account"
            )
        return
    await conn.execute(
        oauth_identities.insert().values(
            user_id=user_id,
            provider=ident.provider,
            subject=ident.subject,
            email=ident.email,
            created_at=now_ms(),
        )
    )


async def sign_in(
    conn: AsyncConnection,
    ident: ProviderIdentity,
    *,
    signup_open: bool,
    take_signup: SignupGate,
) -> int:
    """The account this identity signs in to: the linked one; else the account with the
    same (provider-verified) e-mail, which gets linked only if that account verified its
    address too (AccountError otherwise: no takeover by pre-registering an address); else
    a new account, which counts as a sign-up attempt (`take_signup`; SignupLimited when it
    refuses)."""
    owner = await conn.scalar(
        select(oauth_identities.c.user_id).where(
            oauth_identities.c.provider == ident.provider,
            oauth_identities.c.subject == ident.subject,
        )
    )
    if owner is not None:
        user_id = int(owner)
    else:
        if not ident.email or not ident.email_verified:
            raise AccountError(
                f"{ident.provider} did not confirm a verified e-mail address for this account"
            )
        email = normalise_email(ident.email)
        existing = (
            await conn.execute(
                select(users.c.id, users.c.email_verified).where(users.c.email == email)
            )
        ).first()
        if existing is not None:
            if not existing.email_verified:
                # Whoever signed up with this address never proved it was theirs: linking
                # would hand the account (and its password) to both people.
                raise AccountError(
                    "an account with this e-mail address exists but its address was never "
                    "verified; verify it (or reset its password by e-mail), sign in, then "
                    f"link {ident.provider} from the account page"
                )
            user_id = int(existing.id)
        elif not signup_open:
            raise AccountError("sign-up is closed; ask the operator for an account")
        else:
            wait = await take_signup()
            if wait is not None:
                raise SignupLimited(wait)
            user_id = (await create_user(conn, email)).id
        await link(conn, user_id, ident)
        await conn.execute(users.update().where(users.c.id == user_id).values(email_verified=True))
    status = await conn.scalar(select(users.c.status).where(users.c.id == user_id))
    if status != "active":
        raise AccountError("this account is disabled; ask the operator")
    return user_id


async def list_for_user(conn: AsyncConnection, user_id: int) -> list[dict[str, object]]:
    rows = await conn.execute(
        select(
            oauth_identities.c.id,
            oauth_identities.c.provider,
            oauth_identities.c.email,
            oauth_identities.c.created_at,
        )
        .where(oauth_identities.c.user_id == user_id)
        .order_by(oauth_identities.c.id)
    )
    return [dict(r._mapping) for r in rows]


async def unlink(conn: AsyncConnection, user_id: int, identity_id: int) -> None:
    """Remove a sign-in method, unless it is the account's last one."""
    count = await conn.scalar(select(func.count()).where(oauth_identities.c.user_id == user_id))
    has_password = await conn.scalar(
        select(users.c.password_hash.is_not(None)).where(users.c.id == user_id)
    )
    if not has_password and int(count or 0) <= 1:
        raise AccountError("set a password first: this is the account's only sign-in method")
    result = await conn.execute(
        delete(oauth_identities).where(
            oauth_identities.c.id == identity_id, oauth_identities.c.user_id == user_id
        )
    )
    if result.rowcount == 0:
        raise AccountError(f"no linked sign-in method with id {identity_id}")
