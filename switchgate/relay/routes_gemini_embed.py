"""POST /v1beta/models/{model}:embedContent and :batchEmbedContents (protocols §4.6).

- Kinds whose native dialect is Gemini's and that serve embeddings: passed through
  (model names retargeted), the answer relayed unchanged.
- Kinds that serve OpenAI's embeddings as they are (OpenAIShaped): translated to one
  `/embeddings` call (texts in order, `outputDimensionality` -> `dimensions`, floats)
  and answered in the Gemini shape.
- Other kinds with embeddings of their own (EmbeddingsProvider): translated in the
  provider's batches (relay/embed_fanout.py) and answered in the Gemini shape.
A `:batchEmbedContents` of more than 100 requests is a 400, as on Gemini's own API
(`* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch`),
whichever channel would serve it, so the answer never depends on the channel picked.
Errors use the Gemini shape. Billed: input tokens x the input price (+ per_request),
the tokens counted by the tokenizer unless the upstream reports them.
"""

from collections.abc import Callable, Mapping

from switchgate import jsonutil
from switchgate.billing.media_pricing import input_token_cost
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import NativeDialect
from switchgate.providers.embeddings import (
    GeminiEmbed,
    check_translatable,
    gemini_reply,
    openai_body,
    openai_vectors,
    parse_gemini_embed,
)
from switchgate.providers.openai_media import json_request
from switchgate.providers.registry import EMBEDDINGS, ProviderKind
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.embed_fanout import TranslatedEmbeddings
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import (
    Delivery,
    Exchange,
    MediaEndpoint,
    handle_media,
    openai_shaped,
    unreadable,
)
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.state import AppState

TokenFinder = Callable[[Mapping[str, str], Scope], str | None]


def _native(kind: ProviderKind) -> NativeDialect | None:
    native = kind.native()
    served = native is not None and native.dialect == "gemini" and kind.serves(EMBEDDINGS)
    return native if served else None


class GeminiEmbedExchange(Exchange):
    endpoint = EMBEDDINGS

    def __init__(self, state: AppState, model: str, call: GeminiEmbed, body: dict[str, object]):
        super().__init__(model)
        self.state = state
        self.call = call
        self.body = body
        self._translated: dict[str, TranslatedEmbeddings] = {}  # by kind

    def _tokens(self, batch: range | None = None) -> int:
        texts = self.call.texts if batch is None else self.call.texts[batch.start : batch.stop]
        return sum(self.state.tokenizer.count(t) for t in texts)

    def accepts(self, kind: ProviderKind) -> bool:
        return (
            _native(kind) is not None
            or kind.openai_shaped(EMBEDDINGS) is not None
            or kind.embeddings() is not None
        )

    def translated(self, kind: ProviderKind) -> TranslatedEmbeddings | None:
        """The call in the batches of a kind with its own embeddings API, else None."""
        provider = kind.embeddings()
        if provider is None or _native(kind) or kind.openai_shaped(EMBEDDINGS) is not None:
            return None
        if kind.name not in self._translated:
            self._translated[kind.name] = TranslatedEmbeddings(
                provider, self.call.texts, self.call.dimensions, self._tokens
            )
        return self._translated[kind.name]

    def hold(self, price: Price) -> int:
        return input_token_cost(price, sum(len(t.encode()) for t in self.call.texts) + 16)

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        native = _native(kind)
        if native is not None:
            return native.build_passthrough(self.body, target, {":action": self.call.action})
        check_translatable(self.call)
        translated = self.translated(kind)
        if translated is not None:
            return translated.first(target)  # the other batches: in relay()
        body = openai_body(self.call.texts, target.upstream_model, self.call.dimensions)
        return json_request(openai_shaped(kind, EMBEDDINGS), target, "embeddings", body)

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        data = await read_all(response)
        reported: Usage | None = None
        translated = self.translated(delivery.kind)
        if translated is not None:
            merged = await translated.merged(delivery, data, self.model)
            if not merged.estimated:
                reported = Usage(input_tokens=merged.input_tokens)
            data = jsonutil.dumps(gemini_reply(merged.vectors, self.call.action))
        elif _native(delivery.kind) is None:
            vectors, reported = openai_vectors(data)
            if len(vectors) != len(self.call.texts):
                raise unreadable(ValueError("wrong number of embeddings"))
            data = jsonutil.dumps(gemini_reply(vectors, self.call.action))
        if reported is not None and reported.input_tokens:
            usage = reported
        else:
            usage = Usage(input_tokens=self._tokens(), estimated=True)
        delivery.bill(input_token_cost(delivery.price, usage.input_tokens), usage)
        await delivery.whole(data)


def endpoint(model: str, action: str, token: TokenFinder) -> MediaEndpoint:
    def prepare(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
        body = parse_json_object(raw)
        return GeminiEmbedExchange(state, model, parse_gemini_embed(body, action, model), body)

    return MediaEndpoint(
        name=action,
        what="embeddings",
        prepare=prepare,
        dialect=lambda state: state.dialects.gemini,
        token=token,
    )


async def embed(
    state: AppState,
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    model: str,
    action: str,
    token: TokenFinder,
) -> None:
    """`token` finds the Gemini key (`x-goog-api-key` or `?key=`), see routes_gemini."""
    await handle_media(endpoint(model, action, token), state, scope, receive, send)
