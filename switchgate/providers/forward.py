"""The body a passthrough forwards: the client's own bytes whenever possible.

A same-dialect request is parsed (to validate and route it) but not re-encoded unless a
top-level value really changes: when nothing changes the client's bytes go upstream as
they are, and when only keys the client did not send are added (OpenAI's
`stream_options` for usage reporting) they are spliced in front of the client's bytes.
"""

from typing import Any

from switchgate import jsonutil


def forward_json(raw: bytes | None, body: dict[str, Any], forwarded: dict[str, Any]) -> bytes:
    """Bytes for `forwarded`, a shallow edit of `body` (which was parsed from `raw`)."""
    if raw is None or not body:
        return jsonutil.dumps(forwarded)
    added: dict[str, Any] = {}
    for key, value in forwarded.items():
        if key in body:
            old = body[key]
            if old is not value and old != value:
                return jsonutil.dumps(forwarded)  # an existing value changed
        else:
            added[key] = value
    if len(forwarded) - len(added) != len(body):
        return jsonutil.dumps(forwarded)  # a key was removed
    if not added:
        return raw
    start = raw.index(b"{") + 1  # `body` is an object, so its first `{` opens it
    return raw[:start] + jsonutil.dumps(added)[1:-1] + b"," + raw[start:]
