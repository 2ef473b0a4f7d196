"""gemini-json dialect (`parametersJsonSchema`): one rule per test."""

from __future__ import annotations

from typing import Any

from toolc.schema import CleanedSchema, clean_schema


def gj(schema: dict[str, Any]) -> CleanedSchema:
    return clean_schema(schema, "gemini-json")


def prop(node: Any) -> Any:
    return gj({"type": "object", "properties": {"p": node}}).schema["properties"]["p"]


def test_json_schema_features_pass() -> None:
    node = {
        "type": ["array", "null"],
        "prefixItems": [{"type": "string"}],
        "items": {"type": "integer"},
        "minItems": 1,
        "maxItems": 4,
    }
    assert prop(node) == node


def test_objects_keep_additional_properties_and_ordering() -> None:
    node = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
        "propertyOrdering": ["b", "a"],
        "additionalProperties": False,
    }
    assert prop(node) == node


def test_titles_are_stripped_everywhere() -> None:
    schema = {
        "type": "object",
        "title": "Args",
        "properties": {"a": {"type": "string", "title": "A"}},
    }
    result = gj(schema)
    assert result.schema == {"type": "object", "properties": {"a": {"type": "string"}}}
    assert result.notes == ()


def test_const_becomes_a_typed_enum() -> None:
    assert prop({"const": 3}) == {"type": "integer", "enum": [3]}


def test_one_of_becomes_any_of() -> None:
    assert prop({"oneOf": [{"type": "string"}, {"type": "null"}]}) == {
        "anyOf": [{"type": "string"}, {"type": "null"}]
    }


def test_all_of_is_merged() -> None:
    assert prop({"allOf": [{"type": "integer"}, {"minimum": 2}]}) == {
        "type": "integer",
        "minimum": 2,
    }


def test_integer_exclusive_bound_becomes_inclusive() -> None:
    assert prop({"type": "integer", "exclusiveMaximum": 5}) == {"type": "integer", "maximum": 4}


def test_number_exclusive_bound_is_described() -> None:
    assert prop({"type": "number", "exclusiveMaximum": 5}) == {
        "type": "number",
        "description": "(exclusiveMaximum: 5)",
    }


def test_string_facets_are_described() -> None:
    node = {"type": "string", "pattern": "^a", "minLength": 1, "maxLength": 3, "format": "email"}
    result = gj({"type": "object", "properties": {"p": node}})
    assert result.schema["properties"]["p"] == {
        "type": "string",
        "description": "(format: email; maxLength: 3; minLength: 1; pattern: ^a)",
    }
    assert [n.pointer[-1] for n in result.notes if n.lossy] == [
        "format",
        "pattern",
        "minLength",
        "maxLength",
    ]


def test_date_time_and_number_formats_pass() -> None:
    assert prop({"type": "string", "format": "date-time"}) == {
        "type": "string",
        "format": "date-time",
    }
    assert prop({"type": "number", "format": "double"}) == {"type": "number", "format": "double"}


def test_multiple_of_and_unique_items_are_described() -> None:
    assert prop({"type": "integer", "multipleOf": 3}) == {
        "type": "integer",
        "description": "(multipleOf: 3)",
    }
    assert prop({"type": "array", "items": {"type": "string"}, "uniqueItems": True}) == {
        "type": "array",
        "items": {"type": "string"},
        "description": "(uniqueItems: true)",
    }


def test_conditionals_are_described() -> None:
    node = {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}
    assert prop(node) == {
        "type": "object",
        "description": '(if: {"required":["a"]}; then: {"required":["b"]})',
    }


def test_default_passes_and_examples_are_stripped() -> None:
    assert prop({"type": "string", "default": "x", "examples": ["y"], "x-a": 1}) == {
        "type": "string",
        "default": "x",
    }


def test_empty_enum_string_is_described() -> None:
    assert prop({"type": "string", "enum": ["", "a"]}) == {
        "type": "string",
        "enum": ["a"],
        "description": '(enum also allows: "")',
    }


def test_mixed_enum_splits_into_any_of() -> None:
    assert prop({"enum": ["a", 1, None]}) == {
        "anyOf": [
            {"type": "string", "enum": ["a"]},
            {"type": "integer", "enum": [1]},
            {"type": "null"},
        ]
    }


def test_defs_refs_are_kept() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "description": "d"}},
        "$defs": {"A": {"type": "string"}},
    }
    assert gj(schema).schema == schema


def test_ref_with_constraint_siblings_is_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "maxItems": 2}},
        "$defs": {"A": {"type": "array", "items": {"type": "string"}}},
    }
    assert gj(schema).schema == {
        "type": "object",
        "properties": {"a": {"maxItems": 2, "type": "array", "items": {"type": "string"}}},
    }


def test_ref_with_describable_siblings_stays_a_ref() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "minLength": 2}},
        "$defs": {"A": {"type": "string"}},
    }
    assert gj(schema).schema["properties"]["a"] == {
        "$ref": "#/$defs/A",
        "description": "(minLength: 2)",
    }


def test_pointer_ref_is_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}},
    }
    assert gj(schema).schema["properties"]["b"] == {"type": "string"}


def test_recursion_is_kept_with_a_warning() -> None:
    schema = {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}},
        "$defs": {"T": {"type": "object", "properties": {"c": {"$ref": "#/$defs/T"}}}},
    }
    result = gj(schema)
    assert result.schema == schema
    assert [(n.code, n.severity) for n in result.notes] == [("ref-recursive", "warning")]


def test_root_ref_recursion_is_an_error() -> None:
    schema = {"type": "object", "properties": {"self": {"$ref": "#"}}}
    assert [n.code for n in gj(schema).errors] == ["ref-recursive"]


def test_property_names_are_renamed() -> None:
    schema = {"type": "object", "properties": {"-n": {"type": "boolean"}}, "required": ["-n"]}
    result = gj(schema)
    assert result.schema == {
        "type": "object",
        "properties": {"dash_n": {"type": "boolean"}},
        "required": ["dash_n"],
    }
    assert result.property_renames == {(): {"dash_n": "-n"}}


def test_renames_inside_defs_use_the_defs_path() -> None:
    schema = {
        "type": "object",
        "properties": {"o": {"$ref": "#/$defs/O"}},
        "$defs": {"O": {"type": "object", "properties": {"-C": {"type": "integer"}}}},
    }
    assert gj(schema).property_renames == {("$defs", "O"): {"dash_C": "-C"}}
