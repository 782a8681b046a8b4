"""Embeddings between the two shapes the gateway speaks: OpenAI `/v1/embeddings`
(protocols §2.2) and Gemini `:embedContent` / `:batchEmbedContents` (§4.6). Pure.

- OpenAI `base64` is the bytes of a little-endian float32 array, base64-encoded.
- A Gemini content's text parts are joined with newlines into one OpenAI input; a
  content with other parts (images...) can only go to a Gemini channel.
- OpenAI has one `dimensions` per call, so a batch whose requests ask for different
  `outputDimensionality` values can only go to a Gemini channel.
- A Gemini-dialect `:batchEmbedContents` holds at most 100 requests, as on Gemini's own
  API (400 `at most 100 requests can be in one batch`), whichever channel serves it.
"""

import base64
import struct
from dataclasses import dataclass
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.usage import Usage
from switchgate.errors import ErrorKind, GatewayError, invalid
from switchgate.providers.embed_batches import GEMINI_BATCH_LIMIT
from switchgate.providers.openai_response import usage_from_openai

GEMINI_ACTIONS: Final = ("embedContent", "batchEmbedContents")


def pack_floats(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def unpack_floats(text: str) -> list[float]:
    raw = base64.b64decode(text, validate=True)
    if len(raw) % 4:
        raise ValueError("base64 embedding is not a float32 array")
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def _malformed(exc: Exception | None = None) -> GatewayError:
    return GatewayError(ErrorKind.UPSTREAM_ERROR, "upstream returned malformed embeddings")


# ---------------------------------------------------------------- OpenAI shape


def openai_reply(
    vectors: list[list[float]], model: str, encoding: str, prompt_tokens: int
) -> dict[str, Any]:
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": pack_floats(v) if encoding == "base64" else v,
        }
        for i, v in enumerate(vectors)
    ]
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }


def openai_vectors(body: bytes) -> tuple[list[list[float]], Usage | None]:
    """Vectors in input order (by `index`) from an OpenAI answer, floats or base64."""
    try:
        data = jsonutil.loads(body)
        items = sorted(data["data"], key=lambda item: int(item.get("index", 0)))
        vectors = [
            unpack_floats(e) if isinstance(e, str) else [float(v) for v in e]
            for e in (item["embedding"] for item in items)
        ]
    except (jsonutil.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _malformed(exc) from exc
    return vectors, usage_from_openai(data.get("usage"))


def openai_body(texts: list[str], upstream_model: str, dimensions: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"model": upstream_model, "input": texts, "encoding_format": "float"}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


# ---------------------------------------------------------------- Gemini shape


@dataclass(frozen=True, slots=True)
class GeminiEmbed:
    """A Gemini-dialect embedding call, as far as the gateway needs to know it."""

    action: str  # embedContent | batchEmbedContents
    texts: list[str]  # one per content
    dimensions: int | None  # None, or the one value every request asked for
    mixed_dimensions: bool = False
    media: bool = False  # some content has non-text parts


def _get(obj: Any, camel: str, snake: str) -> Any:
    if not isinstance(obj, dict):
        return None
    return obj[camel] if camel in obj else obj.get(snake)


def _content_text(content: Any, param: str) -> tuple[str, bool]:
    parts = _get(content, "parts", "parts")
    if not isinstance(parts, list) or not parts:
        raise invalid(f"* {param}.content: content.parts is required", param=param)
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(texts), len(texts) != len(parts)


def _dimensions(item: Any, param: str) -> int | None:
    value = _get(item, "outputDimensionality", "output_dimensionality")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise invalid(f"* {param}.outputDimensionality must be a positive integer", param=param)
    return value


def parse_gemini_embed(body: dict[str, Any], action: str, model: str) -> GeminiEmbed:
    if action == "embedContent":
        items: list[Any] = [body]
    else:
        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            raise invalid("* BatchEmbedContentsRequest.requests: is required", param="requests")
        if len(requests) > GEMINI_BATCH_LIMIT:
            raise invalid(
                "* BatchEmbedContentsRequest.requests: at most "
                f"{GEMINI_BATCH_LIMIT} requests can be in one batch",
                param="requests",
            )
        items = requests
    texts: list[str] = []
    dims: set[int | None] = set()
    media = False
    for i, item in enumerate(items):
        param = "EmbedContentRequest" if action == "embedContent" else f"requests[{i}]"
        if not isinstance(item, dict):
            raise invalid(f"* {param}: must be an object", param=param)
        named = item.get("model")
        if isinstance(named, str) and named.removeprefix("models/") != model:
            raise invalid(
                f"Model of request {i} ({named}) does not match models/{model}.", param=param
            )
        text, has_media = _content_text(_get(item, "content", "content"), param)
        texts.append(text)
        media = media or has_media
        dims.add(_dimensions(item, param))
    single = next(iter(dims)) if len(dims) == 1 else None
    return GeminiEmbed(action, texts, single, mixed_dimensions=len(dims) > 1, media=media)


def gemini_reply(vectors: list[list[float]], action: str) -> dict[str, Any]:
    if action == "embedContent":
        return {"embedding": {"values": vectors[0] if vectors else []}}
    return {"embeddings": [{"values": v} for v in vectors]}


def check_translatable(call: GeminiEmbed) -> None:
    """Raise 400 when a Gemini call can't be served by an OpenAI-compatible channel."""
    if call.media:
        raise invalid("Only text contents can be embedded by this model.", param="content")
    if call.mixed_dimensions:
        raise invalid(
            "All requests of a batch must ask for the same outputDimensionality for this model.",
            param="requests",
        )
