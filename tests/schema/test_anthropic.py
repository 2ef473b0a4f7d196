"""anthropic dialect: draft 2020-12 passes, labels are stripped, the root is fixed."""

from __future__ import annotations

from typing import Any

from toolc.schema import clean_schema


def prop(node: dict[str, Any]) -> Any:
    schema = {"type": "object", "properties": {"p": node}}
    return clean_schema(schema, "anthropic").schema["properties"]["p"]


def test_constraints_pass_through() -> None:
    node = {
        "type": "string",
        "format": "uri",
        "pattern": "^h",
        "minLength": 1,
        "default": "h",
        "examples": ["h"],
        "deprecated": False,
        "x-ui": "wide",
    }
    assert prop(node) == node


def test_title_discriminator_and_property_ordering_are_stripped() -> None:
    node = {
        "type": "object",
        "title": "T",
        "properties": {"a": {"type": "string"}},
        "propertyOrdering": ["a"],
        "discriminator": {"propertyName": "a"},
    }
    assert prop(node) == {"type": "object", "properties": {"a": {"type": "string"}}}


def test_object_without_properties_is_left_alone() -> None:
    assert prop({"type": "object"}) == {"type": "object"}


def test_composition_passes_nested() -> None:
    node = {"oneOf": [{"type": "string"}], "allOf": [{"minLength": 1}], "not": {"const": ""}}
    assert prop(node) == node


def test_root_not_and_conditionals_pass() -> None:
    schema = {"type": "object", "properties": {}, "not": {"required": ["a"]}, "if": {}, "then": {}}
    assert clean_schema(schema, "anthropic").schema == schema


def test_root_any_of_is_flattened() -> None:
    schema = {"anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}]}
    assert clean_schema(schema, "anthropic").schema == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
    }


def test_missing_root_type_is_added() -> None:
    assert clean_schema({"properties": {}}, "anthropic").schema == {
        "type": "object",
        "properties": {},
    }


def test_boolean_exclusive_minimum_is_made_valid() -> None:
    node = {"type": "number", "minimum": 0, "exclusiveMinimum": True}
    assert prop(node) == {"type": "number", "exclusiveMinimum": 0}


def test_definitions_become_defs() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/A"}},
        "definitions": {"A": {"type": "string"}},
    }
    assert clean_schema(schema, "anthropic").schema == {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}},
    }


def test_nothing_is_lossy_for_a_plain_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 3}}}
    assert not clean_schema(schema, "anthropic").lossy
