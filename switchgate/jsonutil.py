"""The only module that calls the JSON library (orjson)."""

from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text; raises JSONDecodeError (a ValueError) on bad input."""
    return orjson.loads(data)


def dumps(value: Any) -> bytes:
    """Serialise to compact UTF-8 JSON bytes (non-ASCII kept as is)."""
    return orjson.dumps(value)


def dumps_str(value: Any) -> str:
    """Serialise to a compact JSON string."""
    return orjson.dumps(value).decode()


def dumps_pretty(value: Any) -> str:
    """Serialise with indentation, for humans (CLI output, fixtures)."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
