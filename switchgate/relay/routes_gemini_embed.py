"""POST /v1beta/models/{model}:embedContent and :batchEmbedContents (protocols §4.6).

- Gemini channels: passed through (model names retargeted), the answer relayed unchanged.
- OpenAI-compatible and Azure channels: translated to one `/embeddings` call (texts in
  order, `outputDimensionality` -> `dimensions`, floats) and answered in the Gemini shape.
A `:batchEmbedContents` of more than 100 requests is a 400, as on Gemini's own API
(`* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch`),
whichever channel would serve it, so the answer never depends on the channel picked.
Errors use the Gemini shape. Billed: input tokens x the input price (+ per_request),
the tokens counted by the tokenizer unless an OpenAI upstream reports them.
"""

from collections.abc import Callable, Mapping

from switchgate import jsonutil
from switchgate.billing.media_pricing import input_token_cost
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.embeddings import (
    GeminiEmbed,
    check_translatable,
    gemini_reply,
    openai_body,
    openai_vectors,
    parse_gemini_embed,
)
from switchgate.providers.openai_media import OPENAI_KINDS, json_request
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import Delivery, Exchange, MediaEndpoint, handle_media, unreadable
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.routing.channels import Channel
from switchgate.state import AppState

TokenFinder = Callable[[Mapping[str, str], Scope], str | None]


class GeminiEmbedExchange(Exchange):
    kinds = OPENAI_KINDS | {"gemini"}

    def __init__(self, state: AppState, model: str, call: GeminiEmbed, body: dict[str, object]):
        super().__init__(model)
        self.state = state
        self.call = call
        self.body = body

    def _tokens(self) -> int:
        return sum(self.state.tokenizer.count(t) for t in self.call.texts)

    def hold(self, price: Price) -> int:
        return input_token_cost(price, sum(len(t.encode()) for t in self.call.texts) + 16)

    def build(self, channel: Channel, target: Target) -> UpstreamRequest:
        if channel.kind == "gemini":
            native = self.state.kinds["gemini"].native()
            assert native is not None
            return native.build_passthrough(self.body, target, {":action": self.call.action})
        check_translatable(self.call)
        body = openai_body(self.call.texts, target.upstream_model, self.call.dimensions)
        return json_request(channel.kind, target, "embeddings", body)

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        data = await read_all(response)
        reported: Usage | None = None
        if delivery.channel.kind != "gemini":
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
