"""The contract every inbound dialect fulfils (pure functions; routes live in relay/)."""

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from switchgate.core.events import StreamEvent
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.errors import GatewayError


class StreamEncoder(Protocol):
    """Per-request state machine: canonical events in, the dialect's stream bytes out."""

    def encode(self, event: StreamEvent) -> bytes:
        """Bytes to send for this event (b"" when it produces nothing)."""
        ...

    def close(self) -> bytes:
        """Bytes that end a stream (e.g. `data: [DONE]`); called once after the last event."""
        ...


@runtime_checkable
class KeepAlive(Protocol):
    """A stream encoder whose dialect has a keep-alive event (Anthropic's `event: ping`,
    Responses' keep-alive): sent on a translated stream that has been quiet a while."""

    def ping(self) -> bytes: ...


class ChatDialect(Protocol):
    name: str  # "openai" | "anthropic" | "gemini"

    def decode_request(self, body: Any, headers: Mapping[str, str]) -> ChatRequest:
        """Validate and convert a parsed JSON body; raises GatewayError(INVALID_REQUEST)."""
        ...

    def encode_response(self, response: ChatResponse, request: ChatRequest) -> bytes: ...

    def stream_encoder(self, request: ChatRequest) -> StreamEncoder: ...

    def render_error(self, error: GatewayError) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) for an error before any byte was sent."""
        ...

    def render_stream_error(self, error: GatewayError) -> bytes:
        """The in-band error event that ends a stream already under way."""
        ...
