"""What a provider adapter can do: one small protocol per capability, each checked with
`isinstance` (they are `runtime_checkable`). A kind's adapter (providers/registry.py)
implements the ones it serves and declares them in `ProviderKind.endpoints`:

    endpoint      protocol
    chat          ChatProvider (+ NativeDialect when it has a client dialect of its own)
    embeddings    EmbeddingsProvider (translated; + ModelBatchLimit when the upstream
                  model decides the batch size) or OpenAIShaped (passed through)
    images        OpenAIShaped
    audio         OpenAIShaped
    completions   OpenAIShaped
    rerank        RerankProvider
    responses     ResponsesProvider
    realtime      RealtimeProvider

`HostedToolMapper` (chat): the upstream's own hosted tools (web search) that a client's
hosted tools of another dialect become, for a given upstream model.

`Authorizer` is orthogonal: a kind whose credentials must be fetched before a call (an
OAuth access token from a service account) implements it, and the relay awaits it after
choosing a channel and before building the request. Everything else is pure: providers
never do network I/O, the relay sends the UpstreamRequest they build.

`HeaderAwareClassifier` is orthogonal: an ErrorClassifier whose upstream names the error
in a response header (Bedrock: `x-amzn-errortype`) reads the headers too; the relay
calls `classify_response` (below), which uses it when the adapter has it.

`OptionChecker` is orthogonal too: a kind with channel options (`channels.extra`, read
as `Target.options`) checks their values when a channel is created or edited (CLI,
config file, console API all go through routing/channels.py `upsert_channel`), so a bad
value is refused there instead of failing every call.

`isinstance` on a runtime protocol checks that the members exist, not their signatures:
mypy checks those where an adapter is used as one (the conformance suite does so for
every kind in the registry).
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from switchgate.core.request import ChatRequest
from switchgate.core.rerank import RerankRequest, RerankResult
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.errors import GatewayError
from switchgate.providers.base import StreamDecoder, Target, UpstreamRequest, UsageMeter
from switchgate.providers.hosted_tools import HostedToolMap


@runtime_checkable
class ErrorClassifier(Protocol):
    """Reads an upstream's error answer (status and body) into the gateway's error. Every
    capability that sends requests has it; the non-chat relay uses it whatever the call."""

    def classify_error(self, status: int, body: bytes) -> GatewayError: ...


@runtime_checkable
class HeaderAwareClassifier(Protocol):
    """An ErrorClassifier that needs the error answer's headers (lower-cased names) too:
    Bedrock's exception name comes only in `x-amzn-errortype`, its body is `{message}`."""

    def classify_error_with_headers(
        self, status: int, headers: Mapping[str, str], body: bytes
    ) -> GatewayError: ...


def classify_response(
    adapter: ErrorClassifier, status: int, headers: Mapping[str, str], body: bytes
) -> GatewayError:
    """The adapter's reading of an upstream error answer, with its headers when it wants
    them (HeaderAwareClassifier), else from the status and body alone."""
    if isinstance(adapter, HeaderAwareClassifier):
        return adapter.classify_error_with_headers(status, headers, body)
    return adapter.classify_error(status, body)


@runtime_checkable
class ChatProvider(Protocol):
    """Chat through the IR: canonical request in, the upstream's wire format out, and
    back. `kind` is the channel kind."""

    kind: str

    def build_chat_request(self, request: ChatRequest, target: Target) -> UpstreamRequest: ...

    def parse_chat_response(self, body: bytes, request: ChatRequest) -> ChatResponse: ...

    def chat_stream_decoder(self, request: ChatRequest) -> StreamDecoder: ...

    def classify_error(self, status: int, body: bytes) -> GatewayError: ...


@runtime_checkable
class HostedToolMapper(Protocol):
    """A ChatProvider whose upstream runs hosted tools (web search) of its own: the map
    (providers/hosted_tools.py) for one call's upstream model (`target.upstream_model`
    and the channel's options), or None where that model gets none. Client hosted tools
    sent to an adapter without it are dropped and named (x-switchgate-dropped-tools)."""

    def hosted_tools(self, target: Target) -> HostedToolMap | None: ...


def hosted_tool_map(adapter: object, target: Target) -> HostedToolMap | None:
    """What `adapter` maps a client's hosted tools to for this target (None: nothing)."""
    return adapter.hosted_tools(target) if isinstance(adapter, HostedToolMapper) else None


@runtime_checkable
class NativeDialect(Protocol):
    """A provider whose wire format is one of the gateway's client dialects (`dialect`:
    "openai", "anthropic", "gemini", "responses"): a client of that dialect is passed
    through with only the model rewritten, and usage is read without changing a byte."""

    dialect: str

    def build_passthrough(
        self,
        body: dict[str, Any],
        target: Target,
        headers: Mapping[str, str],
        raw: bytes | None = None,
    ) -> UpstreamRequest:
        """Forward a same-dialect body with only the model (and, for streams, usage
        reporting) rewritten. `headers` are the client's, lower-cased, for the few
        that pass through (e.g. anthropic-beta). `raw`, the bytes `body` was parsed
        from, is forwarded as it is when nothing changes (providers/forward.py)."""
        ...

    def usage_from_body(self, body: bytes) -> Usage | None:
        """Usage from a non-streamed native response body."""
        ...

    def usage_meter(self) -> UsageMeter: ...


@dataclass(frozen=True, slots=True)
class EmbeddingsResult:
    """One upstream embeddings answer: a vector per text, in the request's order, and the
    input tokens the upstream reported (None: it did not; the relay counts them)."""

    vectors: list[list[float]]
    input_tokens: int | None


@runtime_checkable
class EmbeddingsProvider(Protocol):
    """Embeddings translated to the upstream's own API (Gemini's batchEmbedContents...).
    The relay splits a call into batches of at most `embeddings_batch_limit` texts."""

    embeddings_batch_limit: int

    def build_embeddings_request(
        self, texts: Sequence[str], dimensions: int | None, target: Target
    ) -> UpstreamRequest: ...

    def parse_embeddings_response(self, body: bytes) -> EmbeddingsResult:
        """Raises GatewayError(UPSTREAM_ERROR) on a malformed answer."""
        ...

    def classify_error(self, status: int, body: bytes) -> GatewayError: ...


@runtime_checkable
class ModelBatchLimit(Protocol):
    """An EmbeddingsProvider whose batch limit depends on the upstream model (Bedrock:
    Titan takes one text per call, Cohere Embed 96); `embeddings_batch_limit` stays the
    limit that fits every model."""

    def embeddings_batch_limit_for(self, model: str) -> int: ...


@runtime_checkable
class OpenAIShaped(Protocol):
    """An upstream that serves OpenAI's own media endpoints as they are (embeddings,
    images, audio, legacy completions): the client's body is passed through to
    `openai_url(target, path)` (path e.g. "embeddings", "images/generations") with
    `auth_headers(target)`."""

    def openai_url(self, target: Target, path: str) -> str: ...

    def auth_headers(self, target: Target) -> dict[str, str]: ...

    def classify_error(self, status: int, body: bytes) -> GatewayError: ...


@runtime_checkable
class RerankProvider(Protocol):
    """Rerank (Cohere v2, Jina, OpenAI-compatible `/rerank`): one normalised answer."""

    def build_rerank_request(self, request: RerankRequest, target: Target) -> UpstreamRequest: ...

    def parse_rerank_response(self, body: bytes, request: RerankRequest) -> RerankResult:
        """Raises GatewayError(UPSTREAM_ERROR) on a malformed answer."""
        ...

    def classify_error(self, status: int, body: bytes) -> GatewayError: ...


@runtime_checkable
class ResponsesProvider(Protocol):
    """An upstream that serves OpenAI's `/responses` natively (the client's body is
    passed through). Whether one channel does is the operator's call: `serves_responses`
    reads the channel's base URL and settings (channels.extra)."""

    def serves_responses(self, base_url: str, options: Mapping[str, Any]) -> bool: ...

    def build_responses_request(
        self, body: dict[str, Any], target: Target, raw: bytes | None = None
    ) -> UpstreamRequest: ...


@runtime_checkable
class RealtimeProvider(Protocol):
    """An upstream of OpenAI's Realtime API (a WebSocket the relay bridges)."""

    def realtime_url(self, target: Target) -> str:
        """`ws(s)://.../realtime?model=...`"""
        ...

    def realtime_headers(self, target: Target) -> dict[str, str]: ...


@runtime_checkable
class OptionChecker(Protocol):
    """A kind that checks its channel options (pure): raises ValueError saying what is
    wrong and what is allowed. Options it does not know are left alone."""

    def check_options(self, options: Mapping[str, str]) -> None: ...


@runtime_checkable
class Authorizer(Protocol):
    """A kind whose credentials are fetched before a call (e.g. an OAuth access token
    minted from a service-account JSON, cached on the adapter until it nears expiry).
    Returns the target to build the request with (its `api_key` or `extra_headers`
    carrying what was fetched). The only provider hook that may do I/O; a failure is
    raised as a GatewayError and counts against the channel (the call fails over)."""

    async def authorize(self, target: Target) -> Target: ...
