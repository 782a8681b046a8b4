"""The OpenAI media surfaces' routes (completions, embeddings, images, audio, rerank);
the Gemini embedding actions are dispatched by routes_gemini."""

from collections.abc import Awaitable, Callable

from switchgate.relay import (
    routes_audio,
    routes_completions,
    routes_embeddings,
    routes_images,
    routes_rerank,
)
from switchgate.relay.asgi import Receive, Scope, Send
from switchgate.state import AppState

Handler = Callable[[AppState, Scope, Receive, Send], Awaitable[None]]


def media_routes() -> dict[tuple[str, str], Handler]:
    return {
        ("POST", "/v1/completions"): routes_completions.completions,
        ("POST", "/v1/embeddings"): routes_embeddings.embeddings,
        ("POST", "/v1/images/generations"): routes_images.generations,
        ("POST", "/v1/images/edits"): routes_images.edits,
        ("POST", "/v1/audio/speech"): routes_audio.speech,
        ("POST", "/v1/audio/transcriptions"): routes_audio.transcriptions,
        ("POST", "/v1/audio/translations"): routes_audio.translations,
        ("POST", "/v1/rerank"): routes_rerank.rerank,
        ("POST", "/rerank"): routes_rerank.rerank,
        ("POST", "/v2/rerank"): routes_rerank.rerank,
    }
