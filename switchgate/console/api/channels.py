"""Admin: upstream channels (create, edit, enable/disable, test with a real call, health)."""

from dataclasses import asdict
from typing import Any

from sqlalchemy import select
from starlette.requests import Request

from switchgate.console.api.channel_keys import (
    KEYS_FIELD,
    key_view,
    keys_from_body,
    retest_disabled_keys,
)
from switchgate.console.api.registry import BOOL, INT, STR, STR_LIST, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, json_body, path_int
from switchgate.providers.registry import kind_names
from switchgate.relay.paid_options import check_paid_options
from switchgate.relay.probe import probe_channel
from switchgate.routing.channels import (
    channel_options,
    load_channels,
    options_of,
    set_channel_status,
    upsert_channel,
)
from switchgate.routing.health import channel_health
from switchgate.routing.keys import KeySpec
from switchgate.routing.limits import check_timeouts
from switchgate.storage.tables import channels

CHANNEL_FIELDS = {
    "name": STR,
    "kind": {"enum": list(kind_names())},
    "base_url": STR,
    "api_key": {**STR, "description": "write-only; leave out when editing to keep the key"},
    "api_keys": KEYS_FIELD,
    "models": STR_LIST,
    "model_map": {"type": "object", "additionalProperties": STR},
    "priority": INT,
    "weight": INT,
    "headers": {"type": "object", "additionalProperties": STR},
    "api_version": STR,
    "options": {
        "type": "object",
        "additionalProperties": STR,
        "description": "the kind's own settings, e.g. bedrock: region (docs/providers.md); "
        "left out when editing: kept; {} removes them all",
    },
    "timeouts": {
        "type": ["object", "null"],
        "additionalProperties": {"type": "number"},
        "description": "the channel's own time limits in seconds (connect, first_byte, idle, "
        "stream_first_byte, stream_idle, total) over the gateway's; left out when editing: "
        "kept; {} removes them all",
    },
    "responses": {
        "type": ["boolean", "string", "null"],
        "description": "openai kind: whether the upstream serves POST {base}/responses; "
        '"auto" removes the setting (on for api.openai.com only); left out: kept',
    },
    "enabled": BOOL,
}


def _key_hint(key: str) -> str:
    return "…" + key[-4:] if len(key) > 8 else "set"


async def list_channels(request: Request, actor: Actor) -> dict[str, Any]:
    state = gw(request)
    async with state.db.connect() as conn:
        loaded = await load_channels(conn, state.box)
    breakers = state.health.snapshot()
    errors = state.channel_errors.snapshot()
    return {
        "kinds": list(state.kinds),
        "kind_details": [
            {
                "name": k.name,
                "label": k.label,
                "default_base_url": k.default_base_url,
                "needs_key": k.needs_key,
                "endpoints": sorted(k.endpoints),
                "key_format": k.key_format,
                "options": [
                    {"name": o.name, "hint": o.hint, "required": o.required} for o in k.options
                ],
            }
            for k in state.kinds.values()
        ],
        # the gateway's time limits: a channel's own `timeouts` are laid over them
        "timeout_defaults": asdict(state.settings.timeouts),
        "items": [
            {
                "id": c.id,
                "name": c.name,
                "kind": c.kind,
                "base_url": c.base_url,
                "key_hint": _key_hint(c.api_key),
                "models": list(c.models),
                "model_map": dict(c.model_map),
                "priority": c.priority,
                "weight": c.weight,
                "status": c.status,
                "headers": dict(c.extra.get("headers", {})),
                "api_version": c.extra.get("api_version"),
                "paid_options": list(c.extra.get("paid_options", ())),
                "options": options_of(c.extra),
                "timeouts": dict(c.extra.get("timeouts", {})),
                "responses": c.extra.get("responses"),
                **channel_health(breakers, c.id),
                "keys": [key_view(k, c.id, breakers) for k in c.key_list()],
                "last_error": errors[c.id].message if c.id in errors else None,
                "last_error_at": errors[c.id].at_ms if c.id in errors else None,
            }
            for c in loaded
        ],
    }


def _models(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.replace("\n", ",").split(",")
    if not isinstance(value, list):
        raise ApiError(400, "models must be a list of model names", "invalid")
    return [str(m).strip() for m in value if str(m).strip()]


def _str_map(value: Any, name: str) -> dict[str, str]:
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise ApiError(400, f"{name} must be an object of strings", "invalid")
    return {str(k): str(v) for k, v in value.items()}


async def _save(request: Request, body: dict[str, Any], current: Any | None) -> int:
    state = gw(request)
    merged: dict[str, Any] = dict(current or {})
    merged.update({k: v for k, v in body.items() if v is not None})
    keys = keys_from_body(body)
    key = str(body.get("api_key") or "") or (current or {}).get("api_key", "")
    if keys is None and body.get("api_key"):
        keys = [KeySpec(key)]  # a new single key replaces the list
    if keys is None and current is not None:
        keys = current.get("keys")  # kept as they are
    kind = state.kinds.get(str(merged.get("kind") or ""))
    if not key and not keys and (kind is None or kind.needs_key):
        raise ApiError(400, "an upstream API key is needed", "invalid")
    extra: dict[str, Any] = {}
    headers = _str_map(merged.get("headers"), "headers")
    if headers:
        extra["headers"] = headers
    if merged.get("api_version"):
        extra["api_version"] = str(merged["api_version"])
    if merged.get("paid_options"):
        extra["paid_options"] = check_paid_options(merged["paid_options"])
    timeouts = merged.get("timeouts")
    if timeouts:
        if not isinstance(timeouts, dict):
            raise ApiError(400, "timeouts must be an object of seconds", "invalid")
        extra["timeouts"] = check_timeouts(timeouts)
    responses = merged.get("responses")
    if isinstance(responses, bool):
        extra["responses"] = responses
    elif responses not in (None, "", "auto"):
        raise ApiError(400, 'responses must be true, false or "auto"', "invalid")
    extra.update(channel_options(_str_map(merged.get("options"), "options")))  # kept on edits
    async with state.db.begin() as conn:
        channel_id, _ = await upsert_channel(
            conn,
            state.box,
            name=str(merged.get("name") or "").strip(),
            kind=str(merged.get("kind") or ""),
            base_url=str(merged.get("base_url") or ""),
            api_key=key,
            keys=keys,
            models=_models(merged.get("models") or []),
            model_map=_str_map(merged.get("model_map"), "model_map"),
            priority=int(merged.get("priority") or 0),
            weight=int(merged.get("weight") or 1),
            status="disabled" if merged.get("enabled") is False else "enabled",
            extra=extra,
        )
    return channel_id


async def create_channel(request: Request, actor: Actor) -> dict[str, Any]:
    body = await json_body(request)
    name = str(body.get("name") or "").strip()
    if not name:
        raise ApiError(400, "a channel needs a name", "invalid")
    async with gw(request).db.connect() as conn:
        if await conn.scalar(select(channels.c.id).where(channels.c.name == name)):
            raise ApiError(409, f"a channel named {name!r} exists; edit it instead", "conflict")
    return {"id": await _save(request, body, None)}


async def _current(request: Request, channel_id: int) -> dict[str, Any]:
    state = gw(request)
    async with state.db.connect() as conn:
        found = [c for c in await load_channels(conn, state.box) if c.id == channel_id]
    if not found:
        raise ApiError(404, f"no channel with id {channel_id}", "not_found")
    c = found[0]
    return {
        "name": c.name,
        "kind": c.kind,
        "base_url": c.base_url,
        "api_key": c.api_key,
        "keys": [KeySpec(k.key, k.weight, k.max_concurrency, k.rpm) for k in c.key_list()],
        "models": list(c.models),
        "model_map": dict(c.model_map),
        "priority": c.priority,
        "weight": c.weight,
        "enabled": c.status == "enabled",
        "headers": dict(c.extra.get("headers", {})),
        "api_version": c.extra.get("api_version"),
        "paid_options": list(c.extra.get("paid_options", ())),
        "options": options_of(c.extra),
        "timeouts": dict(c.extra.get("timeouts", {})),
        "responses": c.extra.get("responses"),
    }


async def edit_channel(request: Request, actor: Actor) -> dict[str, Any]:
    channel_id = path_int(request)
    current = await _current(request, channel_id)
    body = await json_body(request)
    body.pop("name", None)  # channels are matched by name; renaming is not an edit
    return {"id": await _save(request, body, current)}


async def set_status(request: Request, actor: Actor) -> dict[str, Any]:
    current = await _current(request, path_int(request))
    enabled = bool((await json_body(request)).get("enabled"))
    async with gw(request).db.begin() as conn:
        await set_channel_status(conn, current["name"], "enabled" if enabled else "disabled")
    return {"ok": True}


async def test_channel(request: Request, actor: Actor) -> dict[str, Any]:
    state = gw(request)
    channel_id = path_int(request)
    async with state.db.connect() as conn:
        found = [c for c in await load_channels(conn, state.box) if c.id == channel_id]
    if not found:
        raise ApiError(404, f"no channel with id {channel_id}", "not_found")
    model = (await json_body(request)).get("model")
    result = await probe_channel(
        state.upstream,
        state.kinds,
        found[0],
        prices=state.catalog.prices,
        model=str(model) if model else None,
    )
    if result.ok:
        state.health.reset_channel(channel_id)
    elif result.outcome == "failed":
        state.channel_errors.record(channel_id, f"test: {result.diagnosis or result.message}")
    return {**result.as_dict(), "keys_enabled": await retest_disabled_keys(request, found[0])}


ROUTES = [
    ApiRoute("GET", "/api/channels", list_channels, "Channels with health", "channels", True),
    ApiRoute(
        "POST",
        "/api/channels",
        create_channel,
        "Create a channel",
        "channels",
        True,
        body=obj("name", "kind", "base_url", "api_key", "models", **CHANNEL_FIELDS),
    ),
    ApiRoute(
        "PATCH",
        "/api/channels/{id:int}",
        edit_channel,
        "Edit a channel (fields left out keep their value)",
        "channels",
        True,
        body=obj(**CHANNEL_FIELDS),
    ),
    ApiRoute(
        "POST",
        "/api/channels/{id:int}/status",
        set_status,
        "Enable or disable a channel",
        "channels",
        True,
        body=obj("enabled", enabled=BOOL),
    ),
    ApiRoute(
        "POST",
        "/api/channels/{id:int}/test",
        test_channel,
        "Send a tiny real request through the channel (not billed)",
        "channels",
        True,
        body=obj(model=STR),
    ),
]
