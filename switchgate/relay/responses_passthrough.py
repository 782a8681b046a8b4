"""Native passthrough for `/v1/responses`: channels whose kind has a Responses adapter
(ResponsesProvider, providers/capabilities.py) and that serve it (`serves_responses`).

`run_chat` passes a call through when the provider's dialect equals the client's. No
channel kind speaks "responses", so Responses calls are translated through the IR to chat,
except on channels for which `ChatCall.native` (here `ResponsesNative.for_channel`) hands
back this provider: its dialect IS "responses", so run_chat relays the client's body to
`{base}/responses` and streams the upstream bytes back untouched, metering usage from
`response.completed`. One object per request: it remembers the final response object the
upstream produced (for the store) and the last sequence number (for an error event).
"""

from collections.abc import Mapping
from typing import Any

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError
from switchgate.providers.base import StreamDecoder, Target, UpstreamRequest
from switchgate.providers.capabilities import ChatProvider, ResponsesProvider
from switchgate.providers.openai import OpenAIProvider
from switchgate.providers.openai_response import classify_openai_error
from switchgate.providers.openai_responses import (
    ResponsesUsageMeter,
    parse_response_object,
    response_to_core,
    usage_from_responses,
)
from switchgate.providers.registry import ProviderKind, provider_kinds
from switchgate.routing.channels import Channel


def responses_api(kinds: Mapping[str, ProviderKind], channel: Channel) -> ResponsesProvider | None:
    """The channel kind's Responses adapter when `/v1/responses` goes to this channel
    natively (as the operator declared, else the adapter's default: on for the official
    OpenAI API, off for other OpenAI-compatible servers)."""
    kind = kinds.get(channel.kind)
    api = kind.responses() if kind is not None else None
    if api is None or not api.serves_responses(channel.base_url, channel.extra):
        return None
    return api


def serves_responses(channel: Channel, kinds: Mapping[str, ProviderKind] | None = None) -> bool:
    return responses_api(provider_kinds() if kinds is None else kinds, channel) is not None


class ResponsesNative:
    """Implements providers.capabilities.ChatProvider and NativeDialect (dialect
    "responses"), for passthrough only."""

    kind = "openai"
    dialect = "responses"

    def __init__(self, kinds: Mapping[str, ProviderKind]) -> None:
        self._kinds = kinds
        self._chat = OpenAIProvider()  # the chat methods are never used for passthrough
        self._api: ResponsesProvider | None = None  # the channel's, set by for_channel
        self.final: dict[str, Any] | None = None
        self.meter: ResponsesUsageMeter | None = None

    def for_channel(self, channel: Channel) -> ChatProvider | None:
        self._api = responses_api(self._kinds, channel)
        return self if self._api is not None else None

    @property
    def sequence(self) -> int:
        return self.meter.sequence if self.meter is not None else -1

    def final_response(self) -> dict[str, Any] | None:
        if self.final is not None:
            return self.final
        return self.meter.final if self.meter is not None else None

    def build_passthrough(
        self,
        body: dict[str, Any],
        target: Target,
        headers: Mapping[str, str],
        raw: bytes | None = None,
    ) -> UpstreamRequest:
        assert self._api is not None, "for_channel chose this channel"
        return self._api.build_responses_request(body, target, raw)

    def usage_from_body(self, body: bytes) -> Usage | None:
        data = parse_response_object(body)
        if data is None:
            return None
        if data.get("status") in ("completed", "incomplete"):
            self.final = data
        return usage_from_responses(data.get("usage"))

    def usage_meter(self) -> ResponsesUsageMeter:
        self.meter = ResponsesUsageMeter()
        return self.meter

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        data = parse_response_object(body)
        if data is None:
            raise ValueError("the upstream's Response body is not a JSON object")
        return response_to_core(data)

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        return classify_openai_error(status, body)

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        return self._chat.build_chat_request(request, target)

    def chat_stream_decoder(self, request: ChatRequest) -> StreamDecoder:
        return self._chat.chat_stream_decoder(request)
