"""Charges the recorder could not write (table `failed_charges`, billing/recorder.py):
listed for an operator, and applied again, once, when the cause is gone.

A retry runs in one transaction: it deletes the row first, then writes what the
recorder would have written (a `charge` ledger row with the request's id, the balance,
the token's spend) and an audit row holding everything the deleted row said. Two retries
of one row cannot both charge: the second deletes nothing (PostgreSQL's row lock, or
SQLite's single writer, makes it wait for the first) and is refused. A request that
already has a charge row (the ledger's request id is unique: settled meanwhile, or a
duplicate failure) is refused too, never charged twice. Any refusal (no such user, a
balance that cannot go that low) rolls it all back and the row stays.
"""

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from switchgate.audit.actions import Entry, record
from switchgate.billing import ledger
from switchgate.money import MAX_AMOUNT, MAX_CHARGE
from switchgate.storage.tables import failed_charges, tokens, users
from switchgate.storage.tables import ledger as ledger_table


class RetryRefused(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class FailedCharge:
    id: int
    request_id: str
    user_id: int | None
    email: str | None  # None: no such user (any more)
    token_id: int | None
    cost: str  # units, as the recorder stored them: decimal text, possibly out of range
    reason: str
    created_at: int  # ms: when the request arrived
    failed_at: int  # ms: when the recorder gave up

    def amount(self) -> int | None:
        """What a retry charges: the cost bounded to 0..MAX_CHARGE, as the recorder
        bounds every charge; None when the stored cost is not a whole number."""
        try:
            cost = int(self.cost)
        except ValueError:
            return None
        return min(max(cost, 0), MAX_CHARGE)

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "amount_units": self.amount()}


def _failed(row: Any, email: str | None) -> FailedCharge:
    return FailedCharge(
        id=int(row.id),
        request_id=str(row.request_id),
        user_id=row.user_id,
        email=email,
        token_id=row.token_id,
        cost=str(row.cost),
        reason=str(row.reason),
        created_at=int(row.created_at),
        failed_at=int(row.failed_at),
    )


async def list_failed(conn: AsyncConnection, limit: int = 100) -> list[FailedCharge]:
    """The failed charges not retried yet, oldest failure first."""
    query = (
        select(failed_charges, users.c.email)
        .select_from(failed_charges.outerjoin(users, users.c.id == failed_charges.c.user_id))
        .order_by(failed_charges.c.failed_at, failed_charges.c.id)
        .limit(limit)
    )
    return [_failed(row, row.email) for row in await conn.execute(query)]


async def retry_failed(conn: AsyncConnection, charge_id: int, actor: str) -> FailedCharge:
    """Apply failed charge `charge_id` in the caller's transaction (see the module
    docstring); raises RetryRefused or LedgerError, after which the caller must roll
    back."""
    removed = (
        await conn.execute(
            delete(failed_charges)
            .where(failed_charges.c.id == charge_id)
            .returning(*failed_charges.c)
        )
    ).first()
    if removed is None:
        raise RetryRefused(
            f"no failed charge #{charge_id} (already retried? see `switchgate charges failed`)"
        )
    email = None
    if removed.user_id is not None:
        email = await conn.scalar(select(users.c.email).where(users.c.id == removed.user_id))
    failed = _failed(removed, email)
    amount = failed.amount()
    if amount is None:
        raise RetryRefused(f"failed charge #{charge_id}: its cost {failed.cost!r} is not a number")
    if failed.user_id is None or email is None:
        raise RetryRefused(f"failed charge #{charge_id}: user {failed.user_id} does not exist")
    already = f"failed charge #{charge_id}: request {failed.request_id} already has a charge row"
    if amount:
        charged = await conn.scalar(
            select(ledger_table.c.id).where(ledger_table.c.request_id == failed.request_id)
        )
        if charged is not None:
            raise RetryRefused(f"{already} (ledger entry #{charged}); nothing charged")
        try:
            await ledger.add_entry(
                conn,
                failed.user_id,
                -amount,
                "charge",
                note=f"failed charge #{charge_id}, retried",
                actor=actor,
                request_id=failed.request_id,
            )
        except ledger.LedgerError as exc:
            raise RetryRefused(f"failed charge #{charge_id} not applied: {exc}") from exc
        except IntegrityError as exc:  # written meanwhile: the ledger's unique request id
            raise RetryRefused(f"{already}; nothing charged") from exc
        if failed.token_id is not None:
            await conn.execute(
                update(tokens)
                .where(tokens.c.id == failed.token_id, tokens.c.quota_used <= MAX_AMOUNT - amount)
                .values(quota_used=tokens.c.quota_used + amount)
            )
    detail = {**failed.as_json(), "charged_units": amount}
    await record(conn, Entry(actor, "cli charges retry", email, detail=detail))
    return failed
