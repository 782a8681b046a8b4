"""OpenAI-compatible provider presets: a base URL, an auth style and quirk flags over the
shared O wire code, not a copy of the OpenAI adapter.

`PresetProvider(preset)` is the adapter of one preset kind (deepseek, mistral, ollama...,
the table in providers/openai_presets.py):

- chat through the IR: providers/openai_request.py builds the body, `quirk_body`
  (providers/openai_quirks.py) applies the vendor's quirks, and replies go through the
  shared decoders (providers/openai_response.py, openai_stream.py) after a `Normalizer`
  has rewritten the vendor's variations into the O shape;
- embeddings (when the preset serves them) in the O shape, translated per call so a
  strict vendor gets only what it accepts;
- no passthrough: none of these kinds is a client dialect of the gateway, so every
  client, O clients included, goes through the IR and the quirk pass.

Auth: "bearer" sends `Authorization: Bearer KEY`; "optional" (local servers) sends it
only when the channel has a key. Channel options (`channels.extra`) may set the
preset's `header_options` (e.g. OpenRouter's HTTP-Referer) and `body_options`
(e.g. Mistral's safe_prompt).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.errors import ErrorKind, GatewayError
from switchgate.jsonutil import JSONDecodeError, dumps, loads
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import EmbeddingsResult
from switchgate.providers.embeddings import openai_body, openai_vectors
from switchgate.providers.openai_quirks import (
    Normalizer,
    ReplyQuirks,
    RequestQuirks,
    quirk_body,
    rewritten_ids,
)
from switchgate.providers.openai_request import build_openai_body
from switchgate.providers.openai_response import classify_openai_error, parse_openai_response
from switchgate.providers.openai_stream import OpenAIStreamDecoder

CHAT: Final = "chat"
EMBEDDINGS: Final = "embeddings"


@dataclass(frozen=True, slots=True)
class Preset:
    """One OpenAI-compatible vendor. `sources` holds a one-line source note per quirk."""

    kind: str
    label: str
    default_base_url: str
    auth: str = "bearer"  # "bearer" | "optional" (sent only when the channel has a key)
    needs_key: bool = True
    endpoints: frozenset[str] = frozenset({CHAT})
    request: RequestQuirks = field(default_factory=RequestQuirks)
    reply: ReplyQuirks = field(default_factory=ReplyQuirks)
    header_options: tuple[tuple[str, str], ...] = ()  # (channel option, header name)
    embeddings_dimensions: str | None = "dimensions"  # the field name, None: not sent
    embeddings_batch_limit: int = 2048
    # (substring of the lower-cased upstream model, its own batch limit): the first match
    # wins, else `embeddings_batch_limit` (ModelBatchLimit)
    embeddings_model_limits: tuple[tuple[str, int], ...] = ()
    sources: tuple[str, ...] = ()


class PresetProvider:
    """Chat (and embeddings) for one OpenAI-compatible preset. Implements ChatProvider,
    EmbeddingsProvider and ModelBatchLimit (providers/capabilities.py); never
    NativeDialect."""

    def __init__(self, preset: Preset) -> None:
        self.preset = preset
        self.kind = preset.kind
        self.embeddings_batch_limit = preset.embeddings_batch_limit

    # ------------------------------------------------------------------ requests

    def url(self, target: Target, path: str) -> str:
        return f"{target.base_url.rstrip('/')}/{path}"

    def headers(self, target: Target, stream: bool = False) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if target.api_key or self.preset.auth == "bearer":
            headers["authorization"] = f"Bearer {target.api_key}"
        if stream:
            headers["accept"] = "text/event-stream"
        for option, header in self.preset.header_options:
            value = target.options.get(option)
            if isinstance(value, str) and value:
                headers[header] = value
        headers.update(target.extra_headers)
        return headers

    def quirked_body(
        self, request: ChatRequest, target: Target
    ) -> tuple[dict[str, Any], dict[str, str]]:
        """The O body for this vendor and the tool-call ids it rewrote (vendor -> original)."""
        body = build_openai_body(request, target.upstream_model)
        return quirk_body(body, self.preset.request, request, dict(target.options))

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        body, _ = self.quirked_body(request, target)
        headers = self.headers(target, stream=body.get("stream") is True)
        return UpstreamRequest("POST", self.url(target, "chat/completions"), headers, dumps(body))

    # ------------------------------------------------------------------ replies

    def normalizer(self, request: ChatRequest) -> Normalizer:
        """Rewrites this request's replies into the O shape. The rewritten tool-call ids are
        recomputed from the request (the same pure function), so nothing is kept between
        the request and its reply."""
        ids = rewritten_ids(request) if self.preset.request.tool_ids == "alnum9" else {}
        return Normalizer(self.preset.reply, ids)

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        return parse_openai_response(body, self.normalizer(request))

    def chat_stream_decoder(self, request: ChatRequest) -> OpenAIStreamDecoder:
        return OpenAIStreamDecoder(self.normalizer(request))

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        return classify_openai_error(status, _fastapi_detail(body))

    # ------------------------------------------------------------------ embeddings

    def build_embeddings_request(
        self, texts: Sequence[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest:
        if EMBEDDINGS not in self.preset.endpoints:
            raise GatewayError(ErrorKind.INVALID_REQUEST, "this channel does not serve embeddings")
        body = openai_body(list(texts), target.upstream_model, None)
        name = self.preset.embeddings_dimensions
        if dimensions is not None and name is not None:
            body[name] = dimensions
        return UpstreamRequest(
            "POST", self.url(target, "embeddings"), self.headers(target), dumps(body)
        )

    def embeddings_batch_limit_for(self, model: str) -> int:
        """ModelBatchLimit: the texts one upstream call may carry for `model`."""
        lowered = model.lower()
        for marker, limit in self.preset.embeddings_model_limits:
            if marker in lowered:
                return limit
        return self.preset.embeddings_batch_limit

    def parse_embeddings_response(self, body: bytes) -> EmbeddingsResult:
        vectors, usage = openai_vectors(body)
        return EmbeddingsResult(vectors, usage.input_tokens if usage is not None else None)


def _fastapi_detail(body: bytes) -> bytes:
    """A FastAPI validation error (`{"detail": [{"loc": [...], "msg": ...}]}`, what Mistral
    and vLLM answer a 422 with) as one O error message, so the client reads which field."""
    try:
        data = loads(body) if body else None
    except JSONDecodeError:
        return body
    detail = data.get("detail") if isinstance(data, dict) else None
    if not isinstance(detail, list) or not detail:
        return body
    lines = []
    param = None
    for item in detail:
        if not isinstance(item, dict):
            continue
        loc = [str(p) for p in item.get("loc") or () if p != "body"]
        if param is None and loc:
            param = ".".join(loc)
        lines.append(f"{'.'.join(loc) or 'body'}: {item.get('msg') or 'invalid'}")
    error: dict[str, Any] = {"message": "; ".join(lines), "type": "invalid_request_error"}
    if param is not None:
        error["param"] = param
    return dumps({"error": error})
