"""Gemini Developer API adapter (generativelanguage.googleapis.com), outbound side.

Canonical request -> generateContent body (protocols §4.2, §5.10 "->G"), passthrough,
and the embeddings helpers. Reading responses, streams and errors is in gemini_stream.py.

Pure: nothing here downloads anything. An `http(s)` image or file URL therefore goes
upstream as `fileData {fileUri}`; Gemini fetches only some URLs (File API URIs, YouTube,
newer models: public URLs), so a relay that wants the §5.2 "download and inline" rule
must inline such parts (as base64 `data`) before calling build_chat_request.
"""

import base64
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import unquote_to_bytes

from switchgate import jsonutil
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
from switchgate.core.request import ChatRequest, Message, Reasoning
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError, invalid
from switchgate.providers.base import StreamDecoder, Target, UpstreamRequest, UsageMeter
from switchgate.providers.capabilities import EmbeddingsResult
from switchgate.providers.embed_batches import GEMINI_BATCH_LIMIT
from switchgate.providers.forward import forward_json
from switchgate.providers.gemini_address import action_url, model_path, request_headers
from switchgate.providers.gemini_embed import build_embed_request, parse_embed_response
from switchgate.providers.gemini_errors import classify_gemini_error
from switchgate.providers.gemini_schema import SchemaCache, clean_schema
from switchgate.providers.gemini_stream import (
    GeminiStreamDecoder,
    GeminiUsageMeter,
    gemini_usage_from_body,
    parse_gemini_response,
)
from switchgate.providers.hosted_tools import GEMINI_TOOLS, HostedToolMap, upstream_tools
from switchgate.providers.system_messages import hoist_system
from switchgate.wire.gemini_parts import model_parts

SKIP_SIGNATURE: Final = "skip_thought_signature_validator"
FILES_ROOT: Final = "https://generativelanguage.googleapis.com/v1beta/"  # where File API ids live
# Reasoning effort -> thinkingBudget (policy, protocols §5.1); within every 2.5 model's range.
EFFORT_BUDGET: Final[dict[str, int]] = {
    "none": 0,
    "minimal": 512,
    "low": 1024,
    "medium": 8192,
    "high": 24576,
    "xhigh": 24576,
    "max": 24576,
}
_IMAGE_EXT: Final = {"png": "image/png", "gif": "image/gif", "webp": "image/webp"}
_AUDIO_MIME: Final = {"mp3": "audio/mpeg", "wav": "audio/wav"}

_OUTPUT_PARTS: Final = (TextPart, ToolCallPart, ThinkingPart)


# ---------------------------------------------------------------- contents


def _data_url(url: str) -> tuple[str, str] | None:
    """`data:[mime][;base64],payload` -> (mime, base64 data)."""
    if not url.startswith("data:") or "," not in url:
        return None
    meta, payload = url[5:].split(",", 1)
    mime, *params = meta.split(";")
    if "base64" not in params:
        payload = base64.b64encode(unquote_to_bytes(payload)).decode()
    return mime or "application/octet-stream", payload


def _sniff_image(data: str) -> str:
    for prefix, mime in (("iVBOR", "image/png"), ("/9j/", "image/jpeg"), ("R0lG", "image/gif")):
        if data.startswith(prefix):
            return mime
    return "image/webp" if data.startswith("UklGR") else "image/jpeg"


def _guess_mime(url: str, default: str) -> str:
    ext = url.split("?", 1)[0].rsplit(".", 1)[-1].lower()
    if ext in ("jpg", "jpeg"):
        return "image/jpeg"
    return _IMAGE_EXT.get(ext, "application/pdf" if ext == "pdf" else default)


def _media(mime: str | None, data: str | None, url: str | None, default: str) -> dict[str, Any]:
    if data:
        mime = mime or (_sniff_image(data) if default.startswith("image/") else default)
        return {"inlineData": {"mimeType": mime, "data": data}}
    if url:
        inline = _data_url(url)
        if inline is not None:
            return {"inlineData": {"mimeType": mime or inline[0], "data": inline[1]}}
        return {"fileData": {"mimeType": mime or _guess_mime(url, default), "fileUri": url}}
    raise invalid("an image or file part has neither data nor a URL", param="messages")


def _file(part: FilePart) -> dict[str, Any]:
    if part.data or part.url:
        return _media(part.media_type, part.data, part.url, "application/pdf")
    if part.file_id and part.file_id.startswith(("files/", "https://")):
        uri = part.file_id if part.file_id.startswith("https://") else FILES_ROOT + part.file_id
        return {"fileData": {"mimeType": part.media_type or "application/pdf", "fileUri": uri}}
    raise invalid("Gemini accepts only File API file ids (files/...)", param="messages")


def response_object(text: str, is_error: bool) -> dict[str, Any]:
    """Tool output -> functionResponse.response (always an object, §4.2): JSON-object text is
    sent as that object, anything else under "output" (or "error" for failures)."""
    parsed: Any = None
    if text.lstrip().startswith("{"):
        try:
            parsed = jsonutil.loads(text)
        except jsonutil.JSONDecodeError:
            parsed = None
    value = parsed if isinstance(parsed, dict) else None
    if is_error:
        return {"error": text if value is None else value}
    return {"output": text} if value is None else value


def _tool_result(part: ToolResultPart, names: Mapping[str, str]) -> list[dict[str, Any]]:
    name = part.name or names.get(part.tool_call_id)
    if not name:
        raise invalid(
            f"tool result {part.tool_call_id!r} does not answer an earlier tool call",
            param="messages",
        )
    text = "\n".join(p.text for p in part.content if isinstance(p, TextPart))
    result: dict[str, Any] = {"name": name, "response": response_object(text, part.is_error)}
    if part.tool_call_id:
        result["id"] = part.tool_call_id
    media = [_input_part(p) for p in part.content if not isinstance(p, TextPart)]
    return [{"functionResponse": result}, *(m for m in media if m is not None)]


def _input_part(part: Part) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"text": part.text} if part.text else None
    if isinstance(part, ImagePart):
        return _media(part.media_type, part.data, part.url, "image/jpeg")
    if isinstance(part, AudioPart):
        mime = _AUDIO_MIME.get(part.format, f"audio/{part.format}")
        return {"inlineData": {"mimeType": mime, "data": part.data}}
    if isinstance(part, FilePart):
        return _file(part)
    if isinstance(part, UnknownPart) and part.dialect == "gemini" and part.raw:
        return dict(part.raw)
    return None  # thinking in a user turn, foreign unknown parts: no G form


def _content_parts(message: Message, names: dict[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    run: list[Part] = []  # consecutive output parts, converted together (signature placement)
    for part in (*message.parts, None):
        if isinstance(part, _OUTPUT_PARTS):
            if isinstance(part, ToolCallPart):
                names[part.id] = part.name
            run.append(part)
            continue
        out += model_parts(run, thoughts="signed")
        run = []
        if isinstance(part, ToolResultPart):
            out += _tool_result(part, names)
        elif part is not None:
            converted = _input_part(part)
            if converted is not None:
                out.append(converted)
    return out


def build_contents(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """IR messages -> G contents: same-role runs merged, function responses first in their
    user turn, and `skip_thought_signature_validator` on the first functionCall of a model
    turn that lacks a Gemini signature (foreign history, §5.5)."""
    names: dict[str, str] = {}  # tool call id -> function name, for functionResponse.name
    contents: list[dict[str, Any]] = []
    for message in messages:
        role = "model" if message.role == "assistant" else "user"
        parts = _content_parts(message, names)
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"] += parts
        else:
            contents.append({"role": role, "parts": parts})
    for content in contents:
        parts = content["parts"]
        if content["role"] == "user":
            parts.sort(key=lambda p: "functionResponse" not in p)  # stable
            continue
        first_call = next((p for p in parts if "functionCall" in p), None)
        if first_call is not None and "thoughtSignature" not in first_call:
            first_call["thoughtSignature"] = SKIP_SIGNATURE
    return contents


# ---------------------------------------------------------------- request level


def _thinking(reasoning: Reasoning) -> dict[str, Any]:
    config: dict[str, Any] = {}
    budget: int | None = None
    if reasoning.enabled is False:
        budget = 0
    elif reasoning.budget_tokens is not None:
        budget = reasoning.budget_tokens
    elif reasoning.effort is not None and reasoning.effort in EFFORT_BUDGET:
        budget = EFFORT_BUDGET[reasoning.effort]
    elif reasoning.enabled:
        budget = -1
    if budget is not None:
        config["thinkingBudget"] = budget
    if reasoning.include_thoughts is not None:
        config["includeThoughts"] = reasoning.include_thoughts
    return config


def _generation_config(request: ChatRequest) -> dict[str, Any]:
    s = request.sampling
    pairs: list[tuple[str, Any]] = [
        ("temperature", s.temperature),
        ("topP", s.top_p),
        ("topK", s.top_k),
        ("maxOutputTokens", s.max_tokens),
        ("stopSequences", list(s.stop) or None),
        ("candidateCount", s.n),
        ("seed", s.seed),
        ("presencePenalty", s.presence_penalty),
        ("frequencyPenalty", s.frequency_penalty),
    ]
    config = {key: value for key, value in pairs if value is not None}
    fmt = request.response_format
    if fmt is not None and fmt.type != "text":
        config["responseMimeType"] = "application/json"
        if fmt.type == "json_schema" and fmt.schema is not None:
            config["responseJsonSchema"] = fmt.schema
    if request.reasoning is not None:
        thinking = _thinking(request.reasoning)
        if thinking:
            config["thinkingConfig"] = thinking
    return config


def _tool_fields(
    request: ChatRequest, schemas: SchemaCache | None
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """`tools` (one entry with every functionDeclaration) and `toolConfig` (§5.3)."""
    clean = schemas.clean if schemas is not None else clean_schema
    tools: list[dict[str, Any]] = []
    if request.tools:
        decls = []
        for spec in request.tools:
            decl: dict[str, Any] = {"name": spec.name}
            if spec.description:
                decl["description"] = spec.description
            if spec.parameters is not None:
                decl["parametersJsonSchema"] = clean(spec.parameters)
            decls.append(decl)
        tools.append({"functionDeclarations": decls})
    choice = request.tool_choice
    if choice is None:
        return tools, None
    mode = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}[choice.mode]
    calling: dict[str, Any] = {"mode": mode}
    if choice.mode == "tool" and choice.name:
        calling["allowedFunctionNames"] = [choice.name]
    return tools, {"functionCallingConfig": calling}


def build_gemini_body(request: ChatRequest, schemas: SchemaCache | None = None) -> dict[str, Any]:
    """The generateContent body for a canonical request (extras["gemini"] merged last:
    its generationConfig into generationConfig, its tools appended, the rest top-level;
    keys starting with ":" are dialect bookkeeping and skipped). `schemas`: the
    adapter's cache of cleaned tool schemas (without one, every schema is cleaned)."""
    system_parts, messages = hoist_system(request)
    body: dict[str, Any] = {"contents": build_contents(messages)}
    system = [{"text": part.text} for part in system_parts if part.text]
    if system:
        body["systemInstruction"] = {"parts": system}
    tools, tool_config = _tool_fields(request, schemas)
    tools += upstream_tools(request, GEMINI_TOOLS)  # other dialects' hosted tools
    generation = _generation_config(request)
    rest: dict[str, Any] = {}
    for key, value in request.extras.get("gemini", {}).items():
        if key.startswith(":"):
            continue
        if key == "generationConfig" and isinstance(value, dict):
            generation.update(value)
        elif key == "tools" and isinstance(value, list):
            tools += value
        else:
            rest[key] = value
    if tools:
        body["tools"] = tools
    if tool_config is not None:
        body["toolConfig"] = tool_config
    if generation:
        body["generationConfig"] = generation
    body.update(rest)
    return body


# ---------------------------------------------------------------- passthrough, embeddings


def _retarget(body: Mapping[str, Any], upstream_model: str) -> dict[str, Any]:
    """A client body with its (rare) in-body model names pointed at the upstream model:
    top-level `model`, countTokens' generateContentRequest.model, batchEmbedContents'
    requests[].model."""
    name = model_path(upstream_model)
    out = dict(body)
    if "model" in out:
        out["model"] = name
    for key in ("generateContentRequest", "generate_content_request"):
        inner = out.get(key)
        if isinstance(inner, dict) and "model" in inner:
            out[key] = {**inner, "model": name}
    if isinstance(out.get("requests"), list):
        out["requests"] = [
            {**r, "model": name} if isinstance(r, dict) and "model" in r else r
            for r in out["requests"]
        ]
    return out


# ---------------------------------------------------------------- the provider


class GeminiProvider:
    """The Gemini Developer API: ChatProvider, NativeDialect ("gemini") and
    EmbeddingsProvider (`:batchEmbedContents`) of providers.capabilities."""

    kind = "gemini"
    dialect = "gemini"
    embeddings_batch_limit = GEMINI_BATCH_LIMIT

    def __init__(self) -> None:
        self.schemas = SchemaCache()  # tool schemas cleaned, by their JSON

    def hosted_tools(self, target: Target) -> HostedToolMap:
        """Google Search grounding for other dialects' web search (HostedToolMapper)."""
        return GEMINI_TOOLS

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        action = "streamGenerateContent" if request.stream else "generateContent"
        body = jsonutil.dumps(build_gemini_body(request, self.schemas))
        return UpstreamRequest("POST", action_url(target, action), request_headers(target), body)

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        return parse_gemini_response(body, request)

    def chat_stream_decoder(self, request: ChatRequest) -> StreamDecoder:
        return GeminiStreamDecoder(request)

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        return classify_gemini_error(status, body)

    def build_passthrough(
        self,
        body: dict[str, Any],
        target: Target,
        headers: Mapping[str, str],
        raw: bytes | None = None,
    ) -> UpstreamRequest:
        """Same action the client called (`headers[":action"]`, default generateContent);
        streams always go upstream with `alt=sse`, whatever the client's `:alt` (a client
        that asked for the JSON-array framing needs GeminiSseToArray on the way back)."""
        action = headers.get(":action") or "generateContent"
        if not re.fullmatch(r"[A-Za-z]+", action):
            raise invalid(f"unsupported action {action!r}")
        payload = forward_json(raw, body, _retarget(body, target.upstream_model))
        return UpstreamRequest("POST", action_url(target, action), request_headers(target), payload)

    def usage_from_body(self, body: bytes) -> Usage | None:
        return gemini_usage_from_body(body)

    def usage_meter(self) -> UsageMeter:
        return GeminiUsageMeter()

    def build_embeddings_request(
        self, texts: Sequence[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest:
        return build_embed_request(list(texts), target, dimensions)

    def parse_embeddings_response(self, body: bytes) -> EmbeddingsResult:
        # batchEmbedContents reports no token counts: the relay counts them.
        return EmbeddingsResult(parse_embed_response(body), None)
