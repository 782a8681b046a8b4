"""`[[mock:NAME]]` / `[[mock:NAME=VALUE]]` directives found in the last user text."""

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

_PATTERN: Final = re.compile(r"\[\[mock:([a-z_]+)(?:=(.*?))?\]\]", re.DOTALL)
_MARK: Final = "[[mock:"


@dataclass(frozen=True, slots=True)
class Directives:
    """What the request asked the mock to do. None / False / 0 mean "not asked"."""

    error: int | None = None  # respond with this HTTP status in the provider's error shape
    latency_ms: float | None = None  # overrides MockConfig.latency_ms
    chunks: int | None = None  # overrides MockConfig.chunk_count
    interval_ms: float | None = None  # overrides MockConfig.chunk_interval_ms
    drop_after: int | None = None  # stream: send N events, then cut the connection
    midstream_error: int | None = None  # stream: in-band error; 0 = the provider's usual one
    no_usage: bool = False
    tool: bool = False
    tools: int = 0  # number of parallel tool calls
    cached: bool = False
    cache_write: bool = False
    text: str | None = None
    # Fault modes for billing: report these token counts whatever they are (negative,
    # absurdly large), instead of the real ones.
    usage_input: int | None = None
    usage_output: int | None = None
    # Anthropic streams: end the stream right after the last content_block_stop (no
    # message_delta, no message_stop) / wait this long before message_delta.
    close_after_content: bool = False
    tail_delay_ms: float | None = None
    words: int | None = None  # the reply is this many words ("w1 w2 ..."): a long answer
    ignore_max_tokens: bool = False  # a reasoning model's habit: answer past the limit
    call: str | None = None  # scripted: call this tool (scripted.py)
    args: str | None = None  # scripted: with these JSON arguments


NO_DIRECTIVES: Final = Directives()


def _int(value: str | None, low: int, high: int) -> int | None:
    if value is None:
        return None
    try:
        n = int(value.strip())
    except ValueError:
        return None
    return n if low <= n <= high else None


def _ms(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        ms = float(value.strip())
    except ValueError:
        return None
    return ms if 0 <= ms <= 600_000 else None


def _any_int(raw: str | None) -> int | None:
    try:
        return None if raw is None else int(raw.strip())
    except ValueError:
        return None


def _flag(_raw: str | None) -> bool:
    return True


def _midstream(raw: str | None) -> int | None:
    return 0 if raw is None else _int(raw, 400, 599)


def _text(raw: str | None) -> str:
    return "" if raw is None else raw


_PARSERS: Final[dict[str, tuple[str, Callable[[str | None], object]]]] = {
    "error": ("error", lambda raw: _int(raw, 400, 599)),
    "latency": ("latency_ms", _ms),
    "chunks": ("chunks", lambda raw: _int(raw, 1, 100_000)),
    "interval": ("interval_ms", _ms),
    "drop_after": ("drop_after", lambda raw: _int(raw, 0, 1_000_000)),
    "midstream_error": ("midstream_error", _midstream),
    "no_usage": ("no_usage", _flag),
    "tool": ("tool", _flag),
    "tools": ("tools", lambda raw: _int(raw, 1, 64)),
    "cached": ("cached", _flag),
    "cache_write": ("cache_write", _flag),
    "text": ("text", _text),
    "usage_input": ("usage_input", _any_int),
    "usage_output": ("usage_output", _any_int),
    "close_after_content": ("close_after_content", _flag),
    "tail_delay": ("tail_delay_ms", _ms),
    "words": ("words", lambda raw: _int(raw, 1, 1_000_000)),
    "ignore_max_tokens": ("ignore_max_tokens", _flag),
    "call": ("call", lambda raw: raw.strip() if raw and raw.strip() else None),
    "args": ("args", _text),
}


def parse_directives(text: str) -> Directives:
    """Detect directives (nothing is stripped from the text). Unknown or malformed ones are
    ignored; a later occurrence of the same directive wins."""
    if _MARK not in text:
        return NO_DIRECTIVES
    found: dict[str, Any] = {}
    for match in _PATTERN.finditer(text):
        parser = _PARSERS.get(match.group(1))
        if parser is not None:
            value = parser[1](match.group(2))
            if value is not None:
                found[parser[0]] = value
    return Directives(**found) if found else NO_DIRECTIVES
