"""openai-strict dialect: the strict rewrite, the lossless decision and the fallback."""

from __future__ import annotations

from typing import Any

import pytest
from toolc.schema import CleanedSchema, check_openai_strict, clean_schema


def strict(schema: dict[str, Any]) -> CleanedSchema:
    return clean_schema(schema, "openai-strict")


def one(node: dict[str, Any], *, required: bool = True) -> CleanedSchema:
    schema = {"type": "object", "properties": {"p": node}, "required": ["p"] if required else []}
    return strict(schema)


def prop(node: dict[str, Any], *, required: bool = True) -> Any:
    result = one(node, required=required)
    assert result.strict, [n.message for n in result.notes]
    return result.schema["properties"]["p"]


def fell_back(node: dict[str, Any]) -> bool:
    result = one(node)
    plain = clean_schema({"type": "object", "properties": {"p": node}, "required": ["p"]}, "openai")
    assert result.schema == plain.schema  # the plain openai form is emitted
    return not result.strict and any(n.code == "strict-fallback" for n in result.notes)


def test_every_object_is_closed_and_fully_required() -> None:
    result = strict({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert result.strict
    assert result.schema == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }


def test_empty_root_is_strict() -> None:
    result = strict({})
    assert result.strict
    assert result.schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }


def test_optional_property_becomes_required_and_nullable() -> None:
    result = one({"type": "string"}, required=False)
    assert result.strict
    assert result.schema["properties"]["p"] == {"type": ["string", "null"]}
    assert result.schema["required"] == ["p"]
    assert result.nullable_optionals == {(): ("p",)}


def test_optional_enum_gets_a_null_value() -> None:
    assert prop({"type": "string", "enum": ["a"]}, required=False) == {
        "type": ["string", "null"],
        "enum": ["a", None],
    }


def test_optional_ref_is_wrapped_with_null() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}},
    }
    result = strict(schema)
    assert result.strict
    assert result.schema["properties"]["p"] == {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}


def test_optional_any_of_gets_a_null_branch() -> None:
    node = {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    assert prop(node, required=False) == {
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]
    }


def test_optional_nested_objects_are_recorded_per_path() -> None:
    inner = {"type": "object", "properties": {"x": {"type": "integer"}}}
    result = one(inner)
    assert result.nullable_optionals == {("properties", "p"): ("x",)}


def test_disjoint_one_of_becomes_any_of() -> None:
    assert prop({"oneOf": [{"type": "string"}, {"type": "integer"}]}) == {
        "anyOf": [{"type": "string"}, {"type": "integer"}]
    }


def test_discriminated_one_of_is_lossless() -> None:
    branches = [
        {"type": "object", "properties": {"k": {"const": "a"}}, "required": ["k"]},
        {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]},
    ]
    assert one({"oneOf": branches}).strict


def test_overlapping_one_of_falls_back() -> None:
    assert fell_back({"oneOf": [{"type": "string"}, {"type": "string", "minLength": 2}]})


def test_single_member_all_of_is_unwrapped() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"allOf": [{"$ref": "#/$defs/A"}], "description": "d"}},
        "required": ["p"],
        "$defs": {"A": {"type": "string"}},
    }
    result = strict(schema)
    assert result.strict
    assert result.schema["properties"]["p"] == {"description": "d", "type": "string"}


def test_one_unmergeable_all_of_member_becomes_a_single_any_of() -> None:
    node = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "allOf": [{"$ref": "#/$defs/T"}],
    }
    schema = {
        "type": "object",
        "properties": {"p": node},
        "required": ["p"],
        "$defs": {
            "T": {
                "type": "object",
                "properties": {"t": {"$ref": "#/$defs/T"}},
                "required": ["t"],
                "additionalProperties": False,
            }
        },
    }
    result = strict(schema)
    assert result.strict
    assert result.schema["properties"]["p"]["anyOf"] == [{"$ref": "#/$defs/T"}]


def test_conflicting_all_of_falls_back() -> None:
    assert fell_back(
        {"allOf": [{"type": "string"}, {"minLength": 1}, {"type": "integer"}, {"type": "boolean"}]}
    )


def test_null_default_is_dropped() -> None:
    assert prop({"type": "string", "default": None}) == {"type": "string"}


def test_default_falls_back() -> None:
    assert fell_back({"type": "string", "default": "x"})


@pytest.mark.parametrize("fmt", ["date-time", "date", "email", "uuid", "ipv4"])
def test_supported_formats_pass(fmt: str) -> None:
    assert prop({"type": "string", "format": fmt}) == {"type": "string", "format": fmt}


def test_unsupported_format_falls_back() -> None:
    assert fell_back({"type": "string", "format": "uri"})


def test_simple_pattern_passes() -> None:
    assert prop({"type": "string", "pattern": "^a+$"}) == {"type": "string", "pattern": "^a+$"}


def test_lookaround_pattern_falls_back() -> None:
    assert fell_back({"type": "string", "pattern": "^(?!x)"})


@pytest.mark.parametrize(
    "extra",
    [
        {"uniqueItems": True},
        {"contains": {"type": "string"}},
        {"minContains": 1},
    ],
)
def test_unsupported_array_keywords_fall_back(extra: dict[str, Any]) -> None:
    assert fell_back({"type": "array", "items": {"type": "string"}, **extra})


def test_supported_keywords_pass() -> None:
    node = {"type": "integer", "minimum": 1, "maximum": 9, "exclusiveMaximum": 10, "multipleOf": 1}
    assert prop(node) == node


def test_length_limits_pass() -> None:
    node = {"type": "string", "minLength": 1, "maxLength": 5}
    assert prop(node) == node


def test_additional_properties_schema_falls_back() -> None:
    assert fell_back({"type": "object", "additionalProperties": {"type": "string"}})


def test_free_form_nested_object_falls_back() -> None:
    assert fell_back({"type": "object"})


def test_typeless_property_falls_back() -> None:
    assert fell_back({"description": "anything"})


def test_typeless_enum_gets_its_type() -> None:
    assert prop({"enum": ["a", "b"]}) == {"type": "string", "enum": ["a", "b"]}


def test_mixed_enum_splits_into_typed_branches() -> None:
    assert prop({"enum": ["a", 1]}) == {
        "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "integer", "enum": [1]}]
    }


def test_array_without_items_falls_back() -> None:
    assert fell_back({"type": "array"})


def test_untyped_items_fall_back() -> None:
    assert fell_back({"type": "array", "items": {}})


def test_tuple_falls_back() -> None:
    assert fell_back({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]})


def test_ref_with_siblings_is_wrapped() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/A", "description": "d"}},
        "required": ["p"],
        "$defs": {"A": {"type": "string"}},
    }
    result = strict(schema)
    assert result.strict
    assert result.schema["properties"]["p"] == {
        "anyOf": [{"$ref": "#/$defs/A"}],
        "description": "d",
    }


def test_non_defs_pointer_is_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}},
        "required": ["a", "b"],
    }
    result = strict(schema)
    assert result.strict
    assert result.schema["properties"]["b"] == {"type": "string"}


def test_recursive_defs_stay_strict() -> None:
    schema = {
        "type": "object",
        "properties": {"t": {"$ref": "#/$defs/T"}},
        "required": ["t"],
        "$defs": {
            "T": {
                "type": "object",
                "properties": {"c": {"type": "array", "items": {"$ref": "#/$defs/T"}}},
                "required": ["c"],
            }
        },
    }
    result = strict(schema)
    assert result.strict
    assert result.schema["$defs"]["T"]["additionalProperties"] is False


def test_any_of_objects_get_distinct_first_keys() -> None:
    branches = [
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a", "b"],
        },
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "c": {"type": "string"}},
            "required": ["a", "c"],
        },
    ]
    out = prop({"anyOf": branches})
    assert [list(b["properties"]) for b in out["anyOf"]] == [["a", "b"], ["c", "a"]]


def test_root_union_flattening_is_lossy_so_not_strict() -> None:
    schema = {
        "anyOf": [
            {"properties": {"a": {"type": "string"}}},
            {"properties": {"b": {"type": "string"}}},
        ]
    }
    assert not strict(schema).strict


def test_too_many_properties_falls_back() -> None:
    props = {f"p{i}": {"type": "string"} for i in range(5001)}
    result = strict({"type": "object", "properties": props, "required": list(props)})
    assert not result.strict


def test_fallback_keeps_the_requested_dialect_name() -> None:
    result = one({"type": "string", "format": "uri"})
    assert result.dialect == "openai-strict"
    assert [n.code for n in result.notes if n.code == "strict-fallback"] == ["strict-fallback"]


def test_strict_output_passes_the_strict_checker() -> None:
    node = {"type": "object", "properties": {"x": {"enum": [1, 2]}, "y": {"type": "boolean"}}}
    result = one(node)
    assert result.strict
    assert check_openai_strict(result.schema) == []


# --- the checker on its own


def test_checker_reports_missing_additional_properties() -> None:
    schema = {"type": "object", "properties": {}, "required": []}
    assert check_openai_strict(schema) == [
        "In context=(), 'additionalProperties' is required to be supplied and to be false."
    ]


def test_checker_reports_optional_properties() -> None:
    schema = {
        "type": "object",
        "properties": {"params": {"type": "string"}},
        "required": [],
        "additionalProperties": False,
    }
    assert check_openai_strict(schema) == [
        "In context=(), 'required' is required to be supplied and to be an array including "
        "every key in properties. Missing 'params'."
    ]


def test_checker_reports_default_and_missing_type() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"description": "x", "default": 1}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert check_openai_strict(schema) == [
        "In context=('properties', 'a'), 'default' is not permitted.",
        "In context=('properties', 'a'), schema must have a 'type' key.",
    ]


def test_checker_reports_root_union() -> None:
    assert check_openai_strict({"anyOf": []})[0].startswith("schema must have type 'object'")


def test_checker_reports_ref_siblings_and_pointer_refs() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": "#/properties/b", "description": "x"},
            "b": {"type": "string"},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert check_openai_strict(schema) == [
        "In context=('properties', 'a'), $ref cannot have keywords {'description'}.",
        "In context=('properties', 'a'), $ref '#/properties/b' must point to '#' or "
        "'#/$defs/<name>'.",
    ]


def test_checker_reports_shared_first_keys() -> None:
    branch = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {"u": {"anyOf": [branch, branch]}},
        "required": ["u"],
        "additionalProperties": False,
    }
    assert check_openai_strict(schema) == [
        "In context=('properties', 'u'), Objects provided via 'anyOf' must not share identical "
        "first keys ('a')."
    ]


def test_checker_reports_nesting_depth() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        node = {
            "type": "object",
            "properties": {"n": node},
            "required": ["n"],
            "additionalProperties": False,
        }
    assert check_openai_strict(node) == ["too much nesting: 12 levels > 10."]
