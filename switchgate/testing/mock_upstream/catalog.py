"""Model listings for the three dialects. `GET /v1/models` is shared: a Gemini key
(`x-goog-api-key` / `?key=`) selects the Gemini shape, an `anthropic-version` header the
Anthropic one, anything else OpenAI's. Any model id can be retrieved: the mock serves them all."""

from typing import Any, Final

from aiohttp import web

from .auth import anthropic_ok, bearer_ok, gemini_key
from .errors import anthropic_error, gemini_error, openai_error
from .httpkit import json_response
from .state import MockState

OPENAI_MODELS: Final = (
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-5",
    "o3-mini",
    "text-embedding-3-small",
    "text-embedding-3-large",
    "dall-e-3",
    "gpt-image-1",
    "tts-1",
    "whisper-1",
    "gpt-4o-transcribe",
    "gpt-realtime",
)
ANTHROPIC_MODELS: Final = ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5")
GEMINI_MODELS: Final = ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-embedding-001")
_CREATED: Final = 1_700_000_000


def openai_model(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": _CREATED, "owned_by": "mock"}


def anthropic_model(model_id: str) -> dict[str, Any]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id.replace("-", " ").title(),
        "created_at": "2025-01-01T00:00:00Z",
    }


def gemini_model(model_id: str) -> dict[str, Any]:
    embed = "embedding" in model_id
    methods = (
        ["embedContent", "batchEmbedContents"]
        if embed
        else ["generateContent", "streamGenerateContent", "countTokens"]
    )
    return {
        "name": "models/" + model_id,
        "version": "001",
        "displayName": model_id,
        "description": "Mock model",
        "inputTokenLimit": 1_048_576,
        "outputTokenLimit": 65_536,
        "supportedGenerationMethods": methods,
        "temperature": 1.0,
        "maxTemperature": 2.0,
        "topP": 0.95,
        "topK": 64,
        "thinking": not embed,
    }


class Catalog:
    def __init__(self, state: MockState) -> None:
        self.state = state

    def _dialect(self, request: web.Request) -> str:
        if gemini_key(request) is not None:
            return "gemini"
        return "anthropic" if "anthropic-version" in request.headers else "openai"

    def _refuse(self, request: web.Request, dialect: str) -> web.Response | None:
        key = self.state.config.accepted
        if dialect == "gemini":
            if gemini_key(request) not in key:
                return gemini_error(
                    400, "API key not valid. Please pass a valid API key.", "API_KEY_INVALID"
                )
        elif dialect == "anthropic":
            if not anthropic_ok(request, key):
                return anthropic_error(401)
        elif not bearer_ok(request, key):
            return openai_error(401)
        return None

    async def list_models(self, request: web.Request) -> web.StreamResponse:
        self.state.record(request, 0)
        gemini_path = request.path.startswith("/v1beta/")
        dialect = "gemini" if gemini_path else self._dialect(request)
        refused = self._refuse(request, dialect)
        if refused is not None:
            return refused
        if dialect == "gemini":
            return json_response({"models": [gemini_model(m) for m in GEMINI_MODELS]})
        if dialect == "anthropic":
            data = [anthropic_model(m) for m in ANTHROPIC_MODELS]
            return json_response(
                {
                    "data": data,
                    "has_more": False,
                    "first_id": data[0]["id"],
                    "last_id": data[-1]["id"],
                }
            )
        return json_response({"object": "list", "data": [openai_model(m) for m in OPENAI_MODELS]})

    async def get_model(self, request: web.Request) -> web.StreamResponse:
        self.state.record(request, 0)
        name = request.match_info["name"]
        gemini_path = request.path.startswith("/v1beta/")
        dialect = "gemini" if gemini_path else self._dialect(request)
        refused = self._refuse(request, dialect)
        if refused is not None:
            return refused
        if dialect == "gemini":
            return json_response(gemini_model(name.removeprefix("models/")))
        if dialect == "anthropic":
            return json_response(anthropic_model(name))
        return json_response(openai_model(name))
