"""What this process has charged each token beyond the `quota_used` it last loaded.

A token's spending limit is checked against `quota_used` as read from the database plus
what this process charged since that read. Charges reach the database in batches (the
recorder's flush), and the token cache is emptied whenever any config changes, so the
read can happen at any moment relative to a flush. Two running sums per token keep the
check exact across both:

- `unwritten`: charged here, not yet committed (the recorder's queue);
- `written`: committed by this process's flushes, ever.

A principal loaded when `written` was W sees `quota_used` that already includes those W,
so what it has not seen is `unwritten + written - W`. `generation` moves with every commit;
a reader that saw it move during its read reads again (see accounts/auth.py), so W is
never taken from a commit the read may or may not have seen.

Spend committed by other processes shows once this process re-reads the token's
`quota_used` (TokenCache.refresh_spend, every config poll): a token shared by several
processes can overshoot its limit by what the others spent in the meantime.

Requests in flight are reserved like the balance is (billing/holds.py): `held` is what
running requests may still cost, `settled` what finished ones cost but the recorder has
not queued yet (a record is added a few awaits after its hold is settled). A request is
admitted only if `quota_used` + unseen charges + `held` + `settled` + its own hold stays
within the limit, so one process never serves more than the limit, whatever the
concurrency.
"""

from collections.abc import Mapping


class TokenSpend:
    __slots__ = ("_held", "_settled", "_unwritten", "_written", "generation")

    def __init__(self) -> None:
        self._unwritten: dict[int, int] = {}
        self._written: dict[int, int] = {}
        self._held: dict[int, int] = {}
        self._settled: dict[int, int] = {}
        self.generation = 0

    def charged(self, token_id: int, cost: int) -> None:
        """A charge was queued for writing (it leaves `settled` if it was settled here)."""
        if cost:
            self._unwritten[token_id] = self._unwritten.get(token_id, 0) + cost
            settled = self._settled.get(token_id, 0)
            if settled:
                _add(self._settled, token_id, -min(settled, cost))

    def in_flight(self, token_id: int) -> int:
        """Held by running requests plus settled but not yet queued as charges."""
        return self._held.get(token_id, 0) + self._settled.get(token_id, 0)

    def hold(self, token_id: int, amount: int) -> None:
        _add(self._held, token_id, amount)

    def settle(self, token_id: int, held: int, cost: int) -> None:
        """A request that held `held` cost `cost`; its charge is queued soon after."""
        _add(self._held, token_id, -held)
        _add(self._settled, token_id, cost)

    def written(self, spend: Mapping[int, int]) -> None:
        """These charges were committed to `tokens.quota_used`."""
        for token_id, cost in spend.items():
            left = self._unwritten.get(token_id, 0) - cost
            if left:
                self._unwritten[token_id] = left
            else:
                self._unwritten.pop(token_id, None)
            self._written[token_id] = self._written.get(token_id, 0) + cost
        self.generation += 1

    def mark(self, token_id: int) -> int:
        """To be kept with a freshly read `quota_used`."""
        return self._written.get(token_id, 0)

    def since(self, token_id: int, mark: int) -> int:
        """Charged by this process that a `quota_used` read at `mark` does not include."""
        return self._unwritten.get(token_id, 0) + self._written.get(token_id, 0) - mark


def _add(sums: dict[int, int], key: int, amount: int) -> None:
    value = sums.get(key, 0) + amount
    if value:
        sums[key] = value
    else:
        sums.pop(key, None)
