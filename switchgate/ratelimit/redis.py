"""Requests and tokens per minute shared by every replica through Redis.

One Lua script per request checks every counter that applies and, only if all have room,
increments the request counters: one round trip, atomic across replicas, so a limit of N
admits N per window in total. Keys: `sg:rl:r:<key>:<window>` (requests) and
`sg:rl:k:<key>:<window>` (tokens), expiring after two windows. If Redis is unreachable the
limiter falls back to this process's own counters (and logs it once), so an outage of
Redis never takes the gateway down.
"""

import logging
import time
from collections.abc import Callable, Sequence

from redis.asyncio import Redis
from redis.exceptions import RedisError

from switchgate.ratelimit.memory import MemoryRateLimiter
from switchgate.ratelimit.rates import WINDOW_SECONDS, Rate, Refusal, wait_after, window_of

log = logging.getLogger("switchgate.ratelimit")

# KEYS: the counters to check, ARGV: their limits (same order). The first `ARGV[#KEYS+1]`
# keys are request counters, incremented when every counter is below its limit.
# Returns 0 if admitted, else the 1-based index of the first counter at its limit.
_ADMIT = """
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i]) then return i end
end
local requests = tonumber(ARGV[#KEYS + 1])
local ttl = tonumber(ARGV[#KEYS + 2])
for i = 1, requests do
  redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ttl)
end
return 0
"""


class RedisRateLimiter:
    def __init__(
        self, client: "Redis", prefix: str = "sg:rl:", clock: Callable[[], float] = time.time
    ) -> None:
        self._client = client
        self._prefix = prefix
        self._clock = clock
        self._fallback = MemoryRateLimiter(clock)
        self._degraded = False
        self._admit = client.register_script(_ADMIT)

    def _failed(self, exc: Exception) -> None:
        if not self._degraded:
            log.warning("Redis unreachable (%s); rate limits are per process for now", exc)
            self._degraded = True

    async def admit(self, rates: Sequence[Rate]) -> Refusal | None:
        now = self._clock()
        window = window_of(now)
        requests = [(r, f"{self._prefix}r:{r.key}:{window}") for r in rates if r.requests]
        tokens = [(r, f"{self._prefix}k:{r.key}:{window}") for r in rates if r.tokens]
        checks = requests + tokens
        limits = [r.requests or 0 for r, _ in requests] + [r.tokens or 0 for r, _ in tokens]
        try:
            found = await self._admit(
                keys=[name for _, name in checks],
                args=[*limits, len(requests), 2 * WINDOW_SECONDS],
            )
        except (RedisError, OSError) as exc:
            self._failed(exc)
            return await self._fallback.admit(rates)
        self._degraded = False
        index = int(found)
        if index == 0:
            return None
        rate = checks[index - 1][0]
        return Refusal(rate, "requests" if index <= len(requests) else "tokens", wait_after(now))

    async def add_tokens(self, keys: Sequence[str], tokens: int) -> None:
        window = window_of(self._clock())
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for key in keys:
                    name = f"{self._prefix}k:{key}:{window}"
                    pipe.incrby(name, tokens)
                    pipe.expire(name, 2 * WINDOW_SECONDS)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            self._failed(exc)
            await self._fallback.add_tokens(keys, tokens)
