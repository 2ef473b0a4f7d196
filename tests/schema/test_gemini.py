"""gemini dialect (legacy `parameters`, the Schema proto): one rule per test."""

from __future__ import annotations

from typing import Any

from toolc.schema import CleanedSchema, clean_schema


def go(schema: dict[str, Any]) -> CleanedSchema:
    return clean_schema(schema, "gemini")


def prop(node: Any) -> Any:
    return go({"type": "object", "properties": {"p": node}}).schema["properties"]["p"]


def test_types_are_upper_case() -> None:
    assert go({"type": "object", "properties": {"a": {"type": "string"}}}).schema == {
        "type": "OBJECT",
        "properties": {"a": {"type": "STRING"}},
    }


def test_nullable_type_list_becomes_nullable() -> None:
    assert prop({"type": ["string", "null"]}) == {"type": "STRING", "nullable": True}


def test_multi_type_list_becomes_any_of_with_own_keywords() -> None:
    node = {"type": ["string", "integer"], "minLength": 1, "minimum": 0, "description": "d"}
    assert prop(node) == {
        "description": "d",
        "anyOf": [{"type": "STRING", "minLength": 1}, {"type": "INTEGER", "minimum": 0}],
    }


def test_any_of_with_null_branch_becomes_nullable() -> None:
    node = {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "n"}
    assert prop(node) == {"type": "INTEGER", "description": "n", "nullable": True}


def test_any_of_siblings_move_into_branches() -> None:
    node = {"type": "string", "anyOf": [{"format": "date-time"}, {"enum": ["now"]}]}
    assert prop(node) == {
        "anyOf": [
            {"type": "STRING", "format": "date-time"},
            {"type": "STRING", "enum": ["now"]},
        ]
    }


def test_one_of_becomes_any_of() -> None:
    assert prop({"oneOf": [{"type": "string"}, {"type": "integer"}]}) == {
        "anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]
    }


def test_all_of_is_merged() -> None:
    assert prop({"allOf": [{"type": "string"}, {"maxLength": 3}]}) == {
        "type": "STRING",
        "maxLength": 3,
    }


def test_const_becomes_a_string_enum() -> None:
    assert prop({"const": "x"}) == {"type": "STRING", "enum": ["x"]}


def test_integer_enum_is_stringified_with_format_enum() -> None:
    assert prop({"type": "integer", "enum": [1, 2]}) == {
        "type": "INTEGER",
        "format": "enum",
        "enum": ["1", "2"],
    }


def test_boolean_enum_moves_into_the_description() -> None:
    assert prop({"type": "boolean", "enum": [True]}) == {
        "type": "BOOLEAN",
        "description": "(enum: [true])",
    }


def test_empty_string_enum_value_is_described() -> None:
    assert prop({"type": "string", "enum": ["a", ""]}) == {
        "type": "STRING",
        "enum": ["a"],
        "description": '(enum also allows: "")',
    }


def test_null_enum_value_becomes_nullable() -> None:
    assert prop({"enum": ["a", None]}) == {"type": "STRING", "enum": ["a"], "nullable": True}


def test_unsupported_string_format_is_described() -> None:
    assert prop({"type": "string", "format": "uri"}) == {
        "type": "STRING",
        "description": "(format: uri)",
    }


def test_date_time_and_number_formats_pass() -> None:
    assert prop({"type": "string", "format": "date-time"}) == {
        "type": "STRING",
        "format": "date-time",
    }
    assert prop({"type": "integer", "format": "int64"}) == {"type": "INTEGER", "format": "int64"}


def test_number_format_on_integer_is_described() -> None:
    assert prop({"type": "integer", "format": "double"}) == {
        "type": "INTEGER",
        "description": "(format: double)",
    }


def test_integer_exclusive_bounds_become_inclusive() -> None:
    node = {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10}
    assert prop(node) == {"type": "INTEGER", "minimum": 1, "maximum": 9}


def test_number_exclusive_bound_is_described() -> None:
    assert prop({"type": "number", "exclusiveMinimum": 0.5}) == {
        "type": "NUMBER",
        "description": "(exclusiveMinimum: 0.5)",
    }


def test_supported_facets_pass() -> None:
    node = {"type": "string", "minLength": 1, "maxLength": 9, "pattern": "^a", "example": "ab"}
    assert prop(node) == {**node, "type": "STRING"}


def test_unsupported_facets_are_described_together() -> None:
    node = {"type": "array", "items": {"type": "integer", "multipleOf": 2}, "uniqueItems": True}
    assert prop(node) == {
        "type": "ARRAY",
        "items": {"type": "INTEGER", "description": "(multipleOf: 2)"},
        "description": "(uniqueItems: true)",
    }


def test_additional_properties_is_described() -> None:
    node = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
    }
    assert prop(node) == {
        "type": "OBJECT",
        "properties": {"a": {"type": "STRING"}},
        "description": "(additionalProperties: false)",
    }


def test_default_is_described_and_title_stripped() -> None:
    assert prop({"type": "string", "default": "x", "title": "T", "examples": ["y"]}) == {
        "type": "STRING",
        "description": '(default: "x")',
    }


def test_not_and_conditionals_are_described() -> None:
    assert prop({"type": "string", "not": {"const": "x"}}) == {
        "type": "STRING",
        "description": '(not: {"const":"x"})',
    }


def test_refs_are_inlined_and_defs_dropped() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A", "description": "d"}},
        "$defs": {"A": {"type": "string", "description": "from def"}},
    }
    assert go(schema).schema == {
        "type": "OBJECT",
        "properties": {"a": {"description": "d", "type": "STRING"}},
    }


def test_recursion_is_an_error() -> None:
    schema = {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}},
        "$defs": {"T": {"type": "object", "properties": {"c": {"$ref": "#/$defs/T"}}}},
    }
    assert [(n.code, n.pointer) for n in go(schema).errors] == [
        ("ref-recursive", ("properties", "t", "properties", "c", "$ref"))
    ]


def test_array_without_items_gets_string_items() -> None:
    assert prop({"type": "array"}) == {
        "type": "ARRAY",
        "items": {"type": "STRING"},
        "description": "(items: any JSON value)",
    }


def test_tuple_becomes_an_items_union() -> None:
    node = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
    assert prop(node) == {
        "type": "ARRAY",
        "items": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]},
        "description": '(prefixItems: [{"type":"string"},{"type":"integer"}])',
    }


def test_nested_empty_properties_are_dropped() -> None:
    assert prop({"type": "object", "properties": {}}) == {"type": "OBJECT"}


def test_root_empty_properties_stay() -> None:
    assert go({"type": "object", "properties": {}}).schema == {"type": "OBJECT", "properties": {}}


def test_required_is_filtered_to_declared_properties() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}
    assert go(schema).schema == {
        "type": "OBJECT",
        "properties": {"a": {"type": "STRING"}},
        "required": ["a"],
        "description": '(also requires: ["b"])',
    }


def test_typeless_schema_becomes_a_described_string() -> None:
    assert prop({"description": "anything"}) == {
        "type": "STRING",
        "description": "anything (type: any JSON value)",
    }


def test_typeless_schema_with_properties_is_an_object() -> None:
    assert prop({"properties": {"a": {"type": "string"}}}) == {
        "type": "OBJECT",
        "properties": {"a": {"type": "STRING"}},
    }


def test_invalid_property_names_are_renamed_reversibly() -> None:
    schema = {
        "type": "object",
        "properties": {"-A": {"type": "integer"}, "dash_A": {"type": "string"}, "x.y": {}},
        "required": ["-A"],
        "propertyOrdering": ["-A", "dash_A", "x.y"],
    }
    result = go(schema)
    assert list(result.schema["properties"]) == ["dash_A_2", "dash_A", "x_y"]
    assert result.schema["required"] == ["dash_A_2"]
    assert result.schema["propertyOrdering"] == ["dash_A_2", "dash_A", "x_y"]
    assert result.property_renames == {(): {"dash_A_2": "-A", "x_y": "x.y"}}


def test_nested_renames_record_their_object_path() -> None:
    inner = {"type": "object", "properties": {"-i": {"type": "boolean"}}}
    result = go({"type": "object", "properties": {"opts": inner}})
    assert result.property_renames == {("properties", "opts"): {"dash_i": "-i"}}


def test_root_union_is_flattened() -> None:
    schema = {"oneOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}]}
    assert go(schema).schema == {
        "type": "OBJECT",
        "properties": {"a": {"type": "STRING"}},
        "required": ["a"],
    }
