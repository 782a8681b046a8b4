"""OpenAI Chat `messages` -> canonical system parts and messages (see decode.py for the rules)."""

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
from switchgate.core.request import Message
from switchgate.dialects.openai_chat.validate import missing, string_field, type_error, value_error
from switchgate.errors import invalid
from switchgate.jsonutil import dumps_str

_ROLES: Final = ("system", "developer", "user", "assistant", "tool", "function")
_FILE_TYPES: Final = {
    "pdf": "application/pdf",
    "txt": "text/plain",
    "md": "text/markdown",
    "csv": "text/csv",
    "json": "application/json",
    "html": "text/html",
}


class MessageDecoder:
    """Walks `messages` once; state lives only for one request."""

    def __init__(self) -> None:
        self.system: list[TextPart] = []
        self.messages: list[Message] = []
        self.results: list[Part] = []
        self.names: dict[str, str] = {}  # tool call id -> function name
        self.legacy_call: str | None = None

    def flush_results(self) -> None:
        if self.results:
            self.messages.append(Message("user", tuple(self.results)))
            self.results = []

    def add(self, i: int, msg: Any) -> None:
        p = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise type_error(p, "an object", msg)
        role = msg.get("role")
        if role is None:
            raise missing(f"{p}.role")
        if role not in _ROLES:
            raise value_error(f"{p}.role", role, _ROLES)
        if role == "tool":
            call_id = string_field(msg, "tool_call_id", True, p)
            parts = self.text_parts(msg, p, required=True)
            self.results.append(ToolResultPart(call_id, parts, name=self.names.get(call_id)))
            return
        if role == "function":
            name = string_field(msg, "name", True, p)
            call_id = self.legacy_call or f"call_legacy_{name}"
            parts = self.text_parts(msg, p, required=False)
            self.results.append(ToolResultPart(call_id, parts, name=name))
            return
        self.flush_results()
        if role in ("system", "developer"):
            self.system.extend(self.text_parts(msg, p, required=True))
        elif role == "user":
            self.messages.append(Message("user", self.user_parts(msg.get("content"), p)))
        else:
            self.messages.append(Message("assistant", self.assistant_parts(msg, i, p)))

    def text_parts(self, msg: dict[str, Any], p: str, required: bool) -> tuple[TextPart, ...]:
        """Text-only content (system, developer, tool); empty strings are dropped."""
        content = msg.get("content")
        p = f"{p}.content"
        if content is None:
            if required:
                raise missing(p)
            return ()
        if isinstance(content, str):
            return (TextPart(content),) if content else ()
        if not isinstance(content, list):
            raise type_error(p, "a string or an array of objects", content)
        out: list[TextPart] = []
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text":
                raise value_error(f"{p}[{j}].type", _type_of(part), ("text",))
            text = string_field(part, "text", True, f"{p}[{j}]")
            if text:
                out.append(TextPart(text))
        return tuple(out)

    def user_parts(self, content: Any, p: str) -> tuple[Part, ...]:
        p = f"{p}.content"
        if content is None:
            raise missing(p)
        if isinstance(content, str):
            return (TextPart(content),)
        if not isinstance(content, list):
            raise type_error(p, "a string or an array of objects", content)
        out: list[Part] = []
        for j, part in enumerate(content):
            pp = f"{p}[{j}]"
            if not isinstance(part, dict):
                raise type_error(pp, "an object", part)
            kind = part.get("type")
            if kind == "text":
                out.append(TextPart(string_field(part, "text", True, pp)))
            elif kind == "image_url":
                out.append(_image(part.get("image_url"), f"{pp}.image_url"))
            elif kind == "input_audio":
                audio = _object(part, "input_audio", pp)
                pa = f"{pp}.input_audio"
                data = string_field(audio, "data", True, pa)
                out.append(AudioPart(data, string_field(audio, "format", True, pa)))
            elif kind == "file":
                out.append(_file(_object(part, "file", pp), f"{pp}.file"))
            elif kind is None:
                raise missing(f"{pp}.type")
            else:
                out.append(UnknownPart("openai", part))
        return tuple(out)

    def assistant_parts(self, msg: dict[str, Any], i: int, p: str) -> tuple[Part, ...]:
        out: list[Part] = []
        reasoning = string_field(msg, "reasoning_content", prefix=p)
        signature = string_field(msg, "reasoning_signature", prefix=p)
        if reasoning or signature:
            out.append(ThinkingPart(text=reasoning or "", signature=signature))
        content = msg.get("content")
        pc = f"{p}.content"
        if isinstance(content, str):
            if content:  # "" next to tool calls is common and means nothing
                out.append(TextPart(content))
        elif isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, dict):
                    raise type_error(f"{pc}[{j}]", "an object", part)
                if part.get("type") == "text":
                    out.append(TextPart(string_field(part, "text", True, f"{pc}[{j}]")))
                elif part.get("type") == "refusal":
                    out.append(TextPart(string_field(part, "refusal", True, f"{pc}[{j}]")))
                else:
                    out.append(UnknownPart("openai", part))
        elif content is not None:
            raise type_error(pc, "a string or an array of objects", content)
        refusal = string_field(msg, "refusal", prefix=p)
        if refusal:
            out.append(TextPart(refusal))
        out.extend(self.tool_calls(msg.get("tool_calls"), f"{p}.tool_calls"))
        function_call = msg.get("function_call")
        if function_call is not None:
            if not isinstance(function_call, dict):
                raise type_error(f"{p}.function_call", "an object", function_call)
            self.legacy_call = f"call_legacy_{i}"
            out.append(self.call(self.legacy_call, function_call, f"{p}.function_call"))
        if isinstance(msg.get("audio"), dict):
            out.append(UnknownPart("openai", {"audio": msg["audio"]}))
        return tuple(out)

    def tool_calls(self, raw: Any, p: str) -> list[Part]:
        if raw is None:
            return []
        if not isinstance(raw, list):
            raise type_error(p, "an array", raw)
        out: list[Part] = []
        for k, call in enumerate(raw):
            pk = f"{p}[{k}]"
            if not isinstance(call, dict):
                raise type_error(pk, "an object", call)
            if call.get("type", "function") != "function":
                out.append(UnknownPart("openai", call))
                continue
            call_id = string_field(call, "id", True, pk)
            out.append(self.call(call_id, _object(call, "function", pk), f"{pk}.function"))
        return out

    def call(self, call_id: str, function: dict[str, Any], p: str) -> ToolCallPart:
        name = string_field(function, "name", True, p)
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # lenient: some clients send an object
            arguments = dumps_str(arguments)
        elif arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            raise type_error(f"{p}.arguments", "a string", arguments)
        self.names[call_id] = name
        return ToolCallPart(call_id, name, arguments)


def _object(container: dict[str, Any], key: str, p: str) -> dict[str, Any]:
    value = container.get(key)
    if value is None:
        raise missing(f"{p}.{key}")
    if not isinstance(value, dict):
        raise type_error(f"{p}.{key}", "an object", value)
    return value


def _data_url(url: str) -> tuple[str | None, str] | None:
    """(media type, base64 data) of a base64 `data:` URL, else None."""
    header, comma, data = url[5:].partition(",")
    if not url.startswith("data:") or not comma or not header.endswith(";base64"):
        return None
    return header[: -len(";base64")].split(";")[0] or None, data


def _image(raw: Any, p: str) -> ImagePart:
    if isinstance(raw, str):  # lenient: `"image_url": "https://..."`
        raw = {"url": raw}
    if raw is None:
        raise missing(p)
    if not isinstance(raw, dict):
        raise type_error(p, "an object", raw)
    url = string_field(raw, "url", True, p)
    detail = string_field(raw, "detail", prefix=p)
    inline = _data_url(url)
    if inline is not None:
        return ImagePart(media_type=inline[0], data=inline[1], detail=detail)
    if url.startswith("data:"):
        raise invalid(
            f"Invalid '{p}.url': expected a base64 data URL.", f"{p}.url", "invalid_value"
        )
    return ImagePart(url=url, detail=detail)


def _file(raw: dict[str, Any], p: str) -> FilePart:
    file_data = string_field(raw, "file_data", prefix=p)
    file_id = string_field(raw, "file_id", prefix=p)
    filename = string_field(raw, "filename", prefix=p)
    if file_data is None:
        if file_id is None:
            raise missing(f"{p}.file_data")
        return FilePart(file_id=file_id, filename=filename)
    inline = _data_url(file_data)  # a data: URL, or (per the SDK docs) bare base64
    if inline is not None:
        media_type, data = inline
    else:
        ext = filename.rpartition(".")[2].lower() if filename and "." in filename else ""
        media_type, data = _FILE_TYPES.get(ext), file_data
    return FilePart(media_type=media_type, data=data, file_id=file_id, filename=filename)


def _type_of(value: Any) -> Any:
    return value.get("type") if isinstance(value, dict) else value
