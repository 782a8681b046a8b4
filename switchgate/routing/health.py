"""Routing health: THE one component that knows which upstream subjects are failing.

A *subject* is what a failure is held against (see `failures.py` for which is which):

    c:<channel id>               the channel: connection errors, timeouts
    m:<channel id>:<model>       one model on one channel: 404 model-not-found, 429, 5xx
    k:<channel id>:<key index>   one API key of a channel: 401 / 403

Each subject has a circuit breaker (`breaker.py`). Reads (`phase`, `blocked`) are local
dictionary look-ups with no I/O; when every subject is healthy the dictionary is empty
and a read costs one truth test. Writes update the local state at once and, when a
`HealthSync` is attached (Redis, `health_redis.py`), are shared with every other
process, which applies them to its own local state; the consistency bound is the
sync's (documented there and in docs/routing.md). Without a sync the state is exact
within the process.

Interface for other parts of the gateway (e.g. scale-out, the console):
    phase(subject) / blocked(channel_id, model)    read, local
    failure(subject, retry_after, reason)           a failure happened
    success(subject...)                             a call succeeded (closes breakers)
    await claim_probe(subject)                      take the one half-open trial slot
    snapshot()                                      every non-closed subject, for display
    apply(subject, breaker)                         a state from another process
"""

import time
from collections.abc import Callable, Iterable
from typing import Protocol

from switchgate.routing.breaker import Breaker, Ladder, Phase


def channel_subject(channel_id: int) -> str:
    return f"c:{channel_id}"


def model_subject(channel_id: int, model: str) -> str:
    return f"m:{channel_id}:{model}"


def key_subject(channel_id: int, key_index: int) -> str:
    return f"k:{channel_id}:{key_index}"


class HealthSync(Protocol):
    """Shares breaker states between processes."""

    def publish(self, subject: str, breaker: Breaker) -> None:
        """Send a new state (a closed one after a success) to the other processes;
        must not block."""
        ...

    async def claim_probe(self, subject: str, ttl: float) -> bool:
        """Take the half-open trial slot of `subject` across processes."""
        ...


class Health:
    def __init__(
        self, ladder: Ladder | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.ladder = ladder or Ladder()
        self.clock = clock
        self.sync: HealthSync | None = None
        self._states: dict[str, Breaker] = {}
        self._probes: dict[str, float] = {}  # subject -> trial slot held until

    # -- reads (local, no I/O) ---------------------------------------------------

    @property
    def any_failing(self) -> bool:
        return bool(self._states)

    def phase(self, subject: str) -> Phase:
        state = self._states.get(subject)
        return Phase.CLOSED if state is None else state.phase(self.clock())

    def blocked(self, channel_id: int, model: str) -> Phase:
        """The worst phase among the channel's subjects that matter for `model`
        (OPEN over HALF_OPEN over CLOSED). Key subjects are judged by the key picker."""
        if not self._states:
            return Phase.CLOSED
        worst = Phase.CLOSED
        for subject in (channel_subject(channel_id), model_subject(channel_id, model)):
            phase = self.phase(subject)
            if phase is Phase.OPEN:
                return phase
            if phase is Phase.HALF_OPEN:
                worst = phase
        return worst

    def half_open(self, channel_id: int, model: str) -> list[str]:
        """The channel's subjects for `model` that wait for a trial request."""
        if not self._states:
            return []
        subjects = (channel_subject(channel_id), model_subject(channel_id, model))
        return [s for s in subjects if self.phase(s) is Phase.HALF_OPEN]

    def snapshot(self) -> dict[str, dict[str, object]]:
        """Every subject that is not plainly healthy, with its phase and seconds left."""
        now = self.clock()
        out: dict[str, dict[str, object]] = {}
        for subject, state in self._states.items():
            phase = state.phase(now)
            out[subject] = {
                "phase": phase.value,
                "failures": state.failures,
                "seconds_left": max(0.0, round(state.until - now, 1)) if state.until else 0.0,
                "reason": state.reason,
            }
        return out

    # -- writes --------------------------------------------------------------------

    def failure(self, subject: str, retry_after: float | None = None, reason: str = "") -> None:
        now = self.clock()
        state = self._states.get(subject) or Breaker()
        new = state.failed(now, self.ladder, retry_after, reason)
        self._states[subject] = new
        self._probes.pop(subject, None)
        if self.sync is not None:
            self.sync.publish(subject, new)

    def success(self, *subjects: str) -> None:
        if not self._states:
            return
        for subject in subjects:
            if subject in self._states:
                del self._states[subject]
                self._probes.pop(subject, None)
                if self.sync is not None:
                    self.sync.publish(subject, Breaker(updated=self.clock()))

    def reset(self, subjects: Iterable[str]) -> None:
        """Close these breakers by hand (an operator re-enabled or tested a channel)."""
        self.success(*subjects)

    def reset_channel(self, channel_id: int) -> None:
        prefixes = (f"c:{channel_id}", f"m:{channel_id}:", f"k:{channel_id}:")
        self.success(*[s for s in self._states if s == prefixes[0] or s.startswith(prefixes[1:])])

    async def claim_probe(self, subject: str) -> bool:
        now = self.clock()
        if self._probes.get(subject, 0.0) > now:
            return False
        self._probes[subject] = now + self.ladder.probe_timeout
        if self.sync is None:
            return True
        if await self.sync.claim_probe(subject, self.ladder.probe_timeout):
            return True
        self._probes.pop(subject, None)  # another process holds it: ask again next time
        return False

    def apply(self, subject: str, breaker: Breaker) -> None:
        """A state written by another process; an older one than ours is ignored."""
        current = self._states.get(subject)
        if current is not None and breaker.updated < current.updated:
            return
        self._probes.pop(subject, None)  # any change ends a trial
        if breaker.closed:
            if current is not None:
                del self._states[subject]
        else:
            self._states[subject] = breaker

    def replace_all(self, states: dict[str, Breaker]) -> None:
        """A full copy from the shared store (after (re)connecting); newer local states stay."""
        for subject in list(self._states):
            if subject not in states and self._states[subject].updated < self.clock() - 1.0:
                del self._states[subject]
        for subject, breaker in states.items():
            self.apply(subject, breaker)


def channel_health(snapshot: dict[str, dict[str, object]], channel_id: int) -> dict[str, object]:
    """What the console shows for one channel: its own breaker and its models'."""
    own = f"c:{channel_id}"
    prefixes = (f"m:{channel_id}:", f"k:{channel_id}:")
    mine = {s: v for s, v in snapshot.items() if s == own or s.startswith(prefixes)}
    cooling = [v for v in mine.values() if v["phase"] == Phase.OPEN.value]
    seconds = max((float(v["seconds_left"]) for v in cooling), default=0.0)  # type: ignore[arg-type]
    whole = snapshot.get(own, {}).get("phase") == Phase.OPEN.value
    models = sorted(s.split(":", 2)[2] for s in mine if s.startswith(prefixes[0]))
    health = "cooling down" if whole else ("some models cooling" if cooling else "ok")
    if not cooling and any(v["phase"] == Phase.HALF_OPEN.value for v in mine.values()):
        health = "probing"
    return {
        "cooling_seconds": round(seconds, 1),
        "health": health,
        "breakers": mine,
        "failing_models": models,
    }
