"""Per-server state: the live config, the recent-request log and an id counter.

Recording is cheap on the hot path (one tuple appended to a bounded deque); redaction and
formatting happen only when the log is read.
"""

import itertools
from collections import deque
from typing import Any, Final
from urllib.parse import parse_qsl

from aiohttp import web
from multidict import CIMultiDictProxy

from .config import MockConfig
from .httpkit import NOT_JSON, parse_json

REDACTED: Final = "<redacted>"
REDACTED_VALID: Final = "<redacted:valid>"  # the value carried the configured key
# ... or "<redacted:valid:N>": the Nth of the keys it also accepts (config.also_accept)
_SECRET_HEADERS: Final = frozenset(
    {"authorization", "x-api-key", "x-goog-api-key", "api-key", "x-amz-security-token"}
)
_HIDDEN_HEADERS: Final = frozenset({"cookie", "proxy-authorization"})
_WS_KEY_PREFIX: Final = "openai-insecure-api-key."

_Entry = tuple[str, str, str, CIMultiDictProxy[str], Any, int]


class MockState:
    """Everything one mock server instance keeps between requests."""

    __slots__ = ("_ids", "config", "log", "websockets")

    def __init__(self, config: MockConfig) -> None:
        self.config = config
        self.log: deque[_Entry] = deque(maxlen=config.record)
        self._ids = itertools.count(1)
        self.websockets: set[web.WebSocketResponse] = set()

    def next_id(self) -> int:
        return next(self._ids)

    def resize_log(self) -> None:
        if self.log.maxlen != self.config.record:
            self.log = deque(self.log, maxlen=self.config.record)

    async def intake(self, request: web.BaseRequest) -> Any:
        """Read and record the request; returns the parsed JSON body or NOT_JSON."""
        body = await request.read()
        parsed = parse_json(body)
        self.log.append(
            (request.method, request.path, request.query_string, request.headers, parsed, len(body))
        )
        return parsed

    def record(self, request: web.BaseRequest, size: int, parsed: Any = NOT_JSON) -> None:
        """Record a request whose body was consumed some other way (multipart, WebSocket)."""
        self.log.append(
            (request.method, request.path, request.query_string, request.headers, parsed, size)
        )

    def recorded(self) -> list[dict[str, Any]]:
        keys = self.config.accepted
        return [_format(entry, keys) for entry in list(self.log)]  # snapshot: thread-safe


def _redact(value: str, keys: tuple[str, ...]) -> str:
    if value[:7].lower() == "bearer ":
        value = value[7:]
    value = value.strip()
    if value not in keys:
        return REDACTED
    place = keys.index(value)
    return REDACTED_VALID if place == 0 else f"<redacted:valid:{place}>"


def _redact_protocols(value: str, key: tuple[str, ...]) -> str:
    parts = [p.strip() for p in value.split(",")]
    return ", ".join(
        _WS_KEY_PREFIX + _redact(p[len(_WS_KEY_PREFIX) :], key)
        if p.startswith(_WS_KEY_PREFIX)
        else p
        for p in parts
    )


def _format(entry: _Entry, key: tuple[str, ...]) -> dict[str, Any]:
    method, path, query_string, raw_headers, parsed, size = entry
    headers: dict[str, str] = {}
    for name, value in raw_headers.items():
        low = name.lower()
        if low in _SECRET_HEADERS:
            headers[low] = _redact(value, key)
        elif low in _HIDDEN_HEADERS:
            headers[low] = REDACTED
        elif low == "sec-websocket-protocol":
            headers[low] = _redact_protocols(value, key)
        else:
            headers[low] = value
    query: dict[str, str] = {}
    if query_string:
        for qname, qvalue in parse_qsl(query_string, keep_blank_values=True):
            query[qname] = _redact(qvalue, key) if qname == "key" else qvalue
    return {
        "method": method,
        "path": path,
        "query": query,
        "headers": headers,
        "json": None if parsed is NOT_JSON else parsed,
        "body_size": size,
    }
