"""OpenAI Chat Completions SSE -> canonical stream events, and a cheap usage meter.

Decoder rules (protocols §1.5):
- the first chunk (whatever it holds) -> Start; only choice index 0 is read;
- `reasoning_content` -> ThinkingDelta, `content` / `refusal` -> TextDelta (empty skipped);
- a tool call's upstream `index` maps to IR indexes 0, 1, 2... in order of first sight;
  ToolCallStart goes out once its name is known (its id is synthesised if missing);
  argument fragments seen before the name are held back until then;
- `finish_reason` -> Finish (once), except a failed generation's (`error`,
  `insufficient_system_resource`) -> StreamError and nothing after it; a non-null
  `usage` -> UsageUpdate when it changed;
- `data: {"error": ...}` -> StreamError and nothing after it; `[DONE]` ends the stream;
- finish(): Finish(STOP, or TOOL_CALLS after tool calls) if [DONE] came without a
  finish_reason; a StreamError if no chunk came at all, or if neither came (the upstream
  closed the stream mid-answer).

`normalize`, when given, rewrites each parsed chunk into the O shape above first: the
hook OpenAI-compatible presets use for their dialect of it (providers/openai_quirks.py).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from switchgate.core.events import (
    Finish,
    Start,
    StreamError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolArgsDelta,
    ToolCallStart,
    UsageUpdate,
)
from switchgate.core.usage import Usage
from switchgate.errors import ErrorKind, GatewayError
from switchgate.jsonutil import JSONDecodeError, loads
from switchgate.providers.meters import BlockMeter, usage_key_pattern
from switchgate.providers.openai_response import (
    error_from_payload,
    failed_finish,
    finish_from_openai,
    new_call_id,
    usage_from_openai,
)
from switchgate.wire.sse import UNFINISHED, SSEParser

ChunkHook = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class _Call:
    index: int  # the IR index
    id: str | None = None
    name: str | None = None
    started: bool = False
    held: list[str] = field(default_factory=list)


class OpenAIStreamDecoder:
    """Implements providers.base.StreamDecoder for one upstream stream."""

    def __init__(self, normalize: ChunkHook | None = None) -> None:
        self._normalize = normalize
        self._sse = SSEParser()
        self._started = False
        self._finished = False
        self._ended = False  # [DONE] or an error
        self._failed = False
        self._last_key = 0
        self._calls: dict[int, _Call] = {}
        self._usage: Usage | None = None

    def feed(self, data: bytes) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for sse in self._sse.feed(data):
            self._event(sse.data, events)
        return events

    def finish(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for sse in self._sse.flush():
            self._event(sse.data, events)
        if self._failed:
            return events
        if not self._started:
            error = GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream stream ended without data")
            self._failed = True
            return [*events, StreamError(error)]
        if not self._finished and not self._ended:
            # neither a finish_reason nor [DONE]: the upstream stopped mid-answer
            error = GatewayError(ErrorKind.UPSTREAM_ERROR, UNFINISHED)
            self._failed = True
            return [*events, StreamError(error)]
        if not self._finished:
            self._flush_calls(events)
            self._finished = True
            events.append(Finish(finish_from_openai(None, bool(self._calls))))
        return events

    def _event(self, data: str, events: list[StreamEvent]) -> None:
        if self._ended or not data.strip():
            return
        if data == "[DONE]":
            self._ended = True
            return
        try:
            chunk = loads(data)
        except JSONDecodeError:
            self._fail(GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream sent invalid JSON"), events)
            return
        if not isinstance(chunk, dict):
            return
        if self._normalize is not None:
            chunk = self._normalize(chunk)
        if chunk.get("error") is not None:
            self._fail(error_from_payload(chunk), events)
            return
        if not self._started:
            self._started = True
            events.append(Start(str(chunk.get("id") or ""), str(chunk.get("model") or "")))
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                self._choice(choice, events)
        if self._failed:
            return
        usage = usage_from_openai(chunk.get("usage"))
        if usage is not None and usage != self._usage:
            self._usage = usage
            events.append(UsageUpdate(usage))

    def _fail(self, error: GatewayError, events: list[StreamEvent]) -> None:
        self._ended = self._failed = True
        events.append(StreamError(error))

    def _choice(self, choice: dict[str, Any], events: list[StreamEvent]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict) and not self._finished:
            reasoning = delta.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                events.append(ThinkingDelta(reasoning))
            for key in ("content", "refusal"):
                text = delta.get(key)
                if isinstance(text, str) and text:
                    events.append(TextDelta(text))
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                for position, call in enumerate(calls):
                    if isinstance(call, dict):
                        self._tool_delta(call, position, events)
            legacy = delta.get("function_call")
            if isinstance(legacy, dict):
                self._tool_delta({"index": 0, "function": legacy}, 0, events)
        reason = choice.get("finish_reason")
        failed = failed_finish(reason)
        if failed is not None and not self._finished:
            self._fail(failed, events)
            return
        if reason is not None and not self._finished:
            self._flush_calls(events)
            self._finished = True
            events.append(Finish(finish_from_openai(reason, bool(self._calls))))

    def _tool_delta(self, raw: dict[str, Any], position: int, events: list[StreamEvent]) -> None:
        key = raw.get("index")
        call_id = raw.get("id") if isinstance(raw.get("id"), str) else None
        if not isinstance(key, int):  # some servers omit it: a new id means a new call
            if call_id is None:
                key = self._last_key if self._calls else position
            else:
                same = [k for k, c in self._calls.items() if c.id == call_id]
                key = same[0] if same else -1 - len(self._calls)
        self._last_key = key
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = _Call(len(self._calls))
        function = raw.get("function")
        function = function if isinstance(function, dict) else {}
        if call_id and call.id is None:
            call.id = call_id
        name = function.get("name")
        if isinstance(name, str) and name and call.name is None:
            call.name = name
        if not call.started and call.name is not None:
            self._start_call(call, events)
        fragment = function.get("arguments")
        if isinstance(fragment, str) and fragment:
            if call.started:
                events.append(ToolArgsDelta(call.index, fragment))
            else:
                call.held.append(fragment)

    def _start_call(self, call: _Call, events: list[StreamEvent]) -> None:
        call.started = True
        call.id = call.id or new_call_id()
        events.append(ToolCallStart(call.index, call.id, call.name or ""))
        if call.held:
            events.append(ToolArgsDelta(call.index, "".join(call.held)))
            call.held = []

    def _flush_calls(self, events: list[StreamEvent]) -> None:
        for call in self._calls.values():
            if not call.started:
                self._start_call(call, events)


class OpenAIUsageMeter(BlockMeter):
    """Implements providers.base.UsageMeter over a passed-through O stream: the last
    non-null `usage` wins; the text (reasoning, content, refusal, tool names and
    arguments) is read lazily, see providers.meters."""

    usage_pattern = usage_key_pattern("usage")
    last_usage_wins = True

    def __init__(self) -> None:
        super().__init__()
        self._usage: Usage | None = None

    def usage(self) -> Usage | None:
        self._resolve_usage()
        return self._usage  # O streams end with a blank line: nothing is left to flush

    def output_text(self) -> str:
        return self._collected_text()

    def _take_usage(self, event: str | None, payload: dict[str, Any]) -> bool:
        usage = usage_from_openai(payload.get("usage"))
        if usage is None:
            return False
        self._usage = usage
        return True

    def _take_text(self, event: str | None, payload: dict[str, Any], out: list[str]) -> None:
        choices = payload.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if isinstance(delta, dict):
                _delta_text(delta, out)


def _delta_text(delta: dict[str, Any], out: list[str]) -> None:
    for key in ("reasoning_content", "content", "refusal"):
        text = delta.get(key)
        if isinstance(text, str):
            out.append(text)
    calls = delta.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            for key in ("name", "arguments"):
                value = function.get(key)
                if isinstance(value, str):
                    out.append(value)
