"""The OpenAI Chat Completions dialect (`/v1/chat/completions`), delegating to the codec."""

from collections.abc import Mapping
from typing import Any

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.dialects.openai_chat.decode import openai_chat_to_core_request
from switchgate.dialects.openai_chat.encode import core_to_openai_chat_response
from switchgate.dialects.openai_chat.errors import render_openai_error, render_openai_stream_error
from switchgate.dialects.openai_chat.stream import OpenAIChatStreamEncoder
from switchgate.errors import GatewayError


class OpenAIChatDialect:
    """Implements dialects.base.ChatDialect."""

    name = "openai"

    def decode_request(self, body: Any, headers: Mapping[str, str]) -> ChatRequest:
        return openai_chat_to_core_request(body)

    def encode_response(self, response: ChatResponse, request: ChatRequest) -> bytes:
        return core_to_openai_chat_response(response, request)

    def stream_encoder(self, request: ChatRequest) -> OpenAIChatStreamEncoder:
        return OpenAIChatStreamEncoder(request)

    def render_error(self, error: GatewayError) -> tuple[int, dict[str, str], bytes]:
        return render_openai_error(error)

    def render_stream_error(self, error: GatewayError) -> bytes:
        return render_openai_stream_error(error)
