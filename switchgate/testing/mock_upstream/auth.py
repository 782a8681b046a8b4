"""API-key checks, one per provider convention."""

from aiohttp import web


def bearer_ok(request: web.BaseRequest, key: str) -> bool:
    """OpenAI: `Authorization: Bearer KEY`."""
    return request.headers.get("Authorization", "") == "Bearer " + key


def anthropic_ok(request: web.BaseRequest, key: str) -> bool:
    """Anthropic: `x-api-key: KEY`, or `Authorization: Bearer KEY` (SDK >= 2.0)."""
    headers = request.headers
    api_key = headers.get("x-api-key")
    if api_key is not None:
        return api_key == key
    return headers.get("Authorization", "") == "Bearer " + key


def gemini_key(request: web.BaseRequest) -> str | None:
    """Gemini: the `x-goog-api-key` header, else the `key` query parameter."""
    key = request.headers.get("x-goog-api-key")
    if key is None:
        key = request.query.get("key")
    return key
