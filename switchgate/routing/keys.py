"""Multi-key channels: a channel's API keys, their storage, and which key a call uses.

Keys are used in turn, weighted (a key of weight 3 serves three calls for every one of a
key of weight 1); a key whose breaker is open (`k:<channel>:<position>` in health) is
passed over while another key can serve. A key the upstream refused with 401/403 is
disabled in the database with the reason and the time (every process reloads it with
the config), shown to the operator (CLI `channels keys`, console), and enabled again
by hand or when a console test of the key passes.
"""

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from cryptography.exceptions import InvalidTag
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.routing.breaker import Phase
from switchgate.routing.health import Health, key_subject
from switchgate.storage.db import Database, bump_config_version, now_ms
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import channel_keys, channels

log = logging.getLogger("switchgate.routing")


@dataclass(frozen=True, slots=True)
class ChannelKey:
    position: int  # stable within the channel: the health subject k:<channel>:<position>
    key: str
    weight: int = 1
    status: str = "enabled"
    reason: str | None = None
    disabled_at: int | None = None
    max_concurrency: int | None = None  # calls in flight at once (key_caps.py)
    rpm: int | None = None  # sends in any 60 s

    @property
    def enabled(self) -> bool:
        return self.status == "enabled"

    @property
    def capped(self) -> bool:
        return self.max_concurrency is not None or self.rpm is not None

    def hint(self) -> str:
        return "…" + self.key[-4:] if len(self.key) > 8 else "set"


class KeySpec(NamedTuple):
    """A key as the operator gives it (config file, CLI, console)."""

    key: str
    weight: int = 1
    max_concurrency: int | None = None
    rpm: int | None = None


CAP_NAMES = ("max_concurrency", "rpm")


MAX_SETTING = 1_000_000  # the largest weight or cap a key takes (fits any integer column)


def parse_cap(name: str, value: Any) -> int | None:
    """A per-key cap: a whole number of at least 1, or None (0 and null mean none)."""
    if value is None or (value == 0 and not isinstance(value, bool)):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SETTING:
        raise ValueError(f"a key's {name} must be a whole number from 1 to {MAX_SETTING} (0: none)")
    return value


def parse_weight(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SETTING:
        raise ValueError(f"a key's weight must be a whole number from 1 to {MAX_SETTING}")
    return value


def parse_keys(values: Sequence[object]) -> list[KeySpec]:
    """Keys as the config file and the console give them: strings, or
    {key = "...", weight = N, max_concurrency = N, rpm = N} tables. Raises ValueError on
    anything else."""
    out: list[KeySpec] = []
    for value in values:
        if isinstance(value, str):
            spec = KeySpec(value.strip())
        elif isinstance(value, dict) and isinstance(value.get("key"), str):
            unknown = set(value) - {"key", "weight", *CAP_NAMES}
            if unknown:
                raise ValueError(f"unknown key setting {sorted(unknown)[0]!r}")
            spec = KeySpec(
                value["key"].strip(),
                parse_weight(value.get("weight", 1)),
                parse_cap("max_concurrency", value.get("max_concurrency")),
                parse_cap("rpm", value.get("rpm")),
            )
        else:
            raise ValueError("each key must be a string or a table with `key` (and `weight`)")
        if not spec.key:
            raise ValueError("a key must not be empty")
        out.append(spec)
    if len({k.key for k in out}) != len(out):
        raise ValueError("a channel lists the same key twice")
    return out


async def save_keys(
    conn: AsyncConnection, box: SecretBox, channel_id: int, keys: Sequence[KeySpec]
) -> None:
    """Replace the channel's keys. A key that stays keeps its status (a re-applied config
    file does not re-enable a key the upstream refused) and its position, so its health
    (`k:<channel>:<position>`) stays its own; a new key takes a position after the
    highest one the channel holds (as add_key does)."""
    rows = (
        await conn.execute(select(channel_keys).where(channel_keys.c.channel_id == channel_id))
    ).all()
    kept = {}
    for row in rows:
        try:
            kept[box.decrypt(row.key_enc)] = row
        except (InvalidTag, ValueError):
            continue  # sealed with another secret key: it cannot be the same key

    await conn.execute(channel_keys.delete().where(channel_keys.c.channel_id == channel_id))
    now = now_ms()
    fresh = max((row.position + 1 for row in rows), default=0)
    for spec in keys:
        old = kept.get(spec.key)
        if old is not None:
            position = old.position
        else:
            position, fresh = fresh, fresh + 1
        await conn.execute(
            channel_keys.insert().values(
                channel_id=channel_id,
                position=position,
                key_enc=box.encrypt(spec.key),
                weight=spec.weight,
                max_concurrency=spec.max_concurrency,
                rpm=spec.rpm,
                status=old.status if old is not None else "enabled",
                disabled_reason=old.disabled_reason if old is not None else None,
                disabled_at=old.disabled_at if old is not None else None,
                created_at=old.created_at if old is not None else now,
            )
        )


async def load_keys(conn: AsyncConnection, box: SecretBox) -> dict[int, tuple[ChannelKey, ...]]:
    rows = await conn.execute(
        select(channel_keys).order_by(channel_keys.c.channel_id, channel_keys.c.position)
    )
    out: dict[int, list[ChannelKey]] = {}
    for row in rows:
        out.setdefault(row.channel_id, []).append(
            ChannelKey(
                position=row.position,
                key=box.decrypt(row.key_enc),
                weight=row.weight,
                status=row.status,
                reason=row.disabled_reason,
                disabled_at=row.disabled_at,
                max_concurrency=row.max_concurrency,
                rpm=row.rpm,
            )
        )
    return {cid: tuple(keys) for cid, keys in out.items()}


async def add_key(conn: AsyncConnection, box: SecretBox, channel_id: int, spec: KeySpec) -> int:
    """Add one key after the channel's others; returns its position. Raises ValueError
    when the channel already holds it."""
    for row in await conn.execute(
        select(channel_keys.c.key_enc).where(channel_keys.c.channel_id == channel_id)
    ):
        try:
            held = box.decrypt(row.key_enc)
        except (InvalidTag, ValueError):
            continue
        if held == spec.key:
            raise ValueError("the channel already holds this key")
    last = await conn.scalar(
        select(func.max(channel_keys.c.position)).where(channel_keys.c.channel_id == channel_id)
    )
    position = 0 if last is None else int(last) + 1
    await conn.execute(
        channel_keys.insert().values(
            channel_id=channel_id,
            position=position,
            key_enc=box.encrypt(spec.key),
            weight=spec.weight,
            max_concurrency=spec.max_concurrency,
            rpm=spec.rpm,
            status="enabled",
            created_at=now_ms(),
        )
    )
    await bump_config_version(conn)
    return position


async def remove_key(conn: AsyncConnection, channel_id: int, position: int) -> bool:
    """Remove one key (the others keep their positions, so their health stays theirs);
    False when there is none at that position. Raises ValueError for the last key."""
    count = await conn.scalar(
        select(func.count(channel_keys.c.id)).where(channel_keys.c.channel_id == channel_id)
    )
    where = (channel_keys.c.channel_id == channel_id, channel_keys.c.position == position)
    if await conn.scalar(select(channel_keys.c.id).where(*where)) is None:
        return False
    if int(count or 0) <= 1:
        raise ValueError("a channel needs at least one key: add another before removing this one")
    await conn.execute(channel_keys.delete().where(*where))
    first = await conn.scalar(
        select(channel_keys.c.key_enc)
        .where(channel_keys.c.channel_id == channel_id)
        .order_by(channel_keys.c.position)
        .limit(1)
    )
    await conn.execute(
        update(channels).where(channels.c.id == channel_id).values(api_key_enc=first)
    )
    await bump_config_version(conn)
    return True


async def set_key_settings(
    conn: AsyncConnection, channel_id: int, position: int, settings: dict[str, int | None]
) -> bool:
    """Change a key's weight and caps (`weight`, `max_concurrency`, `rpm`; a cap of None
    removes it); False when the channel has no key at that position."""
    result = await conn.execute(
        update(channel_keys)
        .where(channel_keys.c.channel_id == channel_id, channel_keys.c.position == position)
        .values(**settings)
    )
    if result.rowcount == 0:
        return False
    await bump_config_version(conn)
    return True


async def set_key_status(
    conn: AsyncConnection, channel_id: int, position: int, enabled: bool, reason: str | None
) -> bool:
    """Enable or disable one key; False when the channel has no key at that position."""
    values = (
        {"status": "enabled", "disabled_reason": None, "disabled_at": None}
        if enabled
        else {
            "status": "disabled",
            "disabled_reason": (reason or "")[:500],
            "disabled_at": now_ms(),
        }
    )
    result = await conn.execute(
        update(channel_keys)
        .where(channel_keys.c.channel_id == channel_id, channel_keys.c.position == position)
        .values(**values)
    )
    if result.rowcount == 0:
        return False
    await bump_config_version(conn)
    return True


class KeyPicker:
    """Which key of a channel the next call uses: weighted turns, skipping disabled keys
    and (while another key can serve) keys whose breaker is open."""

    def __init__(self) -> None:
        self._turns: dict[int, int] = {}
        self._refused: set[tuple[int, int]] = set()  # disabled here, not yet reloaded
        self._written: set[tuple[int, int]] = set()  # ... and already in the database
        self._tasks: set[asyncio.Task[None]] = set()

    def pick(
        self, channel_id: int, keys: Sequence[ChannelKey], health: Health
    ) -> ChannelKey | None:
        if len(keys) == 1:
            only = keys[0]
            fine = only.enabled and (channel_id, only.position) not in self._refused
            return only if fine else None
        usable = self.usable(channel_id, keys, health)
        if not usable:
            return None
        total = sum(k.weight for k in usable)
        turn = self._turns.get(channel_id, 0)
        self._turns[channel_id] = turn + 1
        slot = turn % total
        for key in usable:
            if slot < key.weight:
                return key
            slot -= key.weight
        return usable[-1]

    def usable(
        self, channel_id: int, keys: Sequence[ChannelKey], health: Health
    ) -> list[ChannelKey]:
        """The keys a call may use: enabled, not refused here, and (while another key
        can serve) with a breaker that is not open."""
        usable = [k for k in keys if k.enabled and (channel_id, k.position) not in self._refused]
        if usable and health.any_failing:
            closed = [
                k
                for k in usable
                if health.phase(key_subject(channel_id, k.position)) is not Phase.OPEN
            ]
            usable = closed or usable
        return usable

    def refuse(self, db: Database, channel_id: int, position: int, reason: str) -> None:
        """The upstream refused this key (401/403): stop using it here at once and
        disable it in the database (every process reloads it with the config)."""
        if (channel_id, position) in self._refused:
            return
        self._refused.add((channel_id, position))
        task = asyncio.get_running_loop().create_task(
            self._disable(db, channel_id, position, reason)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def reloaded(self) -> None:
        """The config was reloaded: the database now says which keys are disabled."""
        self._refused -= self._written
        self._written.clear()

    async def _disable(self, db: Database, channel_id: int, position: int, reason: str) -> None:
        try:
            async with db.begin() as conn:
                await set_key_status(conn, channel_id, position, False, reason)
            self._written.add((channel_id, position))
            log.warning("channel %s: key %s disabled (%s)", channel_id, position, reason)
        except Exception:
            log.exception("could not disable a refused key of channel %s", channel_id)
