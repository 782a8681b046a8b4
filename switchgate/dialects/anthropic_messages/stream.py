"""Canonical stream events -> Anthropic named SSE events (protocols §3.4, §5.8).

`message_start` always comes first and `message_stop` last; blocks never interleave
(a change of kind closes the open block). Usage may arrive after Finish (OpenAI sends
its usage chunk after `finish_reason`), so Finish is held until usage arrives or the
stream closes, and only then is `message_delta` sent.
"""

from typing import Any, Final, Literal

from switchgate import jsonutil
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
from switchgate.core.request import ChatRequest
from switchgate.core.response import FinishReason
from switchgate.core.usage import Usage
from switchgate.dialects.anthropic_messages.encode import (
    message_id,
    stop_reason,
    stop_sequence,
    usage_body,
)
from switchgate.dialects.anthropic_messages.errors import render_anthropic_stream_error
from switchgate.wire.sse import format_event

BlockKind = Literal["text", "thinking", "tool"]
PING: Final = format_event(b'{"type":"ping"}', "ping")
# Stands for the text in an event encoded once as a frame (see _text_delta).
_SLOT: Final = "\x00switchgate-slot\x00"
_SLOT_JSON: Final = jsonutil.dumps(_SLOT)


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return format_event(jsonutil.dumps({"type": name, **payload}), name)


class AnthropicStreamEncoder:
    """StreamEncoder for Anthropic clients; one per response."""

    def __init__(self, request: ChatRequest) -> None:
        self._model = request.model
        self._started = False
        self._ended = False  # message_stop or error sent
        self._open: BlockKind | None = None
        self._open_tool: int | None = None
        self._next_index = 0
        self._saw_tool = False
        self._said = False  # a text or tool_use block was started
        self._finish: Finish | None = None
        self._delta_sent = False
        self._usage: Usage | None = None
        self._frames: dict[tuple[int, str], tuple[bytes, bytes]] = {}  # see _text_delta

    def ping(self) -> bytes:
        """A keep-alive event the relay sends while waiting for the upstream."""
        return PING

    def encode(self, event: StreamEvent) -> bytes:  # noqa: C901 - one branch per event kind
        if self._ended:
            return b""
        if isinstance(event, StreamError):
            self._ended = True
            return render_anthropic_stream_error(event.error)
        out = self._start(event if isinstance(event, Start) else None)
        if isinstance(event, TextDelta):
            if event.text:
                self._said = True
                out += self._block("text", {"type": "text", "text": ""})
                out += self._text_delta("text_delta", "text", event.text)
        elif isinstance(event, ThinkingDelta):
            if event.text:
                out += self._thinking_block()
                out += self._text_delta("thinking_delta", "thinking", event.text)
        elif isinstance(event, SignatureDelta):
            if self._open != "thinking" and self._said:
                return out  # dropped: see encode.late_signature
            out += self._thinking_block()
            out += self._delta({"type": "signature_delta", "signature": event.signature})
        elif isinstance(event, RedactedThinking):
            out += self._close_block()
            redacted = {"type": "redacted_thinking", "data": event.data}
            out += _event(
                "content_block_start", {"index": self._next_index, "content_block": redacted}
            )
            out += _event("content_block_stop", {"index": self._next_index})
            self._next_index += 1
        elif isinstance(event, ToolCallStart):
            out += self._close_block()
            block: dict[str, Any] = {"type": "tool_use", "id": event.id, "name": event.name}
            block["input"] = {}
            out += self._block("tool", block)
            self._open_tool, self._saw_tool, self._said = event.index, True, True
        elif isinstance(event, ToolArgsDelta):
            # The IR never interleaves calls; a fragment for a closed call can't be sent.
            if event.fragment and self._open == "tool" and event.index == self._open_tool:
                out += self._delta({"type": "input_json_delta", "partial_json": event.fragment})
        elif isinstance(event, Finish):
            out += self._close_block()
            self._finish = event
        elif isinstance(event, UsageUpdate):
            self._usage = event.usage
            if self._finish is not None:
                out += self._message_delta()
        return out

    def close(self) -> bytes:
        if self._ended:
            return b""
        out = self._start(None) + self._close_block() + self._message_delta()
        self._ended = True
        return out + _event("message_stop", {})

    def _start(self, start: Start | None) -> bytes:
        if self._started:
            return b""
        self._started = True
        if start is not None and start.usage is not None:
            self._usage = start.usage
        usage = usage_body(self._usage or Usage())
        message: dict[str, Any] = {
            "id": message_id(start.id if start is not None else ""),
            "type": "message",
            "role": "assistant",
            "model": (start.model if start is not None else "") or self._model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        return _event("message_start", {"message": message})

    def _thinking_block(self) -> bytes:
        return self._block("thinking", {"type": "thinking", "thinking": "", "signature": ""})

    def _block(self, kind: BlockKind, content_block: dict[str, Any]) -> bytes:
        if self._open == kind:
            return b""
        out = self._close_block()
        self._open = kind
        return out + _event(
            "content_block_start", {"index": self._next_index, "content_block": content_block}
        )

    def _delta(self, delta: dict[str, Any]) -> bytes:
        return _event("content_block_delta", {"index": self._next_index, "delta": delta})

    def _text_delta(self, kind: str, field: str, text: str) -> bytes:
        """`_delta({"type": kind, field: text})`, byte for byte, from a frame encoded once
        per block: only the text is encoded per event."""
        key = (self._next_index, kind)
        frame = self._frames.get(key)
        if frame is None:
            encoded = self._delta({"type": kind, field: _SLOT})
            at = encoded.index(_SLOT_JSON)
            frame = self._frames[key] = (encoded[:at], encoded[at + len(_SLOT_JSON) :])
        return frame[0] + jsonutil.dumps(text) + frame[1]

    def _close_block(self) -> bytes:
        if self._open is None:
            return b""
        self._open, self._open_tool = None, None
        index, self._next_index = self._next_index, self._next_index + 1
        return _event("content_block_stop", {"index": index})

    def _message_delta(self) -> bytes:
        if self._delta_sent:
            return b""
        self._delta_sent = True
        finish = self._finish or Finish(FinishReason.STOP)
        delta = {
            "stop_reason": stop_reason(finish.reason, self._saw_tool),
            "stop_sequence": stop_sequence(finish.reason, finish.stop_sequence),
        }
        usage = usage_body(self._usage) if self._usage is not None else {"output_tokens": 0}
        return _event("message_delta", {"delta": delta, "usage": usage})
