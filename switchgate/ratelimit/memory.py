"""In-process fixed-window counters (requests and tokens per minute).

Exact within one process. With several processes or replicas configure Redis so the
limits are shared (redis.py); this is also its fallback while Redis is unreachable.
"""

import time
from collections.abc import Callable, Sequence

from switchgate.ratelimit.rates import Rate, Refusal, wait_after, window_of

_MAX_KEYS = 100_000


class MemoryRateLimiter:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._windows: dict[str, tuple[int, int]] = {}  # "r:<key>" / "k:<key>" -> (window, n)

    def _count(self, name: str, window: int) -> int:
        start, count = self._windows.get(name, (window, 0))
        return count if start == window else 0

    def _add(self, name: str, window: int, n: int) -> None:
        self._windows[name] = (window, self._count(name, window) + n)
        if len(self._windows) > _MAX_KEYS:
            self._windows = {k: v for k, v in self._windows.items() if v[0] == window}

    async def admit(self, rates: Sequence[Rate]) -> Refusal | None:
        """Count one request against every rate, unless one of them has no room left."""
        now = self._clock()
        window = window_of(now)
        for rate in rates:
            if rate.tokens is not None and self._count("k:" + rate.key, window) >= rate.tokens:
                return Refusal(rate, "tokens", wait_after(now))
            if rate.requests is not None and self._count("r:" + rate.key, window) >= rate.requests:
                return Refusal(rate, "requests", wait_after(now))
        for rate in rates:
            if rate.requests is not None:
                self._add("r:" + rate.key, window, 1)
        return None

    async def add_tokens(self, keys: Sequence[str], tokens: int) -> None:
        window = window_of(self._clock())
        for key in keys:
            self._add("k:" + key, window, tokens)
