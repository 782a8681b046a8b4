"""The Anthropic Messages provider (api.anthropic.com and compatible hosts)."""

from collections.abc import Mapping
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.content import OutputPart, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.anthropic_request import EXTRA_BETA, core_to_anthropic_body
from switchgate.providers.anthropic_stream import (
    AnthropicStreamDecoder,
    AnthropicUsageMeter,
    finish_reason,
    merge_usage,
    scrub,
    to_usage,
)
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.forward import forward_json
from switchgate.providers.hosted_tools import ANTHROPIC_TOOLS, HostedToolMap
from switchgate.providers.system_messages import fold_anthropic_body

API_VERSION: Final = "2023-06-01"
_CLIENT_STATUSES: Final = frozenset({400, 404, 413, 422})
_DEFAULT_MESSAGES: Final[dict[int, str]] = {
    400: "invalid request",
    404: "not found",
    413: "request too large",
    422: "invalid request",
}


def messages_url(base_url: str) -> str:
    """`{base}/v1/messages`, without doubling a `/v1` the base already ends with."""
    base = base_url.rstrip("/")
    return base + "/messages" if base.endswith("/v1") else base + "/v1/messages"


def _headers(target: Target, version: str, beta: str | None) -> dict[str, str]:
    headers = {
        "x-api-key": target.api_key,
        "anthropic-version": version,
        "content-type": "application/json",
    }
    if beta:
        headers["anthropic-beta"] = beta
    headers.update(target.extra_headers)
    return headers


def _upstream_message(body: bytes) -> str | None:
    try:
        data = jsonutil.loads(body)
    except jsonutil.JSONDecodeError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return scrub(message) if isinstance(message, str) and message else None


def _output_part(block: Any) -> OutputPart | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        return TextPart(block["text"])
    if kind == "tool_use":
        args = block.get("input")
        return ToolCallPart(
            str(block.get("id", "")),
            str(block.get("name", "")),
            jsonutil.dumps_str(args if isinstance(args, dict) else {}),
        )
    if kind == "thinking":
        signature = block.get("signature")
        return ThinkingPart(
            str(block.get("thinking", "")), signature=signature if signature else None
        )
    if kind == "redacted_thinking":
        return ThinkingPart(redacted=str(block.get("data", "")))
    return None  # server tool blocks have no IR form


class AnthropicProvider:
    kind = "anthropic"
    dialect = "anthropic"

    def hosted_tools(self, target: Target) -> HostedToolMap:
        """Anthropic's server web search for other dialects' (HostedToolMapper)."""
        return ANTHROPIC_TOOLS

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest:
        body = core_to_anthropic_body(request, target.upstream_model)
        beta = request.extras.get("anthropic", {}).get(EXTRA_BETA)
        headers = _headers(target, API_VERSION, beta if isinstance(beta, str) else None)
        return UpstreamRequest("POST", messages_url(target.base_url), headers, jsonutil.dumps(body))

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse:
        try:
            data = jsonutil.loads(body)
        except jsonutil.JSONDecodeError as exc:
            raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned invalid JSON") from exc
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            raise GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned an unexpected body")
        parts = [p for p in (_output_part(b) for b in data["content"]) if p is not None]
        usage: dict[str, int] = {}
        merge_usage(usage, data.get("usage"))
        sequence = data.get("stop_sequence")
        return ChatResponse(
            id=str(data.get("id", "")),
            model=str(data.get("model", "")) or request.model,
            parts=tuple(parts),
            finish_reason=finish_reason(data.get("stop_reason")),
            usage=to_usage(usage),
            stop_sequence=sequence if isinstance(sequence, str) else None,
        )

    def chat_stream_decoder(self, request: ChatRequest) -> AnthropicStreamDecoder:
        return AnthropicStreamDecoder()

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        message = _upstream_message(body)
        if status in _CLIENT_STATUSES:
            return GatewayError(
                ErrorKind.INVALID_REQUEST,
                message or _DEFAULT_MESSAGES[status],
                upstream_status=status,
                status_override=status,
            )
        if status in (401, 403):
            kind, message = ErrorKind.UPSTREAM_ERROR, "upstream authentication failed"
        elif status == 429:
            kind, message = ErrorKind.RATE_LIMITED, message or "upstream rate limit reached"
        elif status in (503, 529):
            kind, message = ErrorKind.UPSTREAM_OVERLOADED, message or "upstream overloaded"
        elif status in (408, 504):
            kind, message = ErrorKind.UPSTREAM_TIMEOUT, message or "upstream timed out"
        else:
            kind = ErrorKind.UPSTREAM_ERROR
            message = f"upstream error (HTTP {status})" + (f": {message}" if message else "")
        return GatewayError(kind, message, upstream_status=status)

    def build_passthrough(
        self,
        body: dict[str, Any],
        target: Target,
        headers: Mapping[str, str],
        raw: bytes | None = None,
    ) -> UpstreamRequest:
        folded = fold_anthropic_body(body)  # the real API refuses role system in messages
        forwarded = {**(folded or body), "model": target.upstream_model}
        version = headers.get("anthropic-version") or API_VERSION
        out = _headers(target, version, headers.get("anthropic-beta"))
        return UpstreamRequest(
            "POST", messages_url(target.base_url), out, forward_json(raw, body, forwarded)
        )

    def usage_from_body(self, body: bytes) -> Usage | None:
        try:
            data = jsonutil.loads(body)
        except jsonutil.JSONDecodeError:
            return None
        usage: dict[str, int] = {}
        merge_usage(usage, data.get("usage") if isinstance(data, dict) else None)
        return to_usage(usage) if usage else None

    def usage_meter(self) -> AnthropicUsageMeter:
        return AnthropicUsageMeter()
