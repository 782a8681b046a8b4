"""Fold stream events into a ChatResponse (non-stream fallback, metering, tests)."""

from dataclasses import dataclass, field

from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.events import (
    Finish,
    RedactedThinking,
    SignatureDelta,
    Start,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    ToolCallStart,
    UsageUpdate,
)
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError


@dataclass
class _Tool:
    id: str
    name: str
    args: list[str] = field(default_factory=list)
    signature: str | None = None


@dataclass
class Accumulator:
    """Feed events with `add`; read the result with `response()`."""

    id: str = ""
    model: str = ""
    finish: FinishReason | None = None
    stop_sequence: str | None = None
    usage: Usage | None = None
    error: GatewayError | None = None
    _parts: list[list[str] | _Tool | ThinkingPart] = field(default_factory=list)
    _kinds: list[str] = field(default_factory=list)
    _thinking: list[str] = field(default_factory=list)
    _signature: str | None = None
    _tools: dict[int, _Tool] = field(default_factory=dict)

    def add(self, event: StreamEvent) -> None:
        if isinstance(event, Start):
            self.id, self.model = event.id, event.model
            if event.usage is not None:
                self.usage = event.usage
        elif isinstance(event, TextDelta):
            self._open("text").append(event.text)  # type: ignore[union-attr]
        elif isinstance(event, ThinkingDelta):
            self._open("thinking").append(event.text)  # type: ignore[union-attr]
        elif isinstance(event, SignatureDelta):
            self._open("thinking")
            self._signature = (self._signature or "") + event.signature
        elif isinstance(event, RedactedThinking):
            self._close_thinking()
            self._parts.append(ThinkingPart(redacted=event.data))
            self._kinds.append("redacted")
        elif isinstance(event, ToolCallStart):
            self._close_thinking()
            tool = _Tool(event.id, event.name, signature=event.signature)
            self._tools[event.index] = tool
            self._parts.append(tool)
            self._kinds.append("tool")
        elif isinstance(event, ToolArgsDelta):
            self._tools[event.index].args.append(event.fragment)
        elif isinstance(event, Finish):
            self.finish, self.stop_sequence = event.reason, event.stop_sequence
        elif isinstance(event, UsageUpdate):
            self.usage = event.usage
        elif isinstance(event, StreamError):
            self.error = event.error

    def _open(self, kind: str) -> list[str] | _Tool | ThinkingPart:
        if not self._kinds or self._kinds[-1] != kind:
            self._close_thinking()
            self._parts.append([])
            self._kinds.append(kind)
        return self._parts[-1]

    def _close_thinking(self) -> None:
        if self._kinds and self._kinds[-1] == "thinking":
            chunks = self._parts[-1]
            assert isinstance(chunks, list)
            self._parts[-1] = ThinkingPart(text="".join(chunks), signature=self._signature)
            self._kinds[-1] = "thinking-closed"
            self._signature = None

    def text(self) -> str:
        """All text output so far (for tokenizer-based metering)."""
        out: list[str] = []
        for kind, part in zip(self._kinds, self._parts, strict=True):
            if kind in ("text", "thinking") and isinstance(part, list):
                out.extend(part)
            elif isinstance(part, _Tool):
                out.append(part.name)
                out.extend(part.args)
            elif isinstance(part, ThinkingPart):
                out.append(part.text)
        return "".join(out)

    def response(self) -> ChatResponse:
        self._close_thinking()
        parts: list[OutputPart] = []
        for kind, part in zip(self._kinds, self._parts, strict=True):
            if isinstance(part, _Tool):
                parts.append(ToolCallPart(part.id, part.name, "".join(part.args), part.signature))
            elif isinstance(part, ThinkingPart):
                parts.append(part)
            elif kind == "text" and isinstance(part, list):
                parts.append(TextPart("".join(part)))
        return ChatResponse(
            id=self.id,
            model=self.model,
            parts=tuple(parts),
            finish_reason=self.finish or FinishReason.STOP,
            usage=self.usage or Usage(),
            stop_sequence=self.stop_sequence,
        )
