"""Realtime input-audio transcription in the fake upstream, as OpenAI runs it.

When the session names a transcription model (GA `audio.input.transcription.model`, beta
`input_audio_transcription.model`), every committed audio buffer is transcribed after its
item is added: `conversation.item.input_audio_transcription.delta` events, then
`...completed` with the transcript and a `usage`: `{"type": "duration", "seconds"}` for
`whisper*` models, else the `tokens` form (10 audio tokens per second of audio), as
`/v1/audio/transcriptions` answers. The duration is the committed bytes at the session's
input format: 24 kHz 16-bit PCM (48,000 bytes/s), or 8,000 bytes/s for G.711."""

from typing import Any, Final

from .openai_media import transcription_token_usage
from .reply import split_text

PCM_BYTES_PER_SECOND: Final = 48_000
G711_BYTES_PER_SECOND: Final = 8_000
DELTA: Final = "conversation.item.input_audio_transcription.delta"
COMPLETED: Final = "conversation.item.input_audio_transcription.completed"


def _get(value: Any, *path: str) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def transcription_model(session: dict[str, Any]) -> str | None:
    model = _get(session, "audio", "input", "transcription", "model")
    if model is None:
        model = _get(session, "input_audio_transcription", "model")
    return model if isinstance(model, str) and model else None


def bytes_per_second(session: dict[str, Any]) -> int:
    ga = _get(session, "audio", "input", "format", "type")
    beta = session.get("input_audio_format")
    g711 = ga in ("audio/pcmu", "audio/pcma") or beta in ("g711_ulaw", "g711_alaw")
    return G711_BYTES_PER_SECOND if g711 else PCM_BYTES_PER_SECOND


def transcript_text(seconds: float, reply_text: str | None) -> str:
    return reply_text or f"Mock transcript of {seconds:g} seconds of audio."


def transcription_events(
    session: dict[str, Any], item_id: str, audio_bytes: int, reply_text: str | None, chunks: int
) -> list[tuple[str, dict[str, Any]]]:
    """The (type, fields) events transcribing one committed buffer; none when it is off."""
    model = transcription_model(session)
    if model is None:
        return []
    seconds = round(audio_bytes / bytes_per_second(session), 3)
    text = transcript_text(seconds, reply_text)
    at = {"item_id": item_id, "content_index": 0}
    events = [(DELTA, {**at, "delta": piece}) for piece in split_text(text, chunks)]
    usage = (
        {"type": "duration", "seconds": seconds}
        if model.startswith("whisper")
        else transcription_token_usage(seconds, text)
    )
    events.append((COMPLETED, {**at, "transcript": text, "usage": usage}))
    return events
