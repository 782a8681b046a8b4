"""Canonical stream events -> OpenAI `chat.completion.chunk` SSE (protocols §1.5).

One chunk per event, `data: {chunk}\\n\\n`:
- the first chunk's delta is `{"role": "assistant", "content": ""}` (role sent once);
- text -> `content`, thinking -> `reasoning_content`, signatures -> `reasoning_signature`
  (the extension chosen in decode.py); redacted thinking is dropped;
- a tool call's id, type and name are sent once, at index = ToolCallStart.index;
- Finish -> a chunk with `{}` delta and the mapped finish_reason;
- usage: only when the client asked (`stream_options.include_usage`), every chunk then
  carries `"usage": null` and `close()` sends one `choices: []` chunk with the last usage;
- StreamError -> `data: {"error": {...}}`; later events are ignored; close() -> `[DONE]`.
"""

import time
from typing import Any, Final

from switchgate.core.events import (
    Finish,
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
from switchgate.dialects.openai_chat.encode import (
    completion_id,
    finish_reason_to_openai,
    usage_to_openai,
)
from switchgate.dialects.openai_chat.errors import render_openai_stream_error
from switchgate.jsonutil import dumps
from switchgate.wire.sse import format_event

DONE: Final = b"data: [DONE]\n\n"
# Stands for the text in a chunk encoded once as a frame (no real text holds NULs).
_SLOT: Final = "\x00switchgate-slot\x00"
_SLOT_JSON: Final = dumps(_SLOT)


def wants_usage(request: ChatRequest) -> bool:
    options = request.extras.get("openai", {}).get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


class OpenAIChatStreamEncoder:
    """Implements dialects.base.StreamEncoder. `created` pins the timestamp (tests)."""

    def __init__(self, request: ChatRequest, *, created: int | None = None) -> None:
        self._model = request.model
        self._include_usage = wants_usage(request)
        self._created = created if created is not None else int(time.time())
        self._id = ""
        self._started = False
        self._finished = False
        self._failed = False
        self._tool_calls = False
        self._usage: Usage | None = None
        self._frames: dict[str, tuple[bytes, bytes]] = {}  # see _text_chunk

    def encode(self, event: StreamEvent) -> bytes:  # noqa: C901 - one branch per event kind
        if self._failed:
            return b""
        if isinstance(event, StreamError):
            self._failed = True
            return render_openai_stream_error(event.error)
        if isinstance(event, UsageUpdate):
            self._usage = event.usage
            return b""
        if isinstance(event, Start):
            if not self._started:  # ids never change mid-stream
                self._id, self._model = completion_id(event.id), event.model or self._model
            if event.usage is not None:
                self._usage = event.usage
            return self._start()
        head = self._start()
        if self._finished:
            return head
        delta: dict[str, Any]
        if isinstance(event, TextDelta):
            delta = {"content": event.text}
        elif isinstance(event, ThinkingDelta):
            delta = {"reasoning_content": event.text}
        elif isinstance(event, SignatureDelta):
            delta = {"reasoning_signature": event.signature}
        elif isinstance(event, ToolCallStart):
            self._tool_calls = True
            call = {"index": event.index, "id": event.id, "type": "function"}
            delta = {"tool_calls": [{**call, "function": {"name": event.name, "arguments": ""}}]}
        elif isinstance(event, ToolArgsDelta):
            if not event.fragment:
                return head
            args = {"arguments": event.fragment}
            delta = {"tool_calls": [{"index": event.index, "function": args}]}
        elif isinstance(event, Finish):
            return head + self._finish(event.reason)
        else:  # RedactedThinking: no O form
            return head
        if delta.get("content", delta.get("reasoning_content")) == "":
            return head
        if len(delta) == 1 and isinstance(event, TextDelta | ThinkingDelta):
            return head + self._text_chunk(next(iter(delta)), event.text)
        return head + self._chunk(delta)

    def _text_chunk(self, key: str, text: str) -> bytes:
        """`_chunk({key: text})`, byte for byte, from a frame encoded once per stream:
        only the text is encoded per event (most events of a stream are text)."""
        frame = self._frames.get(key)
        if frame is None:
            encoded = self._chunk({key: _SLOT})
            at = encoded.index(_SLOT_JSON)
            frame = self._frames[key] = (encoded[:at], encoded[at + len(_SLOT_JSON) :])
        return frame[0] + dumps(text) + frame[1]

    def close(self) -> bytes:
        if self._failed:
            return DONE
        out = self._start()
        if not self._finished:
            out += self._finish(FinishReason.STOP)
        if self._include_usage:
            usage = usage_to_openai(self._usage or Usage())
            out += format_event(dumps({**self._envelope(), "choices": [], "usage": usage}))
        return out + DONE

    def _start(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        if not self._id:
            self._id = completion_id("")
        return self._chunk({"role": "assistant", "content": ""})

    def _finish(self, reason: FinishReason) -> bytes:
        self._finished = True
        return self._chunk({}, finish_reason_to_openai(reason, self._tool_calls))

    def _envelope(self) -> dict[str, Any]:
        return {
            "id": self._id,
            "object": "chat.completion.chunk",
            "created": self._created,
            "model": self._model,
            "system_fingerprint": None,
        }

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        chunk = self._envelope()
        chunk["choices"] = [
            {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        ]
        if self._include_usage:
            chunk["usage"] = None
        return format_event(dumps(chunk))
