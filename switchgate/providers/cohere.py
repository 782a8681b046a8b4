"""The Cohere provider (kind "cohere", api.cohere.com): chat v2 and embed v2 through the
IR; rerank v2 is served by providers/rerank.py. Cohere has no client dialect of its own
here, so nothing is passed through.

    base URL (what the operator gives)   https://api.cohere.com  (a trailing /v1 or /v2 is
                                         dropped)
    chat                                 POST {base}/v2/chat      (stream: SSE)
    embeddings                           POST {base}/v2/embed     (at most 96 texts a call)
    key                                  `Authorization: Bearer KEY`
    channel options                      input_type (embeddings; see cohere_embed.py)

See cohere_request.py (IR -> body), cohere_response.py (answers, usage, errors),
cohere_stream.py (SSE) and cohere_embed.py (embeddings).
"""

from typing import Final

from switchgate import jsonutil
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.cohere_embed import (
    EMBED_BATCH_LIMIT,
    CohereEmbeddings,
    build_embed_request,
    parse_embed_response,
)
from switchgate.providers.cohere_request import build_cohere_body
from switchgate.providers.cohere_response import classify_cohere_error, parse_cohere_response
from switchgate.providers.cohere_stream import CohereStreamDecoder
from switchgate.providers.rerank import api_root

DEFAULT_BASE_URL: Final = "https://api.cohere.com"


def cohere_url(target: Target, path: str) -> str:
    return api_root(target.base_url) + path


def request_headers(target: Target, stream: bool = False) -> dict[str, str]:
    headers = {
        "authorization": f"Bearer {target.api_key}",
        "content-type": "application/json",
        "accept": "text/event-stream" if stream else "application/json",
    }
    headers.update(target.extra_headers)
    return headers


class CohereProvider:
    """Chat (ChatProvider without passthrough) and embeddings for Cohere channels."""

    kind = "cohere"
    dialect = "cohere"  # no client speaks it: every request is translated
    embeddings_batch_limit = EMBED_BATCH_LIMIT

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        body = build_cohere_body(request, target.upstream_model)
        return UpstreamRequest(
            "POST",
            cohere_url(target, "/v2/chat"),
            request_headers(target, request.stream),
            jsonutil.dumps(body),
        )

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        return parse_cohere_response(body, request)

    def chat_stream_decoder(self, request: ChatRequest) -> CohereStreamDecoder:
        return CohereStreamDecoder()

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        return classify_cohere_error(status, body)

    def build_embeddings_request(
        self, texts: list[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest:
        url = cohere_url(target, "/v2/embed")
        return build_embed_request(texts, dimensions, target, url, request_headers(target))

    def parse_embeddings_response(self, body: bytes) -> CohereEmbeddings:
        return parse_embed_response(body)
