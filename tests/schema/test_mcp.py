"""mcp dialect: any 2020-12 object schema; composition and references stay."""

from __future__ import annotations

from toolc.schema import clean_schema


def test_everything_passes_nested() -> None:
    schema = {
        "type": "object",
        "title": "Args",
        "properties": {
            "a": {"type": "string", "title": "A", "format": "uri", "x-mcp-header": "X-A"},
            "b": {"oneOf": [{"const": 1}, {"const": 2}]},
        },
        "discriminator": {"propertyName": "a"},
    }
    assert clean_schema(schema, "mcp").schema == schema


def test_root_composition_stays_with_an_object_type() -> None:
    schema = {"anyOf": [{"required": ["a"]}, {"required": ["b"]}], "properties": {}}
    assert clean_schema(schema, "mcp").schema == {"type": "object", **schema}


def test_root_conditionals_stay() -> None:
    schema = {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}
    assert clean_schema(schema, "mcp").schema == schema


def test_property_ordering_is_stripped() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "propertyOrdering": ["a"]}
    assert clean_schema(schema, "mcp").schema == {"type": "object", "properties": {"a": {}}}


def test_external_ref_is_kept_with_a_warning() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/a.json"}}}
    result = clean_schema(schema, "mcp")
    assert result.schema == schema
    assert [(n.code, n.severity) for n in result.notes] == [("ref-external", "warning")]


def test_unused_defs_are_kept() -> None:
    schema = {"type": "object", "properties": {}, "$defs": {"A": {"type": "string"}}}
    assert clean_schema(schema, "mcp").schema == schema


def test_list_items_become_prefix_items() -> None:
    schema = {
        "type": "object",
        "properties": {"t": {"type": "array", "items": [{"type": "string"}]}},
    }
    assert clean_schema(schema, "mcp").schema["properties"]["t"] == {
        "type": "array",
        "prefixItems": [{"type": "string"}],
    }


def test_no_arguments_is_a_plain_object() -> None:
    assert clean_schema({}, "mcp").schema == {"type": "object"}
