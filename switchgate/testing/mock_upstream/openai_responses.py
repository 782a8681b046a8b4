"""OpenAI Responses API (`POST /v1/responses`, protocols §2.7): a JSON response, or typed SSE
events (`event: TYPE` + `data: {"type": TYPE, "sequence_number": n, ...}`) without `[DONE]`.
`previous_response_id` is accepted and ignored (the mock stores nothing)."""

import time
from typing import Any

from aiohttp import web

from switchgate import jsonutil

from .auth import bearer_ok
from .directives import parse_directives
from .errors import openai_error
from .httpkit import json_response, pause, send_stream, sse
from .reply import Ask, Plan, content_text, count_words, plan_reply, split_text
from .state import MockState

_TEXT_TYPES = ("input_text", "output_text", "text")


def _input_items(body: dict[str, Any], ask: Ask) -> None:
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        return
    instructions = body.get("instructions")
    words = count_words(instructions) if isinstance(instructions, str) else 0
    results: list[str] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else content_text(output, _TEXT_TYPES)
            results.append(text)
            words += count_words(text)
            continue
        results = []
        text = content_text(item.get("content"), _TEXT_TYPES)
        words += count_words(text)
        if text and item.get("role") == "user":
            ask.last_user_text = text
    ask.prompt_words = words
    ask.tool_results = results or None


def responses_ask(body: dict[str, Any]) -> Ask:
    ask = Ask()
    _input_items(body, ask)
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "function" and tool.get("name"):
            ask.tools.append((str(tool["name"]), tool.get("parameters")))
    choice = body.get("tool_choice")
    ask.tool_required = choice == "required"
    ask.tool_disabled = choice == "none"
    if isinstance(choice, dict):
        if choice.get("type") == "function" and isinstance(choice.get("name"), str):
            ask.tool_forced = choice["name"]
        elif choice.get("type") == "allowed_tools":
            names = {t.get("name") for t in choice.get("tools") or [] if isinstance(t, dict)}
            ask.tools = [t for t in ask.tools if t[0] in names] or ask.tools
            ask.tool_required = choice.get("mode") == "required"
    reasoning = body.get("reasoning")
    ask.reasoning = isinstance(reasoning, dict) and reasoning.get("effort") not in (None, "none")
    limit = body.get("max_output_tokens")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        ask.max_tokens = limit
    return ask


def responses_usage(plan: Plan) -> dict[str, Any]:
    return {
        "input_tokens": plan.prompt_tokens,
        "input_tokens_details": {
            "cached_tokens": plan.cached_tokens,
            "cache_write_tokens": plan.cache_write_tokens,
        },
        "output_tokens": plan.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": plan.reasoning_tokens},
        "total_tokens": plan.prompt_tokens + plan.completion_tokens,
    }


def output_items(plan: Plan, number: int, summary: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if plan.reasoning:
        parts = [{"type": "summary_text", "text": plan.reasoning}] if summary else []
        items.append({"id": f"rs_mock{number}", "type": "reasoning", "summary": parts})
    if plan.text or not plan.tool_calls:
        items.append(
            {
                "id": f"msg_mock{number}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [
                    {"type": "output_text", "text": plan.text, "annotations": [], "logprobs": []}
                ],
            }
        )
    for i, call in enumerate(plan.tool_calls):
        items.append(
            {
                "id": f"fc_mock{number}_{i}",
                "type": "function_call",
                "status": "completed",
                "call_id": "call_" + call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
        )
    return items


def response_object(
    body: dict[str, Any], rid: str, plan: Plan | None, output: list[dict[str, Any]]
) -> dict[str, Any]:
    status = "in_progress" if plan is None else "incomplete" if plan.truncated else "completed"
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": body.get("model"),
        "output": output,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if status == "incomplete" else None,
        "instructions": body.get("instructions"),
        "tools": body.get("tools") or [],
        "tool_choice": body.get("tool_choice", "auto"),
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "temperature": body.get("temperature", 1.0),
        "top_p": body.get("top_p", 1.0),
        "max_output_tokens": body.get("max_output_tokens"),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "text": body.get("text") or {"format": {"type": "text"}},
        "store": body.get("store", True),
        "metadata": body.get("metadata") or {},
        "truncation": body.get("truncation", "disabled"),
        "usage": None if plan is None or plan.directives.no_usage else responses_usage(plan),
    }


class _Events:
    def __init__(self) -> None:
        self.out: list[bytes] = []

    def add(self, kind: str, **fields: Any) -> None:
        fields = {"type": kind, "sequence_number": len(self.out), **fields}
        self.out.append(sse(jsonutil.dumps(fields), kind))


def _item_events(ev: _Events, item: dict[str, Any], index: int, plan: Plan) -> None:
    iid = item["id"]
    kind = item["type"]
    if kind == "reasoning":
        ev.add("response.output_item.added", output_index=index, item={**item, "summary": []})
        for s, part in enumerate(item["summary"]):
            at = {"item_id": iid, "output_index": index, "summary_index": s}
            ev.add(
                "response.reasoning_summary_part.added",
                **at,
                part={"type": "summary_text", "text": ""},
            )
            for piece in split_text(part["text"], plan.chunks):
                ev.add("response.reasoning_summary_text.delta", **at, delta=piece)
            ev.add("response.reasoning_summary_text.done", **at, text=part["text"])
            ev.add("response.reasoning_summary_part.done", **at, part=part)
    elif kind == "message":
        ev.add(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "content": []},
        )
        at = {"item_id": iid, "output_index": index, "content_index": 0}
        part = item["content"][0]
        ev.add("response.content_part.added", **at, part={**part, "text": ""})
        for piece in split_text(part["text"], plan.chunks):
            ev.add("response.output_text.delta", **at, delta=piece, logprobs=[])
        ev.add("response.output_text.done", **at, text=part["text"], logprobs=[])
        ev.add("response.content_part.done", **at, part=part)
    else:
        ev.add(
            "response.output_item.added",
            output_index=index,
            item={**item, "status": "in_progress", "arguments": ""},
        )
        at = {"item_id": iid, "output_index": index}
        for piece in split_text(item["arguments"], 3):
            ev.add("response.function_call_arguments.delta", **at, delta=piece)
        ev.add(
            "response.function_call_arguments.done",
            **at,
            name=item["name"],
            arguments=item["arguments"],
        )
    ev.add("response.output_item.done", output_index=index, item=item)


def response_events(body: dict[str, Any], rid: str, plan: Plan, items: list[Any]) -> list[bytes]:
    ev = _Events()
    pending = response_object(body, rid, None, [])
    ev.add("response.created", response=pending)
    ev.add("response.in_progress", response=pending)
    for index, item in enumerate(items):
        _item_events(ev, item, index, plan)
    final = response_object(body, rid, plan, items)
    ev.add("response.incomplete" if plan.truncated else "response.completed", response=final)
    return ev.out


class OpenAIResponses:
    def __init__(self, state: MockState) -> None:
        self.state = state

    async def create(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return openai_error(401)
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return openai_error(400, "you must provide a model parameter", param="model")
        if not isinstance(body.get("input"), str | list):
            return openai_error(400, "'input' is required.", param="input")
        ask = responses_ask(body)
        d = parse_directives(ask.last_user_text)
        config = state.config
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        if d.error is not None:
            return openai_error(d.error)
        plan = plan_reply(ask, d, config)
        number = state.next_id()
        rid = f"resp_mock{number}"
        reasoning = body.get("reasoning")
        summary = isinstance(reasoning, dict) and bool(reasoning.get("summary"))
        items = output_items(plan, number, summary)
        headers = {"x-request-id": f"req_mock{number}"}
        if body.get("stream") is not True:
            return json_response(response_object(body, rid, plan, items), 200, headers)
        events = response_events(body, rid, plan, items)
        error_event = None
        if d.midstream_error is not None:
            error = {
                "type": "error",
                "code": "server_error",
                "param": None,
                "message": "The server had an error while processing your request (mock).",
                "sequence_number": max(1, len(events) // 2),
            }  # arrange() cuts there
            error_event = sse(jsonutil.dumps(error), "error")
        return await send_stream(
            request,
            events,
            headers=headers,
            interval_ms=d.interval_ms if d.interval_ms is not None else config.chunk_interval_ms,
            drop_after=d.drop_after,
            error_event=error_event,
        )
