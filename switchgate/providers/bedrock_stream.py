"""ConverseStream (`application/vnd.amazon.eventstream`) -> canonical stream events.

The framing (prelude, headers, payload, CRC32 checksums) is decoded by botocore's
event-stream parser (`botocore.eventstream.EventStreamBuffer`), imported when the first
stream is decoded. Each message has `:message-type` `event` (`:event-type` names it),
`exception` (`:exception-type`, payload `{"message": ...}`) or `error` (`:error-code`,
`:error-message`); event payloads are JSON and may carry a padding field `p`.

    messageStart        -> Start
    contentBlockStart   -> ToolCallStart (only tool-use blocks are announced)
    contentBlockDelta   -> TextDelta / ToolArgsDelta / ThinkingDelta / SignatureDelta /
                           RedactedThinking
    messageStop         -> Finish
    metadata            -> UsageUpdate
    exceptions, errors  -> StreamError (ends the stream)
"""

from typing import Any

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
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.anthropic_stream import scrub
from switchgate.providers.bedrock_content import SIGNATURE_PREFIX
from switchgate.providers.bedrock_response import classify, finish_reason, to_usage


def _header(headers: dict[str, Any], name: str) -> str:
    value = headers.get(name)
    return value if isinstance(value, str) else ""


def _payload(data: bytes) -> dict[str, Any]:
    try:
        value = jsonutil.loads(data) if data else {}
    except jsonutil.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _index(payload: dict[str, Any]) -> int:
    value = payload.get("contentBlockIndex")
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


class BedrockStreamDecoder:
    """StreamDecoder for `POST /model/{id}/converse-stream`."""

    def __init__(self, model: str) -> None:
        from botocore.eventstream import EventStreamBuffer

        self._buffer = EventStreamBuffer()
        self._model = model
        self._tools: dict[int, int] = {}  # content block index -> IR tool index
        self._started = False
        self._stopped = False  # messageStop seen
        self._done = False  # an error ended the stream

    def feed(self, data: bytes) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if self._done:
            return out
        from botocore.eventstream import ParserError

        self._buffer.add_data(data)
        try:
            for message in self._buffer:
                if not self._message(message.headers, message.payload, out):
                    break
        except ParserError as exc:
            self._fail(out, f"upstream sent a malformed event stream ({type(exc).__name__})")
        return out

    def finish(self) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        if not self._done and not self._stopped:
            self._fail(out, "upstream stream ended unexpectedly")
        return out

    def _fail(self, out: list[StreamEvent], message: str) -> None:
        self._done = True
        out.append(StreamError(GatewayError(ErrorKind.UPSTREAM_ERROR, message)))

    def _start(self, out: list[StreamEvent]) -> None:
        if not self._started:
            self._started = True
            out.append(Start("", self._model))

    def _message(self, headers: dict[str, Any], payload: bytes, out: list[StreamEvent]) -> bool:
        """Decode one message; False when it ended the stream."""
        kind = _header(headers, ":message-type")
        if kind == "exception":
            self._done = True
            error = classify(200, payload, _header(headers, ":exception-type") or None)
            out.append(StreamError(error))
            return False
        if kind == "error":
            text = scrub(_header(headers, ":error-message")) or "no message"
            code = _header(headers, ":error-code") or "error"
            self._fail(out, f"upstream error: {code}: {text}")
            return False
        if kind == "event":
            self._event(_header(headers, ":event-type"), _payload(payload), out)
        return True

    def _event(self, name: str, data: dict[str, Any], out: list[StreamEvent]) -> None:
        if name == "messageStart":
            self._start(out)
        elif name == "contentBlockStart":
            self._start(out)
            start = data.get("start")
            tool = start.get("toolUse") if isinstance(start, dict) else None
            if isinstance(tool, dict):
                self._tool(_index(data), tool.get("toolUseId"), tool.get("name"), out)
        elif name == "contentBlockDelta":
            self._start(out)
            delta = data.get("delta")
            if isinstance(delta, dict):
                self._delta(_index(data), delta, out)
        elif name == "messageStop":
            self._start(out)
            self._stopped = True
            out.append(Finish(finish_reason(data.get("stopReason"))))
        elif name == "metadata":
            usage = to_usage(data.get("usage"))
            if usage is not None:
                out.append(UsageUpdate(usage))
        # contentBlockStop and unknown events carry nothing the IR needs

    def _tool(self, block: int, call_id: Any, name: Any, out: list[StreamEvent]) -> int:
        index = len(self._tools)
        self._tools[block] = index
        out.append(
            ToolCallStart(
                index,
                call_id if isinstance(call_id, str) and call_id else f"tooluse_{index}",
                name if isinstance(name, str) else "",
            )
        )
        return index

    def _delta(self, block: int, delta: dict[str, Any], out: list[StreamEvent]) -> None:
        if isinstance(delta.get("text"), str):
            if delta["text"]:
                out.append(TextDelta(delta["text"]))
            return
        tool = delta.get("toolUse")
        if isinstance(tool, dict):
            index = self._tools.get(block)
            if index is None:
                index = self._tool(block, None, None, out)
            fragment = tool.get("input")
            if isinstance(fragment, str) and fragment:
                out.append(ToolArgsDelta(index, fragment))
            return
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            if isinstance(reasoning.get("text"), str) and reasoning["text"]:
                out.append(ThinkingDelta(reasoning["text"]))
            if isinstance(reasoning.get("signature"), str) and reasoning["signature"]:
                out.append(SignatureDelta(SIGNATURE_PREFIX + reasoning["signature"]))
            if isinstance(reasoning.get("redactedContent"), str):
                out.append(RedactedThinking(SIGNATURE_PREFIX + reasoning["redactedContent"]))
