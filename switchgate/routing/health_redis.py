"""Routing health shared by every process and replica through Redis.

Each process keeps its own copy of every non-closed breaker (`health.Health`) and reads
only that copy on the request path: a healthy call costs no Redis round-trip. Redis is
written only when a breaker changes (a failure, or the first success after failures):

    HSET switchgate:health:state <subject> <state>   (HDEL when it closes)
    PUBLISH switchgate:health <origin, subject, state>
    SET switchgate:health:probe:<subject> NX PX      (the half-open trial slot)

and every process applies what it hears to its copy. A process that (re)connects reads
the whole hash first, and again every `resync_seconds`.

Consistency bound (docs/routing.md): a state change reaches every connected process in
the time of one pub/sub delivery (milliseconds on one network; the tests require under
one second). If a message is lost (Redis restarted, a subscriber reconnecting), the
periodic read of the hash repairs it within `resync_seconds` (5 s). Failure counts are
last-writer-wins: two replicas failing at the same instant may count one failure
instead of two, but a replica that itself sees `threshold` failures always opens the
breaker everywhere. The half-open trial slot is taken with `SET NX PX`, so exactly one
process sends the trial request. If Redis is unreachable, each process goes on with its
own (exact, local) health and logs a warning.
"""

import asyncio
import logging
import time
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from switchgate import jsonutil
from switchgate.routing.breaker import Breaker
from switchgate.routing.health import Health

NAMESPACE = "switchgate:health"  # pub/sub channel; `:state` hash; `:probe:<subject>` slots
log = logging.getLogger("switchgate.health")


class RedisHealthSync:
    def __init__(
        self,
        redis: Redis,
        health: Health,
        origin: str,
        resync_seconds: float = 5.0,
        namespace: str = NAMESPACE,
    ) -> None:
        self._channel = namespace
        self._state_key = f"{namespace}:state"
        self._probe_prefix = f"{namespace}:probe:"
        self._redis = redis
        self._health = health
        self._origin = origin
        self._resync = resync_seconds
        self._pending: set[asyncio.Task[None]] = set()

    # -- HealthSync ----------------------------------------------------------------

    def publish(self, subject: str, breaker: Breaker) -> None:
        task = asyncio.get_running_loop().create_task(self._write(subject, breaker))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def claim_probe(self, subject: str, ttl: float) -> bool:
        try:
            taken = await self._redis.set(
                self._probe_prefix + subject, self._origin, nx=True, px=max(1, int(ttl * 1000))
            )
        except (RedisError, OSError) as exc:
            log.warning("Redis unreachable for a breaker trial slot (%s); deciding locally", exc)
            return True
        return bool(taken)

    # -- writing and listening -----------------------------------------------------------

    async def _write(self, subject: str, breaker: Breaker) -> None:
        message = jsonutil.dumps({"o": self._origin, "s": subject, "b": breaker.as_dict()})
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.delete(self._probe_prefix + subject)  # any change ends a trial
                if breaker.closed:
                    pipe.hdel(self._state_key, subject)
                else:
                    pipe.hset(self._state_key, subject, jsonutil.dumps(breaker.as_dict()))
                pipe.publish(self._channel, message)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            log.warning("could not share a breaker change through Redis: %s", exc)

    def _heard(self, data: Any) -> None:
        try:
            message = jsonutil.loads(data)
            if message.get("o") == self._origin:
                return  # our own change, applied already
            self._health.apply(str(message["s"]), Breaker.from_dict(message["b"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("ignored an unreadable health message")

    async def load(self) -> None:
        """Read every shared state into the local copy."""
        raw = await self._redis.hgetall(self._state_key)
        states: dict[str, Breaker] = {}
        for subject, value in raw.items():
            try:
                name = subject.decode() if isinstance(subject, bytes) else str(subject)
                states[name] = Breaker.from_dict(jsonutil.loads(value))
            except (ValueError, TypeError, AttributeError):
                continue
        self._health.replace_all(states)

    async def run(self) -> None:
        """Listen until cancelled; reconnects after Redis errors."""
        while True:
            try:
                async with self._redis.pubsub() as pubsub:
                    await pubsub.subscribe(self._channel)
                    await self.load()
                    next_load = time.monotonic() + self._resync
                    while True:
                        message = await pubsub.get_message(
                            ignore_subscribe_messages=True, timeout=1.0
                        )
                        if message is not None and message.get("type") == "message":
                            self._heard(message["data"])
                        if time.monotonic() >= next_load:
                            await self.load()
                            next_load = time.monotonic() + self._resync
            except (RedisError, OSError) as exc:
                log.warning("Redis health sharing interrupted (%s); retrying in 1 s", exc)
                await asyncio.sleep(1.0)

    async def close(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)


async def share_health(redis: Redis, health: Health, origin: str) -> None:
    """Attach a Redis sync to `health` and run it until cancelled (a lifecycle task)."""
    sync = RedisHealthSync(redis, health, origin)
    health.sync = sync
    try:
        await sync.run()
    finally:
        health.sync = None
        await sync.close()
