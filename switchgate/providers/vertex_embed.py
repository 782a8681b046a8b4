"""Vertex AI text embeddings (pure): `publishers/google/models/{model}:predict`.

    request   {"instances": [{"content": "text"}, ...],
               "parameters": {"outputDimensionality": N}}        (parameters optional)
    response  {"predictions": [{"embeddings": {"values": [...],
               "statistics": {"token_count": N, "truncated": false}}}, ...],
               "metadata": {"billableCharacterCount": N}}

Batch sizes: gemini-embedding models take one instance per request; the text-embedding
models (text-embedding-005, text-multilingual-embedding-002) take up to 250 texts but at
most 20,000 input tokens per request, each text counting up to 2,048 tokens, so they get
8 texts per request (8 x 2,048 < 20,000 whatever the texts). The relay sends a call's
batches a few at a time.
"""

from collections.abc import Sequence
from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.providers.base import UpstreamRequest

VERTEX_EMBED_BATCH_LIMIT: Final = 1  # instances per :predict that every model accepts
TEXT_EMBEDDING_BATCH_LIMIT: Final = 8  # text-embedding-*: 8 x 2,048 tokens < 20,000


def batch_limit(model: str) -> int:
    """Instances per :predict for `model` (an id, or publishers/google/models/{id})."""
    name = model.rsplit("/", 1)[-1]
    return VERTEX_EMBED_BATCH_LIMIT if "gemini" in name else TEXT_EMBEDDING_BATCH_LIMIT


def build_predict_request(
    texts: Sequence[str],
    dimensions: int | None,
    url: str,
    headers: dict[str, str],
    task_type: str | None = None,
    limit: int = VERTEX_EMBED_BATCH_LIMIT,
) -> UpstreamRequest:
    """`limit`: the model's batch_limit (the relay splits calls by it)."""
    if not texts:
        raise invalid("input must not be empty", param="input")
    if len(texts) > limit:
        raise ValueError(f"{len(texts)} texts in one batch (at most {limit})")
    instances: list[dict[str, Any]] = []
    for text in texts:
        instance: dict[str, Any] = {"content": text}
        if task_type:
            instance["task_type"] = task_type
        instances.append(instance)
    body: dict[str, Any] = {"instances": instances}
    if dimensions is not None:
        body["parameters"] = {"outputDimensionality": dimensions}
    return UpstreamRequest("POST", url, headers, jsonutil.dumps(body))


def parse_predict_response(body: bytes) -> tuple[list[list[float]], int]:
    """(vectors in instance order, input tokens: the sum of the token counts)."""
    try:
        data = jsonutil.loads(body)
        vectors: list[list[float]] = []
        tokens = 0
        for prediction in data["predictions"]:
            embeddings = prediction["embeddings"]
            vectors.append([float(v) for v in embeddings["values"]])
            stats = embeddings.get("statistics")
            count = stats.get("token_count") if isinstance(stats, dict) else None
            if isinstance(count, int | float) and not isinstance(count, bool):
                tokens += int(count)
    except (jsonutil.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream returned malformed embeddings"
        ) from exc
    return vectors, tokens
