"""Holds without a database round trip per request: balance leases.

Each gateway process (a "holder") leases a slice of a user's balance from the database
in one short transaction, then reserves (holds) and settles requests against that slice
in memory. The database always knows every outstanding lease, so the sum of what all
processes may spend never exceeds the balance:

    available = users.balance - SUM(unexpired balance_leases.amount)

A lease grant is serialised per user by bumping `users.lease_seq` first (a row lock on
PostgreSQL, the write lock on SQLite). Charges are written by the Recorder, which lowers
both `users.balance` and this holder's lease by the same amount in one transaction.
Leases expire unless renewed (a crashed process frees its slice at most `ttl_ms` after
its last renewal: SWITCHGATE_LEASE_TTL_SECONDS, 60 s, renewed every sixth of it), and are
deleted on a clean shutdown. At each renewal a process also gives back the unspent slice
of every user it served no request for since the previous one, so what stays leased is
about what requests in flight hold (an admin debit is refused below that: ledger.py).

A request whose actual cost exceeds its hold (an upstream ignoring max_tokens) is still
charged in full; the balance may then dip below zero by that overage, never more.
"""

import asyncio
from collections.abc import Callable

from sqlalchemy import delete, func, select, update

from switchgate.errors import ErrorKind, GatewayError
from switchgate.money import format_usd
from switchgate.storage.db import Database, now_ms
from switchgate.storage.tables import balance_leases, users


class BalanceBook:
    def __init__(
        self,
        db: Database,
        holder: str,
        *,
        chunk: int,
        ttl_ms: int = 60_000,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self._db = db
        self.holder = holder
        self._chunk = chunk
        self._ttl_ms = ttl_ms
        self._clock = clock
        self._local: dict[int, int] = {}  # user id -> unspent part of this holder's lease
        self._locks: dict[int, asyncio.Lock] = {}
        self._active: set[int] = set()  # users who held since the last renewal
        self.open_holds = 0  # non-zero holds not settled or released yet (for /metrics)

    def local_remaining(self, user_id: int) -> int:
        return self._local.get(user_id, 0)

    async def hold(self, user_id: int, amount: int, grows: bool = False) -> None:
        """Reserve `amount` for a request or raise INSUFFICIENT_BALANCE. `grows`: more
        for a hold already open (counted once in open_holds, as it is settled once)."""
        self._active.add(user_id)
        if self._local.get(user_id, -1) >= amount:
            self._local[user_id] -= amount
            self.open_holds += amount > 0 and not grows
            return
        lock = self._locks.setdefault(user_id, asyncio.Lock())
        async with lock:
            remaining = self._local.get(user_id, 0)
            if remaining < amount:
                available = await self._grow_lease(user_id, amount - remaining)
                if available is not None:
                    raise GatewayError(
                        ErrorKind.INSUFFICIENT_BALANCE,
                        f"Insufficient balance: this request may cost up to "
                        f"${format_usd(amount)} and ${format_usd(max(0, available + remaining))}"
                        " is available. Top up, or lower max_tokens.",
                        code="insufficient_quota",
                    )
            self._local[user_id] = self._local.get(user_id, 0) - amount
            self.open_holds += amount > 0 and not grows

    def settle(self, user_id: int, held: int, cost: int) -> None:
        """Return the unused part of a hold (the Recorder writes the charge itself)."""
        self._local[user_id] = self._local.get(user_id, 0) + held - cost
        self.open_holds -= held > 0

    def release(self, user_id: int, held: int) -> None:
        self._local[user_id] = self._local.get(user_id, 0) + held
        self.open_holds -= held > 0

    async def _grow_lease(self, user_id: int, need: int) -> int | None:
        """Lease at least `need` more; returns None on success, else what was available."""
        now = self._clock()
        async with self._db.begin() as conn:
            locked = await conn.execute(
                update(users).where(users.c.id == user_id).values(lease_seq=users.c.lease_seq + 1)
            )
            if locked.rowcount == 0:
                return 0
            balance = int(
                await conn.scalar(select(users.c.balance).where(users.c.id == user_id)) or 0
            )
            leased = int(
                await conn.scalar(
                    select(func.coalesce(func.sum(balance_leases.c.amount), 0)).where(
                        balance_leases.c.user_id == user_id, balance_leases.c.expires_at > now
                    )
                )
                or 0
            )
            mine = await conn.scalar(
                select(balance_leases.c.amount).where(
                    balance_leases.c.user_id == user_id, balance_leases.c.holder == self.holder
                )
            )
            available = balance - leased
            if available < need:
                return available
            grant = need + min(self._chunk, (available - need) // 2)
            if mine is None:
                await conn.execute(
                    balance_leases.insert().values(
                        user_id=user_id,
                        holder=self.holder,
                        amount=grant,
                        expires_at=now + self._ttl_ms,
                    )
                )
            else:
                await conn.execute(
                    update(balance_leases)
                    .where(
                        balance_leases.c.user_id == user_id, balance_leases.c.holder == self.holder
                    )
                    .values(amount=balance_leases.c.amount + grant, expires_at=now + self._ttl_ms)
                )
        self._local[user_id] = self._local.get(user_id, 0) + grant
        return None

    def _growing(self, user_id: int) -> bool:
        lock = self._locks.get(user_id)
        return lock is not None and lock.locked()

    async def renew(self) -> None:
        """Keep this holder's leases alive; give back the unspent slices of users idle
        since the last renewal; drop expired leases of dead holders."""
        now = self._clock()
        idle = {
            user_id: spare
            for user_id, spare in self._local.items()
            if spare > 0 and user_id not in self._active and not self._growing(user_id)
        }
        for user_id in idle:  # no await before this: no hold can interleave
            del self._local[user_id]
        self._active.clear()
        try:
            async with self._db.begin() as conn:
                for user_id, spare in idle.items():
                    await conn.execute(
                        update(balance_leases)
                        .where(
                            balance_leases.c.user_id == user_id,
                            balance_leases.c.holder == self.holder,
                        )
                        .values(amount=balance_leases.c.amount - spare)
                    )
                await conn.execute(
                    update(balance_leases)
                    .where(balance_leases.c.holder == self.holder)
                    .values(expires_at=now + self._ttl_ms)
                )
        except Exception:
            for user_id, spare in idle.items():  # not given back: still this process's
                self._local[user_id] = self._local.get(user_id, 0) + spare
            raise
        async with self._db.begin() as conn:
            await conn.execute(
                delete(balance_leases).where(balance_leases.c.expires_at < now - self._ttl_ms)
            )

    async def close(self) -> None:
        """Give every lease back (call after the Recorder's last flush)."""
        async with self._db.begin() as conn:
            await conn.execute(delete(balance_leases).where(balance_leases.c.holder == self.holder))
        self._local.clear()
