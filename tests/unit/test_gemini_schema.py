"""Tool schemas cleaned for Gemini (providers/gemini_schema.py), checked against the strict
fake upstream's list of the keys Gemini documents."""

from typing import Any

from switchgate.providers.gemini_schema import clean_schema
from switchgate.testing.mock_upstream.strict import gemini_violation


def _accepted(schema: dict[str, Any]) -> bool:
    body = {"tools": [{"functionDeclarations": [{"name": "f", "parametersJsonSchema": schema}]}]}
    return gemini_violation(body) is None


def test_a_clean_schema_is_returned_as_is() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert clean_schema(schema) is schema


def test_refs_are_inlined_and_recursion_is_cut() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "node": {"$ref": "#/$defs/Node", "description": "the root"},
            "old": {"$ref": "#/definitions/Old"},
        },
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/Node"}, "name": {"const": "x"}},
            }
        },
        "definitions": {"Old": {"type": "string", "format": "uri"}},
    }
    assert not _accepted({**schema, "propertyNames": {"pattern": "x"}})
    cleaned = clean_schema(schema)
    assert _accepted(cleaned)
    node = cleaned["properties"]["node"]
    assert node["description"] == "the root" and node["type"] == "object"
    assert node["properties"]["name"] == {"enum": ["x"]}
    deepest = node
    for _ in range(10):
        if "properties" not in deepest:
            break
        deepest = deepest["properties"]["child"]
    assert deepest == {"type": "object"}
    assert cleaned["properties"]["old"] == {"type": "string"}
    assert "$defs" not in cleaned and "definitions" not in cleaned


def test_unions_bounds_formats_and_required() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
            "x": {"type": "number", "exclusiveMinimum": 0.5},
            "when": {"type": "string", "format": "date-time"},
            "mail": {"type": "string", "format": "email", "examples": ["a@b.c"]},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "both": {"allOf": [{"type": "string", "description": "d"}]},
        },
        "required": ["n", "gone"],
        "additionalProperties": False,
    }
    cleaned = clean_schema(schema)
    assert _accepted(cleaned)
    props = cleaned["properties"]
    assert props["n"] == {"type": "integer", "minimum": 1, "maximum": 9}
    assert props["x"] == {"type": "number"}
    assert props["when"]["format"] == "date-time" and props["mail"] == {"type": "string"}
    assert props["either"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["both"] == {"type": "string", "description": "d"}
    assert cleaned["required"] == ["n"] and cleaned["additionalProperties"] is False
    assert schema["properties"]["n"]["exclusiveMinimum"] == 0  # the input is not changed
