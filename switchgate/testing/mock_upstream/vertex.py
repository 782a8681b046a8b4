"""Google Vertex AI (`/v1/projects/{project}/locations/{location}/publishers/{publisher}/
models/{model}:{method}`), authenticated with OAuth access tokens from the fake token
endpoint (google_token.py):

- `publishers/google`: generateContent, streamGenerateContent (`?alt=sse`, else the JSON
  array), answered by the Gemini fake (gemini.py); predict (text embeddings: `instances`
  of `{content}`, one instance per request for gemini-embedding models, at most 250).
- `publishers/anthropic`: rawPredict and streamRawPredict, answered by the Anthropic fake
  (anthropic.py); the body must carry `anthropic_version: vertex-2023-10-16`, no `model`,
  and `stream: true` exactly when the method is streamRawPredict.

Refusals as Vertex words them, in Google's error shape: 401 UNAUTHENTICATED without a live
token (missing, unknown, expired, revoked), 403 PERMISSION_DENIED when the token's service
account belongs to another project or lacks the cloud-platform scope, 400
INVALID_ARGUMENT for a content without a valid role, 404 for an unknown method.
"""

import re
from typing import Any, Final

from aiohttp import web

from .anthropic import AnthropicMessages, _validate
from .assets import embed_vector
from .errors import anthropic_error, gemini_error
from .gemini import Gemini, _get
from .google_token import GoogleAccounts
from .httpkit import json_response
from .reply import count_words
from .state import MockState
from .strict import anthropic_violation

ANTHROPIC_VERSION: Final = "vertex-2023-10-16"
CLOUD_PLATFORM: Final = "https://www.googleapis.com/auth/cloud-platform"
PREDICT_LIMIT: Final = 250  # instances per :predict call (text-embedding models)
_LOCATION: Final = re.compile(r"^(?:global|us|eu|[a-z]+-[a-z]+\d+)$")
_ROLES: Final = ("user", "model")


class Vertex:
    """The one POST route of the Vertex AI fake, dispatched on publisher and method."""

    def __init__(self, state: MockState, accounts: GoogleAccounts) -> None:
        self.state = state
        self.accounts = accounts
        self.gemini = Gemini(state)
        self.anthropic = AnthropicMessages(state)

    def _refuse(self, request: web.Request) -> web.Response | None:
        info = request.match_info
        header = request.headers.get("Authorization", "")
        if not header.startswith("Bearer "):
            return gemini_error(
                401,
                "Request is missing required authentication credential. Expected OAuth 2 "
                "access token, login cookie or other valid authentication credential.",
                "CREDENTIALS_MISSING",
            )
        grant = self.accounts.grant(header[7:])
        if grant is None:
            return gemini_error(
                401,
                "Request had invalid authentication credentials. Expected OAuth 2 access "
                "token, login cookie or other valid authentication credential.",
                "ACCESS_TOKEN_TYPE_UNSUPPORTED",
            )
        model = info["name"].rpartition(":")[0]
        resource = (
            f"//aiplatform.googleapis.com/projects/{info['project']}/locations/"
            f"{info['location']}/publishers/{info['publisher']}/models/{model}"
        )
        if grant.account.project_id != info["project"] or CLOUD_PLATFORM not in grant.scopes:
            return gemini_error(
                403,
                f"Permission 'aiplatform.endpoints.predict' denied on resource '{resource}' "
                "(or it may not exist).",
                "IAM_PERMISSION_DENIED",
            )
        if not _LOCATION.match(info["location"]):
            return gemini_error(400, f"Location {info['location']} is not supported.")
        return None

    async def action(self, request: web.Request) -> web.StreamResponse:
        body = await self.state.intake(request)
        refused = self._refuse(request)
        if refused is not None:
            return refused
        model, _, method = request.match_info["name"].rpartition(":")
        publisher = request.match_info["publisher"]
        if not isinstance(body, dict):
            return gemini_error(400, "Invalid JSON payload received.")
        if publisher == "google" and method in ("generateContent", "streamGenerateContent"):
            return await self._generate(request, body, model, method)
        if publisher == "google" and method == "predict":
            return await self._predict(body, model)
        if publisher == "anthropic" and method in ("rawPredict", "streamRawPredict"):
            return await self._raw_predict(request, body, model, method)
        return gemini_error(404, f"Method {method} is not found for publisher {publisher}.")

    async def _generate(
        self, request: web.Request, body: dict[str, Any], model: str, method: str
    ) -> web.StreamResponse:
        stream = method == "streamGenerateContent"
        array = stream and request.query.get("alt") != "sse"
        for content in _get(body, "contents", "contents") or []:
            if _get(content, "role", "role") not in _ROLES:
                return gemini_error(400, "Please use a valid role: user, model.", as_array=array)
        return await self.gemini.generate(request, body, model, stream, array)

    async def _predict(self, body: dict[str, Any], model: str) -> web.Response:
        instances = body.get("instances")
        if not isinstance(instances, list) or not instances:
            return gemini_error(400, "instances must be a non-empty list.")
        limit = 1 if "gemini-embedding" in model else PREDICT_LIMIT
        if len(instances) > limit:
            return gemini_error(
                400, f"The model {model} accepts at most {limit} instances per request."
            )
        texts = [i.get("content") if isinstance(i, dict) else None for i in instances]
        if not all(isinstance(t, str) for t in texts):
            return gemini_error(400, "Each instance needs a content string.")
        forced = await self.gemini.embed_directives([str(t) for t in texts])
        if forced is not None:
            return forced
        params = body.get("parameters")
        dims = params.get("outputDimensionality") if isinstance(params, dict) else None
        if not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= 3072:
            dims = 3072 if "gemini-embedding" in model else 768
        predictions = []
        for text in texts:
            stats = {"token_count": max(1, count_words(str(text))), "truncated": False}
            values = embed_vector(str(text), dims)
            predictions.append({"embeddings": {"values": values, "statistics": stats}})
        chars = sum(len(str(t).replace(" ", "")) for t in texts)
        return json_response(
            {"predictions": predictions, "metadata": {"billableCharacterCount": chars}}
        )

    async def _raw_predict(
        self, request: web.Request, body: dict[str, Any], model: str, method: str
    ) -> web.StreamResponse:
        if body.get("anthropic_version") != ANTHROPIC_VERSION:
            return anthropic_error(400, f"anthropic_version: Input should be '{ANTHROPIC_VERSION}'")
        if "model" in body:
            return anthropic_error(400, "model: Extra inputs are not permitted")
        if (body.get("stream") is True) != (method == "streamRawPredict"):
            return anthropic_error(
                400, f"stream: must be {method == 'streamRawPredict'} for {method}"
            )
        checked = {k: v for k, v in body.items() if k != "anthropic_version"}
        problem = _validate({**checked, "model": model})
        if problem is None and self.state.config.strict:
            problem = anthropic_violation(checked)
        if problem is not None:
            return anthropic_error(400, problem)
        return await self.anthropic.reply(request, body, model)
