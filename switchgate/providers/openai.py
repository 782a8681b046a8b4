"""The OpenAI provider (kind "openai": OpenAI and OpenAI-compatible servers) and Azure
OpenAI (kind "azure").

Both speak the O wire format natively, so O clients are passed through (`build_passthrough`)
and everyone else goes through the IR (`build_chat_request` / `parse_chat_response` /
`chat_stream_decoder`). See openai_request.py, openai_response.py and openai_stream.py.
Both serve OpenAI's media endpoints as they are (`openai_url`, `auth_headers`); kind
"openai" also serves rerank (`{base}/rerank`), Responses and Realtime.
"""

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote, urlsplit

from switchgate.core.request import ChatRequest
from switchgate.core.rerank import RerankRequest, RerankResult
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
from switchgate.providers.openai_responses import build_responses_passthrough
from switchgate.providers.openai_stream import OpenAIStreamDecoder, OpenAIUsageMeter
from switchgate.providers.rerank import OPENAI_RERANK, RerankAPI

RESPONSES_OPTION: Final = "responses"  # channel extra: the upstream serves POST {base}/responses
OFFICIAL_OPENAI_HOST: Final = "api.openai.com"  # serves it unless the operator says otherwise


def serves_responses(base_url: str, options: Mapping[str, Any]) -> bool:
    """Whether `/v1/responses` goes natively to an OpenAI channel: as the operator declared
    (`responses = true/false`, `--[no-]responses`), else on for the official OpenAI API
    (so Codex works out of the box there) and off for other OpenAI-compatible servers,
    most of which lack `/responses`."""
    declared = options.get(RESPONSES_OPTION)
    if isinstance(declared, bool):
        return declared
    return urlsplit(base_url).hostname == OFFICIAL_OPENAI_HOST  # ~1.4 us: not worth a cache


def realtime_url(base_url: str, upstream_model: str) -> str:
    """`{base}/realtime?model=M` with the scheme made ws(s)."""
    base = base_url.rstrip("/")
    if base.startswith("https://"):
        base = "wss://" + base[len("https://") :]
    elif base.startswith("http://"):
        base = "ws://" + base[len("http://") :]
    return f"{base}/realtime?model={quote(upstream_model, safe='')}"


class OpenAIWire:
    """The O wire format at an address: chat (ChatProvider), passthrough of O clients
    (NativeDialect) and OpenAI's media endpoints as they are (OpenAIShaped).

    `Target.base_url` is what the OpenAI SDK takes, e.g. `https://api.openai.com/v1`.
    Subclasses change the address (`openai_url`) and the auth header (`auth_headers`).
    """

    kind = "openai"
    dialect = "openai"

    def openai_url(self, target: Target, path: str) -> str:
        return f"{target.base_url.rstrip('/')}/{path}"

    def chat_url(self, target: Target) -> str:
        return self.openai_url(target, "chat/completions")

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


class OpenAIProvider(OpenAIWire):
    """Kind "openai": OpenAI and OpenAI-compatible servers. Besides the O wire format,
    rerank at `{base}/rerank` (vLLM, TEI, Infinity...), native Responses where the
    channel serves it, and the Realtime WebSocket."""

    kind = "openai"

    def __init__(self) -> None:
        self._rerank = RerankAPI(OPENAI_RERANK)

    # RerankProvider
    def build_rerank_request(self, request: RerankRequest, target: Target) -> UpstreamRequest:
        return self._rerank.build_rerank_request(request, target)

    def parse_rerank_response(self, body: bytes, request: RerankRequest) -> RerankResult:
        return self._rerank.parse_rerank_response(body, request)

    # ResponsesProvider
    def serves_responses(self, base_url: str, options: Mapping[str, Any]) -> bool:
        return serves_responses(base_url, options)

    def build_responses_request(
        self, body: dict[str, Any], target: Target, raw: bytes | None = None
    ) -> UpstreamRequest:
        return build_responses_passthrough(body, target, raw)

    # RealtimeProvider
    def realtime_url(self, target: Target) -> str:
        return realtime_url(target.base_url, target.upstream_model)

    def realtime_headers(self, target: Target) -> dict[str, str]:
        return {**self.auth_headers(target), **target.extra_headers}


class AzureOpenAIProvider(OpenAIWire):
    """Azure OpenAI: the same wire format, a per-deployment URL and an `api-key` header.

    `Target.base_url` is the resource endpoint, e.g. `https://NAME.openai.azure.com`;
    `Target.upstream_model` is the deployment name.
    """

    kind = "azure"
    default_api_version = "2024-10-21"

    def openai_url(self, target: Target, path: str) -> str:
        deployment = quote(target.upstream_model, safe="")
        version = quote(target.api_version or self.default_api_version, safe="")
        return (
            f"{target.base_url.rstrip('/')}/openai/deployments/{deployment}"
            f"/{path}?api-version={version}"
        )

    def auth_headers(self, target: Target) -> dict[str, str]:
        return {"api-key": target.api_key}
