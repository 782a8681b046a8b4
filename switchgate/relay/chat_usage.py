"""A chat answer's usage made whole: what the upstream reported, with what it left out
counted by the tokenizer (and then marked estimated)."""

from collections.abc import Callable
from dataclasses import replace

from switchgate.core.request import ChatRequest
from switchgate.core.response import ChatResponse
from switchgate.core.usage import Usage
from switchgate.state import AppState


def complete_usage(
    state: AppState,
    request: ChatRequest,
    usage: Usage | None,
    output_text: Callable[[], str],
    final: bool = True,
) -> Usage:
    """Usage as reported, with whatever the upstream left out counted by the tokenizer.

    `final=False`: the stream ended before the upstream's final count (an Anthropic
    stream cut before `message_delta` has only `message_start`'s `output_tokens: 1`), so
    the output is the larger of the reported count and the tokenizer's count of the text
    delivered, and the usage is marked estimated."""
    if final and usage is not None and usage.input_tokens and usage.output_tokens:
        return usage
    base = usage or Usage()
    if final and base.output_tokens:
        output = base.output_tokens
    else:
        output = max(base.output_tokens, state.tokenizer.count(output_text()))
    return replace(
        base,
        input_tokens=base.input_tokens or state.tokenizer.count_request(request),
        output_tokens=output,
        estimated=True,
    )


def response_text(response: ChatResponse) -> str:
    out: list[str] = []
    for part in response.parts:
        if hasattr(part, "text"):
            out.append(part.text)
        elif hasattr(part, "arguments"):
            out.append(part.name + part.arguments)
    return "".join(out)
