"""The Cohere provider (kind "cohere", api.cohere.com): chat v2 and embed v2 through the
IR, rerank v2 through providers/rerank.py. Cohere has no client dialect of its own here,
so nothing is passed through (no NativeDialect hooks).

    base URL (what the operator gives)   https://api.cohere.com  (a trailing /v1 or /v2 is
                                         dropped)
    chat                                 POST {base}/v2/chat      (stream: SSE)
    embeddings                           POST {base}/v2/embed     (at most 96 texts a call)
    key                                  `Authorization: Bearer KEY`
    rerank                               POST {base}/v2/rerank
    channel options                      input_type (embeddings; see cohere_embed.py),
                                         checked when a channel is saved

See cohere_request.py (IR -> body), cohere_response.py (answers, usage, errors),
cohere_stream.py (SSE) and cohere_embed.py (embeddings).
"""

from collections.abc import Mapping, Sequence

from switchgate import jsonutil
from switchgate.core.request import ChatRequest
from switchgate.core.rerank import RerankRequest, RerankResult
from switchgate.core.response import ChatResponse
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import EmbeddingsResult
from switchgate.providers.cohere_embed import (
    EMBED_BATCH_LIMIT,
    build_embed_request,
    input_type_problem,
    parse_embed_response,
)
from switchgate.providers.cohere_request import build_cohere_body
from switchgate.providers.cohere_response import classify_cohere_error, parse_cohere_response
from switchgate.providers.cohere_stream import CohereStreamDecoder
from switchgate.providers.rerank import COHERE_RERANK, RerankAPI, api_root


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
    """ChatProvider, EmbeddingsProvider and RerankProvider (providers/capabilities.py)
    for Cohere channels. One `classify_error` reads Cohere's `{"message"}` error bodies
    for all three."""

    kind = "cohere"
    embeddings_batch_limit = EMBED_BATCH_LIMIT

    def __init__(self) -> None:
        self._rerank = RerankAPI(COHERE_RERANK)

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

    def check_options(self, options: Mapping[str, str]) -> None:
        """OptionChecker: an `input_type` Cohere would refuse fails at creation, not
        on every embeddings call."""
        if "input_type" in options:
            problem = input_type_problem(options["input_type"])
            if problem is not None:
                raise ValueError(problem)

    def build_embeddings_request(
        self, texts: Sequence[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest:
        url = cohere_url(target, "/v2/embed")
        return build_embed_request(texts, dimensions, target, url, request_headers(target))

    def parse_embeddings_response(self, body: bytes) -> EmbeddingsResult:
        return parse_embed_response(body)

    def build_rerank_request(self, request: RerankRequest, target: Target) -> UpstreamRequest:
        return self._rerank.build_rerank_request(request, target)

    def parse_rerank_response(self, body: bytes, request: RerankRequest) -> RerankResult:
        return self._rerank.parse_rerank_response(body, request)
