"""The Anthropic Messages dialect (`POST /v1/messages`), as a ChatDialect."""

from collections.abc import Mapping
from typing import Any

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.dialects.anthropic_messages.decode import (
    anthropic_count_tokens_request,
    anthropic_to_core_request,
)
from switchgate.dialects.anthropic_messages.encode import core_to_anthropic_response
from switchgate.dialects.anthropic_messages.errors import (
    render_anthropic_error,
    render_anthropic_stream_error,
)
from switchgate.dialects.anthropic_messages.stream import AnthropicStreamEncoder
from switchgate.errors import GatewayError


class AnthropicMessagesDialect:
    name = "anthropic"

    def decode_request(self, body: Any, headers: Mapping[str, str]) -> ChatRequest:
        return anthropic_to_core_request(body, headers)

    def decode_count_tokens(self, body: Any, headers: Mapping[str, str]) -> ChatRequest:
        """`POST /v1/messages/count_tokens`: the Messages body without `max_tokens`."""
        return anthropic_count_tokens_request(body, headers)

    def encode_response(self, response: ChatResponse, request: ChatRequest) -> bytes:
        return core_to_anthropic_response(response, request)

    def stream_encoder(self, request: ChatRequest) -> AnthropicStreamEncoder:
        return AnthropicStreamEncoder(request)

    def render_error(self, error: GatewayError) -> tuple[int, dict[str, str], bytes]:
        return render_anthropic_error(error)

    def render_stream_error(self, error: GatewayError) -> bytes:
        return render_anthropic_stream_error(error)
