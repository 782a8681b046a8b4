"""Rerank, canonical: what a client asked (any rerank dialect) and what an upstream
answered (any rerank provider), in one shape."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RerankRequest:
    model: str
    query: str
    documents: list[str]
    top_n: int | None
    return_documents: bool
    max_tokens_per_doc: int | None


@dataclass(frozen=True, slots=True)
class RerankResult:
    results: list[dict[str, Any]]  # {"index", "relevance_score", "document"?}, best first
    tokens: int | None  # what the upstream reported, if it did
    id: str
