"""A complete (non-streamed) chat response in canonical form."""

from dataclasses import dataclass, field
from enum import StrEnum

from switchgate.core.content import OutputPart
from switchgate.core.usage import Usage


class FinishReason(StrEnum):
    STOP = "stop"
    STOP_SEQUENCE = "stop_sequence"
    LENGTH = "length"
    TOOL_CALLS = "tool_calls"
    CONTENT_FILTER = "content_filter"
    PAUSE = "pause"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class ChatResponse:
    id: str
    model: str
    parts: tuple[OutputPart, ...]
    finish_reason: FinishReason
    usage: Usage = field(default_factory=Usage)
    stop_sequence: str | None = None
    created: int = 0
