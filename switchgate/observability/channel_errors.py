"""The last error seen on each channel (an upstream attempt that failed, or a failed
test), per process, for the console's channel list. Written only on failures."""

from dataclasses import dataclass

from switchgate.storage.db import now_ms


@dataclass(frozen=True, slots=True)
class LastError:
    at_ms: int
    message: str


class ChannelErrors:
    def __init__(self) -> None:
        self._last: dict[int, LastError] = {}

    def record(self, channel_id: int, message: str) -> None:
        self._last[channel_id] = LastError(now_ms(), message[:300])

    def snapshot(self) -> dict[int, LastError]:
        return dict(self._last)
