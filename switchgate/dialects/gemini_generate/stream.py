"""Canonical stream events -> Gemini streamGenerateContent output (protocols §4.4, §5.8).

Two framings of the same chunks (each a full GenerateContentResponse with only new parts):
  sse=True   `data: {chunk}\\n\\n` per chunk (`?alt=sse`, what google-genai and Gemini CLI use);
  sse=False  one JSON array delivered progressively: `[{chunk}`, `,\\r\\n{chunk}`..., `]`.

Tool calls are buffered until complete (the next ToolCallStart, another content event, Finish
or close) and sent as one functionCall part with parsed args. Finish is held back until usage
is known: the final chunk carries finishReason + usageMetadata and goes out on the first
UsageUpdate after Finish, or at close(). A later UsageUpdate adds a usage-only chunk.
"""

from dataclasses import dataclass, field
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import ToolCallPart
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
from switchgate.dialects.gemini_generate.encode import (
    FINISH_TO_GEMINI,
    gemini_usage,
    wants_thoughts,
)
from switchgate.dialects.gemini_generate.errors import gemini_error_object
from switchgate.wire.gemini_parts import function_call_part, gemini_signature

# Stands for the text in a chunk encoded once as a frame (see _text_chunk).
_SLOT: Final = "\x00switchgate-slot\x00"
_SLOT_JSON: Final = jsonutil.dumps(_SLOT)


@dataclass
class _PendingCall:
    index: int
    id: str
    name: str
    signature: str | None
    fragments: list[str] = field(default_factory=list)


class GeminiStreamEncoder:
    """Implements dialects.base.StreamEncoder for Gemini clients."""

    def __init__(self, request: ChatRequest, sse: bool = True) -> None:
        self._sse = sse
        self._model = request.model
        self._thoughts = wants_thoughts(request)
        self._id = ""
        self._sent = 0  # chunks written (array mode needs to know the first)
        self._call: _PendingCall | None = None
        self._signature: list[str] = []
        self._finish: FinishReason | None = None
        self._finish_sent = False
        self._usage: Usage | None = None
        self._done = False
        self._frames: dict[tuple[bool, str], tuple[bytes, bytes]] = {}  # see _text_chunk

    def encode(self, event: StreamEvent) -> bytes:  # noqa: C901 - one branch per event kind
        if self._done:
            return b""
        out: list[bytes] = []
        if not isinstance(event, SignatureDelta | Start | UsageUpdate):
            out.append(self._flush_signature())
        if isinstance(event, Start):
            self._id = event.id
            if event.usage is not None:
                self._usage = event.usage
        elif isinstance(event, TextDelta):
            out.append(self._flush_call())
            if event.text:
                out.append(self._text_chunk(event.text, thought=False))
        elif isinstance(event, ThinkingDelta):
            out.append(self._flush_call())
            if event.text and self._thoughts:
                out.append(self._text_chunk(event.text, thought=True))
        elif isinstance(event, SignatureDelta):
            out.append(self._flush_call())
            self._signature.append(event.signature)
        elif isinstance(event, RedactedThinking):
            out.append(self._flush_call())
        elif isinstance(event, ToolCallStart):
            out.append(self._flush_call())
            self._call = _PendingCall(event.index, event.id, event.name, event.signature)
        elif isinstance(event, ToolArgsDelta):
            if self._call is not None and self._call.index == event.index:
                self._call.fragments.append(event.fragment)
        elif isinstance(event, Finish):
            out.append(self._flush_call())
            self._finish = event.reason
        elif isinstance(event, UsageUpdate):
            self._usage = event.usage
            if self._finish_sent:
                out.append(self._frame(self._envelope(None, usage=event.usage)))
            elif self._finish is not None:
                out.append(self._final())
        elif isinstance(event, StreamError):
            self._done, self._call = True, None
            out.append(self._frame(gemini_error_object(event.error)))
        return b"".join(out)

    def close(self) -> bytes:
        out: list[bytes] = []
        if not self._done:
            out += [self._flush_signature(), self._flush_call()]
            if self._finish is not None and not self._finish_sent:
                out.append(self._final())
            self._done = True
        if not self._sse:
            out.append(b"]" if self._sent else b"[]")
        return b"".join(out)

    # -------------------------------------------------------------- helpers

    def _flush_call(self) -> bytes:
        call, self._call = self._call, None
        if call is None:
            return b""
        part = ToolCallPart(call.id, call.name, "".join(call.fragments), call.signature)
        return self._chunk([function_call_part(part)])

    def _flush_signature(self) -> bytes:
        signature = gemini_signature("".join(self._signature)) if self._signature else None
        self._signature = []
        return self._chunk([{"text": "", "thoughtSignature": signature}]) if signature else b""

    def _final(self) -> bytes:
        self._finish_sent = True
        reason = FINISH_TO_GEMINI.get(self._finish or FinishReason.STOP, "STOP")
        return self._frame(self._envelope([], finish=reason, usage=self._usage))

    def _chunk(self, parts: list[dict[str, Any]]) -> bytes:
        return self._frame(self._envelope(parts))

    def _text_chunk(self, text: str, *, thought: bool) -> bytes:
        """`_chunk([{"text": text, ...}])`, byte for byte; on SSE, from a frame encoded once
        per stream (only the text is encoded per event)."""
        part: dict[str, Any] = {"text": text, "thought": True} if thought else {"text": text}
        if not self._sse:  # the JSON-array framing's separator changes after the first
            return self._chunk([part])
        key = (thought, self._id)
        frame = self._frames.get(key)
        if frame is None:
            encoded = self._chunk([{**part, "text": _SLOT}])
            at = encoded.index(_SLOT_JSON)
            frame = self._frames[key] = (encoded[:at], encoded[at + len(_SLOT_JSON) :])
        return frame[0] + jsonutil.dumps(text) + frame[1]

    def _envelope(
        self,
        parts: list[dict[str, Any]] | None,
        finish: str | None = None,
        usage: Usage | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {}
        if parts is not None:
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
            if finish is not None:
                candidate["finishReason"] = finish
            candidate["index"] = 0
            body["candidates"] = [candidate]
        if usage is not None:
            body["usageMetadata"] = gemini_usage(usage)
        body["modelVersion"] = self._model
        if self._id:
            body["responseId"] = self._id
        return body

    def _frame(self, obj: dict[str, Any]) -> bytes:
        data = jsonutil.dumps(obj)
        if self._sse:
            return b"data: " + data + b"\n\n"
        prefix = b",\r\n" if self._sent else b"["
        self._sent += 1
        return prefix + data
