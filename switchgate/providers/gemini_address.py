"""Where a Gemini Developer API call goes and how it authenticates (pure)."""

import re
from typing import Final
from urllib.parse import quote

from switchgate.providers.base import Target

_VERSIONED: Final = re.compile(r"/v\d+(?:alpha|beta)?\d*$")


def api_root(target: Target) -> str:
    """`{base}/v1beta` (or `api_version`), tolerating a trailing slash or a versioned base."""
    base = target.base_url.rstrip("/")
    return base if _VERSIONED.search(base) else f"{base}/{target.api_version or 'v1beta'}"


def model_path(model: str) -> str:
    name = model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"
    return quote(name, safe="/-._~@")


def action_url(target: Target, action: str) -> str:
    url = f"{api_root(target)}/{model_path(target.upstream_model)}:{action}"
    return url + "?alt=sse" if action == "streamGenerateContent" else url


def request_headers(target: Target) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "x-goog-api-key": target.api_key,
        **target.extra_headers,
    }
