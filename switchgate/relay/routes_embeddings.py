"""POST /v1/embeddings (protocols §2.2).

- Kinds that serve OpenAI's endpoint as it is (OpenAIShaped: OpenAI-compatible, Azure):
  passed through (model rewritten), the answer relayed unchanged (floats or base64,
  whichever the client asked for).
- Kinds with embeddings of their own (EmbeddingsProvider: Gemini's `:batchEmbedContents`
  ...): translated (token-array inputs decoded with the cl100k tokenizer first,
  `dimensions` passed on), cut into the provider's batches (relay/embed_fanout.py), and
  the vectors returned in the OpenAI shape, base64-encoded when asked. Tokens are the
  upstream's, else the tokenizer's count.
Billed once, for the whole call: input tokens x the input price (+ per_request).
"""

from collections.abc import Mapping

from switchgate import jsonutil
from switchgate.billing.media_pricing import input_token_cost
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage
from switchgate.dialects.openai_media.requests import (
    EmbeddingsRequest,
    Prompt,
    parse_embeddings,
    prompt_size,
)
from switchgate.errors import invalid
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.embeddings import openai_reply
from switchgate.providers.openai_media import body_usage, passthrough_json
from switchgate.providers.registry import EMBEDDINGS as _EMBEDDINGS
from switchgate.providers.registry import ProviderKind
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.embed_fanout import TranslatedEmbeddings
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import (
    Delivery,
    Exchange,
    MediaEndpoint,
    handle_media,
    openai_shaped,
)
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.state import AppState
from switchgate.tokenizer import Tokenizer


def count_inputs(tokenizer: Tokenizer, inputs: list[Prompt]) -> int:
    return sum(len(p) if isinstance(p, tuple) else tokenizer.count(p) for p in inputs)


def input_texts(tokenizer: Tokenizer, inputs: list[Prompt]) -> list[str]:
    try:
        return [tokenizer.decode(p) if isinstance(p, tuple) else p for p in inputs]
    except ValueError as exc:
        raise invalid(f"'input' holds an unknown token id: {exc}", param="input") from exc


class EmbeddingsExchange(Exchange):
    endpoint = _EMBEDDINGS

    def __init__(self, request: EmbeddingsRequest, body: dict[str, object], tokenizer: Tokenizer):
        super().__init__(request.model)
        self.request = request
        self.body = body
        self.tokenizer = tokenizer
        self._texts: list[str] | None = None
        self._translated: dict[str, TranslatedEmbeddings] = {}  # by kind

    def texts(self) -> list[str]:
        """The inputs as text (token arrays decoded), computed once."""
        if self._texts is None:
            self._texts = input_texts(self.tokenizer, self.request.inputs)
        return self._texts

    def accepts(self, kind: ProviderKind) -> bool:
        return kind.openai_shaped(_EMBEDDINGS) is not None or kind.embeddings() is not None

    def translated(self, kind: ProviderKind) -> TranslatedEmbeddings | None:
        """The call as batches for the kind's own embeddings API (None: passed through)."""
        if kind.openai_shaped(_EMBEDDINGS) is not None:
            return None
        provider = kind.embeddings()
        if provider is None:
            return None
        if kind.name not in self._translated:
            inputs = self.request.inputs

            def count(batch: range) -> int:
                return count_inputs(self.tokenizer, inputs[batch.start : batch.stop])

            self._translated[kind.name] = TranslatedEmbeddings(
                provider, self.texts(), self.request.dimensions, count
            )
        return self._translated[kind.name]

    def hold(self, price: Price) -> int:
        return input_token_cost(price, sum(prompt_size(p) for p in self.request.inputs))

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        translated = self.translated(kind)
        if translated is not None:
            return translated.first(target)  # the other batches: in relay()
        api = openai_shaped(kind, _EMBEDDINGS)
        return passthrough_json(api, target, "embeddings", dict(self.body))

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        data = await read_all(response)
        translated = self.translated(delivery.kind)
        if translated is not None:
            merged = await translated.merged(delivery, data, self.model)
            usage = Usage(input_tokens=merged.input_tokens, estimated=merged.estimated)
            reply = openai_reply(
                merged.vectors, self.model, self.request.encoding_format, merged.input_tokens
            )
            data = jsonutil.dumps(reply)
        else:
            reported = body_usage(data)
            if reported is not None and reported.input_tokens:
                usage = reported
            else:
                counted = count_inputs(self.tokenizer, self.request.inputs)
                usage = Usage(input_tokens=counted, estimated=True)
        delivery.bill(input_token_cost(delivery.price, usage.input_tokens), usage)
        await delivery.whole(data)


def _prepare(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
    body = parse_json_object(raw)
    return EmbeddingsExchange(parse_embeddings(body), body, state.tokenizer)


EMBEDDINGS = MediaEndpoint(name="embeddings", what="embeddings", prepare=_prepare)


async def embeddings(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(EMBEDDINGS, state, scope, receive, send)
