"""Once a second, off the request path: the gauges that describe this process (active
streams, pending holds, the batch writer's queue, each channel's breaker)."""

import os

from switchgate.observability.metrics import multiprocess_dir
from switchgate.state import AppState


def channel_states(state: AppState) -> dict[int, tuple[str, float]]:
    """Channel id -> (breaker state, cool-down seconds left) for channels not closed."""
    return {cid: ("open", left) for cid, left in state.health.snapshot().items()}


async def sample_metrics(state: AppState) -> None:
    state.metrics.sample(
        pending_holds=state.book.open_holds,
        queue_depth=state.recorder.pending,
        channels=channel_states(state),
    )


def process_exited() -> None:
    """Multi-process mode: drop this worker's live gauges from the shared directory."""
    path = multiprocess_dir()
    if path is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(os.getpid(), path)  # type: ignore[no-untyped-call]
