"""Cohere embed v2 (`POST {base}/v2/embed`): requests and answers (pure).

Request: `{"model", "texts", "input_type", "embedding_types": ["float"]}` plus
`output_dimension` when the client asked for dimensions (embed-v4: 256, 512, 1024 or
1536; the upstream refuses other values and older models). `input_type` is the
channel's option `input_type` (search_document, search_query, classification,
clustering), `search_document` by default: OpenAI and Gemini clients do not say what
their texts are for. At most 96 texts per call (Cohere's limit); larger calls are cut
into batches by the relay. Answer: `embeddings.float` (one vector per text, in order)
and the tokens billed in `meta.billed_units.input_tokens`.
"""

from collections.abc import Sequence
from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.capabilities import EmbeddingsResult
from switchgate.providers.cohere_response import count

EMBED_BATCH_LIMIT: Final = 96
INPUT_TYPES: Final = frozenset({"search_document", "search_query", "classification", "clustering"})
DEFAULT_INPUT_TYPE: Final = "search_document"


def input_type_problem(value: Any) -> str | None:
    """What is wrong with an `input_type` option value; None when Cohere takes it."""
    if value in INPUT_TYPES:
        return None
    allowed = ", ".join(sorted(INPUT_TYPES))
    return f"option input_type {value!r} is not one Cohere takes; allowed: {allowed}"


def input_type(target: Target) -> str:
    value = target.options.get("input_type", DEFAULT_INPUT_TYPE)
    problem = input_type_problem(value)
    if problem is not None:  # a channel saved before the check at creation (cohere.py)
        raise GatewayError(ErrorKind.INTERNAL, problem)
    return str(value)


def embed_body(texts: Sequence[str], dimensions: int | None, target: Target) -> dict[str, Any]:
    if not texts:
        raise invalid("input must not be empty", param="input")
    if len(texts) > EMBED_BATCH_LIMIT:
        raise ValueError(f"{len(texts)} texts in one batch (at most {EMBED_BATCH_LIMIT})")
    body: dict[str, Any] = {
        "model": target.upstream_model,
        "texts": list(texts),
        "input_type": input_type(target),
        "embedding_types": ["float"],
    }
    if dimensions is not None:
        body["output_dimension"] = dimensions
    return body


def build_embed_request(
    texts: Sequence[str], dimensions: int | None, target: Target, url: str, headers: dict[str, str]
) -> UpstreamRequest:
    body = jsonutil.dumps(embed_body(texts, dimensions, target))
    return UpstreamRequest("POST", url, headers, body)


def parse_embed_response(body: bytes) -> EmbeddingsResult:
    try:
        data = jsonutil.loads(body)
        embeddings = data["embeddings"]
        raw = embeddings["float"] if isinstance(embeddings, dict) else embeddings
        vectors = [[float(v) for v in vector] for vector in raw]
    except (jsonutil.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream returned malformed embeddings"
        ) from exc
    meta = data.get("meta") if isinstance(data, dict) else None
    billed = meta.get("billed_units") if isinstance(meta, dict) else None
    tokens = billed.get("input_tokens") if isinstance(billed, dict) else None
    reported = count(tokens, "input_tokens") if tokens is not None else 0
    return EmbeddingsResult(vectors, reported or None)
