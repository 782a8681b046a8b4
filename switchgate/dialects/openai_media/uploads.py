"""Uploaded files and the multipart endpoints built on them (image edits, transcriptions).

A bad upload is the client's fault and answers 400 before anything is held or sent:
an empty file, a file over the size limit, or the wrong kind of file. Images must really
be PNG, JPEG, WEBP or GIF (checked by their first bytes, whatever the declared type);
audio is checked by its declared type only (too many containers to sniff).
"""

from dataclasses import dataclass, replace
from typing import Final

from switchgate.dialects.openai_media.requests import ImageRequest, image_request
from switchgate.errors import invalid
from switchgate.wire.forms import Form, Upload

MIB: Final = 1024 * 1024
MAX_IMAGE_BYTES: Final = 20 * MIB
MAX_AUDIO_BYTES: Final = 25 * MIB  # OpenAI's own limit for audio
GENERIC_TYPES: Final = ("", "application/octet-stream", "binary/octet-stream")
AUDIO_TYPE_PREFIXES: Final = ("audio/", "video/")
AUDIO_TYPES: Final = ("application/ogg",)
TRANSCRIPT_FORMATS: Final = ("json", "text", "srt", "verbose_json", "vtt", "diarized_json")


def sniff_image(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    return None


def _common(upload: Upload, param: str, limit: int) -> None:
    if not upload.data:
        raise invalid(f"The uploaded file '{param}' is empty.", param=param)
    if len(upload.data) > limit:
        raise invalid(
            f"The uploaded file '{param}' is larger than the limit of {limit // MIB} MB.",
            param=param,
        )


def check_image(upload: Upload, param: str) -> Upload:
    """The upload, with a real content type when the client sent a generic one."""
    _common(upload, param, MAX_IMAGE_BYTES)
    declared = upload.content_type
    if declared not in GENERIC_TYPES and not declared.startswith("image/"):
        raise invalid(
            f"The uploaded file '{param}' must be an image (PNG, JPEG or WEBP), not {declared}.",
            param=param,
        )
    actual = sniff_image(upload.data)
    if actual is None:
        raise invalid(
            f"The uploaded file '{param}' is not a PNG, JPEG, WEBP or GIF image.", param=param
        )
    return upload if declared == actual else replace(upload, content_type=actual)


def check_audio(upload: Upload, param: str) -> Upload:
    _common(upload, param, MAX_AUDIO_BYTES)
    declared = upload.content_type
    if not (
        declared in GENERIC_TYPES
        or declared in AUDIO_TYPES
        or declared.startswith(AUDIO_TYPE_PREFIXES)
    ):
        raise invalid(
            f"The uploaded file '{param}' must be audio (flac, mp3, mp4, m4a, ogg, wav or "
            f"webm), not {declared}.",
            param=param,
        )
    return upload


def _replace_files(form: Form, checked: dict[int, Upload]) -> Form:
    files = tuple(checked.get(i, f) for i, f in enumerate(form.files))
    return replace(form, files=files)


# ---------------------------------------------------------------- image edits


@dataclass(frozen=True, slots=True)
class ImageEdit:
    request: ImageRequest
    form: Form  # the client's form, uploads checked (content types normalised)


def parse_image_edit(form: Form) -> ImageEdit:
    values: dict[str, object] = dict(reversed(form.fields))  # the first value wins
    request = image_request(values)
    checked: dict[int, Upload] = {}
    images = 0
    for i, upload in enumerate(form.files):
        if upload.name in ("image", "image[]"):
            checked[i] = check_image(upload, "image")
            images += 1
        elif upload.name == "mask":
            checked[i] = check_image(upload, "mask")
    if not images:
        text_image = any(k in ("image", "image[]") for k, _ in form.fields)
        detail = " It was sent as text, not as a file." if text_image else ""
        raise invalid(f"'image' is a required file.{detail}", param="image")
    return ImageEdit(request, _replace_files(form, checked))


# ---------------------------------------------------------------- transcriptions


@dataclass(frozen=True, slots=True)
class Transcription:
    model: str
    upload: Upload
    response_format: str
    stream: bool
    form: Form


def parse_transcription(form: Form) -> Transcription:
    model = form.get("model")
    if not model or not model.strip():
        raise invalid("you must provide a model parameter", param="model")
    uploads = [i for i, f in enumerate(form.files) if f.name == "file"]
    if len(uploads) != 1:
        raise invalid("'file' is a required file (exactly one).", param="file")
    index = uploads[0]
    upload = check_audio(form.files[index], "file")
    fmt = form.get("response_format") or "json"
    if fmt not in TRANSCRIPT_FORMATS:
        raise invalid(
            f"'response_format' must be one of {', '.join(TRANSCRIPT_FORMATS)}.",
            param="response_format",
        )
    stream = (form.get("stream") or "").lower() == "true"
    return Transcription(model, upload, fmt, stream, _replace_files(form, {index: upload}))
