"""Strict mode (`MockConfig.strict`, `mock-upstream --strict`): the fake upstream refuses,
with the real provider's status and error shape, what the real provider is known to
refuse, so a gateway translation that would fail in production fails in tests too.
Each check returns the error message, or None when the body is acceptable.

- Anthropic Messages: a role other than user/assistant inside `messages` (the real API:
  `messages.N.role: ...`), an empty text block, a first message that isn't the user's.
- Gemini generateContent: function schemas (`parametersJsonSchema` / `parameters`) with
  keys outside the JSON Schema subset Gemini documents for function declarations;
  Google Search grounding combined with function declarations; a functionResponse
  without its `name`.
- OpenAI Chat: tool types other than function/custom (hosted tools such as `namespace`
  or `web_search` exist only in the Responses API), tool names outside
  `^[a-zA-Z0-9_-]{1,64}$`, and a `tool` message that answers no earlier tool call.
"""

import re
from typing import Any, Final

# The JSON Schema keys Gemini documents for function declaration schemas (plus the
# OpenAPI-style `nullable` and Gemini's `propertyOrdering`).
GEMINI_SCHEMA_KEYS: Final = frozenset(
    {
        "type", "format", "title", "description", "nullable", "enum", "items", "prefixItems",
        "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf", "properties",
        "additionalProperties", "required", "propertyOrdering", "minLength", "maxLength",
        "pattern", "minProperties", "maxProperties", "$ref", "$defs", "$id", "$anchor",
        "default",
    }
)  # fmt: skip
_SCHEMA_MAPS: Final = ("properties", "$defs")
_SCHEMA_LISTS: Final = ("anyOf", "oneOf", "prefixItems")
_OPENAI_TOOL_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def anthropic_violation(body: dict[str, Any]) -> str | None:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        for j, block in enumerate(blocks):
            if isinstance(block, dict) and block.get("type") == "text" and not block.get("text"):
                return f"messages.{i}.content.{j}.text: text content blocks must be non-empty"
    if messages and isinstance(messages[0], dict) and messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    return None


def _schema_problem(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    for key, value in schema.items():
        if key not in GEMINI_SCHEMA_KEYS:
            return f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}'"
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            for name, sub in value.items():
                problem = _schema_problem(sub, f"{where}.{key}[{name}]")
                if problem:
                    return problem
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            for n, sub in enumerate(value):
                problem = _schema_problem(sub, f"{where}.{key}[{n}]")
                if problem:
                    return problem
        elif key in ("items", "additionalProperties"):
            problem = _schema_problem(value, f"{where}.{key}")
            if problem:
                return problem
    return None


def gemini_violation(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    declared = False
    search = False
    for t, tool in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(tool, dict):
            continue
        search = search or "googleSearch" in tool or "google_search" in tool
        decls = tool.get("functionDeclarations") or tool.get("function_declarations") or []
        for d, decl in enumerate(decls if isinstance(decls, list) else []):
            declared = True
            for field in ("parametersJsonSchema", "parameters_json_schema", "parameters"):
                if isinstance(decl, dict) and field in decl:
                    where = f"tools[{t}].function_declarations[{d}].{field}"
                    problem = _schema_problem(decl[field], where)
                    if problem:
                        return problem
    if declared and search:
        return "Tool use with function calling is unsupported with Google Search grounding"
    for c, content in enumerate(body.get("contents") or []):
        parts = content.get("parts") if isinstance(content, dict) else None
        for p, part in enumerate(parts if isinstance(parts, list) else []):
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict) and not response.get("name"):
                return f"contents[{c}].parts[{p}].function_response.name: Name cannot be empty."
    return None


def openai_chat_violation(body: dict[str, Any]) -> str | None:
    tools = body.get("tools")
    for i, tool in enumerate(tools if isinstance(tools, list) else []):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind not in ("function", "custom"):
            return f"Invalid value: '{kind}'. Supported values are: 'function' and 'custom'."
        spec = tool.get(kind) if isinstance(tool.get(kind), dict) else {}
        name = spec.get("name")
        if not isinstance(name, str) or not _OPENAI_TOOL_NAME.match(name):
            return f"Invalid 'tools[{i}].function.name': string does not match pattern."
    called: set[str] = set()
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                called.add(call["id"])
        if message.get("role") == "tool" and message.get("tool_call_id") not in called:
            return (
                "Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'."
            )
    return None
