"""openai (non-strict) dialect: one rule per test."""

from __future__ import annotations

from typing import Any

from toolc.schema import clean_schema


def prop(node: dict[str, Any]) -> Any:
    """Clean `node` as the only property `p` and return what became of it."""
    return clean_schema({"type": "object", "properties": {"p": node}}, "openai").schema[
        "properties"
    ]["p"]


def test_constraints_pass_through() -> None:
    node = {"type": "string", "pattern": "^a+$", "format": "uri", "minLength": 1, "default": "a"}
    assert prop(node) == node


def test_object_without_properties_gets_empty_properties() -> None:
    assert prop({"type": "object"}) == {"type": "object", "properties": {}}


def test_root_without_properties_gets_empty_properties() -> None:
    assert clean_schema({}, "openai").schema == {"type": "object", "properties": {}}


def test_array_without_items_gets_empty_items() -> None:
    assert prop({"type": "array"}) == {"type": "array", "items": {}}


def test_prefix_items_become_an_items_union() -> None:
    node = {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "string"}],
        "items": False,
    }
    assert prop(node) == {
        "type": "array",
        "items": {"anyOf": [{"type": "number"}, {"type": "string"}]},
        "maxItems": 2,
        "description": '(prefixItems: [{"type":"number"},{"type":"string"}])',
    }


def test_uniform_prefix_items_are_lossless() -> None:
    node = {
        "type": "array",
        "prefixItems": [{"type": "number"}, {"type": "number"}],
        "items": False,
    }
    result = clean_schema({"type": "object", "properties": {"p": node}}, "openai")
    assert result.schema["properties"]["p"] == {
        "type": "array",
        "items": {"type": "number"},
        "maxItems": 2,
    }
    assert not result.lossy


def test_annotations_are_stripped_without_description() -> None:
    node = {
        "type": "string",
        "title": "T",
        "examples": ["a"],
        "deprecated": True,
        "x-internal": 1,
        "readOnly": True,
    }
    assert prop(node) == {"type": "string"}


def test_title_strip_is_not_a_note() -> None:
    result = clean_schema({"type": "object", "title": "Args", "properties": {}}, "openai")
    assert result.notes == ()


def test_root_not_moves_into_the_description() -> None:
    schema = {"type": "object", "properties": {}, "not": {"required": ["a"]}}
    result = clean_schema(schema, "openai")
    assert result.schema == {
        "type": "object",
        "properties": {},
        "description": '(not: {"required":["a"]})',
    }
    assert [(n.code, n.pointer, n.lossy) for n in result.notes] == [
        ("constraint-described", ("not",), True)
    ]


def test_nested_not_passes() -> None:
    assert prop({"type": "string", "not": {"const": "x"}}) == {
        "type": "string",
        "not": {"const": "x"},
    }


def test_nested_one_of_and_all_of_pass() -> None:
    node = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    assert prop(node) == node


def test_defs_and_refs_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}},
    }
    assert clean_schema(schema, "openai").schema == schema


def test_unused_defs_are_pruned() -> None:
    schema = {"type": "object", "properties": {}, "$defs": {"Unused": {"type": "string"}}}
    assert clean_schema(schema, "openai").schema == {"type": "object", "properties": {}}


def test_external_ref_is_an_error() -> None:
    result = clean_schema(
        {"type": "object", "properties": {"a": {"$ref": "https://x/y"}}}, "openai"
    )
    assert [n.code for n in result.errors] == ["ref-external"]


def test_unresolvable_ref_is_an_error() -> None:
    result = clean_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/No"}}}, "openai")
    assert [n.code for n in result.errors] == ["ref-unresolved"]


def test_recursive_refs_are_fine() -> None:
    schema = {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}},
        "$defs": {"T": {"type": "object", "properties": {"c": {"$ref": "#/$defs/T"}}}},
    }
    result = clean_schema(schema, "openai")
    assert result.schema == schema
    assert result.errors == ()


def test_never_strict() -> None:
    assert clean_schema({"type": "object", "properties": {}}, "openai").strict is False
