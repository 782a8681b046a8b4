"""What a served model can take, from the shipped catalogue, checked before any upstream
call: its context window and its capabilities (tools, vision, audio, JSON schema).

Pure functions over the canonical request. The context check counts tokens only when the
request is big enough to possibly not fit (a token is at least one byte of the body), so
ordinary requests pay nothing for it.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from switchgate.catalogue.entries import Catalogue
from switchgate.core.content import AudioPart, ImagePart
from switchgate.core.request import ChatRequest
from switchgate.errors import GatewayError, invalid
from switchgate.tokenizer import Tokenizer

# cl100k is not every vendor's tokenizer: a prompt is refused only when its count is this
# much over the window, so a prompt that fits by the vendor's own count is never refused
# (tokenizers of current models count the same text within a few percent of cl100k or
# count more, and the upstream still refuses what really does not fit).
CONTEXT_TOLERANCE_PERCENT = 10


@dataclass(frozen=True, slots=True)
class ModelLimits:
    context_window: int | None
    max_output: int | None
    # None: the catalogue does not say, so nothing is enforced.
    capabilities: frozenset[str] | None


def limits_for(models: list[str], catalogue: Catalogue) -> dict[str, ModelLimits]:
    """Limits of the served models the catalogue knows (by model id)."""
    out: dict[str, ModelLimits] = {}
    for name in models:
        entry = catalogue.find(name)
        if entry is None or entry.kind != "chat":
            continue
        out[name] = ModelLimits(
            context_window=entry.context_window,
            max_output=entry.max_output,
            capabilities=entry.capabilities or None,
        )
    return out


def _needs(request: ChatRequest) -> list[tuple[str, str, str]]:
    """(capability, what the request uses, param) for everything it needs."""
    needs: list[tuple[str, str, str]] = []
    if request.tools:
        needs.append(("tools", "tools", "tools"))
    if request.response_format is not None and request.response_format.type == "json_schema":
        needs.append(("json_schema", "a JSON schema response format", "response_format"))
    parts = [part for message in request.messages for part in message.parts]
    if any(isinstance(part, ImagePart) for part in parts):
        needs.append(("vision", "image input", "messages"))
    if any(isinstance(part, AudioPart) for part in parts):
        needs.append(("audio", "audio input", "messages"))
    return needs


def check_capabilities(request: ChatRequest, limits: ModelLimits) -> None:
    if limits.capabilities is None:
        return
    for capability, what, param in _needs(request):
        if capability not in limits.capabilities:
            raise invalid(
                f"The model '{request.model}' does not support {what}.",
                param=param,
                code="unsupported_capability",
            )


def check_context(
    request: ChatRequest, body_size: int, limits: ModelLimits, tokenizer: Tokenizer
) -> None:
    window = limits.context_window
    if not window:
        return
    allowed = window + window * CONTEXT_TOLERANCE_PERCENT // 100
    overhead = 8 + 4 * len(request.messages)
    if body_size + overhead <= allowed:
        return  # cannot hold more tokens than bytes: it fits
    tokens = tokenizer.count_request(request)
    if tokens > allowed:
        raise context_length_exceeded(request.model, tokens, window)


def context_length_exceeded(model: str, tokens: int, window: int) -> GatewayError:
    return invalid(
        f"This model's maximum context length is {window} tokens, but the prompt is "
        f"about {tokens} tokens (prompt is too long: {tokens} tokens > {window} maximum) "
        f"for the model '{model}'. Shorten the messages or use a model with a larger "
        "context window.",
        param="messages",
        code="context_length_exceeded",
    )


def check_request(
    request: ChatRequest,
    body_size: int,
    limits: Mapping[str, ModelLimits],
    tokenizer: Tokenizer,
) -> None:
    """Raise the dialect-neutral 400 for a request the model cannot take."""
    model_limits = limits.get(request.model)
    if model_limits is None:
        return
    check_capabilities(request, model_limits)
    check_context(request, body_size, model_limits, tokenizer)
