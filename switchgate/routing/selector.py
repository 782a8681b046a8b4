"""Order the channels that serve a model: priority tiers, weighted choice inside a tier,
and health: channels whose breaker is open for this model go last (tried only when
everything else failed), never away. Also, for the attempt pipeline (relay/attempt.py):
whether a half-open candidate may go now (`admitted`), and the candidates with a larger
context window (`larger_windows`)."""

import random
from collections.abc import Sequence

from switchgate.catalogue.entries import shipped_catalogue
from switchgate.routing.breaker import Phase
from switchgate.routing.channels import Channel
from switchgate.routing.health import Health


def weighted_order(channels: Sequence[Channel], rng: random.Random) -> list[Channel]:
    """A weighted shuffle: heavier channels tend to come first (Efraimidis-Spirakis)."""
    if len(channels) == 1:
        return list(channels)
    keyed = [(rng.random() ** (1.0 / max(1, c.weight)), c) for c in channels]
    keyed.sort(key=lambda item: item[0], reverse=True)
    return [c for _, c in keyed]


def plan(
    channels: Sequence[Channel], health: Health, rng: random.Random, model: str = ""
) -> list[Channel]:
    """Candidates in the order to try them. Half-open channels keep their place (the
    attempt loop claims their one trial request); open ones go last."""
    if len(channels) == 1:
        return list(channels)
    tiers: dict[int, list[Channel]] = {}
    for channel in channels:
        tiers.setdefault(channel.priority, []).append(channel)
    ordered: list[Channel] = []
    for priority in sorted(tiers, reverse=True):
        ordered.extend(weighted_order(tiers[priority], rng))
    if not health.any_failing:
        return ordered
    usable = [c for c in ordered if health.blocked(c.id, model) is not Phase.OPEN]
    if len(usable) == len(ordered):
        return ordered
    return usable + [c for c in ordered if health.blocked(c.id, model) is Phase.OPEN]


async def admitted(health: Health, channel: Channel, model: str, trials: list[str]) -> bool:
    """A closed or open candidate goes (open ones only come last, from the plan); a
    half-open one goes only as the trial request (its subjects are added to `trials`)."""
    if not health.any_failing or health.blocked(channel.id, model) is not Phase.HALF_OPEN:
        return True
    for subject in health.half_open(channel.id, model):
        if not await health.claim_probe(subject):
            return False
        trials.append(subject)
    return True


def larger_windows(candidates: list[Channel], model: str, upstream: str) -> list[Channel]:
    """The candidates whose upstream model has a larger context window than `upstream`
    (by the shipped model catalogue; without a known window for `upstream`, any other
    upstream model with a known window)."""
    catalogue = shipped_catalogue()

    def window(name: str) -> int | None:
        entry = catalogue.find(name)
        return entry.context_window if entry is not None else None

    current = window(upstream)
    out = []
    for channel in candidates:
        other = channel.upstream_model(model)
        size = window(other)
        if size is not None and other != upstream and (current is None or size > current):
            out.append(channel)
    return out
