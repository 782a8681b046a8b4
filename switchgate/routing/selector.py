"""Order the channels that serve a model: priority tiers, weighted choice inside a tier,
and health: channels whose breaker is open for this model go last (tried only when
everything else failed), never away."""

import random
from collections.abc import Sequence

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
