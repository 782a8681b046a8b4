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
"""

from switchgate.accounts.auth import Principal
from switchgate.billing.leases import BalanceBook
from switchgate.billing.token_spend import TokenSpend
from switchgate.errors import ErrorKind, GatewayError
from switchgate.money import format_usd


class Hold:
    __slots__ = ("_book", "_limit", "_spend", "_token_id", "_user_id", "amount", "capped")

    def __init__(self, book: BalanceBook, spend: TokenSpend, principal: Principal) -> None:
        self._book = book
        self._spend = spend
        self._user_id = principal.user_id
        self._token_id = principal.token_id
        self._limit = principal if principal.quota_limit is not None else None
        self.amount = 0  # reserved so far
        self.capped = False

    async def take(self, amount: int) -> None:
        """Reserve `amount` more, or raise INSUFFICIENT_BALANCE (token limit or balance)."""
        limited = self._limit is not None
        if limited:
            self._reserve_limit(amount)
        try:
            await self._book.hold(self._user_id, amount)
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
