"""The signed-in user: profile, password, linked sign-in methods, dashboard, playground."""

import asyncio
from typing import Any

from sqlalchemy import select
from starlette.requests import Request

from switchgate.accounts import bootstrap, identities, sessions, site_settings
from switchgate.accounts.passwords import verify_password
from switchgate.accounts.service import get_user_by_id, hash_new_password, set_password_hash
from switchgate.console import queries
from switchgate.console.api.registry import STR, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, base_url, gw, json_body, path_int
from switchgate.money import format_usd_exact, usd_to_units
from switchgate.storage.tables import sessions as sessions_table
from switchgate.storage.tables import users


async def me(request: Request, actor: Actor) -> dict[str, Any]:
    state = gw(request)
    async with state.db.connect() as conn:
        user = await get_user_by_id(conn, actor.user_id)
        row = (
            await conn.execute(
                select(users.c.password_hash, users.c.email_verified).where(
                    users.c.id == actor.user_id
                )
            )
        ).one()
        linked = await identities.list_for_user(conn, actor.user_id)
        site = await site_settings.load(conn, state.box, state.settings.site_env)
    return {
        "id": user.id,
        "email": user.email,
        "role": user.role,
        "email_verified": bool(row.email_verified),
        "has_password": bool(row.password_hash),
        "balance_usd": format_usd_exact(user.balance),
        "identities": linked,
        "providers": {p: site.provider_configured(p) for p in ("github", "google")},
        "base_url": base_url(request),
    }


async def change_password(request: Request, actor: Actor) -> dict[str, Any]:
    body = await json_body(request)
    new = str(body.get("new_password") or "")
    async with gw(request).db.connect() as conn:
        current = await conn.scalar(
            select(users.c.password_hash).where(users.c.id == actor.user_id)
        )
    # argon2 in a worker thread, with no connection held (see signin.authenticate).
    given = str(body.get("current_password") or "")
    if current and not await asyncio.to_thread(verify_password, current, given):
        raise ApiError(400, "the current password is wrong", "invalid")
    hashed = await hash_new_password(new)
    async with gw(request).db.begin() as conn:
        await set_password_hash(conn, actor.user_id, hashed)
        # Every other session of this user ends.
        keep = actor.session.id if actor.session else ""
        others = (
            await conn.execute(
                select(sessions_table.c.id).where(
                    sessions_table.c.user_id == actor.user_id, sessions_table.c.id != keep
                )
            )
        ).all()
        for (session_id,) in others:
            await sessions.destroy(conn, session_id)
        if await site_settings.get_value(conn, bootstrap.HINT_KEY) == actor.email:
            await site_settings.delete_value(conn, bootstrap.HINT_KEY)
    return {"ok": True}


async def unlink_identity(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.begin() as conn:
        await identities.unlink(conn, actor.user_id, path_int(request))
    return {"ok": True}


async def dashboard(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.connect() as conn:
        user = await get_user_by_id(conn, actor.user_id)
        days = await queries.daily_usage(conn, actor.user_id, 30)
        errors = await queries.recent_errors(conn, actor.user_id, 10)
    spend = sum(_units(d["spend_usd"]) for d in days)
    return {
        "balance_usd": format_usd_exact(user.balance),
        "spend_30d_usd": format_usd_exact(spend),
        "requests_30d": sum(d["requests"] for d in days),
        "errors_30d": sum(d["errors"] for d in days),
        "days": days,
        "recent_errors": errors,
    }


def _units(usd: str) -> int:
    return usd_to_units(usd, allow_negative=True)


async def playground_token(request: Request, actor: Actor) -> dict[str, Any]:
    """The session's own token for the playground (created on first use)."""
    if actor.session is None:
        raise ApiError(400, "the playground token belongs to a browser session", "invalid")
    state = gw(request)
    async with state.db.begin() as conn:
        fresh = await sessions.load(conn, request.cookies.get(sessions.COOKIE))
        if fresh is None:
            raise ApiError(401, "sign in first", "unauthorized")
        token = await sessions.playground_token(conn, state.box, fresh)
    return {"token": token, "base_url": base_url(request)}


ROUTES = [
    ApiRoute("GET", "/api/me", me, "Who is signed in, balance, linked sign-in methods", "account"),
    ApiRoute(
        "POST",
        "/api/me/password",
        change_password,
        "Set or change the password (signs out other sessions)",
        "account",
        body=obj("new_password", current_password=STR, new_password=STR),
    ),
    ApiRoute(
        "DELETE",
        "/api/me/identities/{id:int}",
        unlink_identity,
        "Unlink a GitHub or Google sign-in",
        "account",
    ),
    ApiRoute(
        "GET",
        "/api/dashboard",
        dashboard,
        "Balance, spend and requests per day over 30 days, recent errors",
        "account",
    ),
    ApiRoute(
        "POST",
        "/api/playground/token",
        playground_token,
        "This browser session's playground token (session only)",
        "playground",
    ),
]
