"""OpenAI Chat Completions responses and errors -> canonical form.

- `reasoning_content` (the one reasoning extension we read, see the O dialect) becomes a
  ThinkingPart ahead of the text; `refusal` becomes text; legacy `function_call` becomes
  a tool call with a synthesised `call_` + 24 hex id.
- `stop` with tool calls present means TOOL_CALLS (some servers say `stop`); Mistral's
  `model_length` is LENGTH; a failed generation's finish (`error`,
  `insufficient_system_resource`) is raised as a retryable upstream error.
- Errors: the upstream message is kept, minus anything that looks like a key, a bearer
  token or a URL. A bad channel key (401/403) or an exhausted channel quota is the
  gateway's problem, so the client sees a 5xx, never the upstream text.
"""

import re
import secrets
from collections.abc import Callable
from typing import Any, Final

from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage, reported_count
from switchgate.errors import ErrorKind, GatewayError
from switchgate.jsonutil import JSONDecodeError, dumps_str, loads

FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "stop": FinishReason.STOP,
    "length": FinishReason.LENGTH,
    "tool_calls": FinishReason.TOOL_CALLS,
    "function_call": FinishReason.TOOL_CALLS,
    "content_filter": FinishReason.CONTENT_FILTER,
    "model_length": FinishReason.LENGTH,  # Mistral: the model's context window was reached
}
# A finish that says the generation failed (Mistral `error`, DeepSeek
# `insufficient_system_resource`): not a successful stop but a retryable upstream error.
FAILED_FINISHES: Final = frozenset({"error", "insufficient_system_resource"})
# Key formats of the vendors served through this reader: OpenAI, DeepSeek, Moonshot, Qwen,
# SiliconFlow `sk-` (OpenRouter `sk-or-v1-`), Groq `gsk_`, xAI `xai-`, Fireworks `fw_`,
# Together `tgp_v1_` (older keys: 64 hex), Perplexity `pplx-`, Replicate `r8_`, Hugging Face
# `hf_`, Jina `jina_`, Google `AIza`; Mistral's have no prefix (32 letters and digits): a
# long run of letters and digits mixing both is redacted too.
_SECRET: Final = re.compile(
    r"(?i)\bbearer\s+[^\s\"',]+"
    r"|\b(?:sk|pk|rk|xai|pplx)-[A-Za-z0-9_\-*.]{6,}"
    r"|\b(?:gsk|fw|tgp_v1|r8|hf|jina)_[A-Za-z0-9_\-*.]{6,}"
    r"|\bAIza[0-9A-Za-z_\-]{20,}"
    r"|\b(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{32,}\b"
    r"|https?://[^\s\"'<>()\[\]]+"
)
_MAX_MESSAGE: Final = 1000


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


def failed_finish(raw: Any) -> GatewayError | None:
    """The error a failed generation's `finish_reason` stands for (None: it did not fail)."""
    if raw not in FAILED_FINISHES:
        return None
    return GatewayError(ErrorKind.UPSTREAM_ERROR, f"upstream generation failed ({raw})")


def finish_from_openai(raw: Any, has_tool_calls: bool) -> FinishReason:
    reason = FINISH_REASONS.get(raw, FinishReason.STOP) if isinstance(raw, str) else None
    if has_tool_calls and reason in (FinishReason.STOP, None):
        return FinishReason.TOOL_CALLS
    return reason or FinishReason.STOP


def _int(container: Any, key: str) -> int:
    return reported_count(container.get(key) if isinstance(container, dict) else None, key)


def usage_from_openai(raw: Any) -> Usage | None:
    """Usage from an O `usage` object (`prompt_tokens` includes cached tokens)."""
    if not isinstance(raw, dict):
        return None
    prompt_details = raw.get("prompt_tokens_details")
    cached = _int(prompt_details, "cached_tokens") or _int(raw, "prompt_cache_hit_tokens")
    return Usage(
        input_tokens=_int(raw, "prompt_tokens"),
        output_tokens=_int(raw, "completion_tokens"),
        cache_read_tokens=cached,
        cache_write_tokens=_int(prompt_details, "cache_write_tokens"),
        reasoning_tokens=_int(raw.get("completion_tokens_details"), "reasoning_tokens"),
    )


def parse_openai_response(
    body: bytes, normalize: Callable[[dict[str, Any]], dict[str, Any]] | None = None
) -> ChatResponse:
    """`normalize` rewrites the parsed body into the O shape first (an OpenAI-compatible
    preset's quirks, providers/openai_quirks.py)."""
    try:
        data = loads(body)
    except JSONDecodeError:
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned invalid JSON") from None
    if not isinstance(data, dict):
        raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned an unexpected body")
    if normalize is not None:
        data = normalize(data)
    if data.get("error") is not None:
        raise error_from_payload(data)
    choices = data.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    failed = failed_finish(choice.get("finish_reason")) if isinstance(choice, dict) else None
    if failed is not None:  # a 200 whose generation failed: nothing to deliver
        raise failed
    message = choice.get("message") if isinstance(choice, dict) else None
    parts = message_parts(message if isinstance(message, dict) else {})
    has_calls = any(isinstance(p, ToolCallPart) for p in parts)
    created = data.get("created")
    return ChatResponse(
        id=str(data.get("id") or ""),
        model=str(data.get("model") or ""),
        parts=parts,
        finish_reason=finish_from_openai(choice.get("finish_reason"), has_calls),
        usage=usage_from_openai(data.get("usage")) or Usage(),
        created=created if isinstance(created, int) else 0,
    )


def message_parts(message: dict[str, Any]) -> tuple[OutputPart, ...]:
    parts: list[OutputPart] = []
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        parts.append(ThinkingPart(text=reasoning))
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with text parts
        content = "".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    if isinstance(content, str) and content:
        parts.append(TextPart(content))
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(TextPart(refusal))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            parts.append(_call(call.get("id"), function))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        parts.append(_call(None, legacy))
    return tuple(parts)


def _call(call_id: Any, function: dict[str, Any]) -> ToolCallPart:
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = "" if arguments is None else dumps_str(arguments)
    return ToolCallPart(
        id=call_id if isinstance(call_id, str) and call_id else new_call_id(),
        name=str(function.get("name") or ""),
        arguments=arguments,
    )


def scrub(text: str) -> str:
    """Remove what looks like a key, a bearer token or a URL; cap the length."""
    return _SECRET.sub("[redacted]", text)[:_MAX_MESSAGE]


def _details(data: Any) -> tuple[str | None, str | None, str | None]:
    """(message, param, code) from an O error body, or (None, None, None)."""
    error = data.get("error", data) if isinstance(data, dict) else None
    if isinstance(error, str):
        return error, None, None
    if not isinstance(error, dict):
        return None, None, None
    message, param, code = error.get("message"), error.get("param"), error.get("code")
    if message is None:
        message = error.get("detail")  # FastAPI-style servers (vLLM & co)
    return (
        message if isinstance(message, str) else None,
        param if isinstance(param, str) else None,
        code if isinstance(code, str) else None,
    )


def classify_openai_error(status: int, body: bytes) -> GatewayError:
    try:
        data: Any = loads(body) if body else None
    except JSONDecodeError:
        data = None
    message, param, code = _details(data)
    if message is None:
        text = body[:_MAX_MESSAGE].decode("utf-8", "replace").strip()
        message = text if text and not text.startswith("<") else f"HTTP {status}"
    message = scrub(message)
    kind: ErrorKind
    if status in (401, 403):
        return GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream authentication failed", upstream_status=status
        )
    if code == "insufficient_quota" or status == 402:
        return GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream quota exhausted", upstream_status=status
        )
    if status in (400, 404, 409, 413, 422):
        return GatewayError(
            ErrorKind.INVALID_REQUEST,
            message,
            param=param,
            code=code,
            upstream_status=status,
            status_override=status,
        )
    if status == 429:
        kind = ErrorKind.RATE_LIMITED
    elif status in (503, 529):
        kind = ErrorKind.UPSTREAM_OVERLOADED
    elif status in (504, 408):
        kind = ErrorKind.UPSTREAM_TIMEOUT
    else:
        kind = ErrorKind.UPSTREAM_ERROR
    return GatewayError(kind, f"upstream error: {message}", upstream_status=status)


def error_from_payload(data: dict[str, Any]) -> GatewayError:
    """Classify an error object that came with a 200 (a stream's `data: {"error":...}`)."""
    error = data.get("error")
    status = 500
    if isinstance(error, dict):
        raw = error.get("code") or error.get("status")
        kind = error.get("type")
        if isinstance(raw, int) and 400 <= raw < 600:
            status = raw
        elif isinstance(raw, str) and raw.isdigit() and 400 <= int(raw) < 600:
            status = int(raw)
        elif raw == "rate_limit_exceeded" or kind in ("rate_limit_error", "requests", "tokens"):
            status = 429
        elif raw == "context_length_exceeded" or kind == "invalid_request_error":
            status = 400
        elif kind == "overloaded_error":
            status = 503
    return classify_openai_error(status, dumps_str(data).encode())
