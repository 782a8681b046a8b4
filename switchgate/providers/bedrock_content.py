"""Canonical content parts -> Bedrock Converse content blocks (text, image, document,
toolUse, toolResult, reasoningContent, cachePoint) for bedrock_request.py. Pure."""

import re
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
)
from switchgate.errors import invalid
from switchgate.providers.anthropic_request import PLACEHOLDER_TEXT, data_url, tool_input

SIGNATURE_PREFIX: Final = "bedrock:"  # on reasoning signatures and redacted reasoning
CACHE_POINT: Final = {"cachePoint": {"type": "default"}}
IMAGE_FORMATS: Final = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
DOCUMENT_FORMATS: Final = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_TOOL_ID_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_.:-]")
_NAME_UNSAFE: Final = re.compile(r"[^A-Za-z0-9\-()\[\] ]+")

Block = dict[str, Any]


class DocumentNames:
    """Bedrock document names: letters, digits, spaces, hyphens, parentheses and square
    brackets only, unique within a request."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def name(self, wanted: str | None) -> str:
        stem = " ".join(_NAME_UNSAFE.sub("-", wanted or "").split())[:190] or "document"
        name, n = stem, 1
        while name in self._seen:
            n += 1
            name = f"{stem} ({n})"
        self._seen.add(name)
        return name


def content_blocks(part: Part, names: DocumentNames) -> list[Block]:
    if isinstance(part, TextPart):
        if not part.text.strip():
            return []
        text: Block = {"text": part.text}
        return [text, dict(CACHE_POINT)] if part.cache_control else [text]
    if isinstance(part, ImagePart):
        return [_image(part)]
    if isinstance(part, FilePart):
        return [_document(part, names)]
    if isinstance(part, AudioPart):
        raise invalid("audio input is not supported by Bedrock Converse", param="messages")
    if isinstance(part, ToolCallPart):
        use = {"toolUseId": tool_id(part.id), "name": part.name, "input": tool_input(part)}
        return [{"toolUse": use}]
    if isinstance(part, ToolResultPart):
        return [_tool_result(part, names)]
    if isinstance(part, ThinkingPart):
        block = _reasoning(part)
        return [block] if block is not None else []
    return []  # parts of other dialects with no Converse form


def tool_id(raw: str) -> str:
    return (_TOOL_ID_UNSAFE.sub("_", raw) or "tooluse_")[:64]


def _tool_result(part: ToolResultPart, names: DocumentNames) -> Block:
    content: list[Block] = []
    for item in part.content:
        if isinstance(item, TextPart):
            if item.text.strip():
                content.append({"text": item.text})
        elif isinstance(item, ImagePart):
            content.append(_image(item))
        else:
            content.append(_document(item, names))
    result: Block = {"toolUseId": tool_id(part.tool_call_id), "content": content}
    if not content:
        result["content"] = [{"text": PLACEHOLDER_TEXT}]
    if part.is_error:
        result["status"] = "error"
    return {"toolResult": result}


def _reasoning(part: ThinkingPart) -> Block | None:
    """Only reasoning that came from Bedrock (prefixed) goes back; other vendors'
    signatures never validate here."""
    if part.redacted is not None:
        if not part.redacted.startswith(SIGNATURE_PREFIX):
            return None
        return {"reasoningContent": {"redactedContent": part.redacted[len(SIGNATURE_PREFIX) :]}}
    signature = part.signature or ""
    if not signature.startswith(SIGNATURE_PREFIX) or len(signature) == len(SIGNATURE_PREFIX):
        return None
    text = {"text": part.text, "signature": signature[len(SIGNATURE_PREFIX) :]}
    return {"reasoningContent": {"reasoningText": text}}


def _image(part: ImagePart) -> Block:
    if part.data is not None:
        media_type, data = part.media_type or "", part.data
    elif part.url and part.url.startswith("data:"):
        media_type, data = data_url(part.url)
    elif part.url and part.url.startswith("s3://"):
        fmt = _format(part.media_type or _guess(part.url), IMAGE_FORMATS, "image")
        return {"image": {"format": fmt, "source": {"s3Location": {"uri": part.url}}}}
    elif part.url:
        raise invalid(
            "Bedrock takes images inline (base64 or a data: URL) or from s3://, not by URL",
            param="messages",
        )
    else:
        raise invalid("image: data or url required", param="messages")
    fmt = _format(media_type, IMAGE_FORMATS, "image")
    return {"image": {"format": fmt, "source": {"bytes": data}}}


def _document(part: FilePart, names: DocumentNames) -> Block:
    media_type, data = part.media_type, part.data
    if part.url and part.url.startswith("data:"):
        media_type, data = data_url(part.url)
    if part.file_id:
        raise invalid("file ids are not supported by Bedrock; send the file inline", "messages")
    if data is not None:
        source: Block = {"bytes": data}
    elif part.url and part.url.startswith("s3://"):
        source = {"s3Location": {"uri": part.url}}
        media_type = media_type or _guess(part.url)
    else:
        raise invalid("Bedrock takes documents inline (base64) or from s3://", param="messages")
    fmt = _format(media_type or "application/pdf", DOCUMENT_FORMATS, "document")
    name = names.name(part.title or (part.filename or "").rsplit(".", 1)[0] or None)
    return {"document": {"format": fmt, "name": name, "source": source}}


_EXTENSIONS: Final = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "pdf": "application/pdf",
    "csv": "text/csv",
    "txt": "text/plain",
    "md": "text/markdown",
    "html": "text/html",
}


def _guess(url: str) -> str:
    return _EXTENSIONS.get(url.rsplit(".", 1)[-1].lower(), "")


def _format(media_type: str, formats: dict[str, str], what: str) -> str:
    fmt = formats.get(media_type.split(";")[0].strip().lower())
    if fmt is None:
        known = ", ".join(sorted(set(formats.values())))
        raise invalid(
            f"{what} type {media_type or 'unknown'!r} is not supported by Bedrock ({known})",
            param="messages",
        )
    return fmt
