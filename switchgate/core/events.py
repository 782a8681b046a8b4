"""Stream events: what a provider's stream decoder yields and a dialect's encoder consumes.

Order in a well-formed stream:
    Start, then any of TextDelta / ThinkingDelta / SignatureDelta / RedactedThinking /
    ToolCallStart + ToolArgsDelta..., then Finish, UsageUpdate (any time, cumulative:
    the last one wins), and at most one StreamError (which ends the stream).

Block boundaries are implicit: a change of kind (text -> tool call, tool call k ->
tool call k+1, ...) closes the previous block. `ToolCallStart.index` counts tool
calls only (0, 1, 2...), never other blocks.
"""

from dataclasses import dataclass

from switchgate.core.response import FinishReason
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError


@dataclass(frozen=True, slots=True)
class Start:
    id: str
    model: str
    usage: Usage | None = None  # prompt usage if the upstream reports it up front


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class SignatureDelta:
    signature: str


@dataclass(frozen=True, slots=True)
class RedactedThinking:
    data: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    index: int
    id: str
    name: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolArgsDelta:
    index: int
    fragment: str


@dataclass(frozen=True, slots=True)
class Finish:
    reason: FinishReason
    stop_sequence: str | None = None


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    usage: Usage


@dataclass(frozen=True, slots=True)
class StreamError:
    error: GatewayError


StreamEvent = (
    Start
    | TextDelta
    | ThinkingDelta
    | SignatureDelta
    | RedactedThinking
    | ToolCallStart
    | ToolArgsDelta
    | Finish
    | UsageUpdate
    | StreamError
)
