"""The one list of provider kinds (a channel's `kind`): what each is called, its adapter
object, and which endpoints it serves. Adding a kind: its adapter module(s) and one
entry in `provider_kinds()` (docs/adding-a-provider.md).

The registry is built once at start-up and hangs off AppState (`state.kinds`); the
CLI's offline commands build their own. Nothing here is module-level mutable state: an
adapter may keep a cache (an access token), so every call builds fresh adapters.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from switchgate.providers.anthropic import AnthropicProvider
from switchgate.providers.base import Target
from switchgate.providers.bedrock import BedrockProvider
from switchgate.providers.capabilities import (
    Authorizer,
    ChatProvider,
    EmbeddingsProvider,
    HostedToolMapper,
    NativeDialect,
    OpenAIShaped,
    OptionChecker,
    RealtimeProvider,
    RerankProvider,
    ResponsesProvider,
)
from switchgate.providers.cohere import CohereProvider
from switchgate.providers.gemini import GeminiProvider
from switchgate.providers.hosted_tools import HostedToolMap
from switchgate.providers.openai import AzureOpenAIProvider, OpenAIProvider
from switchgate.providers.openai_compatible import Preset, PresetProvider
from switchgate.providers.openai_presets import PRESETS
from switchgate.providers.rerank import JINA_RERANK, RerankAPI
from switchgate.providers.vertex import VertexProvider

# The endpoints a kind can serve, and the capability (providers/capabilities.py) each
# needs of its adapter: chat: ChatProvider; embeddings: EmbeddingsProvider or
# OpenAIShaped; images, audio, completions: OpenAIShaped; rerank: RerankProvider;
# responses: ResponsesProvider; realtime: RealtimeProvider.
CHAT: Final = "chat"
EMBEDDINGS: Final = "embeddings"
IMAGES: Final = "images"
AUDIO: Final = "audio"
COMPLETIONS: Final = "completions"
RERANK: Final = "rerank"
RESPONSES: Final = "responses"
REALTIME: Final = "realtime"
ENDPOINTS: Final = frozenset(
    {CHAT, EMBEDDINGS, IMAGES, AUDIO, COMPLETIONS, RERANK, RESPONSES, REALTIME}
)
OPENAI_MEDIA: Final = frozenset({EMBEDDINGS, IMAGES, AUDIO, COMPLETIONS})


@dataclass(frozen=True, slots=True)
class KindOption:
    """A channel option (`options`, Target.options) a kind reads: for the console's form
    and `GET /api/channels` `kind_details` (docs/providers.md says the same for people)."""

    name: str
    hint: str  # what it does and its default, for people
    required: bool = False  # True: the kind cannot call the upstream without it


API_KEY: Final = "API key"


@dataclass(frozen=True, slots=True)
class ProviderKind:
    """One channel kind. `adapter` implements the capabilities its `endpoints` need
    (checked by tests/unit/test_provider_conformance.py); the accessors below return it
    as the capability the relay asks for, or None when the kind doesn't serve that."""

    name: str  # the channel's `kind`
    label: str  # for people (the console's kind list)
    adapter: object
    default_base_url: str = ""  # what `base_url` usually is ("" = the operator's own)
    needs_key: bool = True  # False: a local server that takes no API key
    endpoints: frozenset[str] = frozenset({CHAT})
    options: tuple[KindOption, ...] = ()  # the channel options it reads
    key_format: str = API_KEY  # what the channel's key is, for people

    # What the adapter is, worked out once here: `isinstance` on a runtime protocol
    # costs 5-15 us (it looks up every member), too much for every request.
    _views: "_Views" = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unknown = self.endpoints - ENDPOINTS
        if unknown:
            raise ValueError(f"kind {self.name!r}: unknown endpoints {sorted(unknown)}")
        object.__setattr__(self, "_views", _Views.of(self.adapter, self.endpoints))

    def serves(self, endpoint: str) -> bool:
        return endpoint in self.endpoints

    def chat(self) -> ChatProvider | None:
        return self._views.chat

    def native(self) -> NativeDialect | None:
        """The adapter as a passthrough target for clients of its own dialect."""
        return self._views.native

    def embeddings(self) -> EmbeddingsProvider | None:
        """Translated embeddings (None for kinds that pass OpenAI's through: openai_shaped)."""
        return self._views.embeddings

    def openai_shaped(self, endpoint: str) -> OpenAIShaped | None:
        """The adapter for OpenAI's own `endpoint` (embeddings, images, audio,
        completions) passed through as it is."""
        shaped = self._views.openai_shaped
        return shaped if endpoint in OPENAI_MEDIA and endpoint in self.endpoints else None

    def rerank(self) -> RerankProvider | None:
        return self._views.rerank

    def responses(self) -> ResponsesProvider | None:
        return self._views.responses

    def realtime(self) -> RealtimeProvider | None:
        return self._views.realtime

    def check_options(self, options: Mapping[str, str]) -> None:
        """Raise ValueError when the adapter refuses these channel options."""
        if isinstance(self.adapter, OptionChecker):
            self.adapter.check_options(options)

    def authorizer(self) -> Authorizer | None:
        return self._views.authorizer

    def hosted_tools(self, target: Target) -> HostedToolMap | None:
        """What the adapter maps a client's hosted tools to for this target (None: nothing;
        providers/capabilities.HostedToolMapper)."""
        mapper = self._views.hosted
        return mapper.hosted_tools(target) if mapper is not None else None


@dataclass(frozen=True, slots=True)
class _Views:
    """One adapter seen as each capability it has (None where it lacks it or the kind
    doesn't serve that endpoint)."""

    chat: ChatProvider | None
    native: NativeDialect | None
    embeddings: EmbeddingsProvider | None
    openai_shaped: OpenAIShaped | None  # served per endpoint: ProviderKind.openai_shaped
    rerank: RerankProvider | None
    responses: ResponsesProvider | None
    realtime: RealtimeProvider | None
    authorizer: Authorizer | None
    hosted: HostedToolMapper | None

    @staticmethod
    def of(a: object, endpoints: frozenset[str]) -> "_Views":
        chat = CHAT in endpoints
        return _Views(
            chat=a if chat and isinstance(a, ChatProvider) else None,
            native=a if chat and isinstance(a, NativeDialect) else None,
            embeddings=a if EMBEDDINGS in endpoints and isinstance(a, EmbeddingsProvider) else None,
            openai_shaped=a if isinstance(a, OpenAIShaped) else None,
            rerank=a if RERANK in endpoints and isinstance(a, RerankProvider) else None,
            responses=a if RESPONSES in endpoints and isinstance(a, ResponsesProvider) else None,
            realtime=a if REALTIME in endpoints and isinstance(a, RealtimeProvider) else None,
            authorizer=a if isinstance(a, Authorizer) else None,
            hosted=a if isinstance(a, HostedToolMapper) else None,
        )


def provider_kinds() -> Mapping[str, ProviderKind]:
    """Every kind, by name, with fresh adapters (call once: AppState keeps the result)."""
    kinds = (
        ProviderKind(
            "openai",
            "OpenAI / OpenAI-compatible",
            OpenAIProvider(),
            default_base_url="https://api.openai.com/v1",
            endpoints=ENDPOINTS,
        ),
        ProviderKind(
            "azure",
            "Azure OpenAI",
            AzureOpenAIProvider(),
            endpoints=frozenset({CHAT}) | OPENAI_MEDIA,
        ),
        ProviderKind(
            "anthropic",
            "Anthropic",
            AnthropicProvider(),
            default_base_url="https://api.anthropic.com",
        ),
        ProviderKind(
            "gemini",
            "Google Gemini (AI Studio)",
            GeminiProvider(),
            default_base_url="https://generativelanguage.googleapis.com",
            endpoints=frozenset({CHAT, EMBEDDINGS}),
        ),
        ProviderKind(
            "bedrock",
            "AWS Bedrock",
            BedrockProvider(),
            default_base_url=BedrockProvider.default_base_url,
            endpoints=frozenset({CHAT, EMBEDDINGS}),
            options=(
                KindOption(
                    "region",
                    "AWS region, e.g. eu-west-1 (default: the one in a "
                    "bedrock-runtime.<region>.amazonaws.com base URL)",
                ),
            ),
            key_format="ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN] or a Bedrock API key",
        ),
        ProviderKind(
            "vertex",
            "Google Vertex AI (Gemini, Claude)",
            VertexProvider(),
            default_base_url=VertexProvider.default_base_url,
            endpoints=frozenset({CHAT, EMBEDDINGS}),
            options=(
                KindOption("project", "Google Cloud project id (default: the key's project_id)"),
                KindOption("location", "e.g. us-east5, europe-west4, global (default us-central1)"),
                KindOption("publisher", "google or anthropic (default: from the model name)"),
                KindOption("embedding_task_type", "sent as task_type, e.g. RETRIEVAL_DOCUMENT"),
            ),
            key_format="the service account's JSON key file, whole (or an access token)",
        ),
        ProviderKind(
            "cohere",
            "Cohere",
            CohereProvider(),
            default_base_url="https://api.cohere.com",
            endpoints=frozenset({CHAT, EMBEDDINGS, RERANK}),
            options=(
                KindOption(
                    "input_type",
                    "embeddings: search_document (default), search_query, "
                    "classification or clustering",
                ),
            ),
        ),
        ProviderKind(
            "jina",
            "Jina AI",
            RerankAPI(JINA_RERANK),
            default_base_url="https://api.jina.ai",
            endpoints=frozenset({RERANK}),
        ),
        # OpenAI-compatible presets (deepseek, mistral, ollama, groq, ...): one entry each,
        # its endpoints, base URL and key rule from its preset (providers/openai_presets.py).
        *(
            ProviderKind(
                p.kind,
                p.label,
                PresetProvider(p),
                default_base_url=p.default_base_url,
                needs_key=p.needs_key,
                endpoints=p.endpoints,
                options=preset_options(p),
                key_format=API_KEY if p.needs_key else API_KEY + " (optional: none needed locally)",
            )
            for p in PRESETS
        ),
    )
    return {kind.name: kind for kind in kinds}


def preset_options(preset: Preset) -> tuple[KindOption, ...]:
    """The options an OpenAI-compatible preset reads: its attribution headers and the
    body fields it copies from the channel."""
    headers = (
        KindOption(option, f"sent as the {header} header")
        for option, header in preset.header_options
    )
    body = (
        KindOption(name, f'sent as "{name}" in the request body ("true"/"false": a boolean)')
        for name in preset.request.body_options
    )
    return (*headers, *body)


def kind_names() -> tuple[str, ...]:
    """The names of every kind, in the registry's order."""
    return tuple(provider_kinds())


def chat_providers(kinds: Mapping[str, ProviderKind] | None = None) -> Mapping[str, ChatProvider]:
    """The chat adapter of every kind that serves chat."""
    kinds = provider_kinds() if kinds is None else kinds
    return {name: chat for name, kind in kinds.items() if (chat := kind.chat()) is not None}
