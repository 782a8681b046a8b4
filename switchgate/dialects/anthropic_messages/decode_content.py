"""Anthropic Messages content -> IR: the `system` field and the `messages` list with
their blocks (text, images, documents, tool use and results, thinking). Blocks the IR
has no form for are kept raw as `UnknownPart`s, for Anthropic upstreams."""

import base64
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
from switchgate.core.request import Message, Role
from switchgate.errors import GatewayError, invalid

DIALECT: Final = "anthropic"

ToolResultContent = TextPart | ImagePart | FilePart


def bad_field(param: str, what: str) -> GatewayError:
    return invalid(f"{param}: {what}", param=param)


def decode_system(system: Any) -> tuple[TextPart, ...]:
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


def decode_messages(messages: Any) -> tuple[Message, ...]:
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
            raise bad_field(f"{param}.role", "must be user, assistant or system")
        content = message.get("content")
        if isinstance(content, str):
            out.append(Message(role, (TextPart(content),)))
        elif isinstance(content, list):
            blocks = (_block(b, f"{param}.content.{j}") for j, b in enumerate(content))
            out.append(Message(role, tuple(blocks)))
        else:
            raise bad_field(f"{param}.content", "must be a string or a list of blocks")
    return tuple(out)


def _system_message(content: Any, param: str) -> tuple[TextPart, ...]:
    """A `role: system` message (Claude Code sends them for models it doesn't know as
    Claude): text only, kept in place; see providers/system_messages.py."""
    if isinstance(content, str):
        return (TextPart(content),)
    if not isinstance(content, list):
        raise bad_field(f"{param}.content", "must be a string or a list of text blocks")
    parts: list[TextPart] = []
    for j, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise bad_field(f"{param}.content.{j}", "system messages may contain text blocks only")
        parts.append(_text(block, f"{param}.content.{j}"))
    return tuple(parts)


def _str(block: dict[str, Any], key: str, param: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise bad_field(f"{param}.{key}", "must be a string")
    return value


def _text(block: dict[str, Any], param: str) -> TextPart:
    cache = block.get("cache_control")
    if cache is not None and not isinstance(cache, dict):
        raise bad_field(f"{param}.cache_control", "must be an object")
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
            raise bad_field(f"{param}.input", "must be an object")
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
        raise bad_field(f"{param}.content", "must be a string or a list of blocks")
    is_error = block.get("is_error", False)
    return ToolResultPart(tool_use_id, tuple(parts), is_error=is_error is True)


def _media(block: dict[str, Any], param: str) -> Part:
    source = block.get("source")
    if not isinstance(source, dict):
        raise bad_field(f"{param}.source", "must be an object")
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
