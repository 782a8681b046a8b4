"""One circuit breaker: the pure state machine behind routing health (no I/O, no clock).

    closed ──(threshold consecutive failures, or one failure with Retry-After)──► open
    open ──(cool-down over)──► half-open: one trial request may go (a "probe")
    half-open ──probe succeeds──► closed          half-open ──probe fails──► open (next step)

The cool-down is the upstream's `Retry-After` when it gave one (capped at
`retry_after_max`), otherwise the ladder: `base * 2**step`, capped at `max`; `step`
counts the openings in a row and only a success resets it. Times are wall-clock
seconds (`time.time()`), so that a state written by one process means the same to
another.
"""

from dataclasses import dataclass
from enum import StrEnum


class Phase(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half-open"


@dataclass(frozen=True, slots=True)
class Ladder:
    threshold: int = 3  # consecutive failures that open a closed breaker
    base: float = 10.0  # first cool-down, seconds
    # Longest cool-down of the ladder: a recovered upstream gets its trial request
    # within this long (the bound is 30 s).
    max: float = 30.0
    retry_after_max: float = 300.0  # the longest Retry-After honoured
    probe_timeout: float = 30.0  # a trial request that never reports back frees the slot

    def cooldown(self, step: int, retry_after: float | None) -> float:
        if retry_after is not None and retry_after > 0:
            return min(self.retry_after_max, retry_after)
        return min(self.max, self.base * float(2 ** min(step, 30)))


@dataclass(frozen=True, slots=True)
class Breaker:
    """The state of one breaker. Immutable: every transition returns a new one."""

    failures: int = 0  # consecutive failures while closed
    until: float = 0.0  # open until this time (0: never opened since the last success)
    step: int = 0  # openings in a row
    reason: str = ""  # the last failure, for operators
    updated: float = 0.0  # when this state was written (newer wins across processes)

    @property
    def closed(self) -> bool:
        """Plainly healthy (what a success leaves behind)."""
        return self.until == 0.0 and self.failures == 0

    def phase(self, now: float) -> Phase:
        if self.until == 0.0:
            return Phase.CLOSED
        return Phase.OPEN if now < self.until else Phase.HALF_OPEN

    def failed(
        self, now: float, ladder: Ladder, retry_after: float | None = None, reason: str = ""
    ) -> "Breaker":
        phase = self.phase(now)
        if phase is Phase.OPEN and retry_after is None:
            # A failure reported while open (a last-resort try): keep the cool-down.
            return Breaker(self.failures, self.until, self.step, reason or self.reason, now)
        if retry_after is not None or phase is Phase.HALF_OPEN:
            until = now + ladder.cooldown(self.step, retry_after)
            return Breaker(0, until, self.step + 1, reason, now)
        failures = self.failures + 1
        if failures >= ladder.threshold:
            return Breaker(0, now + ladder.cooldown(self.step, None), self.step + 1, reason, now)
        return Breaker(failures, 0.0, self.step, reason, now)

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "failures": self.failures,
            "until": self.until,
            "step": self.step,
            "reason": self.reason,
            "updated": self.updated,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> "Breaker":
        return cls(
            failures=int(data.get("failures", 0)),  # type: ignore[call-overload]
            until=float(data.get("until", 0.0)),  # type: ignore[arg-type]
            step=int(data.get("step", 0)),  # type: ignore[call-overload]
            reason=str(data.get("reason", "")),
            updated=float(data.get("updated", 0.0)),  # type: ignore[arg-type]
        )
