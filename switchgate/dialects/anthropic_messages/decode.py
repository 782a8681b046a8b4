"""Anthropic Messages request body -> canonical ChatRequest (validation included).

Everything the IR doesn't model lands in `extras["anthropic"]`, keyed by its body field
name, so the Anthropic provider can put it back. Three keys are special:
`anthropic-beta` (the client's header value), `tools` (server tools only: the function
tools are in `ChatRequest.tools`) and `thinking` (the raw setting, kept only when the
IR can't express it, e.g. `adaptive`).
"""

import base64
import re
from collections.abc import Mapping
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import (
    FilePart,
    ImagePart,
    Part,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
    UnknownPart,
)
from switchgate.core.request import (
    ChatRequest,
    HostedTool,
    Message,
    Reasoning,
    ResponseFormat,
    Role,
    Sampling,
    ToolChoice,
    ToolSpec,
)
from switchgate.errors import GatewayError, invalid
from switchgate.wire.hosted_tools import anthropic_hosted

DIALECT: Final = "anthropic"
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

ToolResultContent = TextPart | ImagePart | FilePart


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
        messages=_messages(body.get("messages")),
        system=_system(body.get("system")),
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


def _bad(param: str, what: str) -> GatewayError:
    return invalid(f"{param}: {what}", param=param)


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


def _system(system: Any) -> tuple[TextPart, ...]:
    if system is None:
        return ()
    if isinstance(system, str):
        return (TextPart(system),) if system else ()
    if not isinstance(system, list):
        raise invalid("system: must be a string or a list of text blocks", param="system")
    parts: list[TextPart] = []
    for block in system:
        if not isinstance(block, dict) or block.get("type") != "text":
            raise invalid("system: only text blocks are allowed", param="system")
        parts.append(_text(block, "system"))
    return tuple(parts)


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
            raise _bad(f"{param}.name", "field required")
        if not isinstance(schema, dict):
            raise _bad(f"{param}.input_schema", "must be an object")
        description, cache = tool.get("description"), tool.get("cache_control")
        strict = tool.get("strict")
        if description is not None and not isinstance(description, str):
            raise _bad(f"{param}.description", "must be a string")
        if cache is not None and not isinstance(cache, dict):
            raise _bad(f"{param}.cache_control", "must be an object")
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


def _messages(messages: Any) -> tuple[Message, ...]:
    if not isinstance(messages, list) or not messages:
        raise invalid("messages: field required (a non-empty list)", param="messages")
    out: list[Message] = []
    for i, message in enumerate(messages):
        param = f"messages.{i}"
        if not isinstance(message, dict):
            raise invalid(f"{param}: must be an object", param=param)
        role: Role
        if message.get("role") == "user":
            role = "user"
        elif message.get("role") == "assistant":
            role = "assistant"
        elif message.get("role") == "system":
            out.append(Message("system", _system_message(message.get("content"), param)))
            continue
        else:
            raise _bad(f"{param}.role", "must be user, assistant or system")
        content = message.get("content")
        if isinstance(content, str):
            out.append(Message(role, (TextPart(content),)))
        elif isinstance(content, list):
            blocks = (_block(b, f"{param}.content.{j}") for j, b in enumerate(content))
            out.append(Message(role, tuple(blocks)))
        else:
            raise _bad(f"{param}.content", "must be a string or a list of blocks")
    return tuple(out)


def _system_message(content: Any, param: str) -> tuple[TextPart, ...]:
    """A `role: system` message (Claude Code sends them for models it doesn't know as
    Claude): text only, kept in place; see providers/system_messages.py."""
    if isinstance(content, str):
        return (TextPart(content),)
    if not isinstance(content, list):
        raise _bad(f"{param}.content", "must be a string or a list of text blocks")
    parts: list[TextPart] = []
    for j, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise _bad(f"{param}.content.{j}", "system messages may contain text blocks only")
        parts.append(_text(block, f"{param}.content.{j}"))
    return tuple(parts)


def _str(block: dict[str, Any], key: str, param: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise _bad(f"{param}.{key}", "must be a string")
    return value


def _text(block: dict[str, Any], param: str) -> TextPart:
    cache = block.get("cache_control")
    if cache is not None and not isinstance(cache, dict):
        raise _bad(f"{param}.cache_control", "must be an object")
    return TextPart(_str(block, "text", param), cache_control=cache)


def _block(block: Any, param: str) -> Part:
    if not isinstance(block, dict):
        raise invalid(f"{param}: must be an object", param=param)
    kind = block.get("type")
    if kind == "text":
        return _text(block, param)
    if kind in ("image", "document"):
        return _media(block, param)
    if kind == "tool_use":
        args = block.get("input", {})
        if not isinstance(args, dict):
            raise _bad(f"{param}.input", "must be an object")
        call_id, name = _str(block, "id", param), _str(block, "name", param)
        return ToolCallPart(call_id, name, jsonutil.dumps_str(args))
    if kind == "tool_result":
        return _tool_result(block, param)
    if kind == "thinking":
        signature = block.get("signature")
        text = _str(block, "thinking", param)
        return ThinkingPart(text, signature=signature if isinstance(signature, str) else None)
    if kind == "redacted_thinking":
        return ThinkingPart(redacted=_str(block, "data", param))
    return UnknownPart(DIALECT, block)


def _tool_result(block: dict[str, Any], param: str) -> ToolResultPart:
    tool_use_id = _str(block, "tool_use_id", param)
    content = block.get("content")
    parts: list[ToolResultContent] = []
    if isinstance(content, str):
        parts.append(TextPart(content))
    elif isinstance(content, list):
        for j, item in enumerate(content):
            part = _block(item, f"{param}.content.{j}")
            # Other nested blocks (search results, tool references) have no IR form.
            if isinstance(part, TextPart | ImagePart | FilePart):
                parts.append(part)
    elif content is not None:
        raise _bad(f"{param}.content", "must be a string or a list of blocks")
    is_error = block.get("is_error", False)
    return ToolResultPart(tool_use_id, tuple(parts), is_error=is_error is True)


def _media(block: dict[str, Any], param: str) -> Part:
    source = block.get("source")
    if not isinstance(source, dict):
        raise _bad(f"{param}.source", "must be an object")
    kind, image = source.get("type"), block["type"] == "image"
    sparam = f"{param}.source"
    if kind == "url":
        url = _str(source, "url", sparam)
        return ImagePart(url=url) if image else FilePart(url=url, title=_title(block))
    if kind == "base64":
        media_type, data = _str(source, "media_type", sparam), _str(source, "data", sparam)
        if image:
            return ImagePart(media_type=media_type, data=data)
        return FilePart(media_type=media_type, data=data, title=_title(block))
    if kind == "text" and not image:
        text = _str(source, "data", sparam).encode()
        text_type = source.get("media_type")
        return FilePart(
            media_type=text_type if isinstance(text_type, str) else "text/plain",
            data=base64.b64encode(text).decode("ascii"),
            title=_title(block),
        )
    if kind == "file" and not image:
        return FilePart(file_id=_str(source, "file_id", sparam), title=_title(block))
    # Image file ids, content-block documents...: Anthropic-only, kept raw.
    return UnknownPart(DIALECT, block)


def _title(block: dict[str, Any]) -> str | None:
    title = block.get("title")
    return title if isinstance(title, str) else None
