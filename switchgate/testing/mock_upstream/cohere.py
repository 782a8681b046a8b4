"""Cohere v2: chat (`POST /v2/chat`, JSON or SSE) and embed (`POST /v2/embed`).

Checks `Authorization: Bearer KEY` (401 `{"message": "invalid api token"}`), refuses what
the real API refuses (cohere_wire.py; 400 `{"id", "message"}`), and answers in Cohere's
shapes: `message.content` / `tool_plan` / `tool_calls`, `finish_reason` COMPLETE /
MAX_TOKENS / TOOL_CALL, `usage.billed_units` and `usage.tokens` (the latter includes a
prompt-template overhead, as on the real API, so a gateway that bills the wrong one is
caught). Streams are `event: TYPE` + `data: {"type": TYPE, ...}` frames: message-start,
content-start/-delta/-end (thinking, then text), tool-plan-delta, tool-call-start/
-delta/-end, message-end. Directives (directives.py) steer it as for the other dialects;
`midstream_error` ends the stream with `finish_reason: ERROR` and an `error` message.
"""

from typing import Any, Final

from aiohttp import web

from switchgate import jsonutil

from .assets import embed_vector
from .auth import bearer_ok
from .cohere_wire import chat_violation, embed_violation
from .directives import Directives, parse_directives
from .errors import cohere_error
from .httpkit import json_response, pause, send_stream, sse
from .reply import Ask, Plan, count_words, plan_reply, split_text
from .state import MockState

TEMPLATE_TOKENS: Final = 7  # usage.tokens counts the prompt template too


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        item["text"]
        for item in content
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item["text"], str)
    )


def chat_ask(body: dict[str, Any]) -> Ask:
    ask = Ask()
    messages: list[dict[str, Any]] = body["messages"]
    for message in messages:
        text = _text(message.get("content"))
        ask.prompt_words += count_words(text)
        if message["role"] == "user" and text:
            ask.last_user_text = text
    trailing = []
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        trailing.append(_text(message.get("content")))
    if trailing:
        ask.tool_results = list(reversed(trailing))
    for tool in body.get("tools") or []:
        ask.tools.append((tool["function"]["name"], tool["function"].get("parameters")))
    ask.tool_required = body.get("tool_choice") == "REQUIRED"
    ask.tool_disabled = body.get("tool_choice") == "NONE"
    thinking = body.get("thinking")
    ask.reasoning = isinstance(thinking, dict) and thinking.get("type") == "enabled"
    if isinstance(body.get("max_tokens"), int):
        ask.max_tokens = body["max_tokens"]
    return ask


def tool_plan(plan: Plan) -> str:
    return f"I will use the {plan.tool_calls[0].name} tool." if plan.tool_calls else ""


def finish_reason(plan: Plan) -> str:
    if plan.tool_calls:
        return "TOOL_CALL"
    return "MAX_TOKENS" if plan.truncated else "COMPLETE"


def usage(plan: Plan) -> dict[str, Any]:
    billed = {"input_tokens": plan.prompt_tokens, "output_tokens": plan.completion_tokens}
    tokens = {
        "input_tokens": plan.prompt_tokens + TEMPLATE_TOKENS,
        "output_tokens": plan.completion_tokens + 1,
    }
    return {"billed_units": billed, "tokens": tokens, "cached_tokens": plan.cached_tokens}


def chat_response(rid: str, plan: Plan) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant"}
    content: list[dict[str, Any]] = []
    if plan.reasoning:
        content.append({"type": "thinking", "thinking": plan.reasoning})
    if plan.tool_calls:
        message["tool_plan"] = tool_plan(plan)
        message["tool_calls"] = [
            {
                "id": f"{call.name}_{call.id[:12]}",
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in plan.tool_calls
        ]
    else:
        content.append({"type": "text", "text": plan.text})
    if content:
        message["content"] = content
    result: dict[str, Any] = {"id": rid, "message": message, "finish_reason": finish_reason(plan)}
    if not plan.directives.no_usage:
        result["usage"] = usage(plan)
    return result


def _event(payload: dict[str, Any]) -> bytes:
    return sse(jsonutil.dumps(payload), payload["type"])


def _content_block(index: int, kind: str, text: str, chunks: int) -> list[bytes]:
    start = {"content": {"type": kind, kind: ""}}
    events = [_event({"type": "content-start", "index": index, "delta": {"message": start}})]
    for piece in split_text(text, chunks):
        delta = {"message": {"content": {kind: piece}}}
        events.append(_event({"type": "content-delta", "index": index, "delta": delta}))
    events.append(_event({"type": "content-end", "index": index}))
    return events


def chat_stream(rid: str, plan: Plan) -> list[bytes]:
    empty = {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}
    events = [_event({"id": rid, "type": "message-start", "delta": {"message": empty}})]
    index = 0
    if plan.reasoning:
        events += _content_block(index, "thinking", plan.reasoning, plan.chunks)
        index += 1
    if plan.tool_calls:
        for piece in split_text(tool_plan(plan), 3):
            delta = {"message": {"tool_plan": piece}}
            events.append(_event({"type": "tool-plan-delta", "delta": delta}))
        for i, call in enumerate(plan.tool_calls):
            head: dict[str, Any] = {
                "id": f"{call.name}_{call.id[:12]}",
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            start = {"message": {"tool_calls": head}}
            events.append(_event({"type": "tool-call-start", "index": i, "delta": start}))
            for piece in split_text(call.arguments, 3):
                args: dict[str, Any] = {"tool_calls": {"function": {"arguments": piece}}}
                events.append(
                    _event({"type": "tool-call-delta", "index": i, "delta": {"message": args}})
                )
            events.append(_event({"type": "tool-call-end", "index": i}))
    else:
        events += _content_block(index, "text", plan.text, plan.chunks)
    end: dict[str, Any] = {"finish_reason": finish_reason(plan)}
    if not plan.directives.no_usage:
        end["usage"] = usage(plan)
    events.append(_event({"type": "message-end", "delta": end}))
    return events


def _stream_error(d: Directives) -> bytes | None:
    if d.midstream_error is None:
        return None
    delta = {"finish_reason": "ERROR", "error": "internal server error (mock)"}
    return _event({"type": "message-end", "delta": delta})


def default_dimensions(model: str) -> int:
    if model.startswith("embed-v4"):
        return 1536
    return 384 if "light" in model else 1024


class Cohere:
    """Handlers for the Cohere v2 chat and embed endpoints."""

    def __init__(self, state: MockState) -> None:
        self.state = state

    async def chat(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return cohere_error(401)
        problem = chat_violation(body)
        if problem is not None:
            return cohere_error(400, problem)
        ask = chat_ask(body)
        d = parse_directives(ask.last_user_text)
        config = state.config
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        if d.error is not None:
            return cohere_error(d.error)
        plan = plan_reply(ask, d, config)
        rid = f"mock-{state.next_id():08d}-c0he-4e2e-a11d-000000000000"
        if body.get("stream") is not True:
            return json_response(chat_response(rid, plan))
        return await send_stream(
            request,
            chat_stream(rid, plan),
            interval_ms=d.interval_ms if d.interval_ms is not None else config.chunk_interval_ms,
            drop_after=d.drop_after,
            error_event=_stream_error(d),
        )

    async def embed(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return cohere_error(401)
        problem = embed_violation(body)
        if problem is not None:
            return cohere_error(400, problem)
        texts: list[str] = body["texts"]
        d = parse_directives(texts[-1])
        await pause(d.latency_ms if d.latency_ms is not None else state.config.latency_ms)
        if d.error is not None:
            return cohere_error(d.error)
        dims = body.get("output_dimension") or default_dimensions(body["model"])
        vectors = [embed_vector(text, dims) for text in texts]
        embeddings: dict[str, Any] = {}
        for kind in body.get("embedding_types", ["float"]):
            if kind != "float":
                return cohere_error(400, f"invalid request: the mock serves float only ({kind})")
            embeddings["float"] = vectors
        meta: dict[str, Any] = {"api_version": {"version": "2"}}
        if not d.no_usage:
            tokens = max(1, sum(count_words(t) for t in texts))
            meta["billed_units"] = {"input_tokens": tokens}
        return json_response(
            {
                "id": f"mock-embed-{state.next_id():08d}",
                "texts": texts,
                "embeddings": embeddings,
                "meta": meta,
                "response_type": "embeddings_by_type",
            }
        )
