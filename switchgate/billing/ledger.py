"""Balance changes made by people (top-ups, adjustments, redeems): one ledger row each,
written in the same transaction that changes the balance."""

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.money import MAX_AMOUNT
from switchgate.storage.db import now_ms
from switchgate.storage.tables import ledger, users

CREDIT_KINDS = frozenset({"topup", "refund", "adjust", "redeem"})


class LedgerError(ValueError):
    pass


async def add_entry(
    conn: AsyncConnection,
    user_id: int,
    amount: int,
    kind: str,
    *,
    note: str | None = None,
    actor: str | None = None,
    request_id: str | None = None,
) -> int:
    """Change a balance by `amount` (signed units) and record why; returns the new balance."""
    if kind not in CREDIT_KINDS and kind != "charge":
        raise LedgerError(f"unknown ledger kind {kind!r}")
    balance = await conn.scalar(select(users.c.balance).where(users.c.id == user_id))
    if balance is None:
        raise LedgerError(f"no user with id {user_id}")
    new_balance = int(balance) + amount
    if abs(new_balance) > MAX_AMOUNT:
        raise LedgerError("the balance would exceed the largest amount an account can hold")
    await conn.execute(
        ledger.insert().values(
            user_id=user_id,
            amount=amount,
            kind=kind,
            note=note,
            actor=actor,
            request_id=request_id,
            created_at=now_ms(),
        )
    )
    await conn.execute(
        update(users).where(users.c.id == user_id).values(balance=users.c.balance + amount)
    )
    return new_balance


async def balance_and_ledger_sum(conn: AsyncConnection, user_id: int) -> tuple[int, int]:
    """Both numbers from one statement (one snapshot), so a concurrent charge can't make
    them look different."""
    total = (
        select(func.coalesce(func.sum(ledger.c.amount), 0))
        .where(ledger.c.user_id == user_id)
        .scalar_subquery()
    )
    row = (await conn.execute(select(users.c.balance, total).where(users.c.id == user_id))).one()
    return int(row[0]), int(row[1])
