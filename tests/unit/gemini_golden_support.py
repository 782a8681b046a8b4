"""Golden-test plumbing for the Gemini codec tests: IR <-> JSON and fixture loading.

IR dataclasses serialise to JSON objects holding only their non-default fields; members of
a union (content parts, stream events) carry a "type" tag with their class name.
Set SWITCHGATE_REGEN_GOLDEN=1 to rewrite the "expected" of every fixture a test checks
(then review the diff: a golden pins behaviour only if someone read it).
"""

import dataclasses
import enum
import os
import types
import typing
from pathlib import Path
from typing import Any

from switchgate import jsonutil
from switchgate.core import content, events

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
REGEN = os.environ.get("SWITCHGATE_REGEN_GOLDEN") == "1"

TAGGED: dict[str, type] = {
    cls.__name__: cls
    for module in (content, events)
    for cls in vars(module).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
}


def to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        if type(value).__name__ in TAGGED:
            out["type"] = type(value).__name__
        for f in dataclasses.fields(value):
            current = getattr(value, f.name)
            if f.default is not dataclasses.MISSING:
                default: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = dataclasses.MISSING
            if default is dataclasses.MISSING or current != default:
                out[f.name] = to_json(current)
        return out
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


def from_json(tp: Any, data: Any) -> Any:
    """Build a value of type `tp` from its `to_json` form."""
    origin = typing.get_origin(tp)
    if tp is Any or origin is typing.Literal:
        return data
    if origin in (typing.Union, types.UnionType):
        if data is None:
            return None
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        tag = data.get("type") if isinstance(data, dict) else None
        if tag in TAGGED and TAGGED[tag] in options:
            return from_json(TAGGED[tag], data)
        return from_json(options[0], data) if len(options) == 1 else data
    if origin is tuple:
        return tuple(from_json(typing.get_args(tp)[0], item) for item in data)
    if origin is list:
        return [from_json(typing.get_args(tp)[0], item) for item in data]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        tagged = tp.__name__ in TAGGED  # "type" is the tag there, a real field elsewhere
        return tp(
            **{k: from_json(hints[k], v) for k, v in data.items() if not (tagged and k == "type")}
        )
    if tp is float and isinstance(data, int):
        return float(data)
    return data


def cases(area: str, prefix: str) -> list[Path]:
    return sorted((GOLDEN / area).glob(f"{prefix}*.json"))


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = jsonutil.loads(path.read_bytes())
    return case


def check(path: Path, case: dict[str, Any], actual: Any) -> None:
    """Compare `actual` (JSON-able) with the fixture's "expected" (or rewrite it in REGEN)."""
    actual = jsonutil.loads(jsonutil.dumps(actual))
    if REGEN:
        if case.get("expected") != actual:
            path.write_text(jsonutil.dumps_pretty({**case, "expected": actual}) + "\n")
        return
    assert actual == case["expected"], f"{path.name}: output differs from the golden"


def ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]
