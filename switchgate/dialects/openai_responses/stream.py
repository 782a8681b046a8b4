"""Canonical stream events -> Responses API typed SSE (protocols §2.7, §5.8 "-> Responses").

Every event is `event: TYPE` + `data: {"type": TYPE, ..., "sequence_number": n}`; n counts
events from 0. The sequence:
- the first event of any kind -> `response.created` + `response.in_progress` (the response
  with status `in_progress`, no output, usage null);
- text -> a `message` item: `output_item.added`, `content_part.added`, then
  `output_text.delta`s; closed by `output_text.done`, `content_part.done`, `output_item.done`;
- thinking -> a `reasoning` item: `output_item.added`, `reasoning_summary_part.added`,
  `reasoning_summary_text.delta`s; closed by `reasoning_summary_text.done`,
  `reasoning_summary_part.done`, `output_item.done` (signatures become `encrypted_content`);
- a tool call -> a `function_call` item added with `arguments: ""`, then
  `function_call_arguments.delta`s; closed by `.done` and `output_item.done`;
- a change of kind closes the open item; `output_index` counts items;
- close() -> `response.completed`, or `response.incomplete` (finish length / content
  filter), carrying the whole response with usage; it is also kept in `final`;
- StreamError -> `event: error`, and nothing after it. Redacted thinking is dropped;
- ping() (sent by the relay after a quiet spell) is an SSE comment line.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from switchgate.core.events import (
    Finish,
    SignatureDelta,
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
from switchgate.dialects.openai_responses.encode import (
    function_call_item,
    item_id,
    message_item,
    namespaces_of,
    new_response_id,
    reasoning_item,
    response_object,
    status_for,
)
from switchgate.dialects.openai_responses.errors import stream_error_payload
from switchgate.jsonutil import dumps
from switchgate.wire.sse import format_event


@dataclass
class _Item:
    kind: str  # message | reasoning | function_call
    index: int
    id: str
    chunks: list[str] = field(default_factory=list)
    signature: str = ""
    call_id: str = ""
    name: str = ""
    tool_index: int = -1
    part_open: bool = False


class ResponsesStreamEncoder:
    """Implements dialects.base.StreamEncoder. `response_id` / `created_at` pin the ids and
    timestamp (tests); `on_final` receives the final response object at close()."""

    def __init__(
        self,
        request: ChatRequest,
        *,
        response_id: str | None = None,
        created_at: int | None = None,
        on_final: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self._request = request
        self._namespaces = namespaces_of(request)
        self._id = response_id or new_response_id()
        self._created = created_at if created_at is not None else int(time.time())
        self._on_final = on_final
        self._sequence = 0
        self._started = False
        self._failed = False
        self._closed = False
        self._open: _Item | None = None
        self._output: list[dict[str, Any]] = []
        self._tools: dict[int, _Item] = {}
        self._finish: FinishReason | None = None
        self._usage: Usage | None = None
        self.final: dict[str, Any] | None = None

    @property
    def response_id(self) -> str:
        return self._id

    def ping(self) -> bytes:
        """A keep-alive the relay sends while the upstream is quiet: an SSE comment, which
        clients ignore and which takes no sequence number."""
        return b": keepalive\n\n"

    def encode(self, event: StreamEvent) -> bytes:
        if self._failed or self._closed:
            return b""
        out = [self._start()]
        if isinstance(event, StreamError):
            self._failed = True
            payload = stream_error_payload(event.error, self._sequence)
            self._sequence += 1
            out.append(format_event(dumps(payload), "error"))
        elif isinstance(event, TextDelta):
            self._text(event.text, out)
        elif isinstance(event, ThinkingDelta):
            self._thinking(event.text, out)
        elif isinstance(event, SignatureDelta):
            self._ensure("reasoning", out).signature += event.signature
        elif isinstance(event, ToolCallStart):
            out.append(self._close_open())
            item = _Item("function_call", len(self._output), "", call_id=event.id, name=event.name)
            item.id, item.tool_index = item_id(self._id, "fc", item.index), event.index
            self._open_item(item, out)
            self._tools[event.index] = item
        elif isinstance(event, ToolArgsDelta):
            self._tool_args(event, out)
        elif isinstance(event, Finish):
            self._finish = event.reason
            out.append(self._close_open())
        elif isinstance(event, UsageUpdate):
            self._usage = event.usage
        return b"".join(out)

    def close(self) -> bytes:
        if self._failed or self._closed:
            return b""
        out = [self._start(), self._close_open()]
        self._closed = True
        status, details = status_for(self._finish)
        final = response_object(
            self._request,
            response_id=self._id,
            created_at=self._created,
            status=status,
            output=self._output,
            usage=self._usage or Usage(),
            incomplete_details=details,
        )
        self.final = final
        if self._on_final is not None:
            self._on_final(final)
        kind = "response.completed" if status == "completed" else "response.incomplete"
        out.append(self._event(kind, response=final))
        return b"".join(out)

    # ------------------------------------------------------------------ helpers

    def _event(self, kind: str, **fields: Any) -> bytes:
        payload = {"type": kind, **fields, "sequence_number": self._sequence}
        self._sequence += 1
        return format_event(dumps(payload), kind)

    @staticmethod
    def _at(item: _Item) -> dict[str, Any]:
        at: dict[str, Any] = {"item_id": item.id, "output_index": item.index}
        if item.kind == "message":
            at["content_index"] = 0
        elif item.kind == "reasoning":
            at["summary_index"] = 0
        return at

    def _start(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        pending = response_object(
            self._request,
            response_id=self._id,
            created_at=self._created,
            status="in_progress",
            output=[],
            usage=None,
        )
        return self._event("response.created", response=pending) + self._event(
            "response.in_progress", response=pending
        )

    def _ensure(self, kind: str, out: list[bytes]) -> _Item:
        if self._open is not None and self._open.kind == kind:
            return self._open
        out.append(self._close_open())
        index = len(self._output)
        prefix = "msg" if kind == "message" else "rs"
        item = _Item(kind, index, item_id(self._id, prefix, index))
        self._open_item(item, out)
        return item

    def _open_item(self, item: _Item, out: list[bytes]) -> None:
        self._open = item
        self._output.append({})  # placeholder, filled when the item closes
        if item.kind == "message":
            added = message_item(item.id, "", status="in_progress")
        elif item.kind == "reasoning":
            added = {"id": item.id, "type": "reasoning", "summary": []}
        else:
            added = function_call_item(
                item.id, item.call_id, item.name, "", "in_progress", self._namespaces
            )
        out.append(self._event("response.output_item.added", output_index=item.index, item=added))
        if item.kind == "message":
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            out.append(self._event("response.content_part.added", **self._at(item), part=part))

    def _text(self, text: str, out: list[bytes]) -> None:
        if not text:
            return
        item = self._ensure("message", out)
        item.chunks.append(text)
        at = self._at(item)
        out.append(self._event("response.output_text.delta", **at, delta=text, logprobs=[]))

    def _thinking(self, text: str, out: list[bytes]) -> None:
        if not text:
            return
        item = self._ensure("reasoning", out)
        at = self._at(item)
        if not item.part_open:
            item.part_open = True
            part = {"type": "summary_text", "text": ""}
            out.append(self._event("response.reasoning_summary_part.added", **at, part=part))
        item.chunks.append(text)
        out.append(self._event("response.reasoning_summary_text.delta", **at, delta=text))

    def _tool_args(self, event: ToolArgsDelta, out: list[bytes]) -> None:
        item = self._tools.get(event.index)
        if item is None or not event.fragment:
            return
        item.chunks.append(event.fragment)
        if item is self._open:
            delta = self._event(
                "response.function_call_arguments.delta",
                item_id=item.id,
                output_index=item.index,
                delta=event.fragment,
            )
            out.append(delta)
        else:  # a late fragment for a call already closed: only the final item shows it
            self._output[item.index]["arguments"] = "".join(item.chunks)

    def _close_open(self) -> bytes:
        item, self._open = self._open, None
        if item is None:
            return b""
        text = "".join(item.chunks)
        out: list[bytes] = []
        at = self._at(item)
        if item.kind == "message":
            done = message_item(item.id, text)
            part = done["content"][0]
            out.append(self._event("response.output_text.done", **at, text=text, logprobs=[]))
            out.append(self._event("response.content_part.done", **at, part=part))
        elif item.kind == "reasoning":
            done = reasoning_item(item.id, text, item.signature or None)
            if item.part_open:
                part = {"type": "summary_text", "text": text}
                out.append(self._event("response.reasoning_summary_text.done", **at, text=text))
                out.append(self._event("response.reasoning_summary_part.done", **at, part=part))
        else:
            done = function_call_item(
                item.id, item.call_id, item.name, text, "completed", self._namespaces
            )
            out.append(
                self._event(
                    "response.function_call_arguments.done", **at, name=done["name"], arguments=text
                )
            )
        self._output[item.index] = done
        out.append(self._event("response.output_item.done", output_index=item.index, item=done))
        return b"".join(out)
