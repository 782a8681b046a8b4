"""The `bedrock` channel kind: AWS Bedrock Runtime. Chat through Converse /
ConverseStream (one wire for Anthropic, Llama, Mistral, Nova... models), embeddings
through InvokeModel (Titan Text Embeddings, Cohere Embed). No client dialect of its own:
every request is translated. Channel settings: providers/bedrock_auth.py."""

from collections.abc import Mapping, Sequence
from typing import Final

from switchgate import jsonutil
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.bedrock_auth import (
    DEFAULT_BASE_URL,
    EVENT_STREAM_TYPE,
    model_url,
    signed_headers,
)
from switchgate.providers.bedrock_embed import (
    TITAN_BATCH_LIMIT,
    batch_limit,
    build_invoke_embeddings,
    parse_invoke_embeddings,
)
from switchgate.providers.bedrock_request import converse_body
from switchgate.providers.bedrock_response import classify, parse_converse
from switchgate.providers.bedrock_stream import BedrockStreamDecoder
from switchgate.providers.capabilities import EmbeddingsResult

KIND: Final = "bedrock"
ERROR_TYPE_HEADER: Final = "x-amzn-errortype"


class BedrockProvider:
    kind = KIND
    default_base_url = DEFAULT_BASE_URL
    # Texts per call whatever the model (Titan takes one); `embeddings_batch_limit_for`
    # gives one model's own limit (96 for Cohere Embed) to a relay that asks per model.
    embeddings_batch_limit = TITAN_BATCH_LIMIT

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        body = jsonutil.dumps(converse_body(request, target.upstream_model))
        if request.stream:
            url = model_url(target, "converse-stream")
            headers = signed_headers("POST", url, body, target, accept=EVENT_STREAM_TYPE)
        else:
            url = model_url(target, "converse")
            headers = signed_headers("POST", url, body, target)
        return UpstreamRequest("POST", url, headers, body)

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        return parse_converse(body, request.model)

    def chat_stream_decoder(self, request: ChatRequest) -> BedrockStreamDecoder:
        return BedrockStreamDecoder(request.model)

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        return classify(status, body)

    def classify_error_with_headers(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> GatewayError:
        """The exception's name comes in `x-amzn-errortype` (the body is `{message}`)."""
        return classify(status, body, headers.get(ERROR_TYPE_HEADER) or None)

    # ------------------------------------------------------------ embeddings

    def embeddings_batch_limit_for(self, model: str) -> int:
        return batch_limit(model)

    def build_embeddings_request(
        self, texts: Sequence[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest:
        return build_invoke_embeddings(texts, dimensions, target)

    def parse_embeddings_response(self, body: bytes) -> EmbeddingsResult:
        return parse_invoke_embeddings(body)
