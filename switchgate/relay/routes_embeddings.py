"""POST /v1/embeddings (protocols §2.2).

- OpenAI-compatible and Azure channels: passed through (model rewritten), the answer
  relayed unchanged (floats or base64, whichever the client asked for).
- Gemini channels: translated to `:batchEmbedContents` (one request per input, in
  order; `dimensions` -> `outputDimensionality`; token-array inputs decoded with the
  cl100k tokenizer first) and the vectors returned in the OpenAI shape, base64-encoded
  when asked. Gemini reports no usage, so the tokenizer counts it.
Billed: input tokens x the input price (+ per_request).
"""

from collections.abc import Mapping
from typing import Final

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
from switchgate.providers.gemini_embed import build_embed_request, parse_embed_response
from switchgate.providers.openai_media import OPENAI_KINDS, body_usage, passthrough_json
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import Delivery, Exchange, MediaEndpoint, handle_media, unreadable
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.routing.channels import Channel
from switchgate.state import AppState
from switchgate.tokenizer import Tokenizer

GEMINI_BATCH_LIMIT: Final = 100  # requests per :batchEmbedContents call


def count_inputs(tokenizer: Tokenizer, inputs: list[Prompt]) -> int:
    return sum(len(p) if isinstance(p, tuple) else tokenizer.count(p) for p in inputs)


def input_texts(tokenizer: Tokenizer, inputs: list[Prompt]) -> list[str]:
    try:
        return [tokenizer.decode(p) if isinstance(p, tuple) else p for p in inputs]
    except ValueError as exc:
        raise invalid(f"'input' holds an unknown token id: {exc}", param="input") from exc


class EmbeddingsExchange(Exchange):
    kinds = OPENAI_KINDS | {"gemini"}

    def __init__(self, request: EmbeddingsRequest, body: dict[str, object], tokenizer: Tokenizer):
        super().__init__(request.model)
        self.request = request
        self.body = body
        self.tokenizer = tokenizer

    def hold(self, price: Price) -> int:
        return input_token_cost(price, sum(prompt_size(p) for p in self.request.inputs))

    def build(self, channel: Channel, target: Target) -> UpstreamRequest:
        if channel.kind == "gemini":
            if len(self.request.inputs) > GEMINI_BATCH_LIMIT:
                raise invalid(
                    f"'input' may hold at most {GEMINI_BATCH_LIMIT} items for this model.",
                    param="input",
                )
            texts = input_texts(self.tokenizer, self.request.inputs)
            return build_embed_request(texts, target, self.request.dimensions)
        return passthrough_json(channel.kind, target, "embeddings", dict(self.body))

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        data = await read_all(response)
        if delivery.channel.kind == "gemini":
            vectors = parse_embed_response(data)
            if len(vectors) != len(self.request.inputs):
                raise unreadable(ValueError("wrong number of embeddings"))
            counted = count_inputs(self.tokenizer, self.request.inputs)
            reply = openai_reply(vectors, self.model, self.request.encoding_format, counted)
            usage = Usage(input_tokens=counted, estimated=True)
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
