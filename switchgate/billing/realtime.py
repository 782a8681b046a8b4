"""Pure pricing for Realtime sessions (protocols §2.8): one `response.done` usage in, a cost out.

Every token is charged at the model's token prices: text and audio input at `input` (cached
input at `cache_read`), text and audio output at `output`. A price may set its own audio
rates in its `extra` map, in units per token: `audio_input` (uncached audio input tokens)
and `audio_output` (audio output tokens). Cached audio is charged as cached input.
"""

from dataclasses import dataclass
from typing import Any, Final

from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage, reported_count

AUDIO_INPUT: Final = "audio_input"
AUDIO_OUTPUT: Final = "audio_output"


@dataclass(frozen=True, slots=True)
class RealtimeUsage:
    usage: Usage  # all tokens, in the canonical convention (input includes cached)
    audio_input_tokens: int = 0  # of usage.input_tokens
    cached_audio_input_tokens: int = 0  # of usage.cache_read_tokens
    audio_output_tokens: int = 0  # of usage.output_tokens


def _int(container: Any, key: str) -> int:
    return reported_count(container.get(key) if isinstance(container, dict) else None, key)


def realtime_usage(raw: Any) -> RealtimeUsage | None:
    """The `response.usage` object of a `response.done` event, or None when absent."""
    if not isinstance(raw, dict):
        return None
    inputs = raw.get("input_token_details")
    outputs = raw.get("output_token_details")
    cached = _int(inputs, "cached_tokens")
    cached_details = inputs.get("cached_tokens_details") if isinstance(inputs, dict) else None
    input_tokens = _int(raw, "input_tokens")
    output_tokens = _int(raw, "output_tokens")
    return RealtimeUsage(
        usage=Usage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=min(cached, input_tokens),
        ),
        audio_input_tokens=min(_int(inputs, "audio_tokens"), input_tokens),
        cached_audio_input_tokens=min(_int(cached_details, "audio_tokens"), cached),
        audio_output_tokens=min(_int(outputs, "audio_tokens"), output_tokens),
    )


def realtime_cost(price: Price, usage: RealtimeUsage) -> int:
    u = usage.usage
    audio_in = max(0, usage.audio_input_tokens - usage.cached_audio_input_tokens)
    text_in = max(0, u.input_tokens - u.cache_read_tokens - audio_in)
    text_out = u.output_tokens - usage.audio_output_tokens
    return (
        text_in * price.input
        + audio_in * price.extra.get(AUDIO_INPUT, price.input)
        + u.cache_read_tokens * price.cache_read_price
        + text_out * price.output
        + usage.audio_output_tokens * price.extra.get(AUDIO_OUTPUT, price.output)
        + price.per_request
    )


def realtime_hold(price: Price, input_tokens: int, output_tokens: int) -> int:
    """The worst case one response may cost, held while the session waits for it."""
    worst_in = max(price.input, price.cache_read_price, price.extra.get(AUDIO_INPUT, 0))
    worst_out = max(price.output, price.extra.get(AUDIO_OUTPUT, 0))
    return input_tokens * worst_in + output_tokens * worst_out + price.per_request
