"""One request's reservation: against the user's balance and against its token's limit.

A request reserves its worst case before any upstream call (`take`). The balance part
goes to the process's balance lease (billing/leases.py); the token part to the token's
in-flight sum (billing/token_spend.py), checked against the token's spending limit with
what this process has already charged it, so concurrent requests of one token can't
together spend more than its limit in one process.

A hold can grow while the request runs (`extend`, used by billing/output_guard.py when
an upstream ignores the output limit) and is settled once, with the cost that will be
recorded (`settle`). A request stopped because its cost outgrew what could be reserved
is `capped`: it is charged at most what it held.

Every surface takes its hold the one way, as an async context manager:

    async with hold.reserve(amount, cost=lambda: ..., into=outcome):
        ...  # call the upstream, answer the client

`reserve` takes `amount` on entry (or raises INSUFFICIENT_BALANCE, holding nothing) and
on every exit - success, an error, the client gone, cancellation - settles exactly once
with `cost()` (0 if `cost` itself fails), writing what was charged to `into.cost`. On
the happy path it costs what the hand-written take / try / finally did: entering awaits
the same `take` coroutine, and leaving never suspends (no I/O, no lock).
A long-lived hold (a realtime session) may also `settle` charges as it goes and `take`
again inside the block; leaving settles what is still held.
"""

import logging
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Protocol

from switchgate.accounts.auth import Principal
from switchgate.billing.leases import BalanceBook
from switchgate.billing.token_spend import TokenSpend
from switchgate.errors import ErrorKind, GatewayError
from switchgate.money import format_usd

log = logging.getLogger("switchgate")


class Costed(Protocol):
    """Where `reserve` writes what the request was charged (relay/outcome.Outcome)."""

    cost: int


def _nothing() -> int:
    return 0


class Hold:
    __slots__ = (
        "_book",
        "_cost",
        "_entered",
        "_into",
        "_limit",
        "_pending",
        "_spend",
        "_token_id",
        "_user_id",
        "amount",
        "capped",
    )

    def __init__(self, book: BalanceBook, spend: TokenSpend, principal: Principal) -> None:
        self._book = book
        self._spend = spend
        self._user_id = principal.user_id
        self._token_id = principal.token_id
        self._limit = principal if principal.quota_limit is not None else None
        self.amount = 0  # reserved so far
        self.capped = False
        self._pending: int | None = None  # reserve()d, not yet entered
        self._entered = False
        self._cost: Callable[[], int] = _nothing
        self._into: Costed | None = None

    def reserve(
        self, amount: int, cost: Callable[[], int] = _nothing, into: Costed | None = None
    ) -> "Hold":
        """`async with hold.reserve(amount, cost, into):` (see the module's docstring)."""
        if self._pending is not None or self._entered:
            raise RuntimeError("this hold is already reserved")
        self._pending, self._cost, self._into = amount, cost, into
        return self

    def __aenter__(self) -> Coroutine[Any, Any, None]:
        amount = self._pending
        if amount is None:
            raise RuntimeError("async with a Hold needs hold.reserve(amount, ...)")
        self._pending, self._entered = None, True
        return self.take(amount)  # the one await of entering (a failed take holds nothing)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._entered = False
        try:
            cost = self._cost()
        except Exception:
            log.exception("the cost of a request could not be computed; charged 0")
            cost = 0
        charged = self.settle(cost)
        if self._into is not None:
            self._into.cost = charged

    async def take(self, amount: int) -> None:
        """Reserve `amount` more, or raise INSUFFICIENT_BALANCE (token limit or balance)."""
        limited = self._limit is not None
        if limited:
            self._reserve_limit(amount)
        try:
            await self._book.hold(self._user_id, amount, self.amount > 0)
        except BaseException:
            if limited:
                self._spend.hold(self._token_id, -amount)
            raise
        self.amount += amount

    async def extend(self, amount: int) -> bool:
        """Reserve `amount` more if the balance and the token's limit allow it."""
        try:
            await self.take(amount)
        except GatewayError:
            return False
        return True

    async def cover(self, cost: int) -> None:
        """A whole answer costing `cost` is about to be delivered: grow the hold to cover
        it, or refuse to deliver it (the request is then charged what it held)."""
        if cost <= self.amount or await self.extend(cost - self.amount):
            return
        self.capped = True
        raise GatewayError(
            ErrorKind.INSUFFICIENT_BALANCE,
            f"Insufficient balance: the upstream's answer cost ${format_usd(cost)}, more than "
            f"the ${format_usd(self.amount)} held for this request plus the available balance"
            " (the upstream did not keep to the output limit); the answer was not delivered."
            " Top up, or lower max_tokens.",
            code="insufficient_quota",
        )

    def settle(self, cost: int) -> int:
        """Give back what the request did not use; returns what it is charged."""
        if self.capped:
            cost = min(cost, self.amount)
        self._book.settle(self._user_id, self.amount, cost)
        if self._limit is not None:
            self._spend.settle(self._token_id, self.amount, cost)
        self.amount = 0
        return cost

    def _reserve_limit(self, amount: int) -> None:
        principal = self._limit
        assert principal is not None and principal.quota_limit is not None
        spend = self._spend
        used = (
            principal.quota_used
            + spend.since(principal.token_id, principal.spend_mark)
            + spend.in_flight(principal.token_id)
        )
        if used + amount > principal.quota_limit:
            left = max(0, principal.quota_limit - used)
            raise GatewayError(
                ErrorKind.INSUFFICIENT_BALANCE,
                f"This API key's spending limit has ${format_usd(left)} left (requests in"
                f" flight included) and this request may cost up to ${format_usd(amount)}.",
                code="token_quota_exceeded",
            )
        spend.hold(principal.token_id, amount)
