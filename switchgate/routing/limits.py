"""A channel's upstream time limits: the settings' defaults with the channel's own
`timeouts` table (extra["timeouts"]) laid over them."""

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any

from switchgate.routing.channels import Channel, ChannelError
from switchgate.settings import Timeouts

TIMEOUT_NAMES = frozenset(f.name for f in fields(Timeouts))


def check_timeouts(values: Mapping[str, Any]) -> dict[str, float]:
    """Validate a channel's `timeouts` table: known names, positive seconds."""
    out: dict[str, float] = {}
    for name, value in values.items():
        if name not in TIMEOUT_NAMES:
            known = ", ".join(sorted(TIMEOUT_NAMES))
            raise ChannelError(f"unknown time limit {name!r}; known: {known}")
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ChannelError(f"time limit {name!r} must be a positive number of seconds")
        out[name] = float(value)
    return out


def channel_limits(
    channel: Channel, defaults: Timeouts, stream: bool
) -> tuple[float, float, float, float]:
    """(connect, first byte, idle, total) for one attempt on `channel`."""
    own = channel.extra.get("timeouts")
    if not own:
        return defaults.for_call(stream)
    return replace(defaults, **own).for_call(stream)
