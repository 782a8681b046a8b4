"""A requests-per-minute limiter shared by every replica through Redis.

Fixed one-minute windows: INCR + EXPIRE on `sg:rl:<token>:<window>` in one round trip.
If Redis is unreachable the limiter falls back to this process's own counters (and
logs it), so an outage of Redis never takes the gateway down.
"""

import logging
import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.exceptions import RedisError

from switchgate.ratelimit.memory import MemoryRateLimiter

log = logging.getLogger("switchgate.ratelimit")


class RedisRateLimiter:
    def __init__(
        self, client: "Redis", prefix: str = "sg:rl:", clock: Callable[[], float] = time.time
    ) -> None:
        self._client = client
        self._prefix = prefix
        self._clock = clock
        self._fallback = MemoryRateLimiter(clock)
        self._degraded = False

    async def hit(self, key: int, limit: int) -> int | None:
        now = self._clock()
        window = int(now // 60)
        name = f"{self._prefix}{key}:{window}"
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                pipe.incr(name)
                pipe.expire(name, 120)
                count, _ = await pipe.execute()
        except (RedisError, OSError) as exc:
            if not self._degraded:
                log.warning("Redis unreachable (%s); rate limits are per process for now", exc)
                self._degraded = True
            return await self._fallback.hit(key, limit)
        self._degraded = False
        if int(count) > limit:
            return max(1, int((window + 1) * 60 - now))
        return None
