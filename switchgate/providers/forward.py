"""The body a passthrough forwards: always the parsed body, encoded again.

A same-dialect request is parsed to validate, route and bill it. Forwarding the client's
own bytes would let a body say one thing to the gateway and another to the upstream:
`{"model":"cheap","model":"dear"}` parses last-wins here, but a first-wins parser
upstream would serve the other model (or another `max_tokens`, `n`, tool ...), at any
depth. Encoding the parsed value again sends exactly what was validated and billed.
It is cheap with orjson: about 0.6 us for a typical 400-byte chat body and 21 us for a
120 KB one (a fraction of parsing it), measured when this replaced the byte splicing.
"""

from typing import Any

from switchgate import jsonutil


def forward_json(raw: bytes | None, body: dict[str, Any], forwarded: dict[str, Any]) -> bytes:
    """Bytes for `forwarded` (a shallow edit of `body`, which was parsed from `raw`):
    never `raw` itself, so duplicate keys cannot smuggle a value past validation."""
    del raw, body  # kept in the signature: the call sites parse and edit, this encodes
    return jsonutil.dumps(forwarded)
