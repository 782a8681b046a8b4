"""Channels (upstream connections): the data type and the management functions."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate import jsonutil
from switchgate.providers.registry import ProviderKind, provider_kinds
from switchgate.routing.keys import ChannelKey, KeySpec, load_keys, save_keys
from switchgate.storage.db import bump_config_version, now_ms
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import channels


class ChannelError(ValueError):
    pass


# channels.extra keys that have a field or flag of their own: an option may not set them.
RESERVED_OPTIONS = frozenset({"headers", "api_version", "responses", "timeouts", "paid_options"})


def channel_options(raw: Any) -> dict[str, str]:
    """A channel's kind-specific settings (config `options = {...}`, CLI `--option
    NAME=VALUE`, the console's `options`), kept in channels.extra where the provider
    reads them as `Target.options` (bedrock: region; vertex: project, location...)."""
    if not isinstance(raw, Mapping):
        raise ChannelError('options must be a table of NAME = "value"')
    out: dict[str, str] = {}
    for key, value in raw.items():
        if key in RESERVED_OPTIONS:
            raise ChannelError(f"option {key!r} has a setting of its own")
        if not isinstance(value, str) or not value.strip():
            raise ChannelError(f"option {key!r} must be a non-empty string")
        out[str(key)] = value.strip()
    return out


def options_of(extra: Mapping[str, Any]) -> dict[str, str]:
    """The kind-specific settings among a channel's extra settings."""
    return {k: v for k, v in extra.items() if k not in RESERVED_OPTIONS and isinstance(v, str)}


@dataclass(frozen=True, slots=True)
class Channel:
    id: int
    name: str
    kind: str
    base_url: str
    api_key: str
    models: tuple[str, ...]
    model_map: Mapping[str, str] = field(default_factory=dict)
    priority: int = 0
    weight: int = 1
    status: str = "enabled"
    extra: Mapping[str, Any] = field(default_factory=dict)
    # Every key of the channel (routing/keys.py); empty means just `api_key`.
    keys: tuple[ChannelKey, ...] = ()

    def key_list(self) -> tuple[ChannelKey, ...]:
        return self.keys or (ChannelKey(0, self.api_key),)

    def upstream_model(self, model: str) -> str:
        return self.model_map.get(model, model)


def _check(kind: str, base_url: str, models: list[str], weight: int) -> ProviderKind:
    known = provider_kinds()  # providers/registry.py, the one list of kinds
    if kind not in known:
        raise ChannelError(f"unknown channel kind {kind!r}; known: {', '.join(known)}")
    if not base_url.startswith(("http://", "https://")):
        raise ChannelError("--base-url must start with http:// or https://")
    if not models or any(not m.strip() for m in models):
        raise ChannelError("a channel needs at least one model name")
    if weight < 1:
        raise ChannelError("weight must be at least 1")
    return known[kind]


async def upsert_channel(
    conn: AsyncConnection,
    box: SecretBox,
    *,
    name: str,
    kind: str,
    base_url: str,
    api_key: str,
    models: list[str],
    model_map: Mapping[str, str] | None = None,
    priority: int = 0,
    weight: int = 1,
    status: str = "enabled",
    extra: Mapping[str, Any] | None = None,
    keys: list[KeySpec] | None = None,
) -> tuple[int, bool]:
    """Create the channel, or update the one with that name. Returns (id, created).
    `keys` replaces the channel's keys; without it `api_key` is its one key."""
    spec = _check(kind, base_url, models, weight)
    try:
        spec.check_options(options_of(extra or {}))
    except ValueError as exc:
        raise ChannelError(f"{kind} channel {name!r}: {exc}") from exc
    keys = keys or [KeySpec(api_key)]
    if not keys[0].key and spec.needs_key:
        raise ChannelError("a channel needs at least one API key")
    api_key = keys[0].key
    values = {
        "kind": kind,
        "base_url": base_url.rstrip("/"),
        "api_key_enc": box.encrypt(api_key),
        "models": jsonutil.dumps_str([m.strip() for m in models]),
        "model_map": jsonutil.dumps_str(dict(model_map or {})),
        "priority": priority,
        "weight": weight,
        "status": status,
        "extra": jsonutil.dumps_str(dict(extra or {})),
        "updated_at": now_ms(),
    }
    existing = await conn.scalar(select(channels.c.id).where(channels.c.name == name))
    if existing is not None:
        await conn.execute(update(channels).where(channels.c.id == existing).values(**values))
        await save_keys(conn, box, int(existing), keys)
        await bump_config_version(conn)
        return int(existing), False
    result = await conn.execute(channels.insert().values(name=name, created_at=now_ms(), **values))
    channel_id = int(result.inserted_primary_key[0])  # type: ignore[index]
    await save_keys(conn, box, channel_id, keys)
    await bump_config_version(conn)
    return channel_id, True


async def set_channel_status(conn: AsyncConnection, name: str, status: str) -> None:
    if status not in ("enabled", "disabled"):
        raise ChannelError(f"unknown channel status {status!r}")
    result = await conn.execute(
        update(channels).where(channels.c.name == name).values(status=status)
    )
    if result.rowcount == 0:
        raise ChannelError(f"no channel named {name!r}")
    await bump_config_version(conn)


def _first_key(keys: tuple[ChannelKey, ...], fallback: str) -> str:
    for key in keys:
        if key.enabled:
            return key.key
    return keys[0].key if keys else fallback


async def load_channels(conn: AsyncConnection, box: SecretBox) -> list[Channel]:
    rows = await conn.execute(select(channels).order_by(channels.c.id))
    keys = await load_keys(conn, box)
    return [
        Channel(
            id=row.id,
            name=row.name,
            kind=row.kind,
            base_url=row.base_url,
            api_key=_first_key(keys.get(row.id, ()), box.decrypt(row.api_key_enc)),
            keys=keys.get(row.id, ()),
            models=tuple(jsonutil.loads(row.models)),
            model_map=jsonutil.loads(row.model_map),
            priority=row.priority,
            weight=row.weight,
            status=row.status,
            extra=jsonutil.loads(row.extra),
        )
        for row in rows
    ]


async def add_models(
    conn: AsyncConnection,
    name: str,
    models: list[str],
    model_map: Mapping[str, str] | None = None,
) -> list[str]:
    """Add models (and aliases to their upstream names) to a channel; returns the names
    that were not served by it yet. Existing models and aliases are kept as they are."""
    row = (
        await conn.execute(
            select(channels.c.id, channels.c.models, channels.c.model_map).where(
                channels.c.name == name
            )
        )
    ).one_or_none()
    if row is None:
        raise ChannelError(f"no channel named {name!r}")
    served: list[str] = list(jsonutil.loads(row.models))
    aliases: dict[str, str] = dict(jsonutil.loads(row.model_map))
    added = [m for m in models if m not in served]
    for alias, upstream in (model_map or {}).items():
        aliases.setdefault(alias, upstream)
    await conn.execute(
        update(channels)
        .where(channels.c.id == row.id)
        .values(
            models=jsonutil.dumps_str(served + added),
            model_map=jsonutil.dumps_str(aliases),
            updated_at=now_ms(),
        )
    )
    await bump_config_version(conn)
    return added
