"""POST /v1/embeddings (protocols §2.2).

- OpenAI-compatible and Azure channels: passed through (model rewritten), the answer
  relayed unchanged (floats or base64, whichever the client asked for).
- Gemini channels: translated to `:batchEmbedContents` (one request per input, in
  order; `dimensions` -> `outputDimensionality`; token-array inputs decoded with the
  cl100k tokenizer first) and the vectors returned in the OpenAI shape, base64-encoded
  when asked. Gemini takes at most 100 requests per call, so the inputs (up to 2,048)
  are cut into batches of 100: the first batch is the call the pipeline sends (and fails
  over to the next channel like any call), the others go to the same channel once it
  answered, at most MAX_BATCHES_IN_FLIGHT at a time. The answers are merged in input
  order into one reply; any batch failing fails the whole call with its error (nothing
  is charged). Gemini reports no usage, so the tokenizer counts it.
Billed once, for the whole call: input tokens x the input price (+ per_request).
"""

from collections.abc import Awaitable, Callable, Mapping
from functools import partial

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
from switchgate.errors import GatewayError, invalid
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.embed_batches import (
    MAX_BATCHES_IN_FLIGHT,
    BatchAnswer,
    merge_batches,
    split_batches,
)
from switchgate.providers.embeddings import openai_reply
from switchgate.providers.gemini_embed import build_embed_request, parse_embed_response
from switchgate.providers.openai_media import OPENAI_KINDS, body_usage, passthrough_json
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.relay.attempt import Candidate, record_failure
from switchgate.relay.fanout import gather_bounded
from switchgate.relay.gate import parse_json_object
from switchgate.relay.simple import (
    Delivery,
    Exchange,
    MediaEndpoint,
    classify,
    handle_media,
    unreadable,
)
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.routing.channels import Channel
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
    kinds = OPENAI_KINDS | {"gemini"}

    def __init__(self, request: EmbeddingsRequest, body: dict[str, object], tokenizer: Tokenizer):
        super().__init__(request.model)
        self.request = request
        self.body = body
        self.tokenizer = tokenizer
        # Gemini channels: batches of at most 100 inputs (never none: an empty batch is a 400)
        self.batches = split_batches(len(request.inputs)) or [range(0)]
        self._texts: list[str] | None = None

    def texts(self) -> list[str]:
        """The inputs as text (token arrays decoded), computed once."""
        if self._texts is None:
            self._texts = input_texts(self.tokenizer, self.request.inputs)
        return self._texts

    def gemini_request(self, target: Target, batch: range) -> UpstreamRequest:
        texts = self.texts()[batch.start : batch.stop]
        return build_embed_request(texts, target, self.request.dimensions)

    def hold(self, price: Price) -> int:
        return input_token_cost(price, sum(prompt_size(p) for p in self.request.inputs))

    def build(self, channel: Channel, target: Target) -> UpstreamRequest:
        if channel.kind == "gemini":
            return self.gemini_request(target, self.batches[0])  # the rest: in relay()
        return passthrough_json(channel.kind, target, "embeddings", dict(self.body))

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        data = await read_all(response)
        if delivery.channel.kind == "gemini":
            merged = await self._gemini_batches(delivery, data)
            usage = Usage(input_tokens=merged.input_tokens, estimated=True)
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

    def _answer(self, batch: range, body: bytes) -> BatchAnswer:
        vectors = parse_embed_response(body)
        if len(vectors) != len(batch):
            raise unreadable(ValueError("wrong number of embeddings"))
        tokens = count_inputs(self.tokenizer, self.request.inputs[batch.start : batch.stop])
        return BatchAnswer(vectors, tokens)

    async def _gemini_batches(self, delivery: Delivery, first: bytes) -> BatchAnswer:
        """`first` answered batch 0; send the others to the same channel (a few at a
        time) and merge all the answers in input order. Raises the first failure."""
        target = delivery.target
        answers = [self._answer(self.batches[0], first)]  # a bad answer: stop here
        jobs: list[Callable[[], Awaitable[BatchAnswer]]] = [
            partial(self._send_batch, delivery, self.gemini_request(target, batch), batch)
            for batch in self.batches[1:]
        ]
        answers += await gather_bounded(jobs, MAX_BATCHES_IN_FLIGHT)
        try:
            return merge_batches(self.batches, answers)
        except ValueError as exc:
            raise unreadable(exc) from exc

    async def _send_batch(
        self, delivery: Delivery, request: UpstreamRequest, batch: range
    ) -> BatchAnswer:
        state, channel = delivery.state, delivery.channel
        try:
            response = await state.upstream.send(request)
            try:
                body = await read_all(response)
                if response.status >= 400:
                    raise classify(channel.kind, response.status, body)
            finally:
                response.release()
        except GatewayError as err:
            if err.retryable:
                record_failure(state.health, Candidate(channel, delivery.target), self.model, err)
            raise
        return self._answer(batch, body)


def _prepare(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
    body = parse_json_object(raw)
    return EmbeddingsExchange(parse_embeddings(body), body, state.tokenizer)


EMBEDDINGS = MediaEndpoint(name="embeddings", what="embeddings", prepare=_prepare)


async def embeddings(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(EMBEDDINGS, state, scope, receive, send)
