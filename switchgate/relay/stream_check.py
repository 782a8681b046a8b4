"""A passed-through SSE stream, checked event by event at almost no cost (issue 14 #5):

- every `data:` payload must look like one whole JSON value (`{...}` / `[...]`, or
  `[DONE]`), by its first and last byte only (it never parses): an upstream that sends
  a truncated or garbled event ends the client's stream with a well-formed error event
  in its dialect instead of passing the garbage on;
- the stream must carry its dialect's end (`stream_end`): an upstream that closes the
  response cleanly but never sent it is an unfinished answer, not a finished one.
"""

import re
from typing import Final

from switchgate.errors import ErrorKind, GatewayError
from switchgate.wire.sse import UNFINISHED

_OPEN = (b"{", b"[")
_CLOSE = (b"}", b"]")

# What ends a stream of each dialect, or reports its failure in-band (then the upstream's
# own error event is what the client gets): (literal, pattern) pairs, the pattern tried
# only where the literal occurs (a C-level search first keeps the check ~1 us a chunk).
# Searched in whole lines only; a JSON key or a `"type":"..."` value can't match inside
# generated text, where quotes are escaped, and `^data:` can't either (no raw newline).
End = tuple[tuple[bytes, re.Pattern[bytes]], ...]
_M = re.MULTILINE
_ERROR_DATA = (b'"error"', re.compile(rb'^data: ?\{[ \t]*"error"', _M))


def _typed(*names: str) -> End:
    """A JSON object whose "type" is one of `names`."""
    return tuple(
        (name.encode(), re.compile(rb'"type"[ \t]*:[ \t]*"' + re.escape(name).encode() + b'"'))
        for name in names
    )


STREAM_ENDS: Final[dict[str, End]] = {
    # a chunk with a finish_reason, `data: [DONE]` (some servers send only one of them)
    "openai": (
        (b'"finish_reason":"', re.compile(rb'"finish_reason":"')),  # compact JSON, and
        (b'"finish_reason": "', re.compile(rb'"finish_reason": "')),  # Python's spacing
        (b"[DONE]", re.compile(rb"^data: ?\[DONE\]", _M)),
        _ERROR_DATA,
    ),
    "anthropic": _typed("message_stop", "error"),
    # a candidate's finishReason, a blocked prompt's blockReason, or an error object
    "gemini": (
        (b'Reason"', re.compile(rb'"(?:finishReason|blockReason)"[ \t]*:[ \t]*"')),
        _ERROR_DATA,
    ),
    "responses": _typed("response.completed", "response.failed", "response.incomplete", "error"),
    # OpenAI's media streams (relay/routes_audio.py, routes_images.py): their last event,
    # or an error (an `error` event, or chat's `{"error": ...}`)
    "speech": (*_typed("speech.audio.done", "error"), _ERROR_DATA),
    "transcription": (*_typed("transcript.text.done", "error"), _ERROR_DATA),
    "images": (
        *_typed("image_generation.completed", "image_edit.completed", "error"),
        _ERROR_DATA,
    ),
}


def unreadable_event() -> GatewayError:
    return GatewayError(
        ErrorKind.UPSTREAM_ERROR, "The upstream sent a stream event that is not valid JSON."
    )


def unfinished_stream() -> GatewayError:
    return GatewayError(ErrorKind.UPSTREAM_ERROR, UNFINISHED)


def stream_end(dialect: str) -> End | None:
    return STREAM_ENDS.get(dialect)


def _json_shaped(payload: bytes) -> bool:
    return not payload or payload == b"[DONE]" or (payload[:1] in _OPEN and payload[-1:] in _CLOSE)


class EventCheck:
    """Forwards whole lines only (a line split across reads waits for its end, which
    upstreams rarely do), stops at the first `data:` line that is not JSON-shaped, and
    notes whether the stream's end (`end`, see STREAM_ENDS) went by: `ended`."""

    __slots__ = ("_end", "_more", "_tail", "ended")

    def __init__(self, end: End | None = None) -> None:
        self._tail = b""  # an incomplete last line, waiting for the rest
        # ... and the chunks of it that came since, without a newline: a long line (a
        # base64 image or audio event of megabytes) is joined once, not once per chunk
        self._more: list[bytes] = []
        self._end = end
        self.ended = end is None  # no end to wait for: always "ended"

    def feed(self, chunk: bytes) -> tuple[bytes, bool]:
        """(what may go to the client now, False when a bad event follows it)."""
        if not self._tail and chunk.find(b"\n") == len(chunk) - 2 and chunk[-1:] == b"\n":
            # the usual chunk: one whole `data:` event (or one other line) and its blank line
            if chunk.startswith(b"data:") and not _json_shaped(chunk[5:-2].strip()):
                return b"", False
            if not self.ended:
                self._look(chunk)
            return chunk, True
        if self._tail:
            if b"\n" not in chunk:  # the long line goes on
                self._more.append(chunk)
                return b"", True
            if self._more:
                self._tail = b"".join((self._tail, *self._more))
                self._more.clear()
        data = self._tail + chunk if self._tail else chunk
        end = data.rfind(b"\n") + 1
        self._tail = data[end:]
        if b"data:" in data:
            start = 0
            while start < end:
                stop = data.index(b"\n", start) + 1
                if data.startswith(b"data:", start) and not _json_shaped(
                    data[start + 5 : stop].strip()
                ):
                    self._tail = b""
                    if not self.ended:
                        self._look(data[:start])
                    return data[:start], False
                start = stop
        if not self.ended:
            self._look(data[:end])
        return data[:end], True

    def _look(self, lines: bytes) -> None:
        assert self._end is not None
        for literal, pattern in self._end:
            if literal in lines and pattern.search(lines) is not None:
                self.ended = True
                return

    def rest(self) -> bytes:
        """What is left at the end of the stream (a last line without its newline)."""
        tail, self._tail = b"".join((self._tail, *self._more)), b""
        self._more.clear()
        if tail and not self.ended:
            self._look(tail)
        return tail
