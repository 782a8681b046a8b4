"""Channel health: consecutive failures open a cool-down that grows, success closes it."""

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class _State:
    failures: int = 0
    until: float = 0.0
    cooldowns: int = 0


class ChannelHealth:
    def __init__(
        self,
        *,
        threshold: int = 3,
        base_cooldown: float = 10.0,
        max_cooldown: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._threshold = threshold
        self._base = base_cooldown
        self._max = max_cooldown
        self._clock = clock
        self._states: dict[int, _State] = {}

    def is_cooling(self, channel_id: int) -> bool:
        state = self._states.get(channel_id)
        return state is not None and state.until > self._clock()

    def success(self, channel_id: int) -> None:
        if channel_id in self._states:
            del self._states[channel_id]

    def failure(self, channel_id: int) -> None:
        state = self._states.setdefault(channel_id, _State())
        state.failures += 1
        if state.failures >= self._threshold:
            delay = min(self._max, self._base * (2**state.cooldowns))
            state.until = self._clock() + delay
            state.cooldowns += 1
            state.failures = 0

    def snapshot(self) -> dict[int, float]:
        """Seconds of cool-down left per channel (for the console)."""
        now = self._clock()
        return {cid: s.until - now for cid, s in self._states.items() if s.until > now}
