"""An in-process fixed-window limiter (one window per token per minute).

With several processes or replicas, configure Redis so the limit is shared.
"""

import time
from collections.abc import Callable


class MemoryRateLimiter:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._windows: dict[int, tuple[int, int]] = {}

    async def hit(self, key: int, limit: int) -> int | None:
        """Count one request; None if allowed, else seconds until the window resets."""
        now = self._clock()
        window = int(now // 60)
        start, count = self._windows.get(key, (window, 0))
        if start != window:
            start, count = window, 0
        if count >= limit:
            return max(1, int((window + 1) * 60 - now))
        self._windows[key] = (start, count + 1)
        if len(self._windows) > 100_000:
            self._windows = {k: v for k, v in self._windows.items() if v[0] == window}
        return None
