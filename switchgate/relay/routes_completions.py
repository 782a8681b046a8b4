"""POST /v1/completions (legacy text completions, protocols §2.1), streaming included.

Passed through to OpenAI-compatible and Azure channels with only `model` rewritten.
Streams always ask the upstream for the usage chunk; the chunk is hidden again when the
client didn't ask for it. Billed like chat: the reported usage at the token prices, or,
when the upstream reports none, the tokenizer's count of the prompt and the text.
"""

from collections.abc import Callable, Mapping
from dataclasses import replace

from switchgate.billing.output_guard import OutputGuard
from switchgate.billing.pricing import Price, token_cost, token_hold
from switchgate.core.usage import Usage
from switchgate.dialects.openai_media.requests import (
    CompletionsRequest,
    Prompt,
    parse_completions,
    prompt_size,
)
from switchgate.providers.base import Target, UpstreamRequest
from switchgate.providers.openai_media import (
    StreamUsageMeter,
    body_usage,
    completion_text,
    passthrough_json,
)
from switchgate.providers.registry import COMPLETIONS as _COMPLETIONS
from switchgate.providers.registry import ProviderKind
from switchgate.relay.asgi import SSE_HEADERS, Receive, Scope, Send
from switchgate.relay.gate import parse_json_object
from switchgate.relay.passfilters import OpenAIUsageStripper
from switchgate.relay.simple import Delivery, Exchange, MediaEndpoint, handle_media, openai_shaped
from switchgate.relay.stream_check import STREAM_ENDS
from switchgate.relay.upstream import UpstreamResponse, read_all
from switchgate.state import AppState
from switchgate.tokenizer import Tokenizer


def count_prompts(tokenizer: Tokenizer, prompts: list[Prompt]) -> int:
    return sum(len(p) if isinstance(p, tuple) else tokenizer.count(p) for p in prompts)


def complete_usage(
    tokenizer: Tokenizer, prompts: list[Prompt], usage: Usage | None, text: Callable[[], str]
) -> Usage:
    """Usage as reported, with whatever the upstream left out counted by the tokenizer."""
    if usage is not None and usage.input_tokens and usage.output_tokens:
        return usage
    base = usage or Usage()
    return replace(
        base,
        input_tokens=base.input_tokens or count_prompts(tokenizer, prompts),
        output_tokens=base.output_tokens or tokenizer.count(text()),
        estimated=True,
    )


class CompletionsExchange(Exchange):
    endpoint = _COMPLETIONS

    def __init__(self, request: CompletionsRequest, body: dict[str, object], hold_out: int):
        super().__init__(request.model, stream=request.stream)
        self.request = request
        self.body = body
        self.default_output = hold_out

    @property
    def held_output(self) -> int:
        """Output tokens held: the limit (else the default) for every choice of every prompt."""
        request = self.request
        per_choice = request.max_tokens if request.max_tokens is not None else self.default_output
        return per_choice * request.choices * len(request.prompts)

    def hold(self, price: Price) -> int:
        prompt_tokens = sum(prompt_size(p) for p in self.request.prompts) + 16
        return token_hold(price, prompt_tokens, self.held_output)

    def build(self, kind: ProviderKind, target: Target) -> UpstreamRequest:
        return passthrough_json(
            openai_shaped(kind, _COMPLETIONS),
            target,
            "completions",
            dict(self.body),
            stream_usage=True,
        )

    async def relay(self, delivery: Delivery, response: UpstreamResponse) -> None:
        tokenizer = delivery.state.tokenizer
        prompts = self.request.prompts
        if not self.request.stream:
            data = await read_all(response)
            reported = body_usage(data)
            usage = complete_usage(tokenizer, prompts, reported, lambda: completion_text(data))
            delivery.bill(token_cost(delivery.price, usage), usage)
            await delivery.hold.cover(delivery.outcome.cost)  # an upstream past max_tokens
            await delivery.whole(data)
            return
        meter = StreamUsageMeter()
        guard = OutputGuard(
            delivery.hold,
            delivery.price.output,
            self.held_output,
            tokenizer.count,
            meter.text,
            lambda: meter.usage,
        )
        try:
            await delivery.stream(
                response,
                SSE_HEADERS,
                meter=meter.feed,
                pass_filter=None if self.request.wants_usage else OpenAIUsageStripper(),
                in_band_errors=True,
                guard=guard,
                end=STREAM_ENDS["openai"],  # [DONE] or a finish_reason, as chat
            )
        finally:
            usage = complete_usage(tokenizer, prompts, meter.usage, meter.text)
            delivery.bill(token_cost(delivery.price, usage), usage)


def _prepare(state: AppState, raw: bytes, headers: Mapping[str, str]) -> Exchange:
    body = parse_json_object(raw)
    request = parse_completions(body)
    return CompletionsExchange(request, body, state.settings.default_hold_output_tokens)


COMPLETIONS = MediaEndpoint(name="completions", what="text completions", prepare=_prepare)


async def completions(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await handle_media(COMPLETIONS, state, scope, receive, send)
