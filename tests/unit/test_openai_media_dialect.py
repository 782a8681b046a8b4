"""dialects/openai_media: multipart forms, upload checks, request validation."""

from typing import Any

import pytest

from switchgate.dialects.openai_media.requests import (
    parse_completions,
    parse_embeddings,
    parse_rerank,
    parse_speech,
    prompt_size,
)
from switchgate.dialects.openai_media.uploads import (
    MAX_IMAGE_BYTES,
    check_audio,
    check_image,
    parse_image_edit,
    parse_transcription,
    sniff_image,
)
from switchgate.errors import ErrorKind, GatewayError
from switchgate.testing.mock_upstream.assets import PNG
from switchgate.wire.forms import Form, Upload, encode_form, parse_form

FORM = Form(
    fields=(("model", "dall-e-2"), ("prompt", 'a "quoted"\r\nprompt é'), ("n", "2")),
    files=(
        Upload("image[]", "a.png", "image/png", PNG),
        Upload("image[]", "b é.png", "", PNG),
        Upload("mask", "m.png", "image/png", PNG),
    ),
)


def test_forms_round_trip() -> None:
    content_type, body = encode_form(FORM, boundary="XyZ")
    assert content_type == "multipart/form-data; boundary=XyZ"
    parsed = parse_form(body, content_type)
    assert parsed.fields == FORM.fields
    assert [(f.name, f.data) for f in parsed.files] == [(f.name, f.data) for f in FORM.files]
    assert parsed.files[0].filename == "a.png" and parsed.files[1].filename == "b é.png"
    assert parsed.files[1].content_type == "application/octet-stream"


def test_form_with_field_replaces_in_place() -> None:
    form = FORM.with_field("model", "upstream")
    assert form.get("model") == "upstream" and form.fields[0] == ("model", "upstream")
    assert form.with_field("new", "x").get_all("new") == ["x"]


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b"{}", "application/json", "expects a multipart"),
        (b"--a\r\n", "multipart/form-data", "no boundary"),
        (
            b'--a\r\nContent-Disposition: form-data; name="x"\r\n\r\nv',
            "multipart/form-data; boundary=a",
            "incomplete",
        ),
    ],
)
def test_bad_forms_are_400(body: bytes, content_type: str, message: str) -> None:
    with pytest.raises(GatewayError) as err:
        parse_form(body, content_type)
    assert err.value.kind is ErrorKind.INVALID_REQUEST and message in err.value.message


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"RIFF\0\0\0\0WEBPVP8 ", "image/webp"),
        (b"GIF89a...", "image/gif"),
        (b"hello", None),
    ],
)
def test_sniff_image(data: bytes, kind: str | None) -> None:
    assert sniff_image(data) == kind


def test_check_image() -> None:
    generic = check_image(Upload("image", "a", "application/octet-stream", PNG), "image")
    assert generic.content_type == "image/png"
    for upload, message in (
        (Upload("image", "a", "image/png", b""), "is empty"),
        (Upload("image", "a", "text/plain", PNG), "must be an image"),
        (Upload("image", "a", "image/png", b"nope"), "is not a PNG"),
        (Upload("image", "a", "image/png", PNG + bytes(MAX_IMAGE_BYTES)), "larger than"),
    ):
        with pytest.raises(GatewayError) as err:
            check_image(upload, "image")
        assert message in err.value.message and err.value.param == "image"


def test_check_audio() -> None:
    for content_type in ("audio/wav", "video/mp4", "", "application/octet-stream"):
        check_audio(Upload("file", "a", content_type, b"x"), "file")
    for upload in (Upload("file", "a", "audio/wav", b""), Upload("file", "a", "image/png", b"x")):
        with pytest.raises(GatewayError):
            check_audio(upload, "file")


def test_image_edit_needs_a_file_and_a_prompt() -> None:
    edit = parse_image_edit(FORM)
    assert edit.request.n == 2 and edit.request.model == "dall-e-2"
    assert edit.form.files[1].content_type == "image/png"  # normalised
    with pytest.raises(GatewayError) as err:
        parse_image_edit(Form(fields=(("model", "m"), ("prompt", "p"), ("image", "text"))))
    assert err.value.param == "image" and "as text" in err.value.message
    with pytest.raises(GatewayError) as err:
        parse_image_edit(Form(fields=(("model", "m"),), files=FORM.files))
    assert err.value.param == "prompt"


def test_transcription_form() -> None:
    form = Form(
        fields=(("model", "whisper-1"), ("response_format", "srt"), ("stream", "true")),
        files=(Upload("file", "a.wav", "audio/wav", b"RIFF"),),
    )
    call = parse_transcription(form)
    assert (call.model, call.response_format, call.stream) == ("whisper-1", "srt", True)
    for bad, param in (
        (Form(fields=(("model", "m"),)), "file"),
        (Form(files=form.files), "model"),
        (
            Form(fields=(("model", "m"), ("response_format", "xml")), files=form.files),
            "response_format",
        ),
    ):
        with pytest.raises(GatewayError) as err:
            parse_transcription(bad)
        assert err.value.param == param


def test_completions_request() -> None:
    request = parse_completions(
        {
            "model": "m",
            "prompt": ["a", [1, 2]],
            "n": 2,
            "best_of": 3,
            "max_tokens": 5,
            "stream": True,
        }
    )
    assert request.prompts == ["a", (1, 2)] and request.choices == 3
    assert request.stream and not request.wants_usage and request.max_tokens == 5
    assert parse_completions({"model": "m"}).prompts == [""]
    assert parse_completions({"model": "m", "prompt": [5, 6]}).prompts == [(5, 6)]


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"prompt": "x"}, "model"),
        ({"model": "m", "prompt": {"a": 1}}, "prompt"),
        ({"model": "m", "prompt": [True]}, "prompt"),
        ({"model": "m", "max_tokens": -1}, "max_tokens"),
        ({"model": "m", "stream": "yes"}, "stream"),
    ],
)
def test_bad_completions_requests(body: dict[str, Any], param: str) -> None:
    with pytest.raises(GatewayError) as err:
        parse_completions(body)
    assert err.value.param == param


def test_embeddings_request() -> None:
    request = parse_embeddings({"model": "m", "input": ["a", [1, 2]], "dimensions": 8})
    assert request.inputs == ["a", (1, 2)] and request.encoding_format == "float"
    assert (
        parse_embeddings({"model": "m", "input": "x", "encoding_format": "base64"}).encoding_format
        == "base64"
    )
    for body, param in (
        ({"model": "m"}, "input"),
        ({"model": "m", "input": ""}, "input"),
        ({"model": "m", "input": []}, "input"),
        ({"model": "m", "input": ["ok", ""]}, "input"),
        ({"model": "m", "input": "x", "encoding_format": "int8"}, "encoding_format"),
        ({"model": "m", "input": "x", "dimensions": 0}, "dimensions"),
    ):
        with pytest.raises(GatewayError) as err:
            parse_embeddings(body)
        assert err.value.param == param


def test_prompt_size_is_an_upper_bound() -> None:
    assert prompt_size("héllo") == 6 and prompt_size((1, 2, 3)) == 3


def test_speech_and_rerank_requests() -> None:
    assert parse_speech({"model": "tts", "input": "hi", "voice": "alloy"}).input == "hi"
    with pytest.raises(GatewayError):
        parse_speech({"model": "tts", "input": ""})
    rerank = parse_rerank(
        {"model": "r", "query": "q", "documents": ["a", {"text": "b"}], "top_n": 1}
    )
    assert rerank.documents == ["a", "b"] and rerank.top_n == 1 and not rerank.return_documents
    with pytest.raises(GatewayError) as err:
        parse_rerank({"model": "r", "query": "q", "documents": ["a"], "return_documents": "yes"})
    assert err.value.param == "return_documents"
