"""Canonical ChatResponse -> Gemini GenerateContentResponse (protocols §4.3). The
model-part encoding it shares with the Gemini provider is in wire/gemini_parts.py."""

from typing import Any, Final

from switchgate import jsonutil
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage
from switchgate.wire.gemini_parts import model_parts

FINISH_TO_GEMINI: Final[dict[FinishReason, str]] = {
    FinishReason.STOP: "STOP",
    FinishReason.STOP_SEQUENCE: "STOP",
    FinishReason.TOOL_CALLS: "STOP",
    FinishReason.PAUSE: "STOP",
    FinishReason.LENGTH: "MAX_TOKENS",
    FinishReason.CONTENT_FILTER: "SAFETY",
    FinishReason.ERROR: "OTHER",
}


def gemini_usage(usage: Usage) -> dict[str, int]:
    """IR usage -> usageMetadata (candidates exclude thoughts; zero optional counts omitted)."""
    out = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": max(0, usage.output_tokens - usage.reasoning_tokens),
    }
    if usage.reasoning_tokens:
        out["thoughtsTokenCount"] = usage.reasoning_tokens
    if usage.cache_read_tokens:
        out["cachedContentTokenCount"] = usage.cache_read_tokens
    out["totalTokenCount"] = usage.input_tokens + usage.output_tokens
    return out


def wants_thoughts(request: ChatRequest) -> bool:
    """Gemini returns thought summaries only when the client set includeThoughts."""
    return request.reasoning is not None and request.reasoning.include_thoughts is True


def core_to_gemini_response(resp: ChatResponse, request: ChatRequest) -> bytes:
    candidate: dict[str, Any] = {
        "content": {
            "role": "model",
            "parts": model_parts(resp.parts, thoughts="all" if wants_thoughts(request) else "none"),
        },
        "finishReason": FINISH_TO_GEMINI.get(resp.finish_reason, "STOP"),
        "index": 0,
    }
    body: dict[str, Any] = {
        "candidates": [candidate],
        "usageMetadata": gemini_usage(resp.usage),
        "modelVersion": request.model,
    }
    if resp.id:
        body["responseId"] = resp.id
    return jsonutil.dumps(body)
