"""AWS wire details of the fake Bedrock Runtime: the event-stream encoder, the SigV4 check
and the request-shape check against botocore's own service model.

- Event-stream messages (`application/vnd.amazon.eventstream`): a prelude (total length,
  headers length, CRC32 of both), headers (name length u8, name, type 7 = string, value
  length u16, value), the payload, and a CRC32 of everything before it. botocore's
  parser (the gateway's decoder) checks both checksums, which proves the framing.
- SigV4: the signature is recomputed with botocore from the request as received (method,
  raw path, the signed headers, the body) and the known test credentials; a wrong key,
  a wrong secret or an old date is a 403 in AWS's words.
- Shapes: a Converse body is checked with botocore's ParamValidator against the
  `bedrock-runtime` service model (unknown fields, missing required ones, a union with
  more than one member... are a 400 ValidationException, as on the real service).
"""

import base64
import binascii
import datetime
import functools
import hmac
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from switchgate import jsonutil

# Test credentials the fake accepts: access key id -> (secret, session token or None).
ACCESS_KEY_ID: Final = "AKIAMOCKBEDROCK00001"
SECRET_ACCESS_KEY: Final = "mock/Bedrock+Secret/Key0000000000000000"
SESSION_ACCESS_KEY_ID: Final = "ASIAMOCKBEDROCK00002"
SESSION_SECRET: Final = "mock/Bedrock+Session/Secret000000000000"
SESSION_TOKEN: Final = "mock-session-token/IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMQ=="
CREDENTIALS: Final[dict[str, tuple[str, str | None]]] = {
    ACCESS_KEY_ID: (SECRET_ACCESS_KEY, None),
    SESSION_ACCESS_KEY_ID: (SESSION_SECRET, SESSION_TOKEN),
}
MAX_SKEW: Final = datetime.timedelta(minutes=5)
_AUTH: Final = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request, "
    r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$"
)


# ---------------------------------------------------------------- event stream


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack(">B", len(raw_name))
        + raw_name
        + b"\x07"
        + struct.pack(">H", len(raw_value))
        + raw_value
    )


def frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message."""
    head = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    body = prelude + head + payload
    return body + struct.pack(">I", binascii.crc32(body))


def event_frame(event: str, payload: dict[str, Any]) -> bytes:
    return frame(
        {":event-type": event, ":content-type": "application/json", ":message-type": "event"},
        jsonutil.dumps(payload),
    )


def exception_frame(exception: str, message: str) -> bytes:
    """`exception` is the member name (`throttlingException`, ...)."""
    headers = {
        ":exception-type": exception,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return frame(headers, jsonutil.dumps({"message": message}))


# ---------------------------------------------------------------- SigV4


@dataclass(frozen=True, slots=True)
class AuthFailure:
    status: int
    error_type: str
    message: str


_BAD_SIGNATURE: Final = (
    "The request signature we calculated does not match the signature you provided. "
    "Check your AWS Secret Access Key and signing method. Consult the service "
    "documentation for details."
)


def check_sigv4(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    now: datetime.datetime | None = None,
) -> AuthFailure | None:
    """None when the request is signed with the test credentials for service `bedrock`;
    `url` is scheme://host + the raw (still percent-encoded) path."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    lowered = {k.lower(): v for k, v in headers.items()}
    found = _AUTH.match(lowered.get("authorization", ""))
    if found is None:
        return AuthFailure(403, "IncompleteSignatureException", "Authorization header malformed.")
    key_id, day, region, service, signed, signature = found.groups()
    known = CREDENTIALS.get(key_id)
    if known is None:
        return AuthFailure(
            403,
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
        )
    if service != "bedrock":
        return AuthFailure(
            403,
            "InvalidSignatureException",
            "Credential should be scoped to correct service: 'bedrock'. ",
        )
    secret, token = known
    if token is not None and lowered.get("x-amz-security-token") != token:
        return AuthFailure(
            403,
            "UnrecognizedClientException",
            "The security token included in the request is invalid.",
        )
    stamp = lowered.get("x-amz-date", "")
    try:
        when = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
    except ValueError:
        return AuthFailure(403, "IncompleteSignatureException", "X-Amz-Date is missing.")
    current = now or datetime.datetime.now(datetime.UTC)
    if abs(current - when) > MAX_SKEW or stamp[:8] != day:
        return AuthFailure(403, "InvalidSignatureException", "Signature expired.")
    names = signed.split(";")
    if "host" not in names or any(n not in lowered for n in names):
        return AuthFailure(403, "InvalidSignatureException", _BAD_SIGNATURE)
    request = AWSRequest(method=method, url=url, data=body, headers={n: lowered[n] for n in names})
    request.context["timestamp"] = stamp
    auth = SigV4Auth(Credentials(key_id, secret, token), "bedrock", region)
    canonical = auth.canonical_request(request)
    expected = auth.signature(auth.string_to_sign(request, canonical), request)
    if not hmac.compare_digest(expected, signature):
        return AuthFailure(403, "InvalidSignatureException", _BAD_SIGNATURE)
    return None


# ---------------------------------------------------------------- shapes


@functools.cache
def _service_model() -> Any:
    from botocore.loaders import Loader
    from botocore.model import ServiceModel

    return ServiceModel(Loader().load_service_model("bedrock-runtime", "service-2"))


def _decode_blobs(value: Any, shape: Any) -> Any:
    """The JSON value with base64 blobs as bytes (what botocore's validator expects)."""
    kind = shape.type_name
    if kind == "blob" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"Invalid base64 in {shape.name}") from exc
    if kind == "structure" and isinstance(value, dict):
        members = shape.members
        return {k: _decode_blobs(v, members[k]) if k in members else v for k, v in value.items()}
    if kind == "list" and isinstance(value, list):
        return [_decode_blobs(v, shape.member) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: _decode_blobs(v, shape.value) for k, v in value.items()}
    return value


def shape_problem(operation: str, body: dict[str, Any], model_id: str) -> str | None:
    """botocore's report of what in `body` does not fit the operation's input, or None."""
    from botocore.validate import ParamValidator

    shape = _service_model().operation_model(operation).input_shape
    try:
        params = _decode_blobs({**body, "modelId": model_id}, shape)
    except ValueError as exc:
        return str(exc)
    report = ParamValidator().validate(params, shape)
    return report.generate_report() if report.has_errors() else None
