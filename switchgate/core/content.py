"""Content parts of a message: what a user or assistant turn is made of."""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str
    # Anthropic prompt-cache marker, kept for translation to A (dropped elsewhere).
    cache_control: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image either inline (`data`, base64, with `media_type`) or by `url`."""

    media_type: str | None = None
    data: str | None = None
    url: str | None = None
    detail: str | None = None


@dataclass(frozen=True, slots=True)
class AudioPart:
    data: str  # base64
    format: str  # "wav" | "mp3" | ...


@dataclass(frozen=True, slots=True)
class FilePart:
    """A document (PDF, plain text...), inline (`data`, base64), by `url` or by `file_id`."""

    media_type: str | None = None
    data: str | None = None
    url: str | None = None
    file_id: str | None = None
    filename: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A call the assistant made. `arguments` is JSON text (possibly invalid, as O allows)."""

    id: str
    name: str
    arguments: str
    # Gemini's thoughtSignature for this call, prefixed by vendor (see protocols §5.5).
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    tool_call_id: str
    content: tuple["TextPart | ImagePart | FilePart", ...]
    is_error: bool = False
    # The called function's name, when the source format carries it (G requires it).
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Reasoning text with its signature, or a redacted block (`redacted` holds the data)."""

    text: str = ""
    signature: str | None = None
    redacted: str | None = None


@dataclass(frozen=True, slots=True)
class UnknownPart:
    """A part one dialect has and the IR doesn't model; kept raw so nothing is silently lost."""

    dialect: str
    raw: dict[str, Any] = field(default_factory=dict)


Part = (
    TextPart
    | ImagePart
    | AudioPart
    | FilePart
    | ToolCallPart
    | ToolResultPart
    | ThinkingPart
    | UnknownPart
)
OutputPart = TextPart | ToolCallPart | ThinkingPart
