"""Anthropic named SSE events -> canonical stream events, and the passthrough usage meter."""

import re
from typing import Any, Final

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
from switchgate.core.response import FinishReason
from switchgate.core.usage import Usage, reported_count
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.meters import BlockMeter, usage_key_pattern
from switchgate.wire.sse import UNFINISHED, SSEEvent, SSEParser

FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "end_turn": FinishReason.STOP,
    "stop_sequence": FinishReason.STOP_SEQUENCE,
    "max_tokens": FinishReason.LENGTH,
    "model_context_window_exceeded": FinishReason.LENGTH,
    "tool_use": FinishReason.TOOL_CALLS,
    "refusal": FinishReason.CONTENT_FILTER,
    "pause_turn": FinishReason.PAUSE,
}
# error.type -> kind, for errors that arrive in-band (after a 200).
ERROR_TYPES: Final[dict[str, ErrorKind]] = {
    "invalid_request_error": ErrorKind.INVALID_REQUEST,
    "request_too_large": ErrorKind.INVALID_REQUEST,
    "rate_limit_error": ErrorKind.RATE_LIMITED,
    "overloaded_error": ErrorKind.UPSTREAM_OVERLOADED,
    "timeout_error": ErrorKind.UPSTREAM_TIMEOUT,
}
_USAGE_KEYS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


_SECRET_RES: Final = (
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"),
    re.compile(r"(?i)\b(bearer|x-api-key|api[_ -]?key)([\s:=\"']+)[^\s\"',;]+"),
    re.compile(r"https?://[^\s\"'<>()\[\]{}]*[^\s\"'<>()\[\]{}.,;:!?]"),
)


def scrub(message: str) -> str:
    """An upstream message with key-like strings and URLs removed (safe to show clients)."""
    message = _SECRET_RES[0].sub("[redacted]", message)
    message = _SECRET_RES[1].sub(lambda m: m.group(1) + m.group(2) + "[redacted]", message)
    return _SECRET_RES[2].sub("[url]", message)


def finish_reason(stop_reason: Any) -> FinishReason:
    if not isinstance(stop_reason, str):
        return FinishReason.STOP
    return FINISH_REASONS.get(stop_reason, FinishReason.STOP)


def merge_usage(into: dict[str, int], usage: Any) -> None:
    """Fold an A usage object into `into` (cumulative: later values replace earlier ones)."""
    if not isinstance(usage, dict):
        return
    for key in _USAGE_KEYS:
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            into[key] = reported_count(value, key)
    details = usage.get("output_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("thinking_tokens"), int):
        into["thinking_tokens"] = reported_count(details["thinking_tokens"], "thinking_tokens")


def to_usage(raw: dict[str, int]) -> Usage:
    """A's usage convention -> the IR's: the whole prompt includes cache reads and writes."""
    cache_write = raw.get("cache_creation_input_tokens", 0)
    cache_read = raw.get("cache_read_input_tokens", 0)
    return Usage(
        input_tokens=raw.get("input_tokens", 0) + cache_write + cache_read,
        output_tokens=raw.get("output_tokens", 0),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=raw.get("thinking_tokens", 0),
    )


def error_from_type(error: Any) -> GatewayError:
    """A GatewayError for an in-band `{"type": "error", "error": {...}}` event."""
    error = error if isinstance(error, dict) else {}
    error_type, message = error.get("type"), error.get("message")
    kind = ErrorKind.UPSTREAM_ERROR
    if isinstance(error_type, str):
        kind = ERROR_TYPES.get(error_type, ErrorKind.UPSTREAM_ERROR)
    text = scrub(message) if isinstance(message, str) and message else "no message"
    if kind is ErrorKind.UPSTREAM_ERROR:
        text = f"upstream error: {text}"
    return GatewayError(kind, text)


def _payload(event: SSEEvent) -> dict[str, Any] | None:
    try:
        data = jsonutil.loads(event.data)
    except jsonutil.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


class AnthropicStreamDecoder:
    """StreamDecoder for `POST /v1/messages` with `stream: true`."""

    def __init__(self) -> None:
        self._parser = SSEParser()
        self._usage: dict[str, int] = {}
        self._tools: dict[int, int] = {}  # A block index -> IR tool index
        self._started = False
        self._done = False  # message_stop or error seen

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
            error = GatewayError(ErrorKind.UPSTREAM_ERROR, UNFINISHED)  # no message_stop
            out.append(StreamError(error))
        return out

    def _event(self, event: SSEEvent, out: list[StreamEvent]) -> None:
        if self._done:
            return
        data = _payload(event)
        if data is None:
            return
        kind = data.get("type", event.event)
        if not self._started and kind in (
            "content_block_start",
            "content_block_delta",
            "message_delta",
        ):
            self._started = True
            out.append(Start("", ""))
        if kind == "message_start":
            message = data.get("message") if isinstance(data.get("message"), dict) else {}
            assert isinstance(message, dict)
            merge_usage(self._usage, message.get("usage"))
            self._started = True
            msg_id, model = message.get("id"), message.get("model")
            out.append(
                Start(
                    msg_id if isinstance(msg_id, str) else "",
                    model if isinstance(model, str) else "",
                    usage=to_usage(self._usage) if self._usage else None,
                )
            )
        elif kind == "content_block_start":
            self._block_start(data, out)
        elif kind == "content_block_delta":
            self._block_delta(data, out)
        elif kind == "message_delta":
            delta = data.get("delta") if isinstance(data.get("delta"), dict) else {}
            assert isinstance(delta, dict)
            sequence = delta.get("stop_sequence")
            if "stop_reason" in delta and delta["stop_reason"] is not None:
                reason = finish_reason(delta["stop_reason"])
                out.append(Finish(reason, sequence if isinstance(sequence, str) else None))
            merge_usage(self._usage, data.get("usage"))
            out.append(UsageUpdate(to_usage(self._usage)))
        elif kind == "message_stop":
            self._done = True
        elif kind == "error":
            self._done = True
            out.append(StreamError(error_from_type(data.get("error"))))

    def _block_start(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        block = data.get("content_block")
        if not isinstance(block, dict):
            return
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
            out.append(TextDelta(block["text"]))
        elif kind == "thinking":
            if isinstance(block.get("thinking"), str) and block["thinking"]:
                out.append(ThinkingDelta(block["thinking"]))
            if isinstance(block.get("signature"), str) and block["signature"]:
                out.append(SignatureDelta(block["signature"]))
        elif kind == "redacted_thinking" and isinstance(block.get("data"), str):
            out.append(RedactedThinking(block["data"]))
        elif kind == "tool_use":
            index = len(self._tools)
            self._tools[_int(data.get("index"))] = index
            call_id, name = block.get("id"), block.get("name")
            out.append(
                ToolCallStart(
                    index,
                    call_id if isinstance(call_id, str) else f"toolu_{index}",
                    name if isinstance(name, str) else "",
                )
            )
            if isinstance(block.get("input"), dict) and block["input"]:
                out.append(ToolArgsDelta(index, jsonutil.dumps_str(block["input"])))
        # Server tool blocks and their results have no IR form; they are skipped.

    def _block_delta(self, data: dict[str, Any], out: list[StreamEvent]) -> None:
        delta = data.get("delta")
        if not isinstance(delta, dict):
            return
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str) and delta["text"]:
            out.append(TextDelta(delta["text"]))
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            if delta["thinking"]:
                out.append(ThinkingDelta(delta["thinking"]))
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            out.append(SignatureDelta(delta["signature"]))
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            tool = self._tools.get(_int(data.get("index")))
            if tool is not None and delta["partial_json"]:
                out.append(ToolArgsDelta(tool, delta["partial_json"]))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


class AnthropicUsageMeter(BlockMeter):
    """Reads usage (and generated text) from a passed-through Anthropic stream: usage from
    `message_start` and `message_delta` as they come, the text lazily (providers.meters).
    Only `message_delta` carries the final output count; `message_start` says 1."""

    usage_pattern = usage_key_pattern("usage")

    def __init__(self) -> None:
        super().__init__()
        self._usage: dict[str, int] = {}
        self._seen = False
        self._final = False

    def usage(self) -> Usage | None:
        return to_usage(self._usage) if self._seen and self._usage else None

    def usage_final(self) -> bool:
        return self._final

    def output_text(self) -> str:
        return self._collected_text()

    def _take_usage(self, event: str | None, payload: dict[str, Any]) -> bool:
        kind = payload.get("type", event)
        if kind == "message_start" and isinstance(payload.get("message"), dict):
            merge_usage(self._usage, payload["message"].get("usage"))
        elif kind == "message_delta":
            merge_usage(self._usage, payload.get("usage"))
            self._final = True
        else:
            return False
        self._seen = True
        return True

    def _take_text(self, event: str | None, payload: dict[str, Any], out: list[str]) -> None:
        kind = payload.get("type", event)
        if kind == "content_block_start" and isinstance(payload.get("content_block"), dict):
            block = payload["content_block"]
            for key in ("text", "thinking", "name"):
                if isinstance(block.get(key), str):
                    out.append(block[key])
        elif kind == "content_block_delta" and isinstance(payload.get("delta"), dict):
            delta = payload["delta"]
            for key in ("text", "thinking", "partial_json"):
                if isinstance(delta.get(key), str):
                    out.append(delta[key])
