"""Admin: users (search, create, adjust balance with a note, disable, make admin)."""

from typing import Any

from starlette.requests import Request

from switchgate.accounts import service, sessions
from switchgate.billing import ledger
from switchgate.console import queries
from switchgate.console.api.registry import BOOL, STR, USD, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, int_param, json_body, path_int
from switchgate.money import format_usd_exact, usd_to_units


async def list_users(request: Request, actor: Actor) -> dict[str, Any]:
    offset = max(0, int_param(request, "offset", 0) or 0)
    async with gw(request).db.connect() as conn:
        items, total = await queries.search_users(
            conn, request.query_params.get("q", ""), offset, 50
        )
    return {"items": items, "total": total, "offset": offset}


async def create_user(request: Request, actor: Actor) -> dict[str, Any]:
    body = await json_body(request)
    password = str(body.get("password") or "") or None
    if password:
        service.check_password_strength(password)
    async with gw(request).db.begin() as conn:
        user = await service.create_user(
            conn, str(body.get("email") or ""), password, admin=bool(body.get("admin"))
        )
    return {"id": user.id, "email": user.email}


async def adjust_balance(request: Request, actor: Actor) -> dict[str, Any]:
    user_id = path_int(request)
    body = await json_body(request)
    amount = usd_to_units(str(body.get("amount_usd") or "0"), allow_negative=True)
    if amount == 0:
        raise ApiError(400, "enter a non-zero amount", "invalid")
    note = str(body.get("note") or "").strip() or None
    async with gw(request).db.begin() as conn:
        await service.get_user_by_id(conn, user_id)
        balance = await ledger.add_entry(
            conn, user_id, amount, "adjust", note=note, actor=actor.email
        )
    return {"balance_usd": format_usd_exact(balance)}


async def edit_user(request: Request, actor: Actor) -> dict[str, Any]:
    user_id = path_int(request)
    body = await json_body(request)
    if user_id == actor.user_id and (
        body.get("status") == "disabled" or body.get("role") == "user"
    ):
        raise ApiError(400, "you cannot disable or demote your own account", "invalid")
    async with gw(request).db.begin() as conn:
        if "status" in body:
            await service.set_user_status(conn, user_id, str(body["status"]))
            if body["status"] == "disabled":
                await sessions.destroy_all(conn, user_id)
        if "role" in body:
            await service.set_user_role(conn, user_id, str(body["role"]))
    return {"ok": True}


async def user_ledger(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.connect() as conn:
        items, cursor = await queries.ledger_page(
            conn, path_int(request), int_param(request, "before_id"), "credits"
        )
    return {"items": items, "next_before_id": cursor}


ROUTES = [
    ApiRoute(
        "GET",
        "/api/users",
        list_users,
        "Search users by e-mail",
        "users",
        True,
        query=("q", "offset"),
    ),
    ApiRoute(
        "POST",
        "/api/users",
        create_user,
        "Create a user",
        "users",
        True,
        body=obj("email", email=STR, password=STR, admin=BOOL),
    ),
    ApiRoute(
        "POST",
        "/api/users/{id:int}/balance",
        adjust_balance,
        "Add (or, negative, remove) USD: one ledger row of kind adjust, actor = you",
        "users",
        True,
        body=obj("amount_usd", amount_usd=USD, note=STR),
    ),
    ApiRoute(
        "PATCH",
        "/api/users/{id:int}",
        edit_user,
        "Disable or enable an account (status), make admin or user (role)",
        "users",
        True,
        body=obj(status={"enum": ["active", "disabled"]}, role={"enum": ["user", "admin"]}),
    ),
    ApiRoute(
        "GET",
        "/api/users/{id:int}/ledger",
        user_ledger,
        "A user's credits and adjustments",
        "users",
        True,
        query=("before_id",),
    ),
]
