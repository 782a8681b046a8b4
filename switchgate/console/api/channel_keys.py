"""Admin: a channel's API keys (routing/keys.py): each key's status, why and when it was
disabled, enabling or disabling one by hand, and testing the disabled ones (a key whose
test passes is enabled again)."""

from dataclasses import replace
from typing import Any

from starlette.requests import Request

from switchgate.console.api.registry import BOOL, ApiRoute, obj
from switchgate.console.deps import Actor, ApiError, gw, json_body, path_int
from switchgate.relay.probe import probe_channel
from switchgate.routing.channels import Channel, load_channels
from switchgate.routing.keys import ChannelKey, parse_keys, set_key_status

KEYS_FIELD = {
    "type": ["array", "null"],
    "items": {"type": ["string", "object"]},
    "description": "write-only: every API key, used in turn by weight "
    '("sk-…" or {"key": "sk-…", "weight": 3}); replaces api_key',
}


def key_view(key: ChannelKey) -> dict[str, Any]:
    return {
        "position": key.position,
        "hint": key.hint(),
        "weight": key.weight,
        "status": key.status,
        "disabled_reason": key.reason,
        "disabled_at": key.disabled_at,
    }


def keys_from_body(body: dict[str, Any]) -> list[tuple[str, int]] | None:
    raw = body.get("api_keys")
    if raw in (None, []):
        return None
    if not isinstance(raw, list):
        raise ApiError(400, "api_keys must be a list of keys", "invalid")
    try:
        return parse_keys(raw)
    except ValueError as exc:
        raise ApiError(400, str(exc), "invalid") from exc


async def _channel(request: Request) -> Channel:
    state = gw(request)
    channel_id = path_int(request)
    async with state.db.connect() as conn:
        found = [c for c in await load_channels(conn, state.box) if c.id == channel_id]
    if not found:
        raise ApiError(404, f"no channel with id {channel_id}", "not_found")
    return found[0]


async def set_key(request: Request, actor: Actor) -> dict[str, Any]:
    channel = await _channel(request)
    position = path_int(request, "position")
    enabled = bool((await json_body(request)).get("enabled"))
    async with gw(request).db.begin() as conn:
        reason = None if enabled else f"disabled by {actor.email}"
        if not await set_key_status(conn, channel.id, position, enabled, reason):
            raise ApiError(404, f"the channel has no key at position {position}", "not_found")
    return {"ok": True}


async def retest_disabled_keys(request: Request, channel: Channel) -> list[int]:
    """Test each disabled key of the channel; enable the ones that pass."""
    state = gw(request)
    enabled: list[int] = []
    for key in channel.key_list():
        if key.enabled:
            continue
        result = await probe_channel(
            state.upstream,
            state.kinds,
            replace(channel, api_key=key.key),
            prices=state.catalog.prices,
        )
        if result.ok:
            async with state.db.begin() as conn:
                await set_key_status(conn, channel.id, key.position, True, None)
            enabled.append(key.position)
    return enabled


ROUTES = [
    ApiRoute(
        "POST",
        "/api/channels/{id:int}/keys/{position:int}/status",
        set_key,
        "Enable or disable one API key of a channel",
        "channels",
        True,
        body=obj("enabled", enabled=BOOL),
    ),
]
