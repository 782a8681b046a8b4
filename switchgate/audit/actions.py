"""The audit log: who changed which channel, price, balance, user or setting, when and
from where. Rows are only ever added: the database refuses UPDATE and DELETE on the table
(triggers from migration 0007), so not even an admin with the console can rewrite it.

Every admin write through the management API is recorded by `deps.api_endpoint` after it
succeeds (action: the route, target: the path, detail: the body with secrets masked); the
CLI records its own changes with actor "cli". Values are clipped to their columns and
secret-looking fields (keys, passwords, tokens, secrets) are never stored."""

from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate import jsonutil
from switchgate.storage.db import now_ms
from switchgate.storage.tables import audit_log

SECRET_PARTS: Final = ("key", "password", "secret", "token")
MASK: Final = "***"
DETAIL_LIMIT: Final = 4000  # characters of JSON kept per row
_WIDTHS: Final = {"actor": 320, "action": 64, "target": 200, "ip": 64}


def masked(value: Any) -> Any:
    """`value` with every secret-looking field's value replaced (at any depth)."""
    if isinstance(value, dict):
        return {
            str(k): (
                MASK
                if any(p in str(k).lower() for p in SECRET_PARTS) and v not in (None, "")
                else masked(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def _clip(value: str | None, column: str) -> str | None:
    width = _WIDTHS[column]
    return value if value is None or len(value) <= width else value[: width - 1] + "\u2026"


@dataclass(frozen=True)
class Entry:
    actor: str  # an e-mail address, or "cli"
    action: str  # e.g. "PATCH /api/users/{id:int}" or "cli balance add"
    target: str  # e.g. "/api/users/12" or the user's e-mail
    actor_id: int | None = None
    detail: Any = None
    ip: str | None = None


async def record(conn: AsyncConnection, entry: Entry) -> None:
    """Add one row, in the caller's transaction."""
    detail = None
    if entry.detail not in (None, {}, []):
        detail = jsonutil.dumps_str(masked(entry.detail))
        if len(detail) > DETAIL_LIMIT:
            detail = detail[: DETAIL_LIMIT - 1] + "\u2026"
    await conn.execute(
        audit_log.insert().values(
            created_at=now_ms(),
            actor=_clip(entry.actor, "actor"),
            actor_id=entry.actor_id,
            action=_clip(entry.action, "action"),
            target=_clip(entry.target, "target"),
            detail=detail,
            ip=_clip(entry.ip, "ip"),
        )
    )


async def list_entries(
    conn: AsyncConnection,
    *,
    limit: int = 50,
    before_id: int | None = None,
    actor: str | None = None,
    action: str | None = None,
) -> list[dict[str, Any]]:
    """Newest first; `before_id` pages on."""
    query = select(audit_log).order_by(audit_log.c.id.desc()).limit(max(1, min(limit, 100_000)))
    if before_id is not None:
        query = query.where(audit_log.c.id < before_id)
    if actor:
        query = query.where(audit_log.c.actor == actor)
    if action:
        query = query.where(audit_log.c.action.contains(action, autoescape=True))
    rows = await conn.execute(query)
    return [{str(k): v for k, v in r._mapping.items()} for r in rows]
