"""What the relay reports about a failed upstream attempt (failure paths only)."""

from switchgate.errors import GatewayError
from switchgate.state import AppState


def attempt_failed(state: AppState, channel_id: int, error: GatewayError) -> str:
    """Count the failed attempt, remember it as the channel's last error; returns the
    reason label (timeout, rate_limited, unreachable, ...)."""
    reason = state.metrics.attempt_failed(channel_id, error)
    status = f"HTTP {error.upstream_status}: " if error.upstream_status else ""
    state.channel_errors.record(channel_id, f"{reason}: {status}{error.message}")
    return reason
