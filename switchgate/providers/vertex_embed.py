"""Vertex AI text embeddings (pure): `publishers/google/models/{model}:predict`.

    request   {"instances": [{"content": "text"}, ...],
               "parameters": {"outputDimensionality": N}}        (parameters optional)
    response  {"predictions": [{"embeddings": {"values": [...],
               "statistics": {"token_count": N, "truncated": false}}}, ...],
               "metadata": {"billableCharacterCount": N}}

gemini-embedding-001 takes one instance per request (text-embedding-005 and
text-multilingual-embedding-002 take up to 250): calls are sent one text per request,
which every model accepts; the relay sends a call's batches a few at a time.
"""

from collections.abc import Sequence
from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.providers.base import UpstreamRequest

VERTEX_EMBED_BATCH_LIMIT: Final = 1  # instances per :predict (gemini-embedding-001's limit)


def build_predict_request(
    texts: Sequence[str],
    dimensions: int | None,
    url: str,
    headers: dict[str, str],
    task_type: str | None = None,
) -> UpstreamRequest:
    if not texts:
        raise invalid("input must not be empty", param="input")
    if len(texts) > VERTEX_EMBED_BATCH_LIMIT:
        raise ValueError(f"{len(texts)} texts in one batch (at most {VERTEX_EMBED_BATCH_LIMIT})")
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
