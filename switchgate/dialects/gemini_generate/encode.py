"""Canonical ChatResponse -> Gemini GenerateContentResponse (protocols §4.3), plus the
model-part helpers the Gemini provider shares when it replays assistant turns."""

from collections.abc import Sequence
from typing import Any, Final, Literal

from switchgate import jsonutil
from switchgate.core.content import Part, TextPart, ThinkingPart, ToolCallPart
from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse, FinishReason
from switchgate.core.usage import Usage
from switchgate.dialects.gemini_generate.parts import SIGNATURE_PREFIX

FINISH_TO_GEMINI: Final[dict[FinishReason, str]] = {
    FinishReason.STOP: "STOP",
    FinishReason.STOP_SEQUENCE: "STOP",
    FinishReason.TOOL_CALLS: "STOP",
    FinishReason.PAUSE: "STOP",
    FinishReason.LENGTH: "MAX_TOKENS",
    FinishReason.CONTENT_FILTER: "SAFETY",
    FinishReason.ERROR: "OTHER",
}


def gemini_signature(signature: str | None) -> str | None:
    """The bare thoughtSignature if `signature` came from Gemini (`gemini:` prefix), else None."""
    if (
        signature
        and signature.startswith(SIGNATURE_PREFIX)
        and len(signature) > len(SIGNATURE_PREFIX)
    ):
        return signature[len(SIGNATURE_PREFIX) :]
    return None


def function_call_args(arguments: str) -> dict[str, Any]:
    """Tool-call JSON text -> G `args` object; "" is {}, anything else not an object is
    kept (lossily) as {"_raw": text} (protocols §5.4)."""
    if not arguments.strip():
        return {}
    try:
        value = jsonutil.loads(arguments)
    except jsonutil.JSONDecodeError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


def function_call_part(part: ToolCallPart) -> dict[str, Any]:
    call: dict[str, Any] = {"name": part.name, "args": function_call_args(part.arguments)}
    if part.id:
        call["id"] = part.id
    out: dict[str, Any] = {"functionCall": call}
    signature = gemini_signature(part.signature)
    if signature:
        out["thoughtSignature"] = signature
    return out


def model_parts(
    parts: Sequence[Part], *, thoughts: Literal["all", "signed", "none"]
) -> list[dict[str, Any]]:
    """IR output parts -> G model parts. Other part kinds are skipped (callers handle them).

    Thought text becomes `{"text", "thought": true}` for `thoughts="all"`, or only when it
    carries a Gemini signature for "signed" (history replay: foreign thoughts are dropped).
    A Gemini signature whose thought text is not emitted goes back onto the preceding text
    part (undoing what decode does), or becomes a `{"text": "", "thoughtSignature"}` part.
    Redacted thinking and non-Gemini signatures have no G form and are dropped.
    """
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                out.append({"text": part.text})
        elif isinstance(part, ToolCallPart):
            out.append(function_call_part(part))
        elif isinstance(part, ThinkingPart) and part.redacted is None:
            signature = gemini_signature(part.signature)
            if part.text and (thoughts == "all" or (thoughts == "signed" and signature)):
                thought: dict[str, Any] = {"text": part.text, "thought": True}
                if signature:
                    thought["thoughtSignature"] = signature
                out.append(thought)
            elif signature:
                last = out[-1] if out else None
                if (
                    last
                    and "text" in last
                    and not last.get("thought")
                    and "thoughtSignature" not in last
                ):
                    last["thoughtSignature"] = signature
                else:
                    out.append({"text": "", "thoughtSignature": signature})
    return out


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
