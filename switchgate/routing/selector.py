"""Order the channels that serve a model: priority tiers, weighted choice inside a tier."""

import random
from collections.abc import Sequence

from switchgate.routing.channels import Channel
from switchgate.routing.health import ChannelHealth


def weighted_order(channels: Sequence[Channel], rng: random.Random) -> list[Channel]:
    """A weighted shuffle: heavier channels tend to come first (Efraimidis-Spirakis)."""
    if len(channels) == 1:
        return list(channels)
    keyed = [(rng.random() ** (1.0 / max(1, c.weight)), c) for c in channels]
    keyed.sort(key=lambda item: item[0], reverse=True)
    return [c for _, c in keyed]


def plan(channels: Sequence[Channel], health: ChannelHealth, rng: random.Random) -> list[Channel]:
    """Candidates in the order to try them; cooling channels go last, not away."""
    tiers: dict[int, list[Channel]] = {}
    for channel in channels:
        tiers.setdefault(channel.priority, []).append(channel)
    healthy: list[Channel] = []
    cooling: list[Channel] = []
    for priority in sorted(tiers, reverse=True):
        for channel in weighted_order(tiers[priority], rng):
            (cooling if health.is_cooling(channel.id) else healthy).append(channel)
    return healthy + cooling
