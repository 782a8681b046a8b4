"""Sliding-window attempt counters for the account flows (sign-in, sign-up, e-mails).

Two stores with one interface. `MemoryAttempts` counts in this process only.
`RedisAttempts` keeps one sorted set per counter in Redis and checks and counts in one
Lua script, so every process and replica shares the counts atomically. When Redis is
unreachable (or slow) it counts in its own memory instead and logs a warning: an outage
of Redis never fails a sign-in, it only makes the limits per process for a while.

Every operation takes a list of `Check`s (a counter and its limit) and a mode:
`peek` reports the wait without counting, `add` counts without checking, and `take`
counts on every counter only if none of them is at its limit (else it counts nothing).
The answer is the seconds to wait before the next attempt, or None if it is allowed.
"""

import asyncio
import hashlib
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger("switchgate.accounts.limits")

Mode = Literal["peek", "add", "take"]


@dataclass(frozen=True)
class Limit:
    """At most `count` attempts per `window` seconds; a count of 0 or less turns it off."""

    count: int
    window: float

    @property
    def enabled(self) -> bool:
        return self.count > 0 and self.window > 0


class Check(NamedTuple):
    key: str  # e.g. "signin:email:ann@example.com"
    limit: Limit


def _active(checks: Sequence[Check]) -> list[Check]:
    return [c for c in checks if c.limit.enabled]


def _seconds(wait: float) -> int | None:
    return max(1, math.ceil(wait)) if wait > 0 else None


class AttemptStore(Protocol):
    async def run(self, checks: Sequence[Check], mode: Mode) -> int | None: ...

    async def clear(self, key: str) -> None: ...

    async def refund(self, key: str) -> None:
        """Forget the latest attempt counted under `key` (one that turned out fine)."""
        ...


class MemoryAttempts:
    """This process's counters: the times of recent attempts, per key."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000
    ) -> None:
        self._clock = clock
        self._max_keys = max_keys
        self._times: dict[str, deque[float]] = {}

    def _recent(self, key: str, window: float, now: float) -> deque[float]:
        times = self._times.get(key)
        if times is None:
            return deque()
        while times and times[0] <= now - window:
            times.popleft()
        if not times:
            del self._times[key]
        return times

    def run_now(self, checks: Sequence[Check], mode: Mode) -> int | None:
        checks, now = _active(checks), self._clock()
        wait = 0.0
        if mode != "add":
            for key, limit in checks:
                times = self._recent(key, limit.window, now)
                if len(times) >= limit.count:
                    wait = max(wait, times[-limit.count] + limit.window - now)
        if wait > 0 or mode == "peek":
            return _seconds(wait)
        for key, _ in checks:
            self._times.setdefault(key, deque()).append(now)
        if len(self._times) > self._max_keys:
            self._times.clear()  # a flood of distinct keys: forget rather than grow
        return None

    async def run(self, checks: Sequence[Check], mode: Mode) -> int | None:
        return self.run_now(checks, mode)

    async def clear(self, key: str) -> None:
        self._times.pop(key, None)

    async def refund(self, key: str) -> None:
        times = self._times.get(key)
        if times:
            times.pop()


# KEYS: one sorted set per counter (members are attempts, scores their time in ms).
# ARGV: now_ms, mode, member, then limit and window_ms for each key.
# Returns the wait in ms (0: allowed).
_SCRIPT = """
local now = tonumber(ARGV[1])
local mode = ARGV[2]
local member = ARGV[3]
local wait = 0
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[2 + 2 * i])
  local window = tonumber(ARGV[3 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if mode ~= 'add' then
    local n = redis.call('ZCARD', key)
    if n >= limit then
      local oldest = redis.call('ZRANGE', key, n - limit, n - limit, 'WITHSCORES')
      local w = tonumber(oldest[2]) + window - now
      if w > wait then wait = w end
    end
  end
end
if wait > 0 or mode == 'peek' then
  return math.ceil(wait)
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, member)
  redis.call('PEXPIRE', key, math.ceil(tonumber(ARGV[3 + 2 * i])))
end
return 0
"""


class RedisAttempts:
    """Counters shared through Redis, with this process's memory as the fallback."""

    def __init__(
        self,
        client: "Redis",
        prefix: str = "sg:acct:",
        clock: Callable[[], float] = time.time,
        timeout: float = 2.0,
    ) -> None:
        self._client = client
        self._prefix = prefix
        self._clock = clock
        self._timeout = timeout
        self._script = client.register_script(_SCRIPT)
        self._fallback = MemoryAttempts(clock)
        self._degraded = False

    def redis_key(self, key: str) -> str:
        """Addresses and e-mails are stored hashed: bounded key sizes, no PII in Redis."""
        return self._prefix + hashlib.sha256(key.encode()).hexdigest()[:32]

    def _failed(self, exc: BaseException) -> None:
        if not self._degraded:
            log.warning(
                "Redis unreachable (%s); sign-in, sign-up and e-mail limits are per process "
                "for now",
                str(exc) or type(exc).__name__,
            )
            self._degraded = True

    def _recovered(self) -> None:
        if self._degraded:
            log.info("Redis reachable again; account limits are shared again")
            self._degraded = False

    async def run(self, checks: Sequence[Check], mode: Mode) -> int | None:
        checks = _active(checks)
        if not checks:
            return None
        args: list[str | int | float] = [
            self._clock() * 1000.0,
            mode,
            f"{time.time_ns()}:{secrets.token_hex(6)}",
        ]
        for _, limit in checks:
            args += [limit.count, limit.window * 1000.0]
        keys = [self.redis_key(key) for key, _ in checks]
        try:
            waited = await asyncio.wait_for(self._script(keys=keys, args=args), self._timeout)
        except (TimeoutError, RedisError, OSError) as exc:
            self._failed(exc)
            return self._fallback.run_now(checks, mode)
        self._recovered()
        return _seconds(int(waited) / 1000.0)

    async def refund(self, key: str) -> None:
        await self._fallback.refund(key)
        try:
            await asyncio.wait_for(self._client.zpopmax(self.redis_key(key)), self._timeout)
        except (TimeoutError, RedisError, OSError) as exc:
            self._failed(exc)

    async def clear(self, key: str) -> None:
        await self._fallback.clear(key)
        try:
            await asyncio.wait_for(self._client.delete(self.redis_key(key)), self._timeout)
        except (TimeoutError, RedisError, OSError) as exc:
            self._failed(exc)
