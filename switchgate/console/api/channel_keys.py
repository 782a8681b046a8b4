"""Admin: a channel's API keys (routing/keys.py): each key's status, caps and breaker, why
and when it was disabled; adding, removing, editing (weight and caps), enabling or
disabling one by hand, and testing one (a disabled key whose test passes is enabled
again). Every write is audited by the API layer (console/app.py); the key itself is never
sent back, only its last four characters, and the audit log masks it."""

from dataclasses import replace
from typing import Any

from starlette.requests import Request

from switchgate.console.api.registry import BOOL, INT, NULLABLE_INT, STR, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, json_body, path_int
from switchgate.relay.probe import probe_channel
from switchgate.routing.channels import Channel, load_channels
from switchgate.routing.health import key_subject
from switchgate.routing.keys import (
    CAP_NAMES,
    ChannelKey,
    KeySpec,
    add_key,
    parse_cap,
    parse_keys,
    parse_weight,
    remove_key,
    set_key_settings,
    set_key_status,
)

KEYS_FIELD = {
    "type": ["array", "null"],
    "items": {"type": ["string", "object"]},
    "description": "write-only: every API key, used in turn by weight "
    '("sk-…" or {"key": "sk-…", "weight": 3, "max_concurrency": 4, "rpm": 60}); '
    "replaces api_key",
}
CAPS_FIELDS = {
    "weight": INT,
    "max_concurrency": {**NULLABLE_INT, "description": "calls in flight at once; null: no cap"},
    "rpm": {**NULLABLE_INT, "description": "calls sent in any 60 s; null: no cap"},
}


def key_view(
    key: ChannelKey, channel_id: int, breakers: dict[str, dict[str, object]] | None = None
) -> dict[str, Any]:
    breaker = (breakers or {}).get(key_subject(channel_id, key.position))
    return {
        "position": key.position,
        "hint": key.hint(),
        "weight": key.weight,
        "max_concurrency": key.max_concurrency,
        "rpm": key.rpm,
        "status": key.status,
        "disabled_reason": key.reason,
        "disabled_at": key.disabled_at,
        "breaker": breaker,  # None when closed; else phase, seconds_left, reason
    }


def keys_from_body(body: dict[str, Any]) -> list[KeySpec] | None:
    raw = body.get("api_keys")
    if raw in (None, []):
        return None
    if not isinstance(raw, list):
        raise ApiError(400, "api_keys must be a list of keys", "invalid")
    try:
        return parse_keys(raw)
    except ValueError as exc:
        raise ApiError(400, str(exc), "invalid") from exc


def _settings(body: dict[str, Any]) -> dict[str, int | None]:
    """Weight and caps present in the body (a cap of null or 0 removes it)."""
    out: dict[str, int | None] = {}
    try:
        if "weight" in body:
            out["weight"] = parse_weight(body["weight"])
        for name in CAP_NAMES:
            if name in body:
                out[name] = parse_cap(name, body[name])
    except ValueError as exc:
        raise ApiError(400, str(exc), "invalid") from exc
    return out


async def _channel(request: Request) -> Channel:
    state = gw(request)
    channel_id = path_int(request)
    async with state.db.connect() as conn:
        found = [c for c in await load_channels(conn, state.box) if c.id == channel_id]
    if not found:
        raise ApiError(404, f"no channel with id {channel_id}", "not_found")
    return found[0]


def _key(channel: Channel, position: int) -> ChannelKey:
    for key in channel.key_list():
        if key.position == position:
            return key
    raise ApiError(404, f"the channel has no key at position {position}", "not_found")


async def list_keys(request: Request, actor: Actor) -> dict[str, Any]:
    channel = await _channel(request)
    breakers = gw(request).health.snapshot()
    return {"items": [key_view(k, channel.id, breakers) for k in channel.key_list()]}


async def create_key(request: Request, actor: Actor) -> dict[str, Any]:
    channel = await _channel(request)
    body = await json_body(request)
    key = body.get("key")
    if not isinstance(key, str) or not key.strip():
        raise ApiError(400, "give the new API key as `key`", "invalid")
    settings = _settings(body)
    spec = KeySpec(
        key.strip(),
        settings.get("weight") or 1,
        settings.get("max_concurrency"),
        settings.get("rpm"),
    )
    state = gw(request)
    try:
        async with state.db.begin() as conn:
            position = await add_key(conn, state.box, channel.id, spec)
    except ValueError as exc:
        raise ApiError(409, str(exc), "conflict") from exc
    return {"position": position, "hint": ChannelKey(position, spec.key).hint()}


async def edit_key(request: Request, actor: Actor) -> dict[str, Any]:
    channel = await _channel(request)
    position = path_int(request, "position")
    settings = _settings(await json_body(request))
    if not settings:
        raise ApiError(400, "give weight, max_concurrency or rpm", "invalid")
    async with gw(request).db.begin() as conn:
        if not await set_key_settings(conn, channel.id, position, settings):
            raise ApiError(404, f"the channel has no key at position {position}", "not_found")
    return {"ok": True}


async def delete_key(request: Request, actor: Actor) -> dict[str, Any]:
    channel = await _channel(request)
    position = path_int(request, "position")
    state = gw(request)
    try:
        async with state.db.begin() as conn:
            if not await remove_key(conn, channel.id, position):
                raise ApiError(404, f"the channel has no key at position {position}", "not_found")
    except ValueError as exc:
        raise ApiError(409, str(exc), "conflict") from exc
    state.health.reset([key_subject(channel.id, position)])
    return {"ok": True}


async def set_key(request: Request, actor: Actor) -> dict[str, Any]:
    channel = await _channel(request)
    position = path_int(request, "position")
    enabled = bool((await json_body(request)).get("enabled"))
    state = gw(request)
    async with state.db.begin() as conn:
        reason = None if enabled else f"disabled by {actor.email}"
        if not await set_key_status(conn, channel.id, position, enabled, reason):
            raise ApiError(404, f"the channel has no key at position {position}", "not_found")
    if enabled:  # the operator vouches for it: its breaker closes too
        state.health.reset([key_subject(channel.id, position)])
    return {"ok": True}


async def _test_key(request: Request, channel: Channel, key: ChannelKey) -> tuple[Any, bool]:
    """Probe the channel with this key; a passing key is enabled again and its breaker
    closed. Returns (the probe's result, whether the key was re-enabled)."""
    state = gw(request)
    result = await probe_channel(
        state.upstream,
        state.kinds,
        replace(channel, api_key=key.key),
        prices=state.catalog.prices,
    )
    enabled = False
    if result.ok:
        state.health.reset([key_subject(channel.id, key.position)])
        if not key.enabled:
            async with state.db.begin() as conn:
                await set_key_status(conn, channel.id, key.position, True, None)
            enabled = True
    return result, enabled


async def test_key(request: Request, actor: Actor) -> dict[str, Any]:
    channel = await _channel(request)
    key = _key(channel, path_int(request, "position"))
    result, enabled = await _test_key(request, channel, key)
    return {**result.as_dict(), "key_enabled": enabled}


async def retest_disabled_keys(request: Request, channel: Channel) -> list[int]:
    """Test each disabled key of the channel; enable the ones that pass."""
    enabled: list[int] = []
    for key in channel.key_list():
        if not key.enabled and (await _test_key(request, channel, key))[1]:
            enabled.append(key.position)
    return enabled


_ONE = "/api/channels/{id:int}/keys/{position:int}"
ROUTES = [
    ApiRoute(
        "GET",
        "/api/channels/{id:int}/keys",
        list_keys,
        "A channel's API keys (masked), caps, status and breakers",
        "channels",
        True,
    ),
    ApiRoute(
        "POST",
        "/api/channels/{id:int}/keys",
        create_key,
        "Add an API key to a channel",
        "channels",
        True,
        body=obj("key", key=STR, **CAPS_FIELDS),
    ),
    ApiRoute(
        "PATCH",
        _ONE,
        edit_key,
        "Change one key's weight and caps (null removes a cap)",
        "channels",
        True,
        body=obj(**CAPS_FIELDS),
    ),
    ApiRoute("DELETE", _ONE, delete_key, "Remove one API key of a channel", "channels", True),
    ApiRoute(
        "POST",
        _ONE + "/status",
        set_key,
        "Enable or disable one API key of a channel",
        "channels",
        True,
        body=obj("enabled", enabled=BOOL),
    ),
    ApiRoute(
        "POST",
        _ONE + "/test",
        test_key,
        "Send a tiny real request with one key (not billed); a disabled key that passes "
        "is enabled again",
        "channels",
        True,
    ),
]
