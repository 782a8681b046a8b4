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

from cryptography.exceptions import InvalidTag
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.routing.breaker import Phase
from switchgate.routing.health import Health, key_subject
from switchgate.storage.db import Database, bump_config_version, now_ms
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import channel_keys

log = logging.getLogger("switchgate.routing")


@dataclass(frozen=True, slots=True)
class ChannelKey:
    position: int  # stable within the channel: the health subject k:<channel>:<position>
    key: str
    weight: int = 1
    status: str = "enabled"
    reason: str | None = None
    disabled_at: int | None = None

    @property
    def enabled(self) -> bool:
        return self.status == "enabled"

    def hint(self) -> str:
        return "…" + self.key[-4:] if len(self.key) > 8 else "set"


def parse_keys(values: Sequence[object]) -> list[tuple[str, int]]:
    """Keys as the config file and the console give them: strings, or
    {key = "...", weight = N} tables. Raises ValueError on anything else."""
    out: list[tuple[str, int]] = []
    for value in values:
        if isinstance(value, str):
            key, weight = value, 1
        elif isinstance(value, dict) and isinstance(value.get("key"), str):
            key, weight = value["key"], value.get("weight", 1)
        else:
            raise ValueError("each key must be a string or a table with `key` (and `weight`)")
        if not key.strip():
            raise ValueError("a key must not be empty")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise ValueError("a key's weight must be a whole number of at least 1")
        out.append((key.strip(), weight))
    if len({k for k, _ in out}) != len(out):
        raise ValueError("a channel lists the same key twice")
    return out


async def save_keys(
    conn: AsyncConnection, box: SecretBox, channel_id: int, keys: list[tuple[str, int]]
) -> None:
    """Replace the channel's keys. A key that stays keeps its status (a re-applied config
    file does not re-enable a key the upstream refused)."""
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
    for position, (key, weight) in enumerate(keys):
        old = kept.get(key)
        await conn.execute(
            channel_keys.insert().values(
                channel_id=channel_id,
                position=position,
                key_enc=box.encrypt(key),
                weight=weight,
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
            )
        )
    return {cid: tuple(keys) for cid, keys in out.items()}


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
        usable = [k for k in keys if k.enabled and (channel_id, k.position) not in self._refused]
        if not usable:
            return None
        if health.any_failing:
            closed = [
                k
                for k in usable
                if health.phase(key_subject(channel_id, k.position)) is not Phase.OPEN
            ]
            usable = closed or usable
        total = sum(k.weight for k in usable)
        turn = self._turns.get(channel_id, 0)
        self._turns[channel_id] = turn + 1
        slot = turn % total
        for key in usable:
            if slot < key.weight:
                return key
            slot -= key.weight
        return usable[-1]

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
