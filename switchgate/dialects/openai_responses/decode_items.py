"""Responses `input` items -> canonical system parts and messages (see decode.py for the rules)."""

from typing import Any, Final

from switchgate.core.content import (
    AudioPart,
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
from switchgate.dialects.openai_chat.validate import missing, string_field, type_error, value_error
from switchgate.errors import invalid
from switchgate.jsonutil import dumps_str

_ROLES: Final = ("user", "assistant", "system", "developer")
_TEXT_TYPES: Final = ("input_text", "output_text", "text")
_FILE_TYPES: Final = {
    "pdf": "application/pdf",
    "txt": "text/plain",
    "md": "text/markdown",
    "csv": "text/csv",
    "json": "application/json",
    "html": "text/html",
}


def input_items(body: dict[str, Any]) -> list[Any]:
    """`input` as a list of items: a string is one user message; absent is empty."""
    raw = body.get("input")
    if raw is None:
        return []
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    if not isinstance(raw, list):
        raise type_error("input", "a string or an array of input items", raw)
    return raw


class ItemDecoder:
    """Walks the items once. Consecutive assistant-side items (messages, reasoning,
    function calls) form one assistant turn; consecutive function_call_outputs form one
    user turn; other user messages are turns of their own."""

    def __init__(self, flat_names: dict[tuple[str, str], str] | None = None) -> None:
        self._flat = flat_names or {}  # (namespace, name) -> the flattened tool name
        self.system: list[TextPart] = []
        self.messages: list[Message] = []
        self.names: dict[str, str] = {}  # call_id -> function name
        self.native_only: list[str] = []  # what only a native Responses upstream can do
        self._key: str | None = None
        self._role: Role = "user"
        self._parts: list[Part] = []

    def flush(self) -> None:
        if self._key is not None and self._parts:
            self.messages.append(Message(self._role, tuple(self._parts)))
        self._key, self._parts = None, []

    def _push(self, key: str, role: Role, parts: list[Part]) -> None:
        if key != self._key or key == "user":
            self.flush()
            self._key, self._role = key, role
        self._parts.extend(parts)

    def add(self, i: int, item: Any) -> None:
        p = f"input[{i}]"
        if not isinstance(item, dict):
            raise type_error(p, "an object", item)
        kind = item.get("type")
        if kind is None or kind == "message":
            self._message(item, p)
        elif kind == "function_call":
            call_id = string_field(item, "call_id", True, p)
            name = string_field(item, "name", True, p)
            namespace = item.get("namespace")
            if isinstance(namespace, str) and namespace:
                name = self._flat.get((namespace, name), f"{namespace}__{name}"[:64])
            self.names[call_id] = name
            self._push("assistant", "assistant", [ToolCallPart(call_id, name, _arguments(item, p))])
        elif kind == "function_call_output":
            call_id = string_field(item, "call_id", True, p)
            content = _output(item.get("output"), f"{p}.output")
            result = ToolResultPart(call_id, content, name=self.names.get(call_id))
            self._push("results", "user", [result])
        elif kind == "reasoning":
            part = _reasoning(item, p)
            if part is not None:
                self._push("assistant", "assistant", [part])
        else:
            self.native_only.append(f"Input items of type '{kind}' ({p})")

    def _message(self, item: dict[str, Any], p: str) -> None:
        role = item.get("role")
        if role is None:
            raise missing(f"{p}.role")
        if role not in _ROLES:
            raise value_error(f"{p}.role", role, _ROLES)
        content = item.get("content")
        if content is None:
            raise missing(f"{p}.content")
        if role in ("system", "developer"):
            parts = _content(content, f"{p}.content", text_only=True)
            self.system.extend(part for part in parts if isinstance(part, TextPart))
        elif role == "assistant":
            self._push("assistant", "assistant", _content(content, f"{p}.content", text_only=True))
        else:
            self._push("user", "user", _content(content, f"{p}.content", text_only=False))


def _arguments(item: dict[str, Any], p: str) -> str:
    arguments = item.get("arguments")
    if arguments is None:
        return ""
    if isinstance(arguments, dict):  # lenient: an object instead of JSON text
        return dumps_str(arguments)
    if not isinstance(arguments, str):
        raise type_error(f"{p}.arguments", "a string", arguments)
    return arguments


def _reasoning(item: dict[str, Any], p: str) -> ThinkingPart | None:
    texts: list[str] = []
    for key in ("summary", "content"):
        entries = item.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise type_error(f"{p}.{key}", "an array", entries)
        for j, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise type_error(f"{p}.{key}[{j}]", "an object", entry)
            text = entry.get("text")
            if isinstance(text, str) and text:
                texts.append(text)
        if texts:
            break  # summaries, else the raw reasoning text
    signature = string_field(item, "encrypted_content", prefix=p)
    if not texts and not signature:
        return None  # a bare reference to a reasoning item stored upstream
    return ThinkingPart(text="\n\n".join(texts), signature=signature)


def _output(raw: Any, p: str) -> tuple[TextPart | ImagePart | FilePart, ...]:
    if raw is None:
        raise missing(p)
    if isinstance(raw, str):
        return (TextPart(raw),) if raw else ()
    parts = _content(raw, p, text_only=False)
    out: list[TextPart | ImagePart | FilePart] = []
    for part in parts:
        if not isinstance(part, TextPart | ImagePart | FilePart):
            raise invalid(f"Invalid '{p}': only text, images and files may be tool output.", p)
        out.append(part)
    return tuple(out)


def _content(content: Any, p: str, *, text_only: bool) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    if not isinstance(content, list):
        raise type_error(p, "a string or an array of content parts", content)
    out: list[Part] = []
    for j, part in enumerate(content):
        pp = f"{p}[{j}]"
        if not isinstance(part, dict):
            raise type_error(pp, "an object", part)
        kind = part.get("type")
        if kind in _TEXT_TYPES:
            text = string_field(part, "text", True, pp)
            if text:
                out.append(TextPart(text))
        elif kind == "refusal":
            out.append(TextPart(string_field(part, "refusal", True, pp)))
        elif kind is None:
            raise missing(f"{pp}.type")
        elif text_only:
            raise value_error(f"{pp}.type", kind, ("input_text", "output_text", "refusal"))
        elif kind == "input_image":
            out.append(_image(part, pp))
        elif kind == "input_file":
            out.append(_file(part, pp))
        elif kind == "input_audio":
            audio = part.get("input_audio")
            if not isinstance(audio, dict):
                raise missing(f"{pp}.input_audio")
            pa = f"{pp}.input_audio"
            data = string_field(audio, "data", True, pa)
            out.append(AudioPart(data, string_field(audio, "format", True, pa)))
        else:
            out.append(UnknownPart("responses", part))
    return out


def _data_url(url: str) -> tuple[str | None, str] | None:
    """(media type, base64 data) of a base64 `data:` URL, else None."""
    header, comma, data = url[5:].partition(",")
    if not url.startswith("data:") or not comma or not header.endswith(";base64"):
        return None
    return header[: -len(";base64")].split(";")[0] or None, data


def _image(part: dict[str, Any], p: str) -> ImagePart:
    detail = string_field(part, "detail", prefix=p)
    url = string_field(part, "image_url", prefix=p)
    if url is None:
        if string_field(part, "file_id", prefix=p) is not None:
            raise invalid(
                f"Invalid '{p}.file_id': images by file_id are not supported; send image_url.",
                f"{p}.file_id",
                "invalid_value",
            )
        raise missing(f"{p}.image_url")
    inline = _data_url(url)
    if inline is not None:
        return ImagePart(media_type=inline[0], data=inline[1], detail=detail)
    if url.startswith("data:"):
        raise invalid(f"Invalid '{p}.image_url': expected a base64 data URL.", f"{p}.image_url")
    return ImagePart(url=url, detail=detail)


def _file(part: dict[str, Any], p: str) -> FilePart:
    filename = string_field(part, "filename", prefix=p)
    file_id = string_field(part, "file_id", prefix=p)
    file_url = string_field(part, "file_url", prefix=p)
    file_data = string_field(part, "file_data", prefix=p)
    if file_data is None:
        if file_id is None and file_url is None:
            raise missing(f"{p}.file_data")
        return FilePart(file_id=file_id, url=file_url, filename=filename)
    inline = _data_url(file_data)  # a data: URL, or bare base64
    if inline is not None:
        media_type, data = inline
    else:
        ext = filename.rpartition(".")[2].lower() if filename and "." in filename else ""
        media_type, data = _FILE_TYPES.get(ext), file_data
    return FilePart(media_type=media_type, data=data, file_id=file_id, filename=filename)
