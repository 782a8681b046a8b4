"""What Cohere's `/v2/chat` and `/v2/embed` accept: each check returns the 400 message
Cohere would give, or None. Fields the API does not have are refused (an adapter that
sends OpenAI's `top_p` or `n` fails here), and so are values outside the documented
ranges (p 0.01-0.99, k 0-500, penalties 0-1, at most 5 stop sequences, 96 texts).
"""

from typing import Any, Final

CHAT_FIELDS: Final = frozenset(
    {
        "model", "messages", "tools", "strict_tools", "documents", "citation_options",
        "response_format", "safety_mode", "max_tokens", "stop_sequences", "temperature",
        "seed", "frequency_penalty", "presence_penalty", "k", "p", "logprobs",
        "tool_choice", "thinking", "stream", "priority",
    }
)  # fmt: skip
EMBED_FIELDS: Final = frozenset(
    {"model", "texts", "images", "inputs", "input_type", "embedding_types", "output_dimension",
     "truncate", "max_tokens", "priority"}
)  # fmt: skip
INPUT_TYPES: Final = frozenset(
    {"search_document", "search_query", "classification", "clustering", "image"}
)
EMBEDDING_TYPES: Final = frozenset({"float", "int8", "uint8", "binary", "ubinary", "base64"})
V4_DIMENSIONS: Final = frozenset({256, 512, 1024, 1536})
MAX_TEXTS: Final = 96


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _items(content: Any, allowed: frozenset[str], where: str) -> str | None:
    """A message `content`: a string, or a list of typed items of the allowed types."""
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"invalid request: {where}.content must be a string or an array"
    for j, item in enumerate(content):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind not in allowed:
            return f"invalid request: {where}.content[{j}] has an unsupported type {kind!r}"
        assert isinstance(item, dict)
        if kind == "text" and not isinstance(item.get("text"), str):
            return f"invalid request: {where}.content[{j}].text must be a string"
        if kind == "thinking" and not isinstance(item.get("thinking"), str):
            return f"invalid request: {where}.content[{j}].thinking must be a string"
        if kind == "image_url":
            image = item.get("image_url")
            if not isinstance(image, dict) or not isinstance(image.get("url"), str):
                return f"invalid request: {where}.content[{j}].image_url.url is required"
            if image.get("detail", "auto") not in ("auto", "low", "high"):
                return f"invalid request: {where}.content[{j}].image_url.detail is invalid"
        if kind == "document" and not isinstance(item.get("document"), dict):
            return f"invalid request: {where}.content[{j}].document must be an object"
    return None


def _tool_calls(calls: Any, where: str, seen: set[str]) -> str | None:
    if not isinstance(calls, list):
        return f"invalid request: {where}.tool_calls must be an array"
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("id"), str)
            or call.get("type") != "function"
            or not isinstance(function, dict)
            or not isinstance(function.get("name"), str)
            or not isinstance(function.get("arguments"), str)
        ):
            return (
                f"invalid request: {where}.tool_calls items need id, type 'function' and "
                "function.name / function.arguments (a string)"
            )
        seen.add(call["id"])
    return None


def _message(message: Any, where: str, seen: set[str]) -> str | None:
    role = message.get("role") if isinstance(message, dict) else None
    if role not in ("system", "user", "assistant", "tool"):
        return f"invalid request: {where}.role must be one of system, user, assistant, tool"
    assert isinstance(message, dict)
    if role == "system":
        return _items(message.get("content"), frozenset({"text"}), where)
    if role == "user":
        return _items(message.get("content"), frozenset({"text", "image_url", "document"}), where)
    if role == "tool":
        if message.get("tool_call_id") not in seen:
            return f"invalid request: {where}.tool_call_id does not match any tool call"
        return _items(message.get("content"), frozenset({"text", "document"}), where)
    if "content" not in message and "tool_calls" not in message:
        return f"invalid request: {where} needs content or tool_calls"
    if "tool_plan" in message and not isinstance(message["tool_plan"], str):
        return f"invalid request: {where}.tool_plan must be a string"
    if "tool_calls" in message:
        problem = _tool_calls(message["tool_calls"], where, seen)
        if problem:
            return problem
    if "content" in message:
        return _items(message["content"], frozenset({"text", "thinking"}), where)
    return None


def _tools(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return "invalid request: tools must be an array"
        for tool in tools:
            function = tool.get("function") if isinstance(tool, dict) else None
            if (
                not isinstance(tool, dict)
                or tool.get("type") != "function"
                or not isinstance(function, dict)
                or not isinstance(function.get("name"), str)
                or not isinstance(function.get("parameters", {}), dict)
            ):
                return "invalid request: tools items need type 'function' and function.name"
    choice = body.get("tool_choice")
    if choice is not None:
        if choice not in ("REQUIRED", "NONE"):
            return "invalid request: tool_choice must be REQUIRED or NONE"
        if not tools:
            return "invalid request: tool_choice requires tools"
    return None


def _ranges(body: dict[str, Any]) -> str | None:
    checks: list[tuple[str, bool]] = [
        ("max_tokens", _int(body.get("max_tokens", 1)) and body.get("max_tokens", 1) >= 1),
        ("temperature", _number(body.get("temperature", 0)) and body.get("temperature", 0) >= 0),
        ("p", _number(body.get("p", 0.5)) and 0.01 <= body.get("p", 0.5) <= 0.99),
        ("k", _int(body.get("k", 0)) and 0 <= body.get("k", 0) <= 500),
        ("seed", _int(body.get("seed", 0))),
        ("stream", isinstance(body.get("stream", False), bool)),
        ("strict_tools", isinstance(body.get("strict_tools", False), bool)),
    ]
    for name in ("frequency_penalty", "presence_penalty"):
        value = body.get(name, 0)
        checks.append((name, _number(value) and 0 <= value <= 1))
    for name, ok in checks:
        if not ok:
            return f"invalid request: {name} is out of range or of the wrong type"
    stops = body.get("stop_sequences", [])
    if not isinstance(stops, list) or len(stops) > 5 or not all(isinstance(s, str) for s in stops):
        return "invalid request: stop_sequences must be an array of at most 5 strings"
    return None


def _formats(body: dict[str, Any]) -> str | None:
    fmt = body.get("response_format")
    if fmt is not None:
        if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object"):
            return "invalid request: response_format.type must be text or json_object"
        if "json_schema" in fmt and not isinstance(fmt["json_schema"], dict):
            return "invalid request: response_format.json_schema must be an object"
        if fmt.get("type") == "json_object" and body.get("tools"):
            return "invalid request: response_format is not supported with tools"
    thinking = body.get("thinking")
    if thinking is not None:
        if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled"):
            return "invalid request: thinking.type must be enabled or disabled"
        budget = thinking.get("token_budget", 1)
        if not _int(budget) or budget < 1:
            return "invalid request: thinking.token_budget must be a positive integer"
    return None


def chat_violation(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "invalid request: the body must be a JSON object"
    unknown = sorted(set(body) - CHAT_FIELDS)
    if unknown:
        return f"invalid request: unknown field {unknown[0]!r}"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "invalid request: model is required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "invalid request: messages must be a non-empty array"
    seen: set[str] = set()
    for i, message in enumerate(messages):
        problem = _message(message, f"messages[{i}]", seen)
        if problem:
            return problem
    return _tools(body) or _ranges(body) or _formats(body)


def embed_violation(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "invalid request: the body must be a JSON object"
    unknown = sorted(set(body) - EMBED_FIELDS)
    if unknown:
        return f"invalid request: unknown field {unknown[0]!r}"
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return "invalid request: model is required"
    texts = body.get("texts")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return "invalid request: texts must be a non-empty array of strings"
    if len(texts) > MAX_TEXTS:
        return f"invalid request: texts cannot have more than {MAX_TEXTS} elements"
    if body.get("input_type") not in INPUT_TYPES:
        return "invalid request: valid input_type must be provided with the provided model"
    types = body.get("embedding_types", ["float"])
    if not isinstance(types, list) or not types or not set(types) <= EMBEDDING_TYPES:
        return "invalid request: embedding_types must be a non-empty array of known types"
    dims = body.get("output_dimension")
    if dims is not None:
        if not model.startswith("embed-v4"):
            return f"invalid request: output_dimension is not supported for model {model}"
        if dims not in V4_DIMENSIONS:
            return "invalid request: output_dimension must be one of 256, 512, 1024, 1536"
    return None
