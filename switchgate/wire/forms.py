"""multipart/form-data in both directions: parse a client's form, encode one upstream.

The OpenAI SDKs send arrays as repeated `name[]` fields (`image[]`,
`timestamp_granularities[]`) and files with a filename and a content type; both survive
a parse -> encode round trip unchanged, in order.
"""

import secrets
from dataclasses import dataclass, replace

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from switchgate.errors import invalid


@dataclass(frozen=True, slots=True)
class Upload:
    name: str  # the form field
    filename: str
    content_type: str  # lower-cased, without parameters; "" when the client sent none
    data: bytes


@dataclass(frozen=True, slots=True)
class Form:
    fields: tuple[tuple[str, str], ...] = ()
    files: tuple[Upload, ...] = ()

    def get(self, name: str) -> str | None:
        return next((v for k, v in self.fields if k == name), None)

    def get_all(self, name: str) -> list[str]:
        return [v for k, v in self.fields if k == name]

    def uploads(self, *names: str) -> list[Upload]:
        return [f for f in self.files if f.name in names]

    def with_field(self, name: str, value: str) -> "Form":
        """`name` set to `value` (replacing every earlier value, keeping its position)."""
        out: list[tuple[str, str]] = []
        done = False
        for key, old in self.fields:
            if key != name:
                out.append((key, old))
            elif not done:
                out.append((key, value))
                done = True
        if not done:
            out.append((name, value))
        return replace(self, fields=tuple(out))


class _Collector:
    """Callbacks for MultipartParser: one (headers, data) pair per part."""

    def __init__(self) -> None:
        self.parts: list[tuple[dict[str, str], bytes]] = []
        self.ended = False
        self._headers: dict[str, str] = {}
        self._field = b""
        self._value = b""
        self._data: list[bytes] = []

    def part_begin(self) -> None:
        self._headers, self._data = {}, []

    def header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def header_end(self) -> None:
        name = self._field.decode("latin-1").strip().lower()
        self._headers[name] = self._value.decode("latin-1").strip()  # lossless; utf-8 later
        self._field, self._value = b"", b""

    def part_data(self, data: bytes, start: int, end: int) -> None:
        self._data.append(data[start:end])

    def part_end(self) -> None:
        self.parts.append((self._headers, b"".join(self._data)))

    def end(self) -> None:
        self.ended = True


def _boundary(content_type: str | None) -> bytes:
    kind, options = parse_options_header(content_type)
    if kind != b"multipart/form-data":
        raise invalid("This endpoint expects a multipart/form-data body.")
    boundary = options.get(b"boundary")
    if not boundary:
        raise invalid("The multipart/form-data body has no boundary.")
    return boundary


def parse_form(body: bytes, content_type: str | None) -> Form:
    """The fields and files of a multipart/form-data body; 400 when it is malformed."""
    boundary = _boundary(content_type)
    sink = _Collector()
    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": sink.part_begin,
            "on_header_field": sink.header_field,
            "on_header_value": sink.header_value,
            "on_header_end": sink.header_end,
            "on_part_data": sink.part_data,
            "on_part_end": sink.part_end,
            "on_end": sink.end,
        },
    )
    try:
        parser.write(body)
        parser.finalize()
    except (MultipartParseError, ValueError) as exc:
        raise invalid(f"The multipart/form-data body could not be parsed: {exc}") from exc
    if not sink.ended:
        raise invalid("The multipart/form-data body is incomplete (no closing boundary).")
    fields: list[tuple[str, str]] = []
    files: list[Upload] = []
    for headers, data in sink.parts:
        _, disposition = parse_options_header(headers.get("content-disposition"))
        name = disposition.get(b"name", b"").decode("utf-8", "replace")
        if not name:
            continue
        filename = disposition.get(b"filename")
        if filename is None:
            fields.append((name, data.decode("utf-8", "replace")))
            continue
        kind, _ = parse_options_header(headers.get("content-type"))
        files.append(
            Upload(name, filename.decode("utf-8", "replace"), kind.decode("latin-1"), data)
        )
    return Form(tuple(fields), tuple(files))


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def encode_form(form: Form, boundary: str | None = None) -> tuple[str, bytes]:
    """(content type, body) for `form`: fields first, then files, each in order."""
    boundary = boundary or "switchgate" + secrets.token_hex(16)
    out: list[bytes] = []
    for name, value in form.fields:
        head = f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'
        out.append(head.encode() + value.encode() + b"\r\n")
    for upload in form.files:
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(upload.name)}"; '
            f'filename="{_quote(upload.filename)}"\r\n'
            f"Content-Type: {upload.content_type or 'application/octet-stream'}\r\n\r\n"
        )
        out.append(head.encode())
        out.append(upload.data + b"\r\n")
    out.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", b"".join(out)
