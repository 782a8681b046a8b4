"""Anthropic Messages dialect: request decoding, response/stream encoding, errors."""

from switchgate.dialects.anthropic_messages.decode import (
    anthropic_count_tokens_request,
    anthropic_to_core_request,
)
from switchgate.dialects.anthropic_messages.dialect import AnthropicMessagesDialect
from switchgate.dialects.anthropic_messages.encode import core_to_anthropic_response
from switchgate.dialects.anthropic_messages.errors import (
    render_anthropic_error,
    render_anthropic_stream_error,
)
from switchgate.dialects.anthropic_messages.stream import AnthropicStreamEncoder

__all__ = [
    "AnthropicMessagesDialect",
    "AnthropicStreamEncoder",
    "anthropic_count_tokens_request",
    "anthropic_to_core_request",
    "core_to_anthropic_response",
    "render_anthropic_error",
    "render_anthropic_stream_error",
]
