"""The OpenAI Chat Completions provider (kind "openai") and Azure OpenAI (kind "azure").

Both speak the O wire format natively, so O clients are passed through (`build_passthrough`)
and everyone else goes through the IR (`build_chat_request` / `parse_chat_response` /
`chat_stream_decoder`). See openai_request.py, openai_response.py and openai_stream.py.
"""

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError
from switchgate.jsonutil import JSONDecodeError, dumps, loads
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.forward import forward_json
from switchgate.providers.openai_request import build_openai_body
from switchgate.providers.openai_response import (
    classify_openai_error,
    parse_openai_response,
    usage_from_openai,
)
from switchgate.providers.openai_stream import OpenAIStreamDecoder, OpenAIUsageMeter


class OpenAIProvider:
    """Implements providers.base.ChatProvider for OpenAI and OpenAI-compatible servers.

    `Target.base_url` is what the OpenAI SDK takes, e.g. `https://api.openai.com/v1`.
    """

    kind = "openai"
    dialect = "openai"

    def chat_url(self, target: Target) -> str:
        return target.base_url.rstrip("/") + "/chat/completions"

    def auth_headers(self, target: Target) -> dict[str, str]:
        return {"authorization": f"Bearer {target.api_key}"}

    def _request(
        self, target: Target, body: dict[str, Any], payload: bytes | None = None
    ) -> UpstreamRequest:
        headers = {**self.auth_headers(target), "content-type": "application/json"}
        if body.get("stream") is True:
            headers["accept"] = "text/event-stream"
        headers.update(target.extra_headers)
        return UpstreamRequest(
            "POST", self.chat_url(target), headers, payload if payload else dumps(body)
        )

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        return self._request(target, build_openai_body(request, target.upstream_model))

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        return parse_openai_response(body)

    def chat_stream_decoder(self, request: ChatRequest) -> OpenAIStreamDecoder:
        return OpenAIStreamDecoder()

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        return classify_openai_error(status, body)

    def build_passthrough(
        self,
        body: dict[str, Any],
        target: Target,
        headers: Mapping[str, str],
        raw: bytes | None = None,
    ) -> UpstreamRequest:
        """The client's body with `model` rewritten and, for streams, usage forced on.

        A shallow copy: nested values are shared with `body`, nothing is deep-copied.
        Note the client then receives the usage chunk (`choices: []`) even if it didn't
        ask for one; the relay filters it out when that matters.
        """
        out = {**body, "model": target.upstream_model}
        if out.get("stream") is True:
            options = out.get("stream_options")
            out["stream_options"] = {
                **(options if isinstance(options, dict) else {}),
                "include_usage": True,
            }
        return self._request(target, out, forward_json(raw, body, out))

    def usage_from_body(self, body: bytes) -> Usage | None:
        try:
            data = loads(body)
        except JSONDecodeError:
            return None
        return usage_from_openai(data.get("usage")) if isinstance(data, dict) else None

    def usage_meter(self) -> OpenAIUsageMeter:
        return OpenAIUsageMeter()


class AzureOpenAIProvider(OpenAIProvider):
    """Azure OpenAI: the same wire format, a per-deployment URL and an `api-key` header.

    `Target.base_url` is the resource endpoint, e.g. `https://NAME.openai.azure.com`;
    `Target.upstream_model` is the deployment name.
    """

    kind = "azure"
    default_api_version = "2024-10-21"

    def chat_url(self, target: Target) -> str:
        deployment = quote(target.upstream_model, safe="")
        version = quote(target.api_version or self.default_api_version, safe="")
        return (
            f"{target.base_url.rstrip('/')}/openai/deployments/{deployment}"
            f"/chat/completions?api-version={version}"
        )

    def auth_headers(self, target: Target) -> dict[str, str]:
        return {"api-key": target.api_key}
