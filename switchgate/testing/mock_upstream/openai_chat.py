"""OpenAI Chat Completions (`POST /v1/chat/completions`, protocols §1) and the legacy
Completions endpoint (`POST /v1/completions`, §2.1)."""

import time
from typing import Any, Final

from aiohttp import web

from switchgate import jsonutil

from .auth import bearer_ok
from .directives import Directives, parse_directives
from .errors import openai_error, openai_error_body
from .httpkit import json_response, pause, send_stream, sse
from .reply import Ask, Plan, content_text, count_words, plan_reply, split_text
from .state import MockState
from .strict import openai_chat_violation

DONE: Final = b"data: [DONE]\n\n"
_CHUNK_TAIL: Final = b',"logprobs":null}]}\n\n'
_CHUNK_TAIL_USAGE: Final = b',"logprobs":null}],"usage":null}\n\n'
_FIRST_DELTA: Final = b'{"role":"assistant","content":""}'


def openai_usage(plan: Plan, n: int = 1) -> dict[str, Any]:
    """Usage of `n` choices of `plan` (each choice is output; the prompt counts once)."""
    prompt_details: dict[str, int] = {"cached_tokens": plan.cached_tokens, "audio_tokens": 0}
    if plan.cache_write_tokens:
        prompt_details["cache_write_tokens"] = plan.cache_write_tokens
    return {
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": plan.completion_tokens * n,
        "total_tokens": plan.prompt_tokens + plan.completion_tokens * n,
        "prompt_tokens_details": prompt_details,
        "completion_tokens_details": {
            "reasoning_tokens": plan.reasoning_tokens * n,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _tools(body: dict[str, Any], ask: Ask) -> None:
    tools = body.get("tools")
    if not isinstance(tools, list):
        return
    for tool in tools:
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            ask.tools.append((fn["name"], fn.get("parameters")))
    choice = body.get("tool_choice")
    if choice == "required":
        ask.tool_required = True
    elif choice == "none":
        ask.tool_disabled = True
    elif isinstance(choice, dict):
        if isinstance(choice.get("function"), dict):
            ask.tool_forced = choice["function"].get("name")
        allowed = choice.get("allowed_tools")
        if isinstance(allowed, dict):
            names = {t.get("function", {}).get("name") for t in allowed.get("tools") or []}
            ask.tools = [t for t in ask.tools if t[0] in names] or ask.tools
            ask.tool_required = allowed.get("mode") == "required"


def chat_ask(body: dict[str, Any], messages: list[Any]) -> Ask:
    ask = Ask()
    words = 0
    for message in messages:
        if isinstance(message, dict):
            text = content_text(message.get("content"))
            words += count_words(text)
            if text and message.get("role") == "user":
                ask.last_user_text = text
    ask.prompt_words = words
    results: list[str] = []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") not in ("tool", "function"):
            break
        results.append(content_text(message.get("content")))
    if results:
        ask.tool_results = results[::-1]
    _tools(body, ask)
    effort = body.get("reasoning_effort")
    ask.reasoning = isinstance(effort, str) and effort != "none"
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
        ask.max_tokens = limit
    return ask


def finish_reason(plan: Plan) -> str:
    if plan.tool_calls:
        return "tool_calls"
    return "length" if plan.truncated else "stop"


def chat_completion(rid: str, created: int, model: str, plan: Plan, n: int) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None if plan.tool_calls else plan.text,
        "refusal": None,
        "annotations": [],
    }
    if plan.tool_calls:
        message["tool_calls"] = [
            {
                "id": "call_" + call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in plan.tool_calls
        ]
    if plan.reasoning:
        message["reasoning_content"] = plan.reasoning
    reason = finish_reason(plan)
    result: dict[str, Any] = {
        "id": rid,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "system_fingerprint": None,
        "choices": [
            {"index": i, "message": message, "logprobs": None, "finish_reason": reason}
            for i in range(n)
        ],
    }
    if not plan.directives.no_usage:
        result["usage"] = openai_usage(plan, n)
    return result


def _deltas(plan: Plan) -> list[bytes]:
    """Encoded deltas for one choice, role first, without the finish chunk."""
    dumps = jsonutil.dumps
    out = [_FIRST_DELTA]
    out += [dumps({"reasoning_content": p}) for p in split_text(plan.reasoning, plan.chunks)]
    out += [dumps({"content": p}) for p in split_text(plan.text, plan.chunks)]
    for index, call in enumerate(plan.tool_calls):
        head = {
            "index": index,
            "id": "call_" + call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        out.append(dumps({"tool_calls": [head]}))
        for piece in split_text(call.arguments, 3):
            out.append(dumps({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    return out


def chat_stream(
    rid: str, created: int, model: str, plan: Plan, n: int, include_usage: bool
) -> list[bytes]:
    head = (
        b'data: {"id":'
        + jsonutil.dumps(rid)
        + b',"object":"chat.completion.chunk","created":'
        + str(created).encode()
        + b',"model":'
        + jsonutil.dumps(model)
        + b',"system_fingerprint":null,"choices":[{"index":'
    )
    tail = _CHUNK_TAIL_USAGE if include_usage else _CHUNK_TAIL
    deltas = _deltas(plan)
    finish = jsonutil.dumps(finish_reason(plan))
    events: list[bytes] = []
    indexes = [str(i).encode() for i in range(n)]
    for delta in deltas:
        for idx in indexes:
            events.append(head + idx + b',"delta":' + delta + b',"finish_reason":null' + tail)
    for idx in indexes:
        events.append(head + idx + b',"delta":{},"finish_reason":' + finish + tail)
    if include_usage and not plan.directives.no_usage:
        usage = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "system_fingerprint": None,
            "choices": [],
            "usage": openai_usage(plan, n),
        }
        events.append(sse(jsonutil.dumps(usage)))
    events.append(DONE)
    return events


def stream_error_event(d: Directives) -> bytes | None:
    if d.midstream_error is None:
        return None
    return sse(jsonutil.dumps(openai_error_body(d.midstream_error or 500)))


def _int_field(body: dict[str, Any], name: str, default: int, high: int) -> int:
    value = body.get(name, default)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= high:
        return value
    return default


class OpenAIChat:
    """Handlers for the OpenAI text-generation endpoints."""

    def __init__(self, state: MockState) -> None:
        self.state = state

    async def _prelude(self, d: Directives) -> web.Response | None:
        config = self.state.config
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        return openai_error(d.error) if d.error is not None else None

    def _interval(self, d: Directives) -> float:
        return d.interval_ms if d.interval_ms is not None else self.state.config.chunk_interval_ms

    async def chat(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return openai_error(401)
        if not isinstance(body, dict):
            return openai_error(400, "We could not parse the JSON body of your request.")
        messages = body.get("messages")
        model = body.get("model")
        if not isinstance(messages, list) or not messages:
            return openai_error(400, "'messages' must be a non-empty array.", param="messages")
        if not isinstance(model, str) or not model:
            return openai_error(400, "you must provide a model parameter", param="model")
        problem = openai_chat_violation(body) if state.config.strict else None
        if problem is not None:
            return openai_error(400, problem)
        ask = chat_ask(body, messages)
        d = parse_directives(ask.last_user_text)
        early = await self._prelude(d)
        if early is not None:
            return early
        plan = plan_reply(ask, d, state.config)
        number = state.next_id()
        rid = f"chatcmpl-mock{number}"
        headers = {"x-request-id": f"req_mock{number}"}
        n = _int_field(body, "n", 1, 16)
        if body.get("stream") is True:
            options = body.get("stream_options")
            usage = isinstance(options, dict) and options.get("include_usage") is True
            events = chat_stream(rid, int(time.time()), model, plan, n, usage)
            return await send_stream(
                request,
                events,
                headers=headers,
                interval_ms=self._interval(d),
                drop_after=d.drop_after,
                error_event=stream_error_event(d),
            )
        return json_response(chat_completion(rid, int(time.time()), model, plan, n), 200, headers)

    async def completions(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return openai_error(401)
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return openai_error(400, "you must provide a model parameter", param="model")
        prompt = body.get("prompt", "")
        prompts = _prompts(prompt)
        last = prompts[-1] if prompts else ""
        ask = Ask(last_user_text=last, prompt_words=sum(count_words(p) for p in prompts))
        limit = body.get("max_tokens")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            ask.max_tokens = limit
        d = parse_directives(last)
        early = await self._prelude(d)
        if early is not None:
            return early
        plan = plan_reply(ask, d, state.config)
        rid = f"cmpl-mock{state.next_id()}"
        base = {"id": rid, "object": "text_completion", "created": int(time.time())}
        base["model"] = body["model"]
        reason = "length" if plan.truncated else "stop"
        if body.get("stream") is not True:
            result = dict(base)
            result["choices"] = [
                {"index": 0, "text": plan.text, "logprobs": None, "finish_reason": reason}
            ]
            if not d.no_usage:
                result["usage"] = _plain_usage(plan)
            return json_response(result)
        events = []
        pieces = split_text(plan.text, plan.chunks) or [""]
        for i, piece in enumerate(pieces):
            last_piece = i == len(pieces) - 1
            choice = {"index": 0, "text": piece, "logprobs": None}
            choice["finish_reason"] = reason if last_piece else None
            events.append(sse(jsonutil.dumps({**base, "choices": [choice]})))
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage") and not d.no_usage:
            events.append(sse(jsonutil.dumps({**base, "choices": [], "usage": _plain_usage(plan)})))
        events.append(DONE)
        return await send_stream(
            request,
            events,
            interval_ms=self._interval(d),
            drop_after=d.drop_after,
            error_event=stream_error_event(d),
        )


def _prompts(prompt: Any) -> list[str]:
    """Prompt texts; token-id prompts become their ids joined by spaces."""
    if isinstance(prompt, str):
        return [prompt]
    if not isinstance(prompt, list) or not prompt:
        return []
    if all(isinstance(p, int) for p in prompt):
        return [" ".join(str(p) for p in prompt)]
    out: list[str] = []
    for item in prompt:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, list):
            out.append(" ".join(str(p) for p in item))
    return out


def _plain_usage(plan: Plan) -> dict[str, int]:
    return {
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": plan.completion_tokens,
        "total_tokens": plan.prompt_tokens + plan.completion_tokens,
    }
