"""OpenAI Responses dialect: request decoding, response/stream encoding, errors."""

from switchgate.dialects.openai_responses.decode import responses_to_core_request
from switchgate.dialects.openai_responses.dialect import OpenAIResponsesDialect
from switchgate.dialects.openai_responses.encode import core_to_responses_response
from switchgate.dialects.openai_responses.errors import render_responses_stream_error
from switchgate.dialects.openai_responses.stream import ResponsesStreamEncoder

__all__ = [
    "OpenAIResponsesDialect",
    "ResponsesStreamEncoder",
    "core_to_responses_response",
    "render_responses_stream_error",
    "responses_to_core_request",
]
