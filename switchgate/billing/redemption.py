"""Redemption codes: admins generate batches of single-use codes worth an amount; a user
redeems one for one ledger row of kind "redeem".

A code is spent by a conditional UPDATE (status unused -> used) in the same transaction as
the ledger row, so two concurrent redemptions of one code credit it exactly once. Codes
are stored as a SHA-256 (for lookup) and encrypted with the secret box (for CSV export).
"""

import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.billing.ledger import add_entry
from switchgate.money import MAX_AMOUNT, format_usd_exact
from switchgate.storage.db import now_ms
from switchgate.storage.secrets import SecretBox
from switchgate.storage.tables import redemption_codes

CODE_PREFIX: Final = "rc-"
MAX_BATCH: Final = 10_000
INSERT_CHUNK: Final = 500


class RedemptionError(ValueError):
    pass


def _hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@dataclass(frozen=True)
class Batch:
    batch: str
    codes: list[str]
    amount: int


async def generate(
    conn: AsyncConnection,
    box: SecretBox,
    *,
    count: int,
    amount: int,
    note: str | None,
    actor: str,
    on_inserted: Callable[[int], None] | None = None,
) -> Batch:
    """Create `count` single-use codes worth `amount` units each, in one transaction
    (inserted in chunks; `on_inserted(n)` after each, for a progress bar)."""
    if not 1 <= count <= MAX_BATCH:
        raise RedemptionError(f"a batch holds 1 to {MAX_BATCH} codes")
    if not 0 < amount <= MAX_AMOUNT:
        raise RedemptionError("a code must be worth more than zero")
    batch = f"b-{now_ms()}-{secrets.token_hex(3)}"
    codes = [CODE_PREFIX + secrets.token_urlsafe(18) for _ in range(count)]
    now = now_ms()
    for start in range(0, count, INSERT_CHUNK):
        chunk = codes[start : start + INSERT_CHUNK]
        await conn.execute(
            redemption_codes.insert(),
            [
                {
                    "batch": batch,
                    "code_hash": _hash(code),
                    "code_enc": box.encrypt(code),
                    "amount": amount,
                    "status": "unused",
                    "note": note,
                    "created_by": actor,
                    "created_at": now,
                }
                for code in chunk
            ],
        )
        if on_inserted is not None:
            on_inserted(len(chunk))
    return Batch(batch, codes, amount)


async def redeem(conn: AsyncConnection, user_id: int, code: str, actor: str) -> tuple[int, int]:
    """Spend the code for the user; returns (amount credited, new balance)."""
    code = code.strip()
    row = (
        await conn.execute(
            select(redemption_codes.c.id, redemption_codes.c.amount).where(
                redemption_codes.c.code_hash == _hash(code)
            )
        )
    ).first()
    if row is None:
        raise RedemptionError("this code does not exist")
    result = await conn.execute(
        update(redemption_codes)
        .where(redemption_codes.c.id == row.id, redemption_codes.c.status == "unused")
        .values(status="used", used_by=user_id, used_at=now_ms())
    )
    if result.rowcount != 1:
        raise RedemptionError("this code was already used or is disabled")
    balance = await add_entry(
        conn,
        user_id,
        int(row.amount),
        "redeem",
        note=f"code {code[:7]}... ({format_usd_exact(int(row.amount))} USD)",
        actor=actor,
    )
    return int(row.amount), balance


async def list_batches(conn: AsyncConnection) -> list[dict[str, object]]:
    used = func.sum(case((redemption_codes.c.status == "used", 1), else_=0))
    rows = await conn.execute(
        select(
            redemption_codes.c.batch,
            func.min(redemption_codes.c.amount).label("amount"),
            func.count().label("count"),
            used.label("used"),
            func.min(redemption_codes.c.note).label("note"),
            func.min(redemption_codes.c.created_by).label("created_by"),
            func.min(redemption_codes.c.created_at).label("created_at"),
        )
        .group_by(redemption_codes.c.batch)
        .order_by(func.min(redemption_codes.c.created_at).desc())
        .limit(200)
    )
    return [dict(r._mapping) for r in rows]


async def export_batch(
    conn: AsyncConnection, box: SecretBox, batch: str
) -> list[dict[str, object]]:
    rows = await conn.execute(
        select(redemption_codes)
        .where(redemption_codes.c.batch == batch)
        .order_by(redemption_codes.c.id)
    )
    return [
        {
            "code": box.decrypt(r.code_enc),
            "amount": r.amount,
            "status": r.status,
            "used_by": r.used_by,
            "used_at": r.used_at,
            "created_at": r.created_at,
        }
        for r in rows
    ]


async def disable_unused(conn: AsyncConnection, batch: str) -> int:
    result = await conn.execute(
        update(redemption_codes)
        .where(redemption_codes.c.batch == batch, redemption_codes.c.status == "unused")
        .values(status="disabled")
    )
    return int(result.rowcount)
