"""Balance changes made by people (top-ups, adjustments, redeems): one ledger row each,
written in the same transaction that changes the balance.

A debit (a negative amount) is refused when it would leave the balance below what
gateway processes hold for the user (their unexpired balance leases: requests in flight,
charges not yet written, the unspent slices of users served in the last ~20 s), because
that money may still be spent: the balance could otherwise end below zero. The check is
serialised with lease grants (both bump `users.lease_seq` first).
"""

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.money import MAX_AMOUNT, format_usd_exact
from switchgate.storage.db import now_ms
from switchgate.storage.tables import balance_leases, ledger, users

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
    if amount < 0:  # serialise with lease grants (billing/leases.py)
        await conn.execute(
            update(users).where(users.c.id == user_id).values(lease_seq=users.c.lease_seq + 1)
        )
    balance = await conn.scalar(select(users.c.balance).where(users.c.id == user_id))
    if balance is None:
        raise LedgerError(f"no user with id {user_id}")
    new_balance = int(balance) + amount
    if abs(new_balance) > MAX_AMOUNT:
        raise LedgerError("the balance would exceed the largest amount an account can hold")
    if amount < 0 and kind != "charge":
        held = await held_amount(conn, user_id)
        if held and new_balance < held:
            raise LedgerError(
                f"refused: ${format_usd_exact(held)} of this balance is held by requests in"
                f" flight, so it can go down by at most"
                f" ${format_usd_exact(max(0, int(balance) - held))} now (unused holds are"
                " given back within about 20 seconds of the user's last request; try again)"
            )
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


async def held_amount(conn: AsyncConnection, user_id: int) -> int:
    """What gateway processes hold of the user's balance (unexpired leases)."""
    total = await conn.scalar(
        select(func.coalesce(func.sum(balance_leases.c.amount), 0)).where(
            balance_leases.c.user_id == user_id, balance_leases.c.expires_at > now_ms()
        )
    )
    return int(total or 0)


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
