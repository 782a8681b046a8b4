"""GatewayError -> Responses API errors.

Before the first byte: exactly the OpenAI Chat rendering (`{"error": {...}}` with the same
statuses, see dialects/openai_chat/errors.py). In a stream: `event: error` with
`{"type": "error", "code", "message", "param", "sequence_number"}` (protocols §2.7); the
code is the error's code, else its OpenAI type (e.g. `server_error`).
"""

from typing import Any

from switchgate.dialects.openai_chat.errors import openai_error_body, render_openai_error
from switchgate.errors import GatewayError
from switchgate.jsonutil import dumps
from switchgate.wire.sse import format_event

__all__ = ["render_openai_error", "render_responses_stream_error", "stream_error_payload"]


def stream_error_payload(err: GatewayError, sequence_number: int) -> dict[str, Any]:
    body = openai_error_body(err)["error"]
    return {
        "type": "error",
        "code": body["code"] or body["type"],
        "message": body["message"],
        "param": body["param"],
        "sequence_number": sequence_number,
    }


def render_responses_stream_error(err: GatewayError, sequence_number: int = 0) -> bytes:
    return format_event(dumps(stream_error_payload(err, sequence_number)), "error")
