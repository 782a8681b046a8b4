"""Cohere chat v2 SSE (`stream: true`) -> canonical stream events.

Each event's JSON carries its `type` (the SSE `event:` line repeats it):
    message-start     -> Start(id)
    content-start     -> its initial text / thinking, if any
    content-delta     -> TextDelta (`delta.message.content.text`) or ThinkingDelta
                         (`...content.thinking`)
    tool-plan-delta   -> TextDelta (`delta.message.tool_plan`: the text before tool calls)
    tool-call-start   -> ToolCallStart (IR indexes 0, 1, 2... in order of appearance)
                         + its initial arguments, if any
    tool-call-delta   -> ToolArgsDelta (`delta.message.tool_calls.function.arguments`)
    message-end       -> Finish (`delta.finish_reason`) and UsageUpdate (`delta.usage`);
                         finish_reason ERROR -> StreamError with `delta.error`
    content-end, tool-call-end, citation-start/-end, debug: nothing.
A stream that ends without `message-end` ends with a StreamError.
"""

from typing import Any

from switchgate import jsonutil
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
from switchgate.core.response import FinishReason
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.cohere_response import finish_reason, stream_error, usage_from_cohere
from switchgate.wire.sse import SSEEvent, SSEParser


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


class CohereStreamDecoder:
    """Implements providers.base.StreamDecoder for one `/v2/chat` stream."""

    def __init__(self) -> None:
        self._parser = SSEParser()
        self._started = False
        self._done = False
        self._tools: dict[int, int] = {}  # Cohere tool-call index -> IR index

    def feed(self, data: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for event in self._parser.feed(data):
            self._event(event, out)
        return out

    def finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for event in self._parser.flush():
            self._event(event, out)
        if not self._done:
            self._done = True
            error = GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream stream ended unexpectedly")
            out.append(StreamError(error))
        return out

    def _event(self, event: SSEEvent, out: list[StreamEvent]) -> None:
        if self._done or event.data.strip() == "[DONE]":
            return
        try:
            data = jsonutil.loads(event.data)
        except jsonutil.JSONDecodeError:
            return
        if not isinstance(data, dict):
            return
        kind = data.get("type", event.event)
        if not self._started:
            self._started = True
            message_id = data.get("id") if kind == "message-start" else None
            out.append(Start(message_id if isinstance(message_id, str) else "", ""))
        if kind in ("content-start", "content-delta"):
            self._content(_get(data, "delta", "message", "content"), out)
        elif kind == "tool-plan-delta":
            plan = _get(data, "delta", "message", "tool_plan")
            if isinstance(plan, str) and plan:
                out.append(TextDelta(plan))
        elif kind == "tool-call-start":
            self._call_start(data, out)
        elif kind == "tool-call-delta":
            tool = self._tools.get(_int(data.get("index")))
            fragment = _get(data, "delta", "message", "tool_calls", "function", "arguments")
            if tool is not None and isinstance(fragment, str) and fragment:
                out.append(ToolArgsDelta(tool, fragment))
        elif kind == "message-end":
            self._end(data.get("delta"), out)

    def _content(self, content: Any, out: list[StreamEvent]) -> None:
        if not isinstance(content, dict):
            return
        text, thinking = content.get("text"), content.get("thinking")
        if isinstance(thinking, str) and thinking:
            out.append(ThinkingDelta(thinking))
        if isinstance(text, str) and text:
            out.append(TextDelta(text))

    def _call_start(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        call = _get(data, "delta", "message", "tool_calls")
        if not isinstance(call, dict):
            return
        index = len(self._tools)
        self._tools[_int(data.get("index"))] = index
        name = _get(call, "function", "name")
        call_id = call.get("id")
        out.append(
            ToolCallStart(
                index,
                call_id if isinstance(call_id, str) and call_id else f"call_{index}",
                name if isinstance(name, str) else "",
            )
        )
        arguments = _get(call, "function", "arguments")
        if isinstance(arguments, str) and arguments:
            out.append(ToolArgsDelta(index, arguments))

    def _end(self, delta: Any, out: list[StreamEvent]) -> None:
        self._done = True
        delta = delta if isinstance(delta, dict) else {}
        reason = finish_reason(delta.get("finish_reason"))
        usage = usage_from_cohere(delta.get("usage"))
        if reason is not FinishReason.ERROR:
            if self._tools and reason is FinishReason.STOP:
                reason = FinishReason.TOOL_CALLS
            out.append(Finish(reason))
        if usage is not None:
            out.append(UsageUpdate(usage))
        if reason is FinishReason.ERROR:
            out.append(StreamError(stream_error(delta.get("error"))))
