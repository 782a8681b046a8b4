"""Splitting one embeddings call into upstream-sized batches and merging the answers
back (pure).

Gemini's `:batchEmbedContents` takes at most 100 requests per call (more is a 400,
`* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch`), while
an OpenAI `/v1/embeddings` call may carry up to 2,048 inputs. A call to a Gemini channel
is therefore cut into consecutive batches of at most 100 inputs; the answers are merged
in input order into one list of vectors and one token count.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

GEMINI_BATCH_LIMIT: Final = 100  # requests per :batchEmbedContents call (Gemini's limit)
MAX_BATCHES_IN_FLIGHT: Final = 4  # batches of one call sent to the channel at once


@dataclass(frozen=True, slots=True)
class BatchAnswer:
    """One batch's embeddings (in the batch's order) and the input tokens it used."""

    vectors: list[list[float]]
    input_tokens: int
    estimated: bool = False  # the tokens were counted by the gateway, not reported


def split_batches(count: int, limit: int = GEMINI_BATCH_LIMIT) -> list[range]:
    """The index ranges of consecutive batches of at most `limit` items covering
    `count` items, in order (none when `count` is 0)."""
    if limit < 1:
        raise ValueError("a batch holds at least one item")
    return [range(start, min(start + limit, count)) for start in range(0, count, limit)]


def merge_batches(batches: Sequence[range], answers: Sequence[BatchAnswer]) -> BatchAnswer:
    """The answers of `batches` (same order) as one answer: the vectors concatenated in
    input order, the tokens summed. ValueError when an answer doesn't hold exactly one
    vector per input of its batch, or the batches don't cover 0..n-1 in order."""
    if len(batches) != len(answers):
        raise ValueError(f"{len(answers)} answers for {len(batches)} batches")
    vectors: list[list[float]] = []
    tokens = 0
    estimated = False
    for batch, answer in zip(batches, answers, strict=True):
        if batch.start != len(vectors):
            raise ValueError(f"batch starting at {batch.start} is out of order")
        if len(answer.vectors) != len(batch):
            raise ValueError(
                f"wrong number of embeddings: {len(answer.vectors)} for {len(batch)} inputs"
            )
        vectors.extend(answer.vectors)
        tokens += answer.input_tokens
        estimated = estimated or answer.estimated
    return BatchAnswer(vectors, tokens, estimated)
