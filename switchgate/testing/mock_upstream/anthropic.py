"""Anthropic Messages (`POST /v1/messages`, protocols §3) and `POST /v1/messages/count_tokens`."""

from typing import Any, Final

from aiohttp import web

from switchgate import jsonutil

from .auth import anthropic_ok
from .directives import Directives, parse_directives
from .errors import anthropic_error, anthropic_error_body
from .httpkit import json_response, pause, send_stream, sse
from .reply import Ask, Plan, content_text, count_words, plan_reply, split_text
from .state import MockState
from .strict import anthropic_violation

_PING: Final = sse(b'{"type":"ping"}', "ping")
_STOP: Final = sse(b'{"type":"message_stop"}', "message_stop")


def has_cache_control(body: dict[str, Any]) -> bool:
    """Any `cache_control` marker in the request (top level, system, tools, message blocks)."""
    if "cache_control" in body:
        return True
    for key in ("system", "tools"):
        value = body.get(key)
        if isinstance(value, list) and any(
            isinstance(b, dict) and "cache_control" in b for b in value
        ):
            return True
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and "cache_control" in b for b in content
        ):
            return True
    return False


def _tool_result_texts(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [
        content_text(block.get("content"))
        for block in content
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def _tools(body: dict[str, Any], ask: Ask) -> None:
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            ask.tools.append((tool["name"], tool.get("input_schema")))
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        kind = choice.get("type")
        ask.tool_required = kind == "any"
        ask.tool_disabled = kind == "none"
        if kind == "tool" and isinstance(choice.get("name"), str):
            ask.tool_forced = choice["name"]


def messages_ask(body: dict[str, Any], messages: list[Any]) -> Ask:
    ask = Ask()
    words = count_words(content_text(body.get("system")))
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        text = content_text(content)
        words += count_words(text)
        results = _tool_result_texts(content)
        for result in results:
            words += count_words(result)
        if text and message.get("role") == "user":
            ask.last_user_text = text
    ask.prompt_words = words
    last = messages[-1] if isinstance(messages[-1], dict) else {}
    if last.get("role") == "user":
        results = _tool_result_texts(last.get("content"))
        ask.tool_results = results or None
    _tools(body, ask)
    thinking = body.get("thinking")
    ask.reasoning = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    ask.cache_hint = has_cache_control(body)
    limit = body.get("max_tokens")
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        ask.max_tokens = limit
    return ask


def anthropic_usage(plan: Plan, output_tokens: int | None = None) -> dict[str, Any]:
    read, write = plan.cached_tokens, plan.cache_write_tokens
    uncached = plan.prompt_tokens - read - write
    return {
        "input_tokens": uncached if plan.directives.usage_input is not None else max(0, uncached),
        "output_tokens": plan.completion_tokens if output_tokens is None else output_tokens,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
        "service_tier": "standard",
    }


def stop_reason(plan: Plan) -> str:
    if plan.tool_calls:
        return "tool_use"
    return "max_tokens" if plan.truncated else "end_turn"


def content_blocks(plan: Plan) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if plan.reasoning:
        blocks.append({"type": "thinking", "thinking": plan.reasoning, "signature": plan.signature})
    if plan.text or not plan.tool_calls:
        blocks.append({"type": "text", "text": plan.text})
    for call in plan.tool_calls:
        blocks.append({"type": "tool_use", "id": "toolu_" + call.id, "name": call.name})
        blocks[-1]["input"] = call.args
    return blocks


def message(mid: str, model: str, plan: Plan) -> dict[str, Any]:
    result: dict[str, Any] = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content_blocks(plan),
        "stop_reason": stop_reason(plan),
        "stop_sequence": None,
    }
    if not plan.directives.no_usage:
        result["usage"] = anthropic_usage(plan)
    return result


def _event(name: str, payload: dict[str, Any]) -> bytes:
    return sse(jsonutil.dumps(payload), name)


def _block_events(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    events = [
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
    ]
    for delta in deltas:
        events.append(
            _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
    events.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def message_stream(mid: str, model: str, plan: Plan) -> list[bytes]:
    start: dict[str, Any] = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
    }
    no_usage = plan.directives.no_usage
    if not no_usage:
        start["usage"] = anthropic_usage(plan, 1)
    events = [_event("message_start", {"type": "message_start", "message": start}), _PING]
    index = 0
    if plan.reasoning:
        deltas = [
            {"type": "thinking_delta", "thinking": p}
            for p in split_text(plan.reasoning, plan.chunks)
        ]
        deltas.append({"type": "signature_delta", "signature": plan.signature})
        events += _block_events(
            index, {"type": "thinking", "thinking": "", "signature": ""}, deltas
        )
        index += 1
    if plan.text or not plan.tool_calls:
        deltas = [{"type": "text_delta", "text": p} for p in split_text(plan.text, plan.chunks)]
        events += _block_events(index, {"type": "text", "text": ""}, deltas)
        index += 1
    for call in plan.tool_calls:
        head = {"type": "tool_use", "id": "toolu_" + call.id, "name": call.name, "input": {}}
        deltas = [
            {"type": "input_json_delta", "partial_json": p} for p in split_text(call.arguments, 3)
        ]
        events += _block_events(index, head, deltas)
        index += 1
    final: dict[str, Any] = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(plan), "stop_sequence": None},
    }
    if not no_usage:
        final["usage"] = anthropic_usage(plan)
    events += [_event("message_delta", final), _STOP]
    return events


def _valid_version(value: str | None) -> bool:
    return (
        value is not None
        and len(value) == 10
        and value[4] == "-"
        and value[7] == "-"
        and (value[:4] + value[5:7] + value[8:]).isdigit()
    )


class AnthropicMessages:
    """Handlers for the Anthropic endpoints."""

    def __init__(self, state: MockState) -> None:
        self.state = state

    def _refuse(self, request: web.Request) -> web.Response | None:
        if not anthropic_ok(request, self.state.config.accepted):
            return anthropic_error(401)
        if not _valid_version(request.headers.get("anthropic-version")):
            return anthropic_error(400, "anthropic-version: header is required (YYYY-MM-DD)")
        return None

    async def messages(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        refused = self._refuse(request)
        if refused is not None:
            return refused
        problem = _validate(body)
        if problem is None and self.state.config.strict:
            problem = anthropic_violation(body)
        if problem is not None:
            return anthropic_error(400, problem)
        return await self.reply(request, body, body["model"])

    async def reply(
        self, request: web.Request, body: dict[str, Any], model: str
    ) -> web.StreamResponse:
        """The answer to a validated Messages body (also served by Vertex's rawPredict)."""
        state = self.state
        ask = messages_ask(body, body["messages"])
        d = parse_directives(ask.last_user_text)
        config = state.config
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        if d.error is not None:
            return anthropic_error(d.error)
        plan = plan_reply(ask, d, config)
        number = state.next_id()
        mid = f"msg_mock{number:020d}"
        headers = {"request-id": f"req_mock{number}"}
        if body.get("stream") is not True:
            return json_response(message(mid, model, plan), 200, headers)
        events = message_stream(mid, model, plan)
        drop_after = d.drop_after
        if d.close_after_content:  # message_delta and message_stop never come
            drop_after = len(events) - 2
        return await send_stream(
            request,
            events,
            headers=headers,
            interval_ms=d.interval_ms if d.interval_ms is not None else config.chunk_interval_ms,
            drop_after=drop_after,
            error_event=_stream_error(d),
            tail=(2, d.tail_delay_ms) if d.tail_delay_ms is not None else None,
        )

    async def count_tokens(self, request: web.Request) -> web.StreamResponse:
        body = await self.state.intake(request)
        refused = self._refuse(request)
        if refused is not None:
            return refused
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return anthropic_error(400, "messages: Field required")
        ask = messages_ask(body, body["messages"]) if body["messages"] else Ask()
        if not body["messages"]:
            ask.prompt_words = count_words(content_text(body.get("system")))
        return json_response({"input_tokens": max(1, ask.prompt_words)})


def _stream_error(d: Directives) -> bytes | None:
    if d.midstream_error is None:
        return None
    return sse(jsonutil.dumps(anthropic_error_body(d.midstream_error or 529)), "error")


def _validate(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "Request body must be a JSON object."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    limit = body.get("max_tokens")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return "max_tokens: Field required (an integer >= 1)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    return None
