"""The passthrough usage meters as they were before the block-splitting ones (every event
parsed and decoded as it arrives): the reference `test_fast_meters.py` compares against."""

from typing import Any

from switchgate import jsonutil
from switchgate.core.usage import Usage
from switchgate.jsonutil import JSONDecodeError, loads
from switchgate.providers.anthropic_stream import merge_usage, to_usage
from switchgate.providers.gemini_stream import gemini_usage_to_core
from switchgate.providers.openai_media import TranscriptMeter, _duration, media_usage
from switchgate.providers.openai_response import usage_from_openai
from switchgate.wire.gemini_parts import get_field
from switchgate.wire.sse import SSEEvent

# ------------------------------------------------------------ the reference meters


class LineSSEParser:
    """The line-by-line parser `sse.SSEParser` was before it cut whole events out first."""

    __slots__ = ("_buffer", "_data", "_event")

    def __init__(self) -> None:
        self._buffer = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buffer = self._buffer + chunk if self._buffer else chunk
        events: list[SSEEvent] = []
        start = 0
        length = len(buffer)
        while start < length:
            nl = buffer.find(b"\n", start)
            cr = buffer.find(b"\r", start)
            if cr != -1 and (nl == -1 or cr < nl):
                if cr + 1 == length:  # a lone \r at the end may be half of \r\n
                    break
                end, nxt = cr, cr + 2 if buffer[cr + 1 : cr + 2] == b"\n" else cr + 1
            elif nl != -1:
                end, nxt = nl, nl + 1
            else:
                break
            self._line(buffer[start:end].decode("utf-8", "replace"), events)
            start = nxt
        self._buffer = buffer[start:]
        return events

    def flush(self) -> list[SSEEvent]:
        """End of input: dispatch a final event that lacked its blank line."""
        events: list[SSEEvent] = []
        if self._buffer:
            self._line(self._buffer.decode("utf-8", "replace").rstrip("\r"), events)
            self._buffer = b""
        self._line("", events)
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                events.append(SSEEvent(self._event, "\n".join(self._data)))
            self._event, self._data = None, []
            return
        if line[0] == ":":
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value


class RefOpenAIMeter:
    def __init__(self) -> None:
        self._sse = LineSSEParser()
        self._usage: Usage | None = None
        self._text: list[str] = []

    def feed(self, data: bytes) -> None:
        for sse in self._sse.feed(data):
            self._data(sse.data)

    def usage(self) -> Usage | None:
        return self._usage

    def output_text(self) -> str:
        return "".join(self._text)

    def _data(self, data: str) -> None:
        if data == "[DONE]":
            return
        try:
            chunk = loads(data)
        except JSONDecodeError:
            return
        if not isinstance(chunk, dict):
            return
        usage = usage_from_openai(chunk.get("usage"))
        if usage is not None:
            self._usage = usage
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if isinstance(delta, dict):
                self._delta(delta)

    def _delta(self, delta: dict[str, Any]) -> None:
        for key in ("reasoning_content", "content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str):
                self._text.append(text)
        calls = delta.get("tool_calls")
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                for key in ("name", "arguments"):
                    value = function.get(key)
                    if isinstance(value, str):
                        self._text.append(value)


def _payload(event: SSEEvent) -> dict[str, Any] | None:
    try:
        data = jsonutil.loads(event.data)
    except jsonutil.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


class RefAnthropicMeter:
    def __init__(self) -> None:
        self._parser = LineSSEParser()
        self._usage: dict[str, int] = {}
        self._seen = False
        self._text: list[str] = []

    def feed(self, data: bytes) -> None:
        for event in self._parser.feed(data):
            payload = _payload(event)
            if payload is None:
                continue
            kind = payload.get("type", event.event)
            if kind == "message_start" and isinstance(payload.get("message"), dict):
                self._seen = True
                merge_usage(self._usage, payload["message"].get("usage"))
            elif kind == "message_delta":
                self._seen = True
                merge_usage(self._usage, payload.get("usage"))
            elif kind == "content_block_start" and isinstance(payload.get("content_block"), dict):
                block = payload["content_block"]
                for key in ("text", "thinking", "name"):
                    if isinstance(block.get(key), str):
                        self._text.append(block[key])
            elif kind == "content_block_delta" and isinstance(payload.get("delta"), dict):
                delta = payload["delta"]
                for key in ("text", "thinking", "partial_json"):
                    if isinstance(delta.get(key), str):
                        self._text.append(delta[key])

    def usage(self) -> Usage | None:
        return to_usage(self._usage) if self._seen and self._usage else None

    def output_text(self) -> str:
        return "".join(self._text)


def _candidate(data: dict[str, Any]) -> dict[str, Any]:
    candidates = data.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    return first if isinstance(first, dict) else {}


class RefGeminiMeter:
    def __init__(self) -> None:
        self._parser = LineSSEParser()
        self._usage: Usage | None = None
        self._text: list[str] = []

    def feed(self, data: bytes) -> None:
        for event in self._parser.feed(data):
            try:
                chunk = jsonutil.loads(event.data)
            except jsonutil.JSONDecodeError:
                continue
            if not isinstance(chunk, dict):
                continue
            meta = get_field(chunk, "usageMetadata")
            if isinstance(meta, dict):
                self._usage = gemini_usage_to_core(meta)
            content = _candidate(chunk).get("content")
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                if isinstance(part, dict):
                    self._collect(part)

    def _collect(self, part: dict[str, Any]) -> None:
        if isinstance(part.get("text"), str):
            self._text.append(part["text"])
        call = get_field(part, "functionCall")
        if isinstance(call, dict):
            self._text.append(str(call.get("name") or ""))
            self._text.append(jsonutil.dumps_str(call.get("args") or {}))

    def usage(self) -> Usage | None:
        return self._usage

    def output_text(self) -> str:
        return "".join(self._text)


def _json(body: bytes) -> Any:
    try:
        return jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        return None


class RefStreamMeter:
    def __init__(self) -> None:
        self._sse = LineSSEParser()
        self.usage: Usage | None = None
        self.raw_usage: Any = None
        self._text: list[str] = []

    def feed(self, data: bytes) -> None:
        for event in self._sse.feed(data):
            self._data(event.data)

    def text(self) -> str:
        return "".join(self._text)

    def transcript(self) -> TranscriptMeter:
        raw = self.raw_usage if isinstance(self.raw_usage, dict) else {}
        seconds = _duration(raw.get("seconds")) if raw.get("type") == "duration" else None
        return TranscriptMeter(seconds, self.usage)

    def _data(self, data: str) -> None:
        if data == "[DONE]":
            return
        chunk = _json(data.encode())
        if not isinstance(chunk, dict):
            return
        raw = chunk.get("usage")
        if isinstance(raw, dict):
            self.raw_usage = raw
            if raw.get("type") != "duration":
                self.usage = media_usage(raw) or usage_from_openai(raw)
        delta = chunk.get("delta")
        if chunk.get("type") == "transcript.text.delta" and isinstance(delta, str):
            self._text.append(delta)
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and isinstance(choice.get("text"), str):
                self._text.append(choice["text"])
