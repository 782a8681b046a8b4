"""Embeddings on Bedrock through InvokeModel (`POST /model/{modelId}/invoke`), pure.

The model id decides the body:
- Amazon Titan Text Embeddings (`amazon.titan-embed-text-v2:0`, `...-v1`): one text per
  call, `{"inputText", "dimensions"?, "normalize": true}` -> `{"embedding": [...],
  "inputTextTokenCount": n}`; v2 takes 256, 512 or 1024 dimensions, v1 none.
- Cohere Embed (`cohere.embed-english-v3`, `cohere.embed-multilingual-v3`,
  `cohere.embed-v4:0`): up to 96 texts per call, `{"texts", "input_type":
  "search_document", "truncate": "NONE"}` (v4 also `output_dimension`) -> `{"embeddings":
  [[...]]}` or, by type, `{"embeddings": {"float": [[...]]}}`. Cohere's answer carries no
  token count (Bedrock puts it in a response header): the gateway counts the input.
"""

from collections.abc import Sequence
from typing import Any, Final

from switchgate import jsonutil
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.bedrock_auth import model_url, signed_headers
from switchgate.providers.capabilities import EmbeddingsResult

TITAN_BATCH_LIMIT: Final = 1
COHERE_BATCH_LIMIT: Final = 96
TITAN_V2_DIMENSIONS: Final = (256, 512, 1024)
COHERE_V4_DIMENSIONS: Final = (256, 512, 1024, 1536)


def is_cohere(model: str) -> bool:
    return "cohere." in model.lower()


def batch_limit(model: str) -> int:
    """Texts per InvokeModel call for this model id: 96 for Cohere Embed, else 1 (Titan)."""
    return COHERE_BATCH_LIMIT if is_cohere(model) else TITAN_BATCH_LIMIT


def _titan_body(texts: Sequence[str], model: str, dimensions: int | None) -> dict[str, Any]:
    if len(texts) != 1:
        raise ValueError(f"{len(texts)} texts in one Titan call (one at a time)")
    body: dict[str, Any] = {"inputText": texts[0]}
    if "titan-embed-text-v1" in model.lower():
        if dimensions is not None:
            raise invalid("dimensions is not supported by this model", param="dimensions")
        return body
    if dimensions is not None:
        if dimensions not in TITAN_V2_DIMENSIONS:
            raise invalid("dimensions must be 256, 512 or 1024 for this model", "dimensions")
        body["dimensions"] = dimensions
    body["normalize"] = True
    return body


def _cohere_body(texts: Sequence[str], model: str, dimensions: int | None) -> dict[str, Any]:
    if len(texts) > COHERE_BATCH_LIMIT:
        raise ValueError(f"{len(texts)} texts in one Cohere call (at most {COHERE_BATCH_LIMIT})")
    body: dict[str, Any] = {
        "texts": list(texts),
        "input_type": "search_document",
        "truncate": "NONE",
    }
    if dimensions is not None:
        if "embed-v4" not in model.lower():
            raise invalid("dimensions is not supported by this model", param="dimensions")
        if dimensions not in COHERE_V4_DIMENSIONS:
            raise invalid("dimensions must be 256, 512, 1024 or 1536", param="dimensions")
        body["output_dimension"] = dimensions
    return body


def build_invoke_embeddings(
    texts: Sequence[str], dimensions: int | None, target: Target
) -> UpstreamRequest:
    if not texts:
        raise invalid("input must not be empty", param="input")
    model = target.upstream_model
    if is_cohere(model):
        body = _cohere_body(texts, model, dimensions)
    else:
        body = _titan_body(texts, model, dimensions)
    data = jsonutil.dumps(body)
    url = model_url(target, "invoke")
    return UpstreamRequest("POST", url, signed_headers("POST", url, data, target), data)


def _floats(values: Any) -> list[float]:
    if not isinstance(values, list):
        raise TypeError("an embedding is a list of numbers")
    return [float(v) for v in values]


def parse_invoke_embeddings(body: bytes) -> EmbeddingsResult:
    """Vectors (in input order) and input tokens from a Titan or Cohere answer."""
    try:
        data = jsonutil.loads(body)
        if not isinstance(data, dict):
            raise TypeError("not an object")
        if "embedding" in data:  # Titan
            tokens = data.get("inputTextTokenCount")
            count = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0
            return EmbeddingsResult([_floats(data["embedding"])], count if count > 0 else None)
        embeddings = data["embeddings"]
        if isinstance(embeddings, dict):  # Cohere, by type
            embeddings = embeddings["float"]
        if not isinstance(embeddings, list):
            raise TypeError("embeddings is not a list")
        return EmbeddingsResult([_floats(v) for v in embeddings], None)
    except (jsonutil.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream returned malformed embeddings"
        ) from exc
