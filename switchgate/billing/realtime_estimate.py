"""Realtime charges the upstream did not report (issue 20 #6), estimated from what was
relayed: a `response.done` without `usage`, and a response the client walked away from
before `response.done`. Estimates are upper bounds and marked estimated, like the HTTP
streams' (billing/pricing.estimate_input_tokens):

- input: the conversation so far, counted from the client's frames (items and session
  instructions at 3 bytes a token or fewer; appended audio at AUDIO_TOKENS_PER_SECOND of
  24 kHz PCM16) plus every earlier response's tokens;
- output: the text and audio-transcript deltas counted with the tokenizer, plus the audio
  deltas' duration at AUDIO_TOKENS_PER_SECOND.

The same conversation size sets each response's hold (`context_hold_tokens`), so one huge
item cannot be answered on a balance that covers only the fixed minimum.
Pure functions and a small accumulator; the session (relay/realtime_session.py) feeds it."""

from dataclasses import dataclass, field
from typing import Any, Final

from switchgate.billing.media_pricing import AUDIO_TOKENS_PER_SECOND
from switchgate.billing.realtime import RealtimeUsage
from switchgate.core.usage import Usage

TEXT_DELTAS: Final = frozenset(
    {
        "response.output_text.delta",
        "response.text.delta",
        "response.output_audio_transcript.delta",
        "response.audio_transcript.delta",
    }
)
AUDIO_DELTA_MARKERS: Final = ('"response.output_audio.delta"', '"response.audio.delta"')
PCM_BYTES_PER_SECOND: Final = 48_000  # pcm16, 24 kHz, mono: the Realtime default


def text_tokens(size: int) -> int:
    """An upper bound of the tokens in `size` bytes of JSON text."""
    return size // 3 + 1


def audio_tokens_from_base64(chars: int) -> int:
    """Tokens of base64 PCM16 audio `chars` long (rounded up to a whole second)."""
    seconds = -(-(chars * 3 // 4) // PCM_BYTES_PER_SECOND)
    return seconds * AUDIO_TOKENS_PER_SECOND


def client_frame_tokens(text: str) -> int:
    """What one client text frame adds to the conversation (0 for control events)."""
    if '"input_audio_buffer.append"' in text:
        return audio_tokens_from_base64(len(text))
    if '"conversation.item.create"' in text or '"session.update"' in text:
        return text_tokens(len(text))
    return 0


def context_hold_tokens(context_tokens: int, minimum: int) -> int:
    return max(context_tokens, minimum)


@dataclass
class ResponseMeter:
    """One response in flight: what it has delivered so far."""

    text: list[str] = field(default_factory=list)
    audio_chars: int = 0
    started: bool = False  # response.created (or any delta) seen

    def feed_event(self, event: dict[str, Any]) -> None:
        self.started = True
        if event.get("type") in TEXT_DELTAS:
            delta = event.get("delta")
            if isinstance(delta, str):
                self.text.append(delta)

    def feed_audio_frame(self, size: int) -> None:
        self.started = True
        self.audio_chars += size

    def usage(self, context_tokens: int, count: Any) -> RealtimeUsage:
        """Estimated usage: the conversation as input, the deltas as output; `count` is
        the tokenizer's `count(text) -> int`."""
        text_out = int(count("".join(self.text))) if self.text else 0
        audio_out = audio_tokens_from_base64(self.audio_chars) if self.audio_chars else 0
        return RealtimeUsage(
            usage=Usage(
                input_tokens=context_tokens,
                output_tokens=text_out + audio_out,
                estimated=True,
            ),
            audio_output_tokens=audio_out,
        )
