"""The user's own API tokens: list, create (shown once), edit, enable/disable, delete."""

from typing import Any

from starlette.requests import Request

from switchgate import jsonutil
from switchgate.accounts import service
from switchgate.console.api.registry import (
    NULLABLE_INT,
    STR,
    STR_LIST,
    ApiRoute,
    obj,
)
from switchgate.console.deps import Actor, ApiError, base_url, gw, json_body, path_int
from switchgate.money import format_usd_exact, usd_to_units

TOKEN_FIELDS = {
    "name": STR,
    "expires_at": {**NULLABLE_INT, "description": "epoch milliseconds; null: never"},
    "quota_limit_usd": {"type": ["string", "null"], "description": "spending limit in USD"},
    "allowed_models": STR_LIST,
    "allowed_ips": {**STR_LIST, "description": "IP addresses or CIDR ranges"},
    "rpm_limit": NULLABLE_INT,
    "tpm_limit": {**NULLABLE_INT, "description": "input + output tokens per minute"},
}


def _view(row: dict[str, object]) -> dict[str, Any]:
    item = dict(row)
    limit = item.pop("quota_limit")
    item["quota_limit_usd"] = format_usd_exact(int(str(limit))) if limit is not None else None
    item["quota_used_usd"] = format_usd_exact(int(str(item.pop("quota_used") or 0)))
    for key in ("allowed_models", "allowed_ips"):
        raw = item.get(key)
        item[key] = jsonutil.loads(str(raw)) if raw else None
    return item


def _list(value: Any, name: str) -> list[str] | None:
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ApiError(400, f"{name} must be a list of strings", "invalid")
    cleaned = [v.strip() for v in value if v.strip()]
    return cleaned or None


def _optional_int(value: Any, name: str) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, f"{name} must be a whole number or null", "invalid")
    return value


def _fields(body: dict[str, Any]) -> dict[str, Any]:
    """The token fields present in a request body, converted to storage form."""
    out: dict[str, Any] = {}
    if "name" in body:
        out["name"] = str(body["name"] or "")[:200]
    if "expires_at" in body:
        out["expires_at"] = _optional_int(body["expires_at"], "expires_at")
    if "quota_limit_usd" in body:
        raw = body["quota_limit_usd"]
        out["quota_limit"] = usd_to_units(str(raw)) if raw not in (None, "") else None
    if "allowed_models" in body:
        out["allowed_models"] = _list(body["allowed_models"], "allowed_models")
    if "allowed_ips" in body:
        out["allowed_ips"] = _list(body["allowed_ips"], "allowed_ips")
    if "rpm_limit" in body:
        out["rpm_limit"] = _optional_int(body["rpm_limit"], "rpm_limit")
    if "tpm_limit" in body:
        out["tpm_limit"] = _optional_int(body["tpm_limit"], "tpm_limit")
    return out


async def list_tokens(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.connect() as conn:
        rows = await service.list_tokens(conn, actor.user_id, include_session_tokens=False)
    return {"items": [_view(r) for r in rows]}


async def create_token(request: Request, actor: Actor) -> dict[str, Any]:
    fields = _fields(await json_body(request))
    async with gw(request).db.begin() as conn:
        new = await service.create_token(
            conn,
            actor.user_id,
            fields.pop("name", ""),
            expires_at=fields.get("expires_at"),
            quota_limit=fields.get("quota_limit"),
            allowed_models=fields.get("allowed_models"),
            allowed_ips=fields.get("allowed_ips"),
            rpm_limit=fields.get("rpm_limit"),
            tpm_limit=fields.get("tpm_limit"),
        )
    return {"id": new.id, "token": new.token, "prefix": new.prefix, "base_url": base_url(request)}


async def edit_token(request: Request, actor: Actor) -> dict[str, Any]:
    token_id = path_int(request)
    body = await json_body(request)
    fields = _fields(body)
    async with gw(request).db.begin() as conn:
        await service.update_token(conn, token_id, owner=actor.user_id, **fields)
        if "status" in body:
            status = str(body["status"])
            if status not in ("active", "disabled"):
                raise ApiError(400, "status must be active or disabled", "invalid")
            await service.set_token_status(conn, token_id, status, owner=actor.user_id)
    return {"ok": True}


async def delete_token(request: Request, actor: Actor) -> dict[str, Any]:
    async with gw(request).db.begin() as conn:
        await service.set_token_status(conn, path_int(request), "deleted", owner=actor.user_id)
    return {"ok": True}


ROUTES = [
    ApiRoute("GET", "/api/tokens", list_tokens, "Your tokens (never the secret)", "tokens"),
    ApiRoute(
        "POST",
        "/api/tokens",
        create_token,
        "Create a token; the answer holds the sk-... secret, shown only this once",
        "tokens",
        body=obj(**TOKEN_FIELDS),
    ),
    ApiRoute(
        "PATCH",
        "/api/tokens/{id:int}",
        edit_token,
        "Edit a token; status active | disabled",
        "tokens",
        body=obj(**TOKEN_FIELDS, status={"enum": ["active", "disabled"]}),
    ),
    ApiRoute("DELETE", "/api/tokens/{id:int}", delete_token, "Delete a token", "tokens"),
]
