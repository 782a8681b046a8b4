"""Tool schemas cleaned for Gemini (providers/gemini_schema.py), checked against the strict
fake upstream's list of the keys Gemini documents."""

from typing import Any

from switchgate import jsonutil
from switchgate.core.content import TextPart
from switchgate.core.request import ChatRequest, Message, ToolSpec
from switchgate.providers.base import Target
from switchgate.providers.gemini import GeminiProvider
from switchgate.providers.gemini_schema import SchemaCache, clean_schema
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


_DIRTY = {"$schema": "x", "type": "object", "properties": {"n": {"type": "integer", "const": 1}}}


def test_the_cache_gives_what_cleaning_gives_and_hits_on_the_same_json() -> None:
    cache = SchemaCache()
    first = cache.clean(_DIRTY)
    assert (
        first
        == clean_schema(_DIRTY)
        == {
            "type": "object",
            "properties": {"n": {"type": "integer", "enum": [1]}},
        }
    )
    again = cache.clean(jsonutil.loads(jsonutil.dumps(_DIRTY)))  # an equal, other dict
    assert again is first and (cache.hits, cache.misses) == (1, 1)
    plain = {"type": "string"}
    assert cache.clean(plain) is plain and cache.clean(dict(plain)) == plain  # as is
    assert (cache.hits, cache.misses) == (2, 2)


def test_the_cache_keeps_no_reference_to_the_callers_schema() -> None:
    cache = SchemaCache()
    schema = {"$schema": "x", "type": "object", "properties": {"a": {"type": "string"}}}
    cleaned = cache.clean(schema)
    schema["properties"]["a"]["type"] = "integer"  # the caller reuses its dict
    assert cleaned["properties"]["a"] == {"type": "string"}
    assert cache.clean(schema)["properties"]["a"] == {"type": "integer"}


def test_the_cache_is_bounded_least_recently_used_first_out() -> None:
    cache = SchemaCache(size=2)
    a, b, c = ({"$schema": "x", "title": t} for t in "abc")
    cache.clean(a)
    cache.clean(b)
    cache.clean(a)  # a is now the most recently used
    cache.clean(c)  # b goes
    assert len(cache) == 2 and (cache.hits, cache.misses) == (1, 3)
    cache.clean(a)
    cache.clean(b)
    assert (cache.hits, cache.misses) == (2, 4)


def test_each_gemini_adapter_owns_its_cache() -> None:
    request = ChatRequest(
        model="m",
        messages=(Message("user", (TextPart("hi"),)),),
        tools=(ToolSpec("f", parameters=_DIRTY),),
    )
    target = Target("https://g.example", "k", "gemini-2.5-flash")
    one, other = GeminiProvider(), GeminiProvider()
    for _ in range(3):
        sent = jsonutil.loads(one.build_chat_request(request, target).body)
    decl = sent["tools"][0]["functionDeclarations"][0]
    assert decl["parametersJsonSchema"] == clean_schema(_DIRTY)
    assert (one.schemas.hits, one.schemas.misses) == (2, 1)
    assert (other.schemas.hits, other.schemas.misses) == (0, 0)
