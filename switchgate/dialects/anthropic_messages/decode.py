"""Anthropic Messages request body -> canonical ChatRequest (validation included).

Everything the IR doesn't model lands in `extras["anthropic"]`, keyed by its body field
name, so the Anthropic provider can put it back. Three keys are special:
`anthropic-beta` (the client's header value), `tools` (server tools only: the function
tools are in `ChatRequest.tools`) and `thinking` (the raw setting, kept only when the
IR can't express it, e.g. `adaptive`).
"""

import re
from collections.abc import Mapping
from typing import Any, Final

from switchgate.core.request import (
    ChatRequest,
    HostedTool,
    Reasoning,
    ResponseFormat,
    Sampling,
    ToolChoice,
    ToolSpec,
)
from switchgate.dialects.anthropic_messages.decode_content import (
    DIALECT,
    bad_field,
    decode_messages,
    decode_system,
)
from switchgate.errors import invalid
from switchgate.wire.hosted_tools import anthropic_hosted

EXTRA_BETA: Final = "anthropic-beta"
_VERSION_RE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MODELED: Final = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "system",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "tools",
        "tool_choice",
        "thinking",
        "metadata",
        "stream",
    }
)
_CHOICE_MODES: Final[dict[str, str]] = {
    "auto": "auto",
    "any": "required",
    "tool": "tool",
    "none": "none",
}
MIN_THINKING_BUDGET: Final = 1024


def anthropic_to_core_request(body: Any, headers: Mapping[str, str]) -> ChatRequest:
    """Validate and convert a `POST /v1/messages` body; raises GatewayError(INVALID_REQUEST)."""
    return _decode(body, headers, require_max_tokens=True)


def anthropic_count_tokens_request(body: Any, headers: Mapping[str, str]) -> ChatRequest:
    """Same as `anthropic_to_core_request` for `/v1/messages/count_tokens` (no max_tokens)."""
    return _decode(body, headers, require_max_tokens=False)


def _decode(body: Any, headers: Mapping[str, str], *, require_max_tokens: bool) -> ChatRequest:
    version = headers.get("anthropic-version")
    if version is None:
        raise invalid("anthropic-version: header is required", param="anthropic-version")
    if not _VERSION_RE.match(version.strip()):
        raise invalid(
            "anthropic-version: header must be a date in YYYY-MM-DD form", param="anthropic-version"
        )
    if not isinstance(body, dict):
        raise invalid("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("model: field required (a non-empty string)", param="model")
    extras: dict[str, Any] = {k: v for k, v in body.items() if k not in _MODELED}
    if headers.get(EXTRA_BETA):
        extras[EXTRA_BETA] = headers[EXTRA_BETA]
    tools, server_tools = _tools(body.get("tools"))
    hosted: tuple[HostedTool, ...] = ()
    if server_tools:
        extras["tools"] = server_tools  # raw, for Anthropic upstreams
        hosted = tuple(anthropic_hosted(t) for t in server_tools)  # for the others
    tool_choice, parallel = _tool_choice(body.get("tool_choice"))
    reasoning = _reasoning(body.get("thinking"), body.get("output_config"), extras)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise invalid("stream: must be a boolean", param="stream")
    return ChatRequest(
        model=model,
        messages=decode_messages(body.get("messages")),
        system=decode_system(body.get("system")),
        tools=tools,
        hosted_tools=hosted,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel,
        sampling=_sampling(body, require_max_tokens),
        response_format=_response_format(body.get("output_config")),
        reasoning=reasoning,
        user=_user(body.get("metadata"), extras),
        stream=stream,
        extras={DIALECT: extras} if extras else {},
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _sampling(body: dict[str, Any], require_max_tokens: bool) -> Sampling:
    max_tokens = body.get("max_tokens")
    if max_tokens is None and require_max_tokens:
        raise invalid("max_tokens: field required", param="max_tokens")
    if max_tokens is not None and (not _is_int(max_tokens) or max_tokens < 1):
        raise invalid("max_tokens: must be an integer >= 1", param="max_tokens")
    for name in ("temperature", "top_p"):
        value = body.get(name)
        if value is not None and (not _is_number(value) or not 0 <= value <= 1):
            raise invalid(f"{name}: must be a number between 0 and 1", param=name)
    top_k = body.get("top_k")
    if top_k is not None and (not _is_int(top_k) or top_k < 0):
        raise invalid("top_k: must be an integer >= 0", param="top_k")
    stop = body.get("stop_sequences")
    if stop is None:
        stop = []
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise invalid("stop_sequences: must be a list of strings", param="stop_sequences")
    temperature, top_p = body.get("temperature"), body.get("top_p")
    return Sampling(
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature),
        top_p=None if top_p is None else float(top_p),
        top_k=top_k,
        stop=tuple(stop),
    )


def _user(metadata: Any, extras: dict[str, Any]) -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise invalid("metadata: must be an object", param="metadata")
    rest = {k: v for k, v in metadata.items() if k != "user_id"}
    if rest:
        extras["metadata"] = rest
    user = metadata.get("user_id")
    if user is not None and not isinstance(user, str):
        raise invalid("metadata.user_id: must be a string", param="metadata.user_id")
    return user


def _tools(tools: Any) -> tuple[tuple[ToolSpec, ...], list[Any]]:
    if tools is None:
        return (), []
    if not isinstance(tools, list):
        raise invalid("tools: must be a list", param="tools")
    specs: list[ToolSpec] = []
    server: list[Any] = []
    for i, tool in enumerate(tools):
        param = f"tools.{i}"
        if not isinstance(tool, dict):
            raise invalid(f"{param}: must be an object", param=param)
        if tool.get("type") not in (None, "custom"):
            server.append(tool)
            continue
        name, schema = tool.get("name"), tool.get("input_schema")
        if not isinstance(name, str) or not name:
            raise bad_field(f"{param}.name", "field required")
        if not isinstance(schema, dict):
            raise bad_field(f"{param}.input_schema", "must be an object")
        description, cache = tool.get("description"), tool.get("cache_control")
        strict = tool.get("strict")
        if description is not None and not isinstance(description, str):
            raise bad_field(f"{param}.description", "must be a string")
        if cache is not None and not isinstance(cache, dict):
            raise bad_field(f"{param}.cache_control", "must be an object")
        specs.append(
            ToolSpec(
                name=name,
                description=description,
                parameters=schema,
                strict=strict if isinstance(strict, bool) else None,
                cache_control=cache,
            )
        )
    return tuple(specs), server


def _tool_choice(choice: Any) -> tuple[ToolChoice | None, bool | None]:
    if choice is None:
        return None, None
    if not isinstance(choice, dict) or choice.get("type") not in _CHOICE_MODES:
        raise invalid(
            "tool_choice: must be an object with type auto, any, tool or none", param="tool_choice"
        )
    mode = _CHOICE_MODES[choice["type"]]
    name = choice.get("name")
    if mode == "tool" and (not isinstance(name, str) or not name):
        raise invalid("tool_choice.name: field required for type tool", param="tool_choice.name")
    disable = choice.get("disable_parallel_tool_use")
    if disable is not None and not isinstance(disable, bool):
        raise invalid(
            "tool_choice.disable_parallel_tool_use: must be a boolean",
            param="tool_choice.disable_parallel_tool_use",
        )
    result = ToolChoice(mode, name if mode == "tool" else None)  # type: ignore[arg-type]
    return result, (False if disable else None)


def _reasoning(thinking: Any, output_config: Any, extras: dict[str, Any]) -> Reasoning | None:
    effort = output_config.get("effort") if isinstance(output_config, dict) else None
    effort = effort if isinstance(effort, str) else None
    if thinking is None:
        return Reasoning(effort=effort) if effort else None
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if not _is_int(budget) or budget < MIN_THINKING_BUDGET:
            raise invalid(
                f"thinking.budget_tokens: must be an integer >= {MIN_THINKING_BUDGET}",
                param="thinking.budget_tokens",
            )
        if set(thinking) - {"type", "budget_tokens"}:
            extras["thinking"] = thinking
        # Anthropic thinking comes back as blocks: a Gemini upstream must include thoughts.
        return Reasoning(enabled=True, effort=effort, budget_tokens=budget, include_thoughts=True)
    if kind == "disabled":
        return Reasoning(enabled=False)
    if kind == "adaptive":
        extras["thinking"] = thinking
        return Reasoning(enabled=True, effort=effort, include_thoughts=True)
    raise invalid("thinking: type must be enabled, disabled or adaptive", param="thinking")


def _response_format(output_config: Any) -> ResponseFormat | None:
    if not isinstance(output_config, dict):
        return None
    fmt = output_config.get("format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        return ResponseFormat("json_schema", schema=schema if isinstance(schema, dict) else None)
    return None
