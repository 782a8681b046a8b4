"""API-key checks, one per provider convention."""

from aiohttp import web


def bearer_ok(request: web.BaseRequest, keys: tuple[str, ...]) -> bool:
    """OpenAI: `Authorization: Bearer KEY`, KEY one of `keys`."""
    value = request.headers.get("Authorization", "")
    return value.startswith("Bearer ") and value[7:] in keys


def anthropic_ok(request: web.BaseRequest, keys: tuple[str, ...]) -> bool:
    """Anthropic: `x-api-key: KEY`, or `Authorization: Bearer KEY` (SDK >= 2.0)."""
    api_key = request.headers.get("x-api-key")
    if api_key is not None:
        return api_key in keys
    return bearer_ok(request, keys)


def gemini_key(request: web.BaseRequest) -> str | None:
    """Gemini: the `x-goog-api-key` header, else the `key` query parameter."""
    key = request.headers.get("x-goog-api-key")
    if key is None:
        key = request.query.get("key")
    return key
