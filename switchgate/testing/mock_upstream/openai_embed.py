"""OpenAI embeddings (`POST /v1/embeddings`, protocols §2.2) and rerank in the Cohere/Jina shape
(`POST /v1/rerank`, `/rerank`, `/v2/rerank`, §2.6)."""

import base64
import re
from typing import Any, Final

from aiohttp import web

from .assets import embed_vector, float32_bytes
from .auth import bearer_ok
from .directives import parse_directives
from .errors import openai_error
from .httpkit import json_response, pause
from .reply import count_words
from .state import MockState

_WORD: Final = re.compile(r"\w+")


def embedding_inputs(value: Any) -> list[tuple[str, int]] | None:
    """(text to hash, token count) per input; None if the input is malformed."""
    if isinstance(value, str):
        return [(value, count_words(value))] if value else None
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [(" ".join(map(str, value)), len(value))]
    out: list[tuple[str, int]] = []
    for item in value:
        if isinstance(item, str) and item:
            out.append((item, count_words(item)))
        elif isinstance(item, list) and item and all(isinstance(v, int) for v in item):
            out.append((" ".join(map(str, item)), len(item)))
        else:
            return None
    return out


def default_dimensions(model: str) -> int:
    return 3072 if "large" in model else 1536


def overlap_score(query_words: set[str], text: str) -> float:
    if not query_words:
        return 0.0
    return round(len(query_words & set(_WORD.findall(text.lower()))) / len(query_words), 6)


class OpenAIEmbeddings:
    """Handlers for embeddings and rerank."""

    def __init__(self, state: MockState) -> None:
        self.state = state

    async def embeddings(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return openai_error(401)
        return await self.answer(body)

    async def answer(self, body: Any, dimensions_field: str = "dimensions") -> web.Response:
        """The embeddings of an authorised request's body (`dimensions_field`: the vendor's
        name for the output size; Mistral says output_dimension)."""
        state = self.state
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return openai_error(400, "you must provide a model parameter", param="model")
        inputs = embedding_inputs(body.get("input"))
        if inputs is None:
            return openai_error(400, "'input' must be a non-empty string or array.", param="input")
        d = parse_directives(inputs[-1][0])
        await pause(d.latency_ms if d.latency_ms is not None else state.config.latency_ms)
        if d.error is not None:
            return openai_error(d.error)
        model = body["model"]
        dims = body.get(dimensions_field)
        if not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= 8192:
            dims = default_dimensions(model)
        as_base64 = body.get("encoding_format") == "base64"
        data: list[dict[str, Any]] = []
        for index, (text, _) in enumerate(inputs):
            vector = embed_vector(text, dims)
            encoded: Any = base64.b64encode(float32_bytes(vector)).decode() if as_base64 else vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = max(1, sum(count for _, count in inputs))
        result: dict[str, Any] = {"object": "list", "data": data, "model": model}
        if not d.no_usage:
            result["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return json_response(result)

    async def rerank(self, request: web.Request) -> web.StreamResponse:
        state = self.state
        body = await state.intake(request)
        if not bearer_ok(request, state.config.accepted):
            return openai_error(401)
        if not isinstance(body, dict) or not isinstance(body.get("query"), str):
            return openai_error(400, "'query' is required.", param="query")
        documents = body.get("documents")
        if not isinstance(documents, list) or not documents:
            return openai_error(400, "'documents' must be a non-empty array.", param="documents")
        texts = [
            doc
            if isinstance(doc, str)
            else str(doc.get("text", ""))
            if isinstance(doc, dict)
            else str(doc)
            for doc in documents
        ]
        query = body["query"]
        d = parse_directives(query)
        await pause(d.latency_ms if d.latency_ms is not None else state.config.latency_ms)
        if d.error is not None:
            return openai_error(d.error)
        query_words = set(_WORD.findall(query.lower()))
        scored = sorted(
            ((overlap_score(query_words, text), i) for i, text in enumerate(texts)),
            key=lambda pair: (-pair[0], pair[1]),
        )
        top_n = body.get("top_n")
        if isinstance(top_n, int) and not isinstance(top_n, bool) and top_n > 0:
            scored = scored[:top_n]
        with_docs = body.get("return_documents") is True
        results = []
        for score, index in scored:
            item: dict[str, Any] = {"index": index, "relevance_score": score}
            if with_docs:
                item["document"] = {"text": texts[index]}
            results.append(item)
        tokens = count_words(query) * len(texts) + sum(count_words(t) for t in texts)
        return json_response(
            {
                "id": f"rerank-mock{state.next_id()}",
                "model": body.get("model"),
                "results": results,
                "usage": {"total_tokens": tokens},
                "meta": {"billed_units": {"search_units": 1}},
            }
        )
