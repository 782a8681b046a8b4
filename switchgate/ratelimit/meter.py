"""Counts the tokens of finished requests against tokens-per-minute limits.

`admit` (relay/gate.py) tells the meter which counters a token's requests feed; the
recorder calls `observe` with every finished request's usage, and the meter adds its
input + output tokens to those counters (in the background: the request is already done).
"""

import asyncio
from collections.abc import Mapping, Sequence

from switchgate.billing.recorder import Record
from switchgate.ratelimit.memory import MemoryRateLimiter
from switchgate.ratelimit.rates import Rate
from switchgate.ratelimit.redis import RedisRateLimiter


def model_rates(limits: Mapping[str, tuple[int | None, int | None]]) -> dict[str, Rate]:
    return {model: Rate(f"m:{model}", rpm, tpm) for model, (rpm, tpm) in limits.items()}


class TokenMeter:
    def __init__(
        self,
        limiter: MemoryRateLimiter | RedisRateLimiter,
        models: Mapping[str, Rate] | None = None,
    ) -> None:
        self._limiter = limiter
        self._keys: dict[int, tuple[str, ...]] = {}  # token id -> counters with a TPM limit
        self._models = {m: r.key for m, r in (models or {}).items() if r.tokens}
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
        keys: tuple[str, ...] = ()
        if self._keys and record.token_id is not None:
            keys = self._keys.get(record.token_id, ())
        if self._models and record.model in self._models:
            keys += (self._models[record.model],)
        used = record.input_tokens + record.output_tokens
        if keys and used > 0:
            task = asyncio.get_running_loop().create_task(self._limiter.add_tokens(keys, used))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
