"""Canonical objects <-> JSON for golden fixtures.

A dataclass is written as {"_type": "ClassName", field: value, ...} with default-valued
fields left out; tuples become lists and enums their values. `load` reverses it.
"""

import dataclasses
import enum
from pathlib import Path
from typing import Any

from switchgate import jsonutil
from switchgate.core import content, events, request, response, usage
from switchgate.errors import ErrorKind, GatewayError

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

_CLASSES: dict[str, type] = {
    name: obj
    for module in (content, events, request, response, usage)
    for name, obj in vars(module).items()
    if isinstance(obj, type) and dataclasses.is_dataclass(obj)
}
_CLASSES["GatewayError"] = GatewayError
_ENUMS: dict[str, type[enum.Enum]] = {
    "finish_reason": response.FinishReason,
    "reason": response.FinishReason,
    "kind": ErrorKind,
}


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def dump(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {"_type": type(obj).__name__}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if value != _default(f):
                out[f.name] = dump(value)
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, list | tuple):
        return [dump(v) for v in obj]
    if isinstance(obj, dict):
        return {k: dump(v) for k, v in obj.items()}
    return obj


def load(data: Any) -> Any:
    if isinstance(data, list):
        return tuple(load(v) for v in data)
    if not isinstance(data, dict) or "_type" not in data:
        return data
    cls = _CLASSES[data["_type"]]
    kwargs: dict[str, Any] = {}
    types = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    for key, value in data.items():
        if key == "_type":
            continue
        if key in _ENUMS and isinstance(value, str):
            kwargs[key] = _ENUMS[key](value)
        elif "dict" in types[key]:
            kwargs[key] = value  # raw JSON (schemas, extras, unknown parts)
        else:
            kwargs[key] = load(value)
    return cls(**kwargs)


def cases(area: str, prefix: str) -> list[tuple[str, dict[str, Any]]]:
    """(case name, fixture) for every tests/golden/<area>/<prefix>*.json."""
    paths = sorted((GOLDEN / area).glob(f"{prefix}*.json"))
    assert paths, f"no fixtures {area}/{prefix}*"
    return [(p.stem, jsonutil.loads(p.read_bytes())) for p in paths]
