"""Per-key caps: calls in flight at once (`max_concurrency`) and calls sent in any 60 s
(`rpm`) on one API key of a channel (routing/keys.py).

`take_capped` gives a call the capped key whose turn it is (`KeyPicker.pick`), or, when
that key is at its cap, the channel's next usable key that has room; when every usable
key is at its cap the channel is skipped (the attempt pipeline moves on to the next
candidate, and answers 429 with Retry-After when every candidate was at its cap). A key without caps
costs nothing here: no counter, no lock, no Redis.

Where the counts live:
- without Redis, in this process (exact within it: N processes admit up to N times a
  cap);
- with Redis, shared by every process and replica: one Lua script per capped send
  checks both caps and takes the slot atomically (Redis's own clock, so the replicas'
  clocks do not matter). In-flight slots are a sorted set of leases
  `sg:kc:<channel>:<position>:c` (released when the call ends; a lease of a process
  that died expires after its hold + 10 s: relay/attempt.py sizes it for the call and a
  short Retry-After resend on the same key); sends are a sorted
  set of times `sg:kc:<channel>:<position>:r` (a sliding 60 s window: never more than
  `rpm` sends in any 60 s). If Redis is unreachable, the counts fall back to this
  process's own (logged once). A call cancelled while the script's answer is on its way
  (the script may have run) gives back what the script granted once it answers: its
  lease and its send (both are members named by the lease id).
"""

import asyncio
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from redis.asyncio import Redis
from redis.exceptions import RedisError

from switchgate.errors import ErrorKind, GatewayError
from switchgate.routing.health import Health
from switchgate.routing.keys import ChannelKey, KeyPicker

log = logging.getLogger("switchgate.routing")

WINDOW = 60.0  # seconds of the requests-per-minute window
BUSY_WAIT = 1.0  # Retry-After when a key is at its concurrency cap (when it frees is unknown)


class Slot:
    """One admitted call on a capped key; `release()` when the call is over (idempotent)."""

    __slots__ = ("_release",)

    def __init__(self, release: Callable[[], None] | None) -> None:
        self._release = release

    def release(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()


@dataclass(frozen=True, slots=True)
class AtCap:
    wait: float  # seconds until the key (or channel) may have room


class MemoryKeyCaps:
    """The caps within this process: exact, no I/O."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._inflight: dict[tuple[int, int], int] = {}
        self._sent: dict[tuple[int, int], deque[float]] = {}

    def inflight(self, channel_id: int, position: int) -> int:
        return self._inflight.get((channel_id, position), 0)

    def take(self, channel_id: int, key: ChannelKey) -> Slot | AtCap:
        subject = (channel_id, key.position)
        if key.max_concurrency is not None and self.inflight(*subject) >= key.max_concurrency:
            return AtCap(BUSY_WAIT)
        if key.rpm is not None:
            now = self._clock()
            sent = self._sent.setdefault(subject, deque())
            while sent and sent[0] <= now - WINDOW:
                sent.popleft()
            if len(sent) >= key.rpm:
                return AtCap(max(0.001, sent[0] + WINDOW - now))
            sent.append(now)
        if key.max_concurrency is None:
            return Slot(None)
        self._inflight[subject] = self.inflight(*subject) + 1
        return Slot(lambda: self._free(subject))

    def _free(self, subject: tuple[int, int]) -> None:
        left = self._inflight.get(subject, 1) - 1
        if left > 0:
            self._inflight[subject] = left
        else:
            self._inflight.pop(subject, None)


# KEYS[1]: leases in flight (score: expiry, ms), KEYS[2]: sends (score: time, ms).
# ARGV: max concurrency (0: none), rpm (0: none), lease id, lease ms.
# Returns 0 when the slot was taken, else the milliseconds to wait.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local maxc = tonumber(ARGV[1])
local rpm = tonumber(ARGV[2])
local hold = tonumber(ARGV[4])
if maxc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  if redis.call('ZCARD', KEYS[1]) >= maxc then return -1 end
end
if rpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 60000)
  if redis.call('ZCARD', KEYS[2]) >= rpm then
    local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return math.max(1, tonumber(oldest[2]) + 60000 - now)
  end
  redis.call('ZADD', KEYS[2], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[2], 61000)
end
if maxc > 0 then
  redis.call('ZADD', KEYS[1], now + hold, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], hold + 1000)
end
return 0
"""


class KeyCaps:
    """The caps of every capped key: shared through Redis when configured, else (and
    while Redis is unreachable) exact within this process."""

    def __init__(self, redis: Redis | None = None, prefix: str = "sg:kc:") -> None:
        self.local = MemoryKeyCaps()
        self._redis = redis
        self._prefix = prefix
        self._script = redis.register_script(_TAKE) if redis is not None else None
        self._degraded = False
        self._tasks: set[asyncio.Task[None]] = set()

    async def take(self, channel_id: int, key: ChannelKey, hold: float) -> Slot | AtCap:
        """Admit one call on `key` (it must carry a cap); `hold`: the longest the call
        can last (its total time limit), after which a lost lease frees itself."""
        if self._redis is None or self._script is None:
            return self.local.take(channel_id, key)
        base = f"{self._prefix}{channel_id}:{key.position}"
        lease = secrets.token_hex(8)
        script = asyncio.ensure_future(
            self._script(
                keys=[f"{base}:c", f"{base}:r"],
                args=[key.max_concurrency or 0, key.rpm or 0, lease, int((hold + 10) * 1000)],
            )
        )
        try:
            found = await asyncio.shield(script)
        except asyncio.CancelledError:
            # The script may have run: when it answers, undo what it granted (the call
            # that asked is gone), rather than leak a lease for the hold + 10 s.
            script.add_done_callback(lambda done: self._undo(done, base, lease))
            raise
        except (RedisError, OSError) as exc:
            if not self._degraded:
                log.warning("Redis unreachable (%s); key caps are per process for now", exc)
                self._degraded = True
            return self.local.take(channel_id, key)
        self._degraded = False
        waited = int(found)
        if waited < 0:
            return AtCap(BUSY_WAIT)
        if waited > 0:
            return AtCap(waited / 1000)
        if key.max_concurrency is None:
            return Slot(None)
        return Slot(lambda: self._release(f"{base}:c", lease))

    async def count_send(self, channel_id: int, key: ChannelKey, hold: float) -> AtCap | None:
        """One more send on `key`'s rpm by a call that already holds its slot (a resend
        on the same key): None when counted, AtCap when the minute has no room."""
        if key.rpm is None:
            return None
        taken = await self.take(channel_id, replace(key, max_concurrency=None), hold)
        return taken if isinstance(taken, AtCap) else None

    def _undo(self, done: "asyncio.Future[object]", base: str, lease: str) -> None:
        """The script of a cancelled take answered: give back the slot and the send it
        granted (nothing when it refused or failed)."""
        if done.cancelled() or done.exception() is not None:
            return
        if int(done.result()) == 0:  # type: ignore[call-overload]
            self._release(f"{base}:c", lease, f"{base}:r")

    def _release(self, name: str, lease: str, sends: str | None = None) -> None:
        task = asyncio.get_running_loop().create_task(self._zrem(name, lease, sends))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _zrem(self, name: str, lease: str, sends: str | None = None) -> None:
        assert self._redis is not None
        try:
            await self._redis.zrem(name, lease)
            if sends is not None:  # a send that never went: out of the rpm window too
                await self._redis.zrem(sends, lease)
        except (RedisError, OSError) as exc:
            log.warning("could not free a key's slot in Redis (%s); it expires by itself", exc)


def all_capped(model: str, wait: float) -> GatewayError:
    """The client's 429 when every candidate for `model` was at its keys' caps."""
    return GatewayError(
        ErrorKind.RATE_LIMITED,
        f"Every upstream key for the model '{model}' is at its concurrency or "
        "requests-per-minute cap; retry shortly.",
        code="rate_limit_exceeded",
        retry_after=max(1, math.ceil(wait)),
    )


CAP_POLL = 0.2  # seconds between two tries of a key at its cap (take_waiting)


async def take_waiting(
    caps: KeyCaps, channel_id: int, key: ChannelKey, hold: float, budget: float
) -> Slot | AtCap:
    """A slot on `key` (it must carry a cap), waiting while it is at its cap for at most
    `budget` seconds (trying again every CAP_POLL s, or when its rpm window frees); the
    last AtCap when there was no room in time. For sends that must go to this one key
    (an embeddings call's further batches, relay/embed_fanout.py)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget
    while True:
        taken = await caps.take(channel_id, key, hold)
        if isinstance(taken, Slot):
            return taken
        pause = min(taken.wait, CAP_POLL)
        if loop.time() + pause > deadline:
            return taken
        await asyncio.sleep(pause)


async def take_capped(
    picker: KeyPicker,
    caps: KeyCaps,
    channel_id: int,
    keys: Sequence[ChannelKey],
    health: Health,
    first: ChannelKey,
    hold: float,
) -> tuple[ChannelKey, Slot | None] | AtCap:
    """`first` (the capped key `picker.pick` chose) with its slot when it has room, else
    the channel's next usable key that has room (in turn from `first`); AtCap, with
    the shortest wait, when every usable key is at its cap."""
    usable = picker.usable(channel_id, keys, health) or [first]
    start = usable.index(first) if first in usable else 0
    wait = math.inf
    for key in usable[start:] + usable[:start]:
        if not key.capped:
            return key, None
        taken = await caps.take(channel_id, key, hold)
        if isinstance(taken, Slot):
            return key, taken
        wait = min(wait, taken.wait)
    return AtCap(wait if wait != math.inf else BUSY_WAIT)
