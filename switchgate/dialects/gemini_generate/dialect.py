"""The Gemini generate-content inbound dialect (ChatDialect "gemini").

The model and the action live in the URL, not the body, so the relay passes them as
pseudo-headers in `headers` (lower-cased names, like the real headers):
  ":model"   the URL's model id (`gemini-2.5-flash` or `models/gemini-2.5-flash`), required;
  ":action"  "generateContent" or "streamGenerateContent" (the latter sets request.stream);
  ":alt"     the `alt` query parameter; "sse" selects SSE framing for the stream, anything
             else (or absent) the progressive JSON array.
The framing choice is recorded as `request.extras["gemini"][":alt"]` ("sse" | "json") so that
`stream_encoder(request)` can honour it; the Gemini provider skips ":"-prefixed extras keys.
countTokens bodies go through `gemini_count_tokens_request` instead.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.dialects.gemini_generate.decode import gemini_to_core_request
from switchgate.dialects.gemini_generate.encode import core_to_gemini_response
from switchgate.dialects.gemini_generate.errors import (
    render_gemini_error,
    render_gemini_stream_error,
)
from switchgate.dialects.gemini_generate.stream import GeminiStreamEncoder
from switchgate.errors import GatewayError, invalid

ALT_KEY = ":alt"


class GeminiGenerateDialect:
    name = "gemini"

    def decode_request(self, body: Any, headers: Mapping[str, str]) -> ChatRequest:
        model = headers.get(":model")
        if not model:
            raise invalid("model is required in the URL path", param="model")
        stream = headers.get(":action") == "streamGenerateContent"
        request = gemini_to_core_request(body, model, stream=stream)
        if not stream:
            return request
        gemini = dict(request.extras.get("gemini", {}))
        gemini[ALT_KEY] = "sse" if headers.get(":alt") == "sse" else "json"
        extras = {**request.extras, "gemini": gemini}
        return replace(request, extras=extras)

    def encode_response(self, response: ChatResponse, request: ChatRequest) -> bytes:
        return core_to_gemini_response(response, request)

    def stream_encoder(self, request: ChatRequest) -> GeminiStreamEncoder:
        alt = request.extras.get("gemini", {}).get(ALT_KEY, "sse")
        return GeminiStreamEncoder(request, sse=alt != "json")

    def render_error(self, error: GatewayError) -> tuple[int, dict[str, str], bytes]:
        return render_gemini_error(error)

    def render_stream_error(self, error: GatewayError) -> bytes:
        """The SSE form; in array mode the relay feeds StreamError to the encoder instead."""
        return render_gemini_stream_error(error)
