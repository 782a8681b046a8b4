"""Rerank upstreams (protocols §2.6): Cohere v2, Jina, and OpenAI-compatible servers that
expose `/rerank` next to their `/v1` routes (vLLM, TEI, Infinity...). Pure.

    wire            base URL (what the operator gives)   request
    COHERE_RERANK   https://api.cohere.com                POST {base}/v2/rerank
    JINA_RERANK     https://api.jina.ai                   POST {base}/v1/rerank
    OPENAI_RERANK   http://host:8000/v1                   POST {base}/rerank

Cohere v2 dropped `return_documents`: documents are attached by the gateway from the
request when the client asked for them. Whatever the upstream, the client gets one shape:
`{"id", "model", "results": [{"index", "relevance_score", "document"?}], "usage"?}`,
best first.
"""

import re
import secrets
from dataclasses import dataclass
from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.rerank import RerankRequest, RerankResult
from switchgate.core.usage import reported_count
from switchgate.errors import ErrorKind, GatewayError
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.openai_response import classify_openai_error

_VERSION_SUFFIX: Final = re.compile(r"/v\d+$")


def api_root(base_url: str) -> str:
    """The base URL without a trailing slash or version segment (`/v1`, `/v2`...)."""
    return _VERSION_SUFFIX.sub("", base_url.rstrip("/"))


@dataclass(frozen=True, slots=True)
class RerankWire:
    """How one rerank API is called. `path` goes after the base URL, or after its root
    (the base URL without its version segment) when `from_root`; Cohere v2 takes
    `max_tokens_per_doc` and no longer `return_documents`."""

    path: str
    from_root: bool
    max_tokens_per_doc: bool = False
    return_documents: bool = True


COHERE_RERANK: Final = RerankWire(
    "/v2/rerank", from_root=True, max_tokens_per_doc=True, return_documents=False
)
JINA_RERANK: Final = RerankWire("/v1/rerank", from_root=True)
OPENAI_RERANK: Final = RerankWire("/rerank", from_root=False)


def rerank_url(wire: RerankWire, target: Target) -> str:
    base = api_root(target.base_url) if wire.from_root else target.base_url.rstrip("/")
    return base + wire.path


def rerank_body(wire: RerankWire, request: RerankRequest, upstream_model: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": upstream_model,
        "query": request.query,
        "documents": request.documents,
    }
    if request.top_n is not None:
        body["top_n"] = request.top_n
    if request.max_tokens_per_doc is not None and wire.max_tokens_per_doc:
        body["max_tokens_per_doc"] = request.max_tokens_per_doc
    if wire.return_documents:
        body["return_documents"] = request.return_documents
    return body


def build_rerank(wire: RerankWire, target: Target, request: RerankRequest) -> UpstreamRequest:
    headers = {
        "authorization": f"Bearer {target.api_key}",
        "content-type": "application/json",
        "accept": "application/json",
        **target.extra_headers,
    }
    body = jsonutil.dumps(rerank_body(wire, request, target.upstream_model))
    return UpstreamRequest("POST", rerank_url(wire, target), headers, body)


def _score(item: dict[str, Any]) -> float:
    value = item.get("relevance_score", item.get("score"))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("result without a relevance_score")
    return float(value)


def _tokens(data: dict[str, Any]) -> int | None:
    usage = data.get("usage")
    if isinstance(usage, dict):
        for key in ("total_tokens", "prompt_tokens"):
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return reported_count(value, key) or None
    return None


def parse_rerank_answer(body: bytes, request: RerankRequest) -> RerankResult:
    try:
        data = jsonutil.loads(body)
        raw = data.get("results", data.get("data"))
        scored = []
        for item in raw:
            index = item["index"]
            if not isinstance(index, int) or not 0 <= index < len(request.documents):
                raise ValueError("result index out of range")
            scored.append((index, _score(item)))
    except (jsonutil.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GatewayError(
            ErrorKind.UPSTREAM_ERROR, "upstream returned a malformed rerank answer"
        ) from exc
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    if request.top_n is not None:
        scored = scored[: request.top_n]
    results: list[dict[str, Any]] = []
    for index, score in scored:
        result: dict[str, Any] = {"index": index, "relevance_score": score}
        if request.return_documents:
            result["document"] = {"text": request.documents[index]}
        results.append(result)
    upstream_id = data.get("id")
    rid = upstream_id if isinstance(upstream_id, str) and upstream_id else None
    return RerankResult(results, _tokens(data), rid or "rerank-" + secrets.token_hex(12))


def rerank_reply(result: RerankResult, model: str, tokens: int) -> dict[str, Any]:
    return {
        "id": result.id,
        "model": model,
        "results": result.results,
        "usage": {"total_tokens": tokens},
    }


class RerankAPI:
    """Implements providers.capabilities.RerankProvider for one of the rerank wires above.
    The adapter of the rerank-only kinds; the OpenAI and Cohere adapters delegate to one."""

    def __init__(self, wire: RerankWire) -> None:
        self.wire = wire

    def build_rerank_request(self, request: RerankRequest, target: Target) -> UpstreamRequest:
        return build_rerank(self.wire, target, request)

    def parse_rerank_response(self, body: bytes, request: RerankRequest) -> RerankResult:
        return parse_rerank_answer(body, request)

    def classify_error(self, status: int, body: bytes) -> GatewayError:
        # Cohere and Jina answer errors as {"message": ...}, which the OpenAI reader takes.
        return classify_openai_error(status, body)
