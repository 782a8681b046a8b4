"""Canonical ChatResponse -> OpenAI `chat.completion` body (protocols §1.4).

- Text parts are joined into `message.content` (null when the turn is only tool calls).
- Thinking goes out as the `reasoning_content` extension (see decode.py); its signature as
  `reasoning_signature` when the response holds exactly one signed thinking part.
  Redacted thinking and per-call signatures have no O form and are dropped.
- finish_reason per protocols §5.6; `stop` with tool calls in the turn becomes `tool_calls`
  (agent loops key on it).
"""

import time
import uuid
from typing import Any, Final

from switchgate.core.content import TextPart, ThinkingPart, ToolCallPart
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage
from switchgate.jsonutil import dumps

FINISH_REASONS: Final[dict[FinishReason, str]] = {
    FinishReason.STOP: "stop",
    FinishReason.STOP_SEQUENCE: "stop",
    FinishReason.LENGTH: "length",
    FinishReason.TOOL_CALLS: "tool_calls",
    FinishReason.CONTENT_FILTER: "content_filter",
    FinishReason.PAUSE: "stop",
    FinishReason.ERROR: "stop",
}


def finish_reason_to_openai(reason: FinishReason, has_tool_calls: bool) -> str:
    mapped = FINISH_REASONS[reason]
    return "tool_calls" if has_tool_calls and mapped == "stop" else mapped


def completion_id(raw: str) -> str:
    """`chatcmpl-...`: the upstream id if it already is one, else prefixed (or fresh)."""
    if raw.startswith("chatcmpl-"):
        return raw
    return "chatcmpl-" + (raw or uuid.uuid4().hex)


def usage_to_openai(usage: Usage) -> dict[str, Any]:
    prompt_details: dict[str, int] = {"cached_tokens": usage.cache_read_tokens, "audio_tokens": 0}
    if usage.cache_write_tokens:
        prompt_details["cache_write_tokens"] = usage.cache_write_tokens
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": prompt_details,
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def core_to_openai_chat_response(resp: ChatResponse, request: ChatRequest) -> bytes:
    texts: list[str] = []
    thinking: list[ThinkingPart] = []
    calls: list[dict[str, Any]] = []
    for part in resp.parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif isinstance(part, ToolCallPart):
            calls.append(
                {
                    "id": part.id,
                    "type": "function",
                    "function": {"name": part.name, "arguments": part.arguments},
                }
            )
        elif part.redacted is None:
            thinking.append(part)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(texts) if texts or not calls else None,
        "refusal": None,
    }
    if thinking:
        message["reasoning_content"] = "".join(t.text for t in thinking)
        signed = [t.signature for t in thinking if t.signature]
        if len(thinking) == 1 and signed:
            message["reasoning_signature"] = signed[0]
    if calls:
        message["tool_calls"] = calls
    body = {
        "id": completion_id(resp.id),
        "object": "chat.completion",
        "created": resp.created or int(time.time()),
        "model": resp.model or request.model,
        "system_fingerprint": None,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason_to_openai(resp.finish_reason, bool(calls)),
            }
        ],
        "usage": usage_to_openai(resp.usage),
    }
    return dumps(body)
