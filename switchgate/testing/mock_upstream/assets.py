"""Constant media payloads (a tiny PNG, silent WAV, MP3-ish frames) and hash-derived vectors."""

import hashlib
import math
import struct
import zlib
from typing import Final


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _tiny_png() -> bytes:
    """A valid 2x2 opaque RGB PNG."""
    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x4a\x90\xe2" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(rows))
        + _png_chunk(b"IEND", b"")
    )


PNG: Final = _tiny_png()
SPEECH_RATE: Final = 24_000  # Hz, 16-bit mono (the `pcm` format)
_MP3_FRAME: Final = b"\xff\xfb\x90\xc4" + bytes(413)  # MPEG-1 Layer III, 128 kbit/s, 44.1 kHz

AUDIO_TYPES: Final[dict[str, str]] = {
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
}


def wav_header(data_size: int, rate: int = SPEECH_RATE) -> bytes:
    return (
        b"RIFF"
        + struct.pack("<I", 36 + data_size)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
        + b"data"
        + struct.pack("<I", data_size)
    )


def speech_audio(fmt: str, seconds: float) -> bytes:
    """Silent audio of about `seconds` in the requested format (mp3-ish for the codecs)."""
    pcm_size = int(SPEECH_RATE * seconds) * 2
    if fmt == "pcm":
        return bytes(pcm_size)
    if fmt == "wav":
        return wav_header(pcm_size) + bytes(pcm_size)
    frames = max(1, int(seconds * 38.28))  # 1152 samples per frame at 44.1 kHz
    magic = {"flac": b"fLaC", "opus": b"OggS", "aac": b"\xff\xf1"}.get(fmt, b"ID3\x04\x00\x00")
    return magic + bytes(10 - len(magic)) + _MP3_FRAME * frames


def wav_duration(data: bytes) -> float | None:
    """Duration of a PCM WAV file from its header, or None if it isn't one."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return None
    pos, byte_rate = 12, 0
    while pos + 8 <= len(data):
        kind = data[pos : pos + 4]
        size = struct.unpack_from("<I", data, pos + 4)[0]
        if kind == b"fmt " and pos + 20 <= len(data):
            byte_rate = struct.unpack_from("<I", data, pos + 16)[0]
        elif kind == b"data":
            available = min(size, len(data) - pos - 8)
            return available / byte_rate if byte_rate else None
        pos += 8 + size + (size & 1)
    return None


def embed_vector(text: str, dims: int) -> list[float]:
    """A deterministic unit vector derived from a hash of the text, exactly representable as
    float32 (so the float and base64 encodings decode to the same numbers)."""
    raw = hashlib.shake_256(text.encode()).digest(dims * 2)
    ints = struct.unpack(f"<{dims}h", raw)
    norm = math.sqrt(sum(i * i for i in ints)) or 1.0
    packed = struct.pack(f"<{dims}f", *[i / norm for i in ints])
    return list(struct.unpack(f"<{dims}f", packed))


def float32_bytes(values: list[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)
