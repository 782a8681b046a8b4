"""Once a second, off the request path: the gauges that describe this process (active
streams, pending holds, the batch writer's queue, each channel's breaker)."""

import os

from switchgate.observability.metrics import multiprocess_dir
from switchgate.state import AppState

_SCOPES = {"c": "channel", "m": "model", "k": "key"}


def breaker_states(state: AppState) -> dict[tuple[int, str, str], tuple[str, float]]:
    """(channel id, scope, target) -> (state, cool-down seconds left) for each breaker
    that is not plainly closed (routing/health.py's subjects c:ID, m:ID:MODEL, k:ID:KEY)."""
    out: dict[tuple[int, str, str], tuple[str, float]] = {}
    for subject, info in state.health.snapshot().items():
        kind, _, rest = subject.partition(":")
        channel, _, target = rest.partition(":")
        if kind not in _SCOPES or not channel.isdigit():
            continue
        phase = str(info.get("phase", "closed")).replace("-", "_")
        left = info.get("seconds_left", 0.0)
        seconds = float(left) if isinstance(left, int | float) else 0.0
        out[(int(channel), _SCOPES[kind], target)] = (phase, seconds)
    return out


async def sample_metrics(state: AppState) -> None:
    state.metrics.sample(
        pending_holds=state.book.open_holds,
        queue_depth=state.recorder.pending,
        breakers=breaker_states(state),
    )


def process_exited() -> None:
    """Multi-process mode: drop this worker's live gauges from the shared directory."""
    path = multiprocess_dir()
    if path is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid(), path)  # type: ignore[no-untyped-call]
