"""Embeddings translated to a kind's own API (an EmbeddingsProvider: Gemini's
batchEmbedContents, Bedrock Titan, Cohere embed...), for either embeddings dialect.

The texts are cut into batches of at most the provider's `embeddings_batch_limit` (or,
for a provider whose limit depends on the model, `ModelBatchLimit`, that model's): the
first batch is the call the attempt pipeline sends (and fails over like any call), the
others go to the same channel and key once it answered, at most MAX_BATCHES_IN_FLIGHT
at a time. Each of those sends goes through the key's caps like any call (routing/
key_caps.py): it takes its own slot (the first batch's is handed back once it answered),
so `max_concurrency` holds and every send counts against `rpm`; a batch waits for room
within the channel's total time limit, else the call fails with the key-cap 429. The
answers are merged in input order; any batch failing fails the whole call with its
error (nothing is charged), counted against the key the call used. Tokens are the
upstream's where it reports them, else the tokenizer's count (marked estimated).
"""

from collections.abc import Awaitable, Callable
from functools import partial

from switchgate.errors import GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import EmbeddingsProvider, ModelBatchLimit
from switchgate.providers.embed_batches import (
    MAX_BATCHES_IN_FLIGHT,
    BatchAnswer,
    merge_batches,
    split_batches,
)
from switchgate.relay.attempt import Candidate, record_failure
from switchgate.relay.fanout import gather_bounded
from switchgate.relay.simple import Delivery, classify, unreadable
from switchgate.relay.upstream import read_all
from switchgate.routing.key_caps import Slot, all_capped, take_waiting
from switchgate.routing.limits import channel_limits


class TranslatedEmbeddings:
    """One call's texts as batches for `provider`. `count(batch)` is the tokenizer's
    count of a batch's inputs (used where the upstream reports none)."""

    def __init__(
        self,
        provider: EmbeddingsProvider,
        texts: list[str],
        dimensions: int | None,
        count: Callable[[range], int],
    ) -> None:
        self.provider = provider
        self.texts = texts
        self.dimensions = dimensions
        self.count = count

    def batches(self, target: Target) -> list[range]:
        """The batches for the channel `target` addresses (its upstream model may decide
        the limit); never none at all: an empty call is the provider's 400."""
        provider = self.provider
        limit = provider.embeddings_batch_limit
        if isinstance(provider, ModelBatchLimit):
            limit = provider.embeddings_batch_limit_for(target.upstream_model)
        return split_batches(len(self.texts), limit) or [range(0)]

    def request(self, target: Target, batch: range) -> UpstreamRequest:
        texts = self.texts[batch.start : batch.stop]
        return self.provider.build_embeddings_request(texts, self.dimensions, target)

    def first(self, target: Target) -> UpstreamRequest:
        """The first batch: what the attempt pipeline sends (the rest: `merged`)."""
        return self.request(target, self.batches(target)[0])

    def answer(self, batch: range, body: bytes) -> BatchAnswer:
        result = self.provider.parse_embeddings_response(body)
        if len(result.vectors) != len(batch):
            raise unreadable(ValueError("wrong number of embeddings"))
        if result.input_tokens is None:
            return BatchAnswer(result.vectors, self.count(batch), estimated=True)
        return BatchAnswer(result.vectors, result.input_tokens)

    async def merged(self, delivery: Delivery, first: bytes, model: str) -> BatchAnswer:
        """`first` answered batch 0; send the others to the same channel (a few at a
        time) and merge all the answers in input order. Raises the first failure."""
        batches = self.batches(delivery.target)
        answers = [self.answer(batches[0], first)]  # a bad answer: stop here
        if delivery.slot is not None:
            delivery.slot.release()  # the first batch's send on the key is over
        jobs: list[Callable[[], Awaitable[BatchAnswer]]] = [
            partial(self._send, delivery, batch, model) for batch in batches[1:]
        ]
        try:
            answers += await gather_bounded(jobs, MAX_BATCHES_IN_FLIGHT)
        except _NoRoom as full:  # the key stayed at its cap: the call's one 429
            delivery.state.metrics.rate_limited.labels("key_cap").inc()
            raise all_capped(model, full.wait) from None
        try:
            return merge_batches(batches, answers)
        except ValueError as exc:
            raise unreadable(exc) from exc

    async def _send(self, delivery: Delivery, batch: range, model: str) -> BatchAnswer:
        state, channel = delivery.state, delivery.channel
        request = self.request(delivery.target, batch)
        limits = channel_limits(channel, state.settings.timeouts, False)
        slot = await _slot(delivery, limits[3])
        try:
            response = await state.upstream.send(request, limits)
            try:
                body = await read_all(response)
                if response.status >= 400:
                    raise classify(delivery.kind, response.status, response.headers, body)
            finally:
                response.release()
        except GatewayError as err:
            if err.retryable:
                candidate = Candidate(channel, delivery.target, delivery.key_index)
                record_failure(state.health, candidate, model, err)
            raise
        finally:
            if slot is not None:
                slot.release()
        return self.answer(batch, body)


class _NoRoom(Exception):
    def __init__(self, wait: float) -> None:
        super().__init__(wait)
        self.wait = wait


async def _slot(delivery: Delivery, total: float) -> Slot | None:
    """The key's cap slot for one more batch (None: the key has no cap), waiting for room
    at most the channel's total time limit; _NoRoom when there was none."""
    key = delivery.key
    if key is None or not key.capped:
        return None
    taken = await take_waiting(delivery.state.key_caps, delivery.channel.id, key, total, total)
    if isinstance(taken, Slot):
        return taken
    raise _NoRoom(taken.wait)
