"""Gemini embeddings (pure): `:batchEmbedContents` requests and responses (protocols §4.6)."""

from typing import Any

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.embed_batches import GEMINI_BATCH_LIMIT
from switchgate.providers.gemini_address import action_url, model_path, request_headers


def build_embed_request(
    texts: list[str], target: Target, dimensions: int | None = None, task_type: str | None = None
) -> UpstreamRequest:
    """`:batchEmbedContents` for `texts`, one embedding per text, in order (§4.6). Gemini
    takes at most GEMINI_BATCH_LIMIT texts per call: split larger calls first
    (`embed_batches.split_batches`)."""
    if not texts:
        raise invalid("input must not be empty", param="input")
    if len(texts) > GEMINI_BATCH_LIMIT:
        raise ValueError(f"{len(texts)} texts in one batch (at most {GEMINI_BATCH_LIMIT})")
    name = model_path(target.upstream_model)
    requests = []
    for text in texts:
        item: dict[str, Any] = {"model": name, "content": {"parts": [{"text": text}]}}
        if task_type:
            item["taskType"] = task_type
        if dimensions is not None:
            item["outputDimensionality"] = dimensions
        requests.append(item)
    body = jsonutil.dumps({"requests": requests})
    return UpstreamRequest(
        "POST", action_url(target, "batchEmbedContents"), request_headers(target), body
    )


def parse_embed_response(body: bytes) -> list[list[float]]:
    try:
        data = jsonutil.loads(body)
        return [[float(v) for v in item["values"]] for item in data["embeddings"]]
    except (jsonutil.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream returned malformed embeddings"
        ) from exc
