"""Google Vertex AI adapter: Gemini models through generateContent and Claude models
through rawPredict, on `aiplatform` endpoints, authorized with a service account.

The bodies, replies and streams are those of the Gemini adapter (gemini.py,
gemini_stream.py) and the Anthropic adapter (anthropic*.py); only the address
(vertex_address.py) and the authorization (vertex_auth.py) differ. A Claude body on Vertex
names no `model` (the URL does) and carries `anthropic_version: vertex-2023-10-16`.

Reading a reply needs no publisher decision: a Claude reply (`"type": "message"`, an SSE
stream of `event: message_start` ...) and a Gemini reply (`candidates`, `data:`-only SSE)
cannot be mistaken for one another, so the reply picks its reader (a channel may map a
client model name to a Claude model, and the parse step sees only the client's name).
No client speaks this wire, so nothing is ever passed through (`dialect = "vertex"`).
"""

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.events import StreamEvent
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.anthropic import AnthropicProvider
from switchgate.providers.anthropic_request import EXTRA_BETA, core_to_anthropic_body
from switchgate.providers.anthropic_stream import AnthropicStreamDecoder
from switchgate.providers.base import StreamDecoder, Target, UpstreamRequest
from switchgate.providers.capabilities import EmbeddingsResult
from switchgate.providers.gemini import build_gemini_body
from switchgate.providers.gemini_errors import classify_gemini_error, scrub
from switchgate.providers.gemini_schema import SchemaCache
from switchgate.providers.gemini_stream import GeminiStreamDecoder, parse_gemini_response
from switchgate.providers.hosted_tools import ANTHROPIC_TOOLS, GEMINI_TOOLS, HostedToolMap
from switchgate.providers.vertex_address import (
    DEFAULT_BASE_URL,
    bearer_headers,
    method_url,
    split_model,
)
from switchgate.providers.vertex_auth import TokenCache
from switchgate.providers.vertex_embed import (
    VERTEX_EMBED_BATCH_LIMIT,
    batch_limit,
    build_predict_request,
    parse_predict_response,
)

ANTHROPIC_VERSION: Final = "vertex-2023-10-16"
_SNIFF_LIMIT: Final = 64 * 1024  # bytes of a stream's first line before giving up on it


def anthropic_vertex_body(request: ChatRequest, model: str) -> dict[str, Any]:
    """The Messages body for Vertex: no `model`, `anthropic_version` first."""
    body = core_to_anthropic_body(request, model)
    body.pop("model", None)
    return {"anthropic_version": ANTHROPIC_VERSION, **body}


def is_anthropic_reply(data: Any) -> bool:
    """A Messages reply or an Anthropic error body (vs a Google one)."""
    return isinstance(data, dict) and data.get("type") in ("message", "error")


def stream_publisher(head: bytes) -> str | None:
    """ "anthropic" or "google" from a stream's first SSE line, None until it is whole.
    Anthropic streams open with `event: message_start` (or `event: error`); Gemini's
    `?alt=sse` streams are `data:` lines only."""
    for line in head.splitlines(keepends=True):
        if not line.endswith((b"\n", b"\r")):
            return None
        text = line.strip()
        if not text or text.startswith(b":"):
            continue
        if text.startswith(b"event:"):
            return "anthropic"
        if text.startswith(b"data:"):
            try:
                payload = jsonutil.loads(text[5:].strip())
            except jsonutil.JSONDecodeError:
                return "google"
            return "anthropic" if isinstance(payload, dict) and "type" in payload else "google"
        return "google"
    return None


class VertexStreamDecoder:
    """StreamDecoder that hands the stream to the Anthropic or the Gemini decoder once
    its first line shows which one it is."""

    def __init__(self, request: ChatRequest) -> None:
        self._request = request
        self._inner: StreamDecoder | None = None
        self._head = b""

    def _choose(self, publisher: str) -> StreamDecoder:
        if publisher == "anthropic":
            return AnthropicStreamDecoder()
        return GeminiStreamDecoder(self._request)

    def feed(self, data: bytes) -> list[StreamEvent]:
        if self._inner is not None:
            return self._inner.feed(data)
        self._head += data
        publisher = stream_publisher(self._head)
        if publisher is None and len(self._head) < _SNIFF_LIMIT:
            return []
        self._inner = self._choose(publisher or "google")
        head, self._head = self._head, b""
        return self._inner.feed(head)

    def finish(self) -> list[StreamEvent]:
        if self._inner is None:
            self._inner = self._choose(stream_publisher(self._head + b"\n") or "google")
            head, self._head = self._head, b""
            return [*self._inner.feed(head), *self._inner.finish()]
        return self._inner.finish()


class VertexProvider:
    """Chat (Gemini and Claude), embeddings (Gemini / text-embedding models) and the
    Authorizer hook for `vertex` channels."""

    kind = "vertex"
    dialect = "vertex"  # no client dialect: never passed through
    default_base_url = DEFAULT_BASE_URL
    embeddings_batch_limit = VERTEX_EMBED_BATCH_LIMIT

    def __init__(self, tokens: TokenCache | None = None) -> None:
        self.tokens = tokens if tokens is not None else TokenCache()
        self._anthropic = AnthropicProvider()
        self.schemas = SchemaCache()  # Gemini tool schemas, cleaned once (gemini_schema.py)

    # ------------------------------------------------------------ authorization

    async def authorize(self, target: Target) -> Target:
        """The target with `authorization: Bearer <access token>` among its headers and
        the project resolved (option `project`, else the key's `project_id`)."""
        account = self.tokens.account(target.api_key)
        if account is None:
            token = target.api_key.strip()
            if not token:
                raise GatewayError(ErrorKind.UPSTREAM_ERROR, "vertex channel: the key is empty")
        else:
            token = await self.tokens.token(target.api_key, account)
        options = dict(target.options)
        if not options.get("project") and account is not None and account.project_id:
            options["project"] = account.project_id
        headers = {
            **{k: v for k, v in target.extra_headers.items() if k.lower() != "authorization"},
            "authorization": f"Bearer {token}",
        }
        return replace(target, extra_headers=headers, options=options)

    # ------------------------------------------------------------ chat

    def hosted_tools(self, target: Target) -> HostedToolMap:
        """The publisher's own search tool (HostedToolMapper): Claude's bodies are
        Anthropic's, Gemini's Google's."""
        publisher, _ = split_model(target)
        return ANTHROPIC_TOOLS if publisher == "anthropic" else GEMINI_TOOLS

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        publisher, model = split_model(target)
        headers = bearer_headers(target)
        if publisher == "anthropic":
            body = anthropic_vertex_body(request, model)
            beta = request.extras.get("anthropic", {}).get(EXTRA_BETA)
            if isinstance(beta, str) and beta:
                headers["anthropic-beta"] = beta
            method = "streamRawPredict" if request.stream else "rawPredict"
        else:
            body = build_gemini_body(request, self.schemas)
            method = "streamGenerateContent" if request.stream else "generateContent"
        url = method_url(target, publisher, model, method)
        return UpstreamRequest("POST", url, headers, jsonutil.dumps(body))

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        try:
            data = jsonutil.loads(body)
        except jsonutil.JSONDecodeError as exc:
            raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned invalid JSON") from exc
        if is_anthropic_reply(data):
            return self._anthropic.parse_chat_response(body, request)
        return parse_gemini_response(body, request)

    def chat_stream_decoder(self, request: ChatRequest) -> StreamDecoder:
        return VertexStreamDecoder(request)

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        """Claude's own errors come in Anthropic's shape; Vertex's (authentication,
        permissions, quotas, unknown models) in Google's. A 401 means the access token
        was refused, not the service-account key: the cached tokens are dropped (the next
        call fetches a new one) and the failure counts against the channel, not the key."""
        try:
            data: Any = jsonutil.loads(body) if body else None
        except jsonutil.JSONDecodeError:
            data = None
        if is_anthropic_reply(data) and status != 401:
            return self._anthropic.classify_error(status, body)
        if status == 401:
            self.tokens.forget()
            error = data.get("error") if isinstance(data, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            detail = scrub(message)[:300] if isinstance(message, str) else "HTTP 401"
            return GatewayError(
                ErrorKind.UPSTREAM_ERROR, f"vertex refused the access token: {detail}"
            )
        return classify_gemini_error(status, body)

    # ------------------------------------------------------------ embeddings

    def build_embeddings_request(
        self, texts: Sequence[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest:
        publisher, model = split_model(target)
        if publisher != "google":
            raise GatewayError(
                ErrorKind.INVALID_REQUEST,
                f"The model {model} has no embeddings on Vertex AI.",
                status_override=400,
            )
        url = method_url(target, publisher, model, "predict")
        task = target.options.get("embedding_task_type")
        task_type = task if isinstance(task, str) else None
        headers = bearer_headers(target)
        return build_predict_request(
            texts, dimensions, url, headers, task_type, limit=batch_limit(model)
        )

    def embeddings_batch_limit_for(self, model: str) -> int:
        """ModelBatchLimit: one text per request for gemini-embedding models, 8 for the
        text-embedding models (vertex_embed.py)."""
        return batch_limit(model)

    def parse_embeddings_response(self, body: bytes) -> EmbeddingsResult:
        vectors, tokens = parse_predict_response(body)
        return EmbeddingsResult(vectors, tokens)
