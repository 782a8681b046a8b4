"""OpenAI Responses API upstream, passthrough only (`{base}/responses`, protocols §2.7).

Pure helpers for relaying a Responses client to an upstream that speaks the Responses API
itself (an OpenAI channel declaring `responses = true`): the request (the client's body with
the model rewritten), usage from a whole Response body or from the typed SSE stream (usage
appears only in `response.completed` / `.incomplete` / `.failed`), and a Response body read
back into canonical form (for the tokenizer fallback when the upstream omits usage).
"""

from typing import Any

from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage, reported_count
from switchgate.jsonutil import JSONDecodeError, loads
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.forward import forward_json
from switchgate.wire.sse import SSEParser

_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_TEXT_DELTAS = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        "response.function_call_arguments.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
    }
)


def build_responses_passthrough(
    body: dict[str, Any], target: Target, raw: bytes | None = None
) -> UpstreamRequest:
    """The client's body with `model` rewritten (a shallow copy), sent to `{base}/responses`."""
    out = {**body, "model": target.upstream_model}
    headers = {"authorization": f"Bearer {target.api_key}", "content-type": "application/json"}
    if out.get("stream") is True:
        headers["accept"] = "text/event-stream"
    headers.update(target.extra_headers)
    url = target.base_url.rstrip("/") + "/responses"
    return UpstreamRequest("POST", url, headers, forward_json(raw, body, out))


def _int(container: Any, key: str) -> int:
    return reported_count(container.get(key) if isinstance(container, dict) else None, key)


def usage_from_responses(raw: Any) -> Usage | None:
    """Usage from a Responses `usage` object (`input_tokens` includes cached tokens)."""
    if not isinstance(raw, dict):
        return None
    details = raw.get("input_tokens_details")
    return Usage(
        input_tokens=_int(raw, "input_tokens"),
        output_tokens=_int(raw, "output_tokens"),
        cache_read_tokens=_int(details, "cached_tokens"),
        cache_write_tokens=_int(details, "cache_write_tokens"),
        reasoning_tokens=_int(raw.get("output_tokens_details"), "reasoning_tokens"),
    )


def parse_response_object(body: bytes) -> dict[str, Any] | None:
    try:
        data = loads(body)
    except JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def response_to_core(data: dict[str, Any]) -> ChatResponse:
    """A Response object's output items in canonical form (text, tool calls, thinking)."""
    parts: list[OutputPart] = []
    for item in data.get("output") or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or ():
                if isinstance(part, dict):
                    text = part.get("text", part.get("refusal"))
                    if isinstance(text, str):
                        parts.append(TextPart(text))
        elif kind == "function_call":
            parts.append(
                ToolCallPart(
                    str(item.get("call_id", "")),
                    str(item.get("name", "")),
                    str(item.get("arguments", "")),
                )
            )
        elif kind == "reasoning":
            texts = [s.get("text", "") for s in item.get("summary") or () if isinstance(s, dict)]
            parts.append(ThinkingPart(text="\n\n".join(t for t in texts if isinstance(t, str))))
    details = data.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    finish = (
        FinishReason.LENGTH
        if reason == "max_output_tokens"
        else FinishReason.CONTENT_FILTER
        if reason == "content_filter"
        else FinishReason.TOOL_CALLS
        if any(isinstance(p, ToolCallPart) for p in parts)
        else FinishReason.STOP
    )
    return ChatResponse(
        id=str(data.get("id", "")),
        model=str(data.get("model", "")),
        parts=tuple(parts),
        finish_reason=finish,
        usage=usage_from_responses(data.get("usage")) or Usage(),
    )


class ResponsesUsageMeter:
    """Implements providers.base.UsageMeter over a passed-through Responses stream.

    Only the terminal events and the text deltas are parsed. Also keeps the final
    response object (`final`) and the last `sequence_number` seen (`sequence`), so the
    relay can store the response and number an error event it appends."""

    def __init__(self) -> None:
        self._sse = SSEParser()
        self._usage: Usage | None = None
        self._text: list[str] = []
        self.final: dict[str, Any] | None = None
        self.sequence = -1

    def feed(self, data: bytes) -> None:
        for sse in self._sse.feed(data):
            name = sse.event
            if name is None or (name not in _TERMINAL and name not in _TEXT_DELTAS):
                self.sequence += 1
                continue
            try:
                event = loads(sse.data)
            except JSONDecodeError:
                continue
            if not isinstance(event, dict):
                continue
            number = event.get("sequence_number")
            self.sequence = number if isinstance(number, int) else self.sequence + 1
            if name in _TERMINAL:
                response = event.get("response")
                if isinstance(response, dict):
                    self.final = response if name != "response.failed" else None
                    self._usage = usage_from_responses(response.get("usage")) or self._usage
            else:
                delta = event.get("delta")
                if isinstance(delta, str):
                    self._text.append(delta)

    def usage(self) -> Usage | None:
        return self._usage

    def output_text(self) -> str:
        return "".join(self._text)

    def usage_final(self) -> bool:
        return True  # usage comes only with the terminal event
