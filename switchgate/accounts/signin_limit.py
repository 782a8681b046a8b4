"""Sign-in attempts, rate-limited per e-mail address and per client address.

Failures are counted in a sliding window; a success clears the address's count. One
counter per process (sign-in is rare; several replicas multiply the allowance).
"""

import time
from collections import deque
from collections.abc import Callable


class SigninLimiter:
    def __init__(
        self,
        *,
        per_email: int = 5,
        per_ip: int = 30,
        window: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits = {"email": per_email, "ip": per_ip}
        self._window = window
        self._clock = clock
        self._failures: dict[tuple[str, str], deque[float]] = {}

    def _recent(self, key: tuple[str, str]) -> deque[float]:
        now = self._clock()
        times = self._failures.get(key)
        if times is None:
            return deque()
        while times and times[0] <= now - self._window:
            times.popleft()
        if not times:
            del self._failures[key]
        return times

    def retry_after(self, email: str, ip: str | None) -> int | None:
        """Seconds to wait before another attempt, or None if one is allowed now."""
        waits: list[float] = []
        for kind, value in (("email", email), ("ip", ip or "")):
            times = self._recent((kind, value))
            if len(times) >= self._limits[kind]:
                waits.append(times[0] + self._window - self._clock())
        return max(1, int(max(waits)) + 1) if waits else None

    def failure(self, email: str, ip: str | None) -> None:
        now = self._clock()
        for key in (("email", email), ("ip", ip or "")):
            self._failures.setdefault(key, deque()).append(now)
        if len(self._failures) > 100_000:
            self._failures.clear()

    def success(self, email: str) -> None:
        self._failures.pop(("email", email), None)
