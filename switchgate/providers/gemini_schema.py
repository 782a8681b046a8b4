"""Tool schemas cleaned for Gemini function declarations (pure).

Gemini takes a subset of JSON Schema for `parametersJsonSchema`, and has refused (with
400 `Invalid JSON payload received. Unknown name ...`, depending on model and API version)
keys outside it. Agents' tool schemas are written for OpenAI and Anthropic and carry them:
Claude Code's have `$schema`, `exclusiveMinimum` and `propertyNames`; MCP servers'
have `$ref` into `$defs`, `oneOf`, `const` and string formats such as `uri`. Cleaning:
- local `$ref`s (`#/$defs/X`, `#/definitions/X`) are inlined (a recursive one, past a few
  levels, becomes a plain object) and `$defs` / `definitions` removed;
- `oneOf` -> `anyOf`; a lone `allOf` member is merged in; `const` -> a one-value `enum`;
- `exclusiveMinimum` / `exclusiveMaximum` -> `minimum` / `maximum` on integers (the next
  whole number), dropped otherwise;
- `format` kept only where Gemini documents it (`date-time`, `enum`, number widths);
- every other key outside the documented subset is dropped, and `required` keeps only
  properties that exist.
A schema that needs none of this comes back as the same object (nothing is copied).

Agents send the same tools with every request: `SchemaCache` memoises the cleaning by
the schema's JSON text (Claude Code's tools: several times cheaper per request than
walking them again). Each Gemini-shaped adapter owns one (AppState owns the adapters).
"""

from collections import OrderedDict
from typing import Any, Final

from switchgate import jsonutil

KEEP: Final = frozenset(
    {
        "type", "title", "description", "nullable", "enum", "items", "prefixItems",
        "minItems", "maxItems", "minimum", "maximum", "anyOf", "properties",
        "additionalProperties", "required", "propertyOrdering", "minLength", "maxLength",
        "pattern", "minProperties", "maxProperties", "default", "format",
    }
)  # fmt: skip
FORMATS: Final = frozenset({"date-time", "enum", "int32", "int64", "float", "double"})
MAX_REF_DEPTH: Final = 6
_REF_PREFIXES: Final = ("#/$defs/", "#/definitions/")


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as Gemini takes it (see the module docstring); the same object when
    it needs no change."""
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = schema.get(key)
        if isinstance(found, dict):
            defs.update(found)
    return _clean(schema, defs, 0)


class SchemaCache:
    """`clean_schema` memoised by the schema's JSON text, the `size` most recently used
    kept. A cached result is shared between requests: callers must not modify it."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._cleaned: OrderedDict[bytes, dict[str, Any] | None] = OrderedDict()  # None: as is
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._cleaned)

    def clean(self, schema: dict[str, Any]) -> dict[str, Any]:
        try:
            key = jsonutil.dumps(schema)
        except TypeError:
            return clean_schema(schema)
        if key in self._cleaned:
            self.hits += 1
            self._cleaned.move_to_end(key)
            cleaned = self._cleaned[key]
        else:
            self.misses += 1
            fresh = jsonutil.loads(key)  # a private copy: the caller's dict is not kept
            result = clean_schema(fresh)
            cleaned = None if result is fresh else result
            self._cleaned[key] = cleaned
            if len(self._cleaned) > self._size:
                self._cleaned.popitem(last=False)
        return schema if cleaned is None else cleaned


def _needs_work(schema: dict[str, Any]) -> bool:
    for key, value in schema.items():
        if key not in KEEP:
            return True
        if key == "format" and value not in FORMATS:
            return True
    return False


def _clean(schema: dict[str, Any], defs: dict[str, Any], depth: int) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return _resolve(schema, ref, defs, depth)
    out: dict[str, Any] = dict(schema) if _needs_work(schema) else schema
    changed = out is not schema
    if changed:
        _rewrite(out)
    for key in ("properties",):
        props = out.get(key)
        if isinstance(props, dict):
            new = {name: _sub(sub, defs, depth) for name, sub in props.items()}
            if any(new[name] is not props[name] for name in props):
                out = out if changed else dict(out)
                changed = True
                out[key] = new
    for key in ("items", "additionalProperties"):
        sub = out.get(key)
        if isinstance(sub, dict):
            new_sub = _clean(sub, defs, depth)
            if new_sub is not sub:
                out = out if changed else dict(out)
                changed = True
                out[key] = new_sub
    for key in ("anyOf", "prefixItems"):
        subs = out.get(key)
        if isinstance(subs, list):
            new_list = [_sub(sub, defs, depth) for sub in subs]
            if any(a is not b for a, b in zip(new_list, subs, strict=True)):
                out = out if changed else dict(out)
                changed = True
                out[key] = new_list
    if changed:
        _fix_required(out)
    return out


def _sub(value: Any, defs: dict[str, Any], depth: int) -> Any:
    return _clean(value, defs, depth) if isinstance(value, dict) else value


def _resolve(schema: dict[str, Any], ref: str, defs: dict[str, Any], depth: int) -> dict[str, Any]:
    name = next((ref[len(p) :] for p in _REF_PREFIXES if ref.startswith(p)), None)
    target = defs.get(name) if name is not None else None
    if not isinstance(target, dict) or depth >= MAX_REF_DEPTH:
        out: dict[str, Any] = {"type": "object"}
    else:
        out = dict(_clean(target, defs, depth + 1))
    description = schema.get("description")
    if isinstance(description, str):
        out["description"] = description
    return out


def _rewrite(out: dict[str, Any]) -> None:
    """Key-level rewrites of a schema copy (its sub-schemas are cleaned by the caller)."""
    one_of = out.pop("oneOf", None)
    if isinstance(one_of, list) and "anyOf" not in out:
        out["anyOf"] = one_of
    all_of = out.pop("allOf", None)
    if isinstance(all_of, list):
        for member in all_of:
            if isinstance(member, dict):
                for key, value in member.items():
                    out.setdefault(key, value)
    if "const" in out:
        const = out.pop("const")
        out.setdefault("enum", [const])
    integer = out.get("type") == "integer"
    for key, bound, step in (
        ("exclusiveMinimum", "minimum", 1),
        ("exclusiveMaximum", "maximum", -1),
    ):
        value = out.pop(key, None)
        if integer and isinstance(value, int) and not isinstance(value, bool):
            out.setdefault(bound, value + step)
    if "format" in out and out["format"] not in FORMATS:
        del out["format"]
    for key in [k for k in out if k not in KEEP]:
        del out[key]


def _fix_required(out: dict[str, Any]) -> None:
    required, props = out.get("required"), out.get("properties")
    if isinstance(required, list) and isinstance(props, dict):
        kept = [name for name in required if name in props]
        if len(kept) != len(required):
            out["required"] = kept
