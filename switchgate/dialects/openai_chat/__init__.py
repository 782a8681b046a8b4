"""OpenAI Chat Completions dialect: request decoding, response/stream encoding, errors."""

from switchgate.dialects.openai_chat.decode import openai_chat_to_core_request
from switchgate.dialects.openai_chat.dialect import OpenAIChatDialect
from switchgate.dialects.openai_chat.encode import core_to_openai_chat_response
from switchgate.dialects.openai_chat.errors import render_openai_error, render_openai_stream_error
from switchgate.dialects.openai_chat.stream import OpenAIChatStreamEncoder

__all__ = [
    "OpenAIChatDialect",
    "OpenAIChatStreamEncoder",
    "core_to_openai_chat_response",
    "openai_chat_to_core_request",
    "render_openai_error",
    "render_openai_stream_error",
]
