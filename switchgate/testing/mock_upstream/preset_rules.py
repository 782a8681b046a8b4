"""What each OpenAI-compatible vendor refuses, as the fake upstream's preset modes check it
(presets.py). Each rule answers in that vendor's error shape and status, so an adapter that
sends what the real service refuses fails its test. Independent of switchgate.providers:
the vendors' rules are restated here from their documentation, not imported.
"""

import re
from collections.abc import Callable
from typing import Any, Final

from aiohttp import web

from .errors import openai_error
from .httpkit import json_response

Rule = Callable[[dict[str, Any]], web.Response | None]

_NINE_ALNUM: Final = re.compile(r"[A-Za-z0-9]{9}")
# Mistral's chat completion request schema (strict: anything else is a 422).
MISTRAL_FIELDS: Final = frozenset(
    {
        "model",
        "messages",
        "temperature",
        "top_p",
        "max_tokens",
        "stream",
        "stop",
        "random_seed",
        "response_format",
        "tools",
        "tool_choice",
        "presence_penalty",
        "frequency_penalty",
        "n",
        "prediction",
        "parallel_tool_calls",
        "prompt_mode",
        "safe_prompt",
    }
)
_MISTRAL_MESSAGE_FIELDS: Final = frozenset(
    {"role", "content", "tool_calls", "tool_call_id", "name", "prefix"}
)


def fastapi_422(loc: list[Any], input_value: Any, kind: str = "extra_forbidden") -> web.Response:
    """A FastAPI/pydantic validation error, as Mistral (and vLLM) send it."""
    message = "Extra inputs are not permitted" if kind == "extra_forbidden" else "Invalid input"
    detail = [{"type": kind, "loc": ["body", *loc], "msg": message, "input": input_value}]
    return json_response({"detail": detail}, 422)


def mistral_error(message: str, status: int = 422) -> web.Response:
    body = {
        "object": "error",
        "message": message,
        "type": "invalid_request_message_error",
        "param": None,
        "code": None,
    }
    return json_response(body, status)


def mistral_rules(body: dict[str, Any]) -> web.Response | None:
    for name, value in body.items():
        if name not in MISTRAL_FIELDS:
            return fastapi_422([name], value)
    seen: set[str] = set()
    for i, message in enumerate(body.get("messages") or ()):
        if not isinstance(message, dict):
            continue
        for name, value in message.items():
            if name not in _MISTRAL_MESSAGE_FIELDS:
                return fastapi_422(["messages", i, str(message.get("role")), name], value)
        for call in message.get("tool_calls") or ():
            call_id = call.get("id") if isinstance(call, dict) else None
            if not isinstance(call_id, str) or not _NINE_ALNUM.fullmatch(call_id):
                return mistral_error(_id_message(call_id))
            seen.add(call_id)
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str) or not _NINE_ALNUM.fullmatch(call_id):
                return mistral_error(_id_message(call_id))
            if call_id not in seen:
                return mistral_error(f"Unexpected tool call id {call_id} in tool results", 400)
    return None


def _id_message(call_id: Any) -> str:
    return f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of 9."


def thinking_on(body: dict[str, Any]) -> bool:
    """DeepSeek: thinking mode is on for deepseek-reasoner, or when asked for."""
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled"):
        return bool(thinking["type"] == "enabled")
    return "reasoner" in str(body.get("model", ""))


def deepseek_rules(body: dict[str, Any]) -> web.Response | None:
    if not thinking_on(body):
        return None
    for name in ("logprobs", "top_logprobs"):
        if name in body:
            return openai_error(400, f"{name} is not supported in thinking mode", param=name)
    for i, message in enumerate(body.get("messages") or ()):
        if (
            isinstance(message, dict)
            and message.get("role") == "assistant"
            and message.get("tool_calls")
            and not message.get("reasoning_content")
        ):
            return openai_error(
                400,
                "Missing `reasoning_content` field in the assistant message at message index"
                f" {i}. The reasoning_content in the thinking mode must be passed back to the API.",
            )
    return None


def groq_rules(body: dict[str, Any]) -> web.Response | None:
    for name in ("logprobs", "logit_bias", "top_logprobs"):
        if name in body:
            return openai_error(400, f"'{name}' : property '{name}' is unsupported", param=name)
    n = body.get("n")
    if isinstance(n, int) and n != 1:
        return openai_error(400, "'n' : number must be at most 1", param="n")
    for i, message in enumerate(body.get("messages") or ()):
        if isinstance(message, dict) and "name" in message:
            return openai_error(400, "'messages.name' : property 'name' is unsupported")
        if isinstance(message, dict) and "reasoning_content" in message:
            return openai_error(
                400,
                f"'messages.{i}' : for 'role:{message.get('role')}' the following must be"
                f" satisfied[('messages.{i}' : property 'reasoning_content' is unsupported)]",
            )
    return None


def moonshot_rules(body: dict[str, Any]) -> web.Response | None:
    temperature = body.get("temperature")
    if isinstance(temperature, int | float) and not 0 <= temperature <= 1:
        return openai_error(
            400, f"invalid temperature: {temperature}, must be in [0, 1]", param="temperature"
        )
    return None


_GROK_EFFORT: Final = ("grok-3-mini", "grok-4.3", "grok-4.20-multi-agent")


def xai_rules(body: dict[str, Any]) -> web.Response | None:
    """xAI: reasoning_effort only on the Grok models that take it (grok-3-mini...)."""
    model = str(body.get("model") or "")
    if "reasoning_effort" in body and not any(m in model for m in _GROK_EFFORT):
        error = f"Model {model} does not support parameter reasoningEffort."
        return json_response({"code": "Client specified an invalid argument", "error": error}, 400)
    return None


def qwen_rules(body: dict[str, Any]) -> web.Response | None:
    """DashScope: thinking only in streams (hybrid Qwen3 models)."""
    if body.get("enable_thinking") is True and body.get("stream") is not True:
        return openai_error(
            400,
            "parameter.enable_thinking must be set to false for non-streaming calls",
            code="invalid_parameter_error",
        )
    return None


def qwen_embed_limit(model: str) -> int:
    """DashScope text embeddings per request: 25 for text-embedding-v1/v2, else 10."""
    return 25 if model.startswith(("text-embedding-v1", "text-embedding-v2")) else 10


def qwen_embed_rules(body: dict[str, Any]) -> web.Response | None:
    texts = body.get("input")
    limit = qwen_embed_limit(str(body.get("model") or ""))
    if isinstance(texts, list) and len(texts) > limit:
        return openai_error(
            400,
            f"<400> InternalError.Algo.InvalidParameter: Value error, batch size is invalid,"
            f" it should not be larger than {limit}.: input.contents",
            code="InvalidParameter",
        )
    return None


def siliconflow_rules(body: dict[str, Any]) -> web.Response | None:
    budget = body.get("thinking_budget")
    if budget is not None and not (isinstance(budget, int) and 128 <= budget <= 32768):
        return openai_error(400, "thinking_budget must be in [128, 32768]", param="thinking_budget")
    return None


def no_rules(body: dict[str, Any]) -> web.Response | None:
    return None


RULES: Final[dict[str, Rule]] = {
    "mistral": mistral_rules,
    "deepseek": deepseek_rules,
    "groq": groq_rules,
    "moonshot": moonshot_rules,
    "qwen": qwen_rules,
    "xai": xai_rules,
    "siliconflow": siliconflow_rules,
}
