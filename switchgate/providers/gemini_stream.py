"""Gemini adapter, inbound side: whole responses, SSE streams and usage (§4.3-§4.4; errors,
§4.5, are in gemini_errors.py).

Tool-call ids Gemini leaves out are synthesised as `call_` + 24 hex characters from the
responseId (or, without one, a hash of the body / first chunk) and the call's position
among the response's calls, so a streamed and a whole response get the same ids.
"""

import hashlib
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
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
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage, reported_count
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.gemini_errors import inband_error
from switchgate.providers.meters import BlockMeter, usage_key_pattern
from switchgate.wire.gemini_parts import get_field, part_to_core, synth_call_id
from switchgate.wire.sse import UNFINISHED, SSEParser

_FILTERED: Final = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"})


# ---------------------------------------------------------------- shared mapping


def gemini_finish(raw: str | None, has_calls: bool) -> FinishReason:
    """finishReason -> IR (§5.6): STOP with functionCall parts means tool calls."""
    if raw == "MAX_TOKENS":
        return FinishReason.LENGTH
    if raw is not None and (raw in _FILTERED or raw.startswith("IMAGE_")):
        return FinishReason.CONTENT_FILTER
    return FinishReason.TOOL_CALLS if has_calls else FinishReason.STOP


def _count(meta: dict[str, Any], name: str) -> int:
    value = get_field(meta, name)
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return reported_count(value, name)


def gemini_usage_to_core(meta: dict[str, Any]) -> Usage:
    thoughts = _count(meta, "thoughtsTokenCount")
    return Usage(
        input_tokens=_count(meta, "promptTokenCount") + _count(meta, "toolUsePromptTokenCount"),
        output_tokens=_count(meta, "candidatesTokenCount") + thoughts,
        cache_read_tokens=_count(meta, "cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


def _digest(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:24]


def _output_parts(raw_parts: Any, response_key: str, first_call: int) -> list[OutputPart]:
    """A candidate's parts -> IR output parts (parts the IR can't hold are dropped)."""
    out: list[OutputPart] = []
    calls = first_call
    for index, raw in enumerate(raw_parts if isinstance(raw_parts, list) else []):
        if not isinstance(raw, dict):
            continue
        try:
            converted = part_to_core(
                raw, f"parts[{index}]", True, synth_call_id(response_key, calls)
            )
        except GatewayError:
            continue  # a malformed upstream part: skip it rather than fail the response
        for part in converted:
            if isinstance(part, TextPart | ThinkingPart | ToolCallPart):
                out.append(part)
                if isinstance(part, ToolCallPart):
                    calls += 1
    return out


def _candidate(data: dict[str, Any]) -> dict[str, Any]:
    candidates = data.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    return first if isinstance(first, dict) else {}


def _blocked(data: dict[str, Any]) -> bool:
    feedback = get_field(data, "promptFeedback")
    return isinstance(feedback, dict) and bool(get_field(feedback, "blockReason"))


# ---------------------------------------------------------------- whole responses


def parse_gemini_response(body: bytes, request: ChatRequest) -> ChatResponse:
    try:
        data = jsonutil.loads(body)
    except jsonutil.JSONDecodeError as exc:
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned invalid JSON") from exc
    if not isinstance(data, dict):
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned an unexpected body")
    if "error" in data:
        raise inband_error(data["error"])
    response_id = get_field(data, "responseId")
    key = response_id if isinstance(response_id, str) and response_id else _digest(body)
    candidate = _candidate(data)
    content = candidate.get("content")
    parts = _output_parts(content.get("parts") if isinstance(content, dict) else None, key, 0)
    has_calls = any(isinstance(p, ToolCallPart) for p in parts)
    if not candidate and _blocked(data):
        finish = FinishReason.CONTENT_FILTER
    else:
        finish = gemini_finish(get_field(candidate, "finishReason"), has_calls)
    meta = get_field(data, "usageMetadata")
    model = get_field(data, "modelVersion")
    return ChatResponse(
        id=response_id if isinstance(response_id, str) and response_id else f"gemini-{key}",
        model=model if isinstance(model, str) and model else request.model,
        parts=tuple(parts),
        finish_reason=finish,
        usage=gemini_usage_to_core(meta) if isinstance(meta, dict) else Usage(),
    )


def gemini_usage_from_body(body: bytes) -> Usage | None:
    """usageMetadata of a response body (an object, or the last one in an array)."""
    try:
        data = jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        return None
    items = data if isinstance(data, list) else [data]
    for item in reversed(items):
        meta = get_field(item, "usageMetadata") if isinstance(item, dict) else None
        if isinstance(meta, dict):
            return gemini_usage_to_core(meta)
    return None


# ---------------------------------------------------------------- streams


class GeminiStreamDecoder:
    """`?alt=sse` chunks (each a GenerateContentResponse with only new parts) -> events.

    Start on the first chunk (with its prompt usage), deltas per part, each functionCall as
    ToolCallStart + one ToolArgsDelta; Finish (TOOL_CALLS if any call was seen) and the last
    usageMetadata as UsageUpdate when the stream ends; `{"error": ...}` -> StreamError.
    """

    def __init__(self, request: ChatRequest) -> None:
        self._parser = SSEParser()
        self._model = request.model
        self._key = ""
        self._calls = 0
        self._finish: str | None = None
        self._blocked = False
        self._usage: Usage | None = None
        self._started = False
        self._done = False

    def feed(self, data: bytes) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for event in self._parser.feed(data):
            self._chunk(event.data, events)
        return events

    def finish(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for event in self._parser.flush():
            self._chunk(event.data, events)
        if self._done:
            return events
        self._done = True
        if not self._started:
            error = GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream stream ended without data")
            return [*events, StreamError(error)]
        if self._blocked and self._finish is None:
            events.append(Finish(FinishReason.CONTENT_FILTER))
        elif self._finish is None:  # no candidate finished: the upstream stopped mid-answer
            if self._usage is not None:
                events.append(UsageUpdate(self._usage))
            return [*events, StreamError(GatewayError(ErrorKind.UPSTREAM_ERROR, UNFINISHED))]
        else:
            events.append(Finish(gemini_finish(self._finish, self._calls > 0)))
        if self._usage is not None:
            events.append(UsageUpdate(self._usage))
        return events

    def _chunk(self, text: str, events: list[StreamEvent]) -> None:
        if self._done or not text.strip():
            return
        try:
            data = jsonutil.loads(text)
        except jsonutil.JSONDecodeError:
            data = {"error": {"message": "upstream sent malformed stream data"}}
        if not isinstance(data, dict):
            return
        if "error" in data:
            self._done = True
            events.append(StreamError(inband_error(data["error"])))
            return
        meta = get_field(data, "usageMetadata")
        usage = gemini_usage_to_core(meta) if isinstance(meta, dict) else None
        if not self._started:
            self._started = True
            response_id = get_field(data, "responseId")
            self._key = (
                response_id if isinstance(response_id, str) and response_id else _digest(text)
            )
            model = get_field(data, "modelVersion")
            prompt = (
                Usage(usage.input_tokens, cache_read_tokens=usage.cache_read_tokens)
                if usage
                else None
            )
            rid = (
                response_id
                if isinstance(response_id, str) and response_id
                else f"gemini-{self._key}"
            )
            events.append(
                Start(rid, model if isinstance(model, str) and model else self._model, prompt)
            )
        if usage is not None:
            self._usage = usage
        self._blocked = self._blocked or _blocked(data)
        candidate = _candidate(data)
        content = candidate.get("content")
        raw_parts = content.get("parts") if isinstance(content, dict) else None
        for part in _output_parts(raw_parts, self._key, self._calls):
            if isinstance(part, TextPart):
                events.append(TextDelta(part.text))
            elif isinstance(part, ThinkingPart):
                if part.text:
                    events.append(ThinkingDelta(part.text))
                if part.signature:
                    events.append(SignatureDelta(part.signature))
            else:
                events.append(ToolCallStart(self._calls, part.id, part.name, part.signature))
                events.append(ToolArgsDelta(self._calls, part.arguments))
                self._calls += 1
        finish = get_field(candidate, "finishReason")
        if isinstance(finish, str) and finish:
            self._finish = finish


class GeminiUsageMeter(BlockMeter):
    """Usage from a passed-through `?alt=sse` stream: the last usageMetadata wins (found
    lazily, as the text is: see providers.meters)."""

    usage_pattern = usage_key_pattern("usageMetadata", "usage_metadata")
    last_usage_wins = True

    def __init__(self) -> None:
        super().__init__()
        self._usage: Usage | None = None

    def _take_usage(self, event: str | None, payload: dict[str, Any]) -> bool:
        meta = get_field(payload, "usageMetadata")
        if not isinstance(meta, dict):
            return False
        self._usage = gemini_usage_to_core(meta)
        return True

    def _take_text(self, event: str | None, payload: dict[str, Any], out: list[str]) -> None:
        content = _candidate(payload).get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            call = get_field(part, "functionCall")
            if isinstance(call, dict):
                out.append(str(call.get("name") or ""))
                out.append(jsonutil.dumps_str(call.get("args") or {}))

    def usage(self) -> Usage | None:
        self._resolve_usage()
        return self._usage

    def output_text(self) -> str:
        return self._collected_text()


class GeminiSseToArray:
    """Reframes an upstream `?alt=sse` stream as the JSON-array stream a client gets from
    streamGenerateContent without `alt=sse` (`[`, `,\\r\\n` between elements, `]`)."""

    def __init__(self) -> None:
        self._parser = SSEParser()
        self._sent = 0

    def feed(self, data: bytes) -> bytes:
        return b"".join(self._element(event.data) for event in self._parser.feed(data))

    def close(self) -> bytes:
        tail = b"".join(self._element(event.data) for event in self._parser.flush())
        return tail + (b"]" if self._sent else b"[]")

    def _element(self, data: str) -> bytes:
        if not data.strip():
            return b""
        prefix = b",\r\n" if self._sent else b"["
        self._sent += 1
        return prefix + data.encode()
