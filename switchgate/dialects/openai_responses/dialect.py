"""The OpenAI Responses dialect (`/v1/responses`), delegating to the codec.

A dialect object may be made per request with `on_final`, which receives the final
Response object (whole or streamed) once it is complete: the relay stores it from there.
"""

from collections.abc import Callable, Mapping
from typing import Any

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.dialects.openai_responses.decode import responses_to_core_request
from switchgate.dialects.openai_responses.encode import core_to_responses_response
from switchgate.dialects.openai_responses.errors import (
    render_openai_error,
    render_responses_stream_error,
)
from switchgate.dialects.openai_responses.stream import ResponsesStreamEncoder
from switchgate.errors import GatewayError
from switchgate.jsonutil import dumps


class OpenAIResponsesDialect:
    """Implements dialects.base.ChatDialect."""

    name = "responses"

    def __init__(self, on_final: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._on_final = on_final

    def decode_request(self, body: Any, headers: Mapping[str, str]) -> ChatRequest:
        return responses_to_core_request(body)

    def encode_response(self, response: ChatResponse, request: ChatRequest) -> bytes:
        body = core_to_responses_response(response, request)
        if self._on_final is not None:
            self._on_final(body)
        return dumps(body)

    def stream_encoder(self, request: ChatRequest) -> ResponsesStreamEncoder:
        return ResponsesStreamEncoder(request, on_final=self._on_final)

    def render_error(self, error: GatewayError) -> tuple[int, dict[str, str], bytes]:
        return render_openai_error(error)

    def render_stream_error(self, error: GatewayError) -> bytes:
        return render_responses_stream_error(error)
