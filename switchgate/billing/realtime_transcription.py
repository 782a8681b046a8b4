"""Pure pricing for Realtime input-audio transcription (protocols §2.8).

With input transcription on, OpenAI runs a separate transcription model (the session's
`audio.input.transcription.model`, or `input_audio_transcription.model` in the beta API) on
each committed audio item and sends `conversation.item.input_audio_transcription.completed`
with its own `usage`, in one of two forms:

    {"type": "tokens", "input_tokens", "output_tokens", "total_tokens",
     "input_token_details": {"text_tokens", "audio_tokens"}}     gpt-4o(-mini)-transcribe
    {"type": "duration", "seconds"}                              whisper-1

That usage is not part of any `response.done`. It is priced with the transcription model's
own price (normally `kind = "stt"`), by the rules of `POST /v1/audio/transcriptions`
(`media_pricing.transcription_cost`):

- a price with `per_minute`: the duration, rounded up to whole seconds, at that rate. A
  `tokens` usage carries no duration: it is estimated from the audio tokens at
  AUDIO_TOKENS_PER_SECOND (rounded up), and the usage is marked estimated.
- otherwise the token prices: `input_tokens` at `input`, `output_tokens` at `output`. A
  `duration` usage is turned into estimated tokens, as for a silent per-token upstream:
  AUDIO_TOKENS_PER_SECOND input tokens per (whole) second, and the transcript's tokens.
- plus `per_request`.
"""

from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from switchgate.billing.media_pricing import (
    AUDIO_TOKENS_PER_SECOND,
    PER_MINUTE,
    billable_seconds,
    transcription_cost,
)
from switchgate.billing.pricing import Price
from switchgate.core.usage import Usage, reported_count

COMPLETED: Final = "conversation.item.input_audio_transcription.completed"


@dataclass(frozen=True, slots=True)
class TranscriptionUsage:
    """One transcription's usage: `tokens` (the tokens form) or `seconds` (duration form)."""

    tokens: Usage | None = None  # input includes the audio tokens
    audio_tokens: int = 0  # of tokens.input_tokens
    seconds: Decimal | None = None


def _count(value: Any) -> int | None:
    """A token count: a non-negative int (not a bool), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return reported_count(value, "tokens")
    return None


def _seconds(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = Decimal(str(value))
    except InvalidOperation:
        return None
    return seconds if seconds.is_finite() and seconds >= 0 else None


def transcription_usage(raw: Any) -> TranscriptionUsage | None:
    """The `usage` of a transcription-completed event; None when absent or unreadable.

    A missing `type` is read by shape (`seconds` means duration). Token counts that are not
    non-negative integers count as 0; a tokens usage with neither count is unreadable."""
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if kind == "duration" or (kind is None and "seconds" in raw):
        seconds = _seconds(raw.get("seconds"))
        return None if seconds is None else TranscriptionUsage(seconds=seconds)
    if kind not in ("tokens", None):
        return None
    input_tokens, output_tokens = _count(raw.get("input_tokens")), _count(raw.get("output_tokens"))
    if input_tokens is None and output_tokens is None:
        return None
    input_tokens, output_tokens = input_tokens or 0, output_tokens or 0
    details = raw.get("input_token_details")
    details = details if isinstance(details, dict) else {}
    audio, text = _count(details.get("audio_tokens")), _count(details.get("text_tokens"))
    if audio is None:  # without a breakdown, all but the prompt's text tokens are audio
        audio = input_tokens - min(text or 0, input_tokens)
    return TranscriptionUsage(
        tokens=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        audio_tokens=min(audio, input_tokens),
    )


def transcription_charge(
    price: Price, usage: TranscriptionUsage, transcript_tokens: int
) -> tuple[int, Usage]:
    """(cost, the usage to record) for one transcription; see the module docstring.

    `transcript_tokens` (the tokenizer's count of the transcript) is used only to estimate
    the output of a duration usage at token prices."""
    by_time = price.extra.get(PER_MINUTE, 0) > 0
    if usage.seconds is not None:
        seconds = billable_seconds(usage.seconds)
        if by_time:
            return transcription_cost(price, seconds, None), Usage()
        estimate = Usage(
            input_tokens=seconds * AUDIO_TOKENS_PER_SECOND,
            output_tokens=transcript_tokens,
            estimated=True,
        )
        return transcription_cost(price, None, estimate), estimate
    tokens = usage.tokens or Usage()
    if by_time:
        seconds = -(-usage.audio_tokens // AUDIO_TOKENS_PER_SECOND)
        return transcription_cost(price, seconds, tokens), replace(tokens, estimated=True)
    return transcription_cost(price, None, tokens), tokens


def _model_of(config: Any) -> str | None:
    model = config.get("model") if isinstance(config, dict) else None
    return model if isinstance(model, str) and model else None


def session_transcription(session: Any) -> tuple[bool, str | None]:
    """(whether `session` sets input transcription at all, its model or None when off).

    Reads the GA `audio.input.transcription` and the beta `input_audio_transcription`
    (`null` turns transcription off); a session object that mentions neither changes
    nothing, as in a partial `session.update`."""
    if not isinstance(session, dict):
        return False, None
    audio = session.get("audio")
    audio_input = audio.get("input") if isinstance(audio, dict) else None
    if isinstance(audio_input, dict) and "transcription" in audio_input:
        return True, _model_of(audio_input["transcription"])
    if "input_audio_transcription" in session:
        return True, _model_of(session["input_audio_transcription"])
    return False, None
