"""Counts the tokens of finished requests against tokens-per-minute limits.

`admit` (relay/gate.py) tells the meter which counters a token's requests feed; the
recorder calls `observe` with every finished request's usage, and the meter adds its
input + output tokens to those counters (in the background: the request is already done).
"""

import asyncio
from collections.abc import Sequence

from switchgate.billing.recorder import Record
from switchgate.ratelimit.memory import MemoryRateLimiter
from switchgate.ratelimit.redis import RedisRateLimiter


class TokenMeter:
    def __init__(self, limiter: MemoryRateLimiter | RedisRateLimiter) -> None:
        self._limiter = limiter
        self._keys: dict[int, tuple[str, ...]] = {}  # token id -> counters with a TPM limit
        self._pending: set[asyncio.Task[None]] = set()

    def watch(self, token_id: int, keys: Sequence[str]) -> None:
        if keys:
            self._keys[token_id] = tuple(keys)
        else:
            self._keys.pop(token_id, None)

    def clear(self) -> None:
        """Limits may have changed: admits register them again."""
        self._keys.clear()

    def observe(self, record: Record) -> None:
        if record.token_id is None or not self._keys:
            return
        keys = self._keys.get(record.token_id)
        used = record.input_tokens + record.output_tokens
        if keys and used > 0:
            task = asyncio.get_running_loop().create_task(self._limiter.add_tokens(keys, used))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
