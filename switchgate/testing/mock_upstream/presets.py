"""Preset modes: the fake upstream behaving like one OpenAI-compatible vendor, under
`/presets/{vendor}/v1/...` (a channel's base URL is `{mock}/presets/{vendor}/v1`).

Each mode is the plain OpenAI Chat Completions double (openai_chat.py) plus what the
vendor does differently, so a preset adapter that gets a quirk wrong fails its test:

- requests are checked by the vendor's rules (preset_rules.py: Mistral's 422s and tool-call
  id rule, DeepSeek's thinking-mode rules, Groq's unsupported fields (reasoning_content
  in past turns too), Moonshot's temperature range, DashScope's thinking only in
  streams and at most 10 texts per embeddings call, xAI's reasoning_effort on Grok
  models that lack it...);
- auth: a bearer key, except the local servers (ollama, vllm, lmstudio) that take none;
- replies: DeepSeek, Qwen and SiliconFlow reason in `reasoning_content` when thinking is
  on, OpenRouter, vLLM and Groq in `reasoning`; Mistral's magistral models answer content
  chunks with "thinking" parts, its tool-call ids are 9 alphanumerics and its streams
  carry usage in the last chunk without stream_options; Groq streams put usage under
  `x_groq.usage`.
Unknown vendors are a 404.
"""

import time
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web

from switchgate import jsonutil

from .auth import bearer_ok
from .directives import parse_directives
from .errors import openai_error
from .httpkit import json_response, pause, send_stream, sse
from .openai_chat import chat_ask, chat_completion, chat_stream, stream_error_event
from .openai_embed import OpenAIEmbeddings
from .preset_rules import RULES, fastapi_422, no_rules, qwen_embed_rules, thinking_on
from .reply import plan_reply
from .state import MockState

VENDORS: Final = frozenset(
    {
        "deepseek",
        "mistral",
        "ollama",
        "groq",
        "xai",
        "together",
        "fireworks",
        "openrouter",
        "moonshot",
        "qwen",
        "siliconflow",
        "vllm",
        "lmstudio",
    }
)
KEYLESS: Final = frozenset({"ollama", "vllm", "lmstudio"})
EMBEDDINGS: Final = frozenset(
    {"mistral", "ollama", "together", "fireworks", "qwen", "siliconflow", "vllm", "lmstudio"}
)
_MISTRAL_EMBED_FIELDS: Final = frozenset(
    {"model", "input", "encoding_format", "output_dimension", "output_dtype"}
)
_REASONING_KEY: Final = {"openrouter": "reasoning", "vllm": "reasoning", "groq": "reasoning"}


def _reasons(vendor: str, body: dict[str, Any]) -> bool:
    if vendor == "deepseek":
        return thinking_on(body)
    if vendor in ("qwen", "siliconflow"):
        return body.get("enable_thinking") is True
    if vendor == "mistral":
        return "magistral" in str(body.get("model", ""))
    if vendor == "openrouter":
        asked = body.get("reasoning")
        if isinstance(asked, dict):
            return asked.get("effort") != "none" and asked.get("enabled") is not False
        return isinstance(body.get("reasoning_effort"), str) and body["reasoning_effort"] != "none"
    return isinstance(body.get("reasoning_effort"), str) and body["reasoning_effort"] != "none"


def _short_id(call_id: Any) -> Any:
    """Mistral's own ids: 9 alphanumerics (the mock's are "call_" + hex)."""
    return call_id[5:14] if isinstance(call_id, str) and call_id.startswith("call_") else call_id


class ReplyShaper:
    """Rewrites the plain O reply (a body or a chunk) into one vendor's form."""

    def __init__(self, vendor: str) -> None:
        self.vendor = vendor
        self.usage_sent = False

    def message(self, message: dict[str, Any]) -> None:
        reasoning = message.pop("reasoning_content", None)
        if isinstance(reasoning, str) and reasoning:
            if self.vendor == "mistral":
                text = message.get("content")
                chunks: list[Any] = [
                    {"type": "thinking", "thinking": [{"type": "text", "text": reasoning}]}
                ]
                if isinstance(text, str) and text:
                    chunks.append({"type": "text", "text": text})
                message["content"] = chunks
            else:
                message[_REASONING_KEY.get(self.vendor, "reasoning_content")] = reasoning
        if self.vendor == "mistral":
            for call in message.get("tool_calls") or ():
                if "id" in call:
                    call["id"] = _short_id(call["id"])

    def body(self, data: dict[str, Any]) -> dict[str, Any]:
        for choice in data.get("choices") or ():
            for key in ("message", "delta"):
                if isinstance(choice.get(key), dict):
                    self.message(choice[key])
        return data

    def chunk(self, data: dict[str, Any], usage: dict[str, Any] | None) -> dict[str, Any] | None:
        """One stream chunk; None drops it. `usage` is the plan's, for the vendors that
        send it in the finish chunk whatever the request said."""
        self.body(data)
        if self.vendor in ("mistral", "groq"):
            if not data.get("choices"):
                return None  # the O usage-only chunk: these vendors have none
            finishing = any(c.get("finish_reason") for c in data["choices"])
            data.pop("usage", None)
            if finishing and usage is not None and not self.usage_sent:
                self.usage_sent = True
                if self.vendor == "groq":
                    data["x_groq"] = {"id": "req_mock", "usage": usage}
                else:
                    data["usage"] = usage
        return data


class PresetModes:
    """Handlers for `/presets/{vendor}/v1/chat/completions` and `.../embeddings`."""

    def __init__(self, state: MockState) -> None:
        self.state = state
        self._embed = OpenAIEmbeddings(state)

    def _auth(self, request: web.Request, vendor: str) -> web.Response | None:
        if vendor in KEYLESS or bearer_ok(request, self.state.config.accepted):
            return None
        return openai_error(401, "Invalid API Key", code="invalid_api_key")

    async def chat(self, request: web.Request) -> web.StreamResponse:
        vendor = request.match_info["vendor"]
        body = await self.state.intake(request)
        if vendor not in VENDORS:
            return openai_error(404, f"unknown vendor {vendor}")
        refused = self._auth(request, vendor)
        if refused is not None:
            return refused
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return openai_error(400, "'messages' must be a non-empty array.", param="messages")
        refused = RULES.get(vendor, no_rules)(body)
        if refused is not None:
            return refused
        return await self._reply(request, vendor, body)

    async def _reply(
        self, request: web.Request, vendor: str, body: dict[str, Any]
    ) -> web.StreamResponse:
        config = self.state.config
        ask = chat_ask(body, body["messages"])
        ask.reasoning = _reasons(vendor, body)
        d = parse_directives(ask.last_user_text)
        await pause(d.latency_ms if d.latency_ms is not None else config.latency_ms)
        if d.error is not None:
            return openai_error(d.error)
        plan = plan_reply(ask, d, config)
        rid = f"{vendor}-mock{self.state.next_id()}"
        model = str(body.get("model") or "")
        shaper = ReplyShaper(vendor)
        if body.get("stream") is not True:
            reply = chat_completion(rid, int(time.time()), model, plan, 1)
            return json_response(shaper.body(reply))
        options = body.get("stream_options")
        asked = isinstance(options, dict) and options.get("include_usage") is True
        plain = chat_stream(rid, int(time.time()), model, plan, 1, True)
        usage = _usage_of(plain) if not d.no_usage else None
        events = _reshape(plain, lambda c: shaper.chunk(c, usage), keep_usage=asked)
        interval = d.interval_ms if d.interval_ms is not None else config.chunk_interval_ms
        return await send_stream(
            request,
            events,
            interval_ms=interval,
            drop_after=d.drop_after,
            error_event=stream_error_event(d),
        )

    async def embeddings(self, request: web.Request) -> web.StreamResponse:
        vendor = request.match_info["vendor"]
        body = await self.state.intake(request)
        if vendor not in EMBEDDINGS:
            return openai_error(404, f"{vendor} serves no embeddings here")
        refused = self._auth(request, vendor)
        if refused is not None:
            return refused
        if vendor == "qwen" and isinstance(body, dict):
            refused = qwen_embed_rules(body)
            if refused is not None:
                return refused
        if vendor != "mistral":
            return await self._embed.answer(body)
        extra = sorted(set(body) - _MISTRAL_EMBED_FIELDS) if isinstance(body, dict) else []
        if extra:
            return fastapi_422([extra[0]], body[extra[0]])
        return await self._embed.answer(body, "output_dimension")


def _usage_of(events: list[bytes]) -> dict[str, Any] | None:
    for event in reversed(events):
        if event.startswith(b"data: {"):
            data = jsonutil.loads(event[6:])
            usage = data.get("usage") if isinstance(data, dict) else None
            if isinstance(usage, dict):
                return dict(usage)
    return None


def _reshape(
    events: list[bytes],
    shape: Callable[[dict[str, Any]], dict[str, Any] | None],
    keep_usage: bool,
) -> list[bytes]:
    """The plain O stream (made with usage) reshaped chunk by chunk; without
    stream_options.include_usage the usage chunk and the null `usage` keys go, as on O."""
    out: list[bytes] = []
    for event in events:
        if not event.startswith(b"data: {"):
            out.append(event)
            continue
        data = jsonutil.loads(event[6:])
        if not data.get("choices"):
            if not keep_usage:
                continue
        elif not keep_usage:
            data.pop("usage", None)
        shaped = shape(data)
        if shaped is not None:
            out.append(sse(jsonutil.dumps(shaped)))
    return out
