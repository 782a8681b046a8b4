"""Gemini generate-content dialect (`/v1beta/models/{model}:generateContent`, protocols §4)."""

from switchgate.dialects.gemini_generate.decode import (
    gemini_count_tokens_request,
    gemini_to_core_request,
)
from switchgate.dialects.gemini_generate.dialect import GeminiGenerateDialect
from switchgate.dialects.gemini_generate.encode import core_to_gemini_response
from switchgate.dialects.gemini_generate.errors import (
    render_gemini_error,
    render_gemini_stream_error,
)
from switchgate.dialects.gemini_generate.stream import GeminiStreamEncoder

__all__ = [
    "GeminiGenerateDialect",
    "GeminiStreamEncoder",
    "core_to_gemini_response",
    "gemini_count_tokens_request",
    "gemini_to_core_request",
    "render_gemini_error",
    "render_gemini_stream_error",
]
