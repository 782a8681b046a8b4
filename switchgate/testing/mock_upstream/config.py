"""Settings of the fake upstream, and their validated partial update (POST /_mock/config)."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass(slots=True)
class MockConfig:
    """How the fake upstream behaves. Directives in a request override it per request."""

    api_key: str = "mock-key"
    # More keys it takes as valid (a multi-key channel's keys); recorded requests show
    # them as "<redacted:valid:N>" (N: 1-based place in this list).
    also_accept: list[str] = field(default_factory=list)
    latency_ms: float = 0
    chunk_count: int = 8
    chunk_interval_ms: float = 0
    reply_text: str | None = None
    record: int = 50
    strict: bool = False  # refuse what the real providers refuse (strict.py)
    # Server-wide faults (faults.py).
    fault_status: int = 0
    fault_count: int = -1
    fault_models: list[str] = field(default_factory=list)
    fault_retry_after: str | None = None
    fault_message: str | None = None
    fault_error_type: str | None = None  # Bedrock: the exception name (x-amzn-errortype)
    hang: bool = False
    stall_after: int | None = None
    cut_after: int | None = None
    invalid_after: int | None = None
    end_after: int | None = None

    @property
    def accepted(self) -> tuple[str, ...]:
        """Every key this upstream takes: `api_key` first."""
        return (self.api_key, *self.also_accept)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_FAULT_FIELDS = frozenset(
    f.name
    for f in fields(MockConfig)
    if f.name.startswith(("fault_", "stall_", "cut_", "invalid_", "end_")) or f.name == "hang"
)


def _check_fault(name: str, value: Any) -> Any:
    """The fault fields (faults.py)."""
    if name in ("fault_retry_after", "fault_message", "fault_error_type"):
        if value is None or isinstance(value, str):
            return value
        raise ValueError(f"{name} must be a string or null")
    if name == "hang":
        if isinstance(value, bool):
            return value
        raise ValueError("hang must be true or false")
    if name == "fault_models":
        if isinstance(value, list) and all(isinstance(m, str) for m in value):
            return list(value)
        raise ValueError("fault_models must be a list of model names")
    if value is None and name not in ("fault_status", "fault_count"):
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < -1:
        raise ValueError(f"{name} must be an integer")
    return value


def _check(name: str, value: Any) -> Any:
    """Return the value coerced to the field's type, or raise ValueError."""
    if name in _FAULT_FIELDS:
        return _check_fault(name, value)
    if name == "api_key":
        if isinstance(value, str) and value:
            return value
        raise ValueError("api_key must be a non-empty string")
    if name == "also_accept":
        if isinstance(value, list) and all(isinstance(k, str) and k for k in value):
            return list(value)
        raise ValueError("also_accept must be a list of non-empty strings")
    if name == "reply_text":
        if value is None or isinstance(value, str):
            return value
        raise ValueError("reply_text must be a string or null")
    if name == "strict":
        if isinstance(value, bool):
            return value
        raise ValueError("strict must be a boolean")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number")
    if name in ("chunk_count", "record"):
        if value != int(value) or value < (1 if name == "chunk_count" else 0):
            raise ValueError(f"{name} must be a non-negative integer (chunk_count >= 1)")
        return int(value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0")
    return float(value)


def update_config(config: MockConfig, changes: Mapping[str, Any]) -> None:
    """Apply a partial update in place; all-or-nothing, ValueError on any bad field."""
    known = {f.name for f in fields(MockConfig)}
    checked: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in known:
            raise ValueError(f"unknown config field: {name}")
        checked[name] = _check(name, value)
    for name, value in checked.items():
        setattr(config, name, value)
