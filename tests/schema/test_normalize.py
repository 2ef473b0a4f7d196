"""Shared normalization: one rule per test, a small schema in and an exact dict out."""

from __future__ import annotations

from typing import Any

from toolc.schema import normalize_schema


def norm(schema: Any) -> dict[str, Any]:
    return normalize_schema(schema)[0]


def codes(schema: Any) -> list[str]:
    return [n.code for n in normalize_schema(schema)[1]]


def test_boolean_exclusive_minimum_becomes_the_bound() -> None:
    schema = {"type": "object", "properties": {"n": {"minimum": 5, "exclusiveMinimum": True}}}
    assert norm(schema)["properties"]["n"] == {"exclusiveMinimum": 5}


def test_false_exclusive_maximum_is_dropped_and_maximum_kept() -> None:
    schema = {"type": "object", "properties": {"n": {"maximum": 9, "exclusiveMaximum": False}}}
    assert norm(schema)["properties"]["n"] == {"maximum": 9}


def test_list_items_become_prefix_items_and_additional_items_becomes_items() -> None:
    node = {"type": "array", "items": [{"type": "string"}], "additionalItems": False}
    out = norm({"type": "object", "properties": {"t": node}})["properties"]["t"]
    assert out == {"type": "array", "prefixItems": [{"type": "string"}], "items": False}


def test_definitions_become_defs_and_refs_follow() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/A"}},
        "definitions": {"A": {"type": "string"}},
    }
    assert norm(schema) == {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}},
    }


def test_ref_into_tuple_items_follows_the_prefix_items_rename() -> None:
    schema = {
        "type": "object",
        "properties": {
            "t": {"items": [{"type": "string"}]},
            "u": {"$ref": "#/properties/t/items/0"},
        },
    }
    assert norm(schema)["properties"]["u"] == {"$ref": "#/properties/t/prefixItems/0"}


def test_property_named_definitions_is_not_renamed() -> None:
    schema = {"type": "object", "properties": {"definitions": {"type": "string"}}}
    assert norm(schema) == schema


def test_anchor_refs_become_pointers() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#thing"}},
        "$defs": {"T": {"$anchor": "thing", "type": "string"}},
    }
    assert norm(schema)["properties"]["a"] == {"$ref": "#/$defs/T"}
    assert norm(schema)["$defs"]["T"] == {"type": "string"}


def test_meta_keywords_are_stripped_everywhere() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": "urn:x",
        "$comment": "c",
        "type": "object",
        "properties": {"a": {"type": "string", "$comment": "inner", "id": "old"}},
    }
    assert norm(schema) == {"type": "object", "properties": {"a": {"type": "string"}}}


def test_property_called_id_survives() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}}
    assert norm(schema) == schema


def test_dependencies_split_by_kind() -> None:
    schema = {"type": "object", "dependencies": {"a": ["b"], "c": {"required": ["d"]}}}
    assert norm(schema) == {
        "type": "object",
        "dependentRequired": {"a": ["b"]},
        "dependentSchemas": {"c": {"required": ["d"]}},
    }


def test_draft3_property_required_is_lifted() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "required": True}}}
    assert norm(schema) == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
    }


def test_openapi_nullable_becomes_a_null_type() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}}
    assert norm(schema)["properties"]["a"] == {"type": ["string", "null"]}


def test_nullable_enum_gets_a_null_value() -> None:
    node = {"type": "string", "enum": ["x"], "nullable": True}
    out = norm({"type": "object", "properties": {"a": node}})["properties"]["a"]
    assert out == {"type": ["string", "null"], "enum": ["x", None]}


def test_type_enum_is_repaired_from_the_values() -> None:
    node = {"type": "enum", "enum": ["a", "b"]}
    assert norm({"type": "object", "properties": {"a": node}})["properties"]["a"] == {
        "type": "string",
        "enum": ["a", "b"],
    }


def test_root_type_object_is_added() -> None:
    assert norm({"properties": {"a": {"type": "string"}}}) == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
    }


def test_empty_schema_becomes_an_object() -> None:
    assert norm({}) == {"type": "object"}


def test_null_parameters_become_an_empty_object_with_a_warning() -> None:
    schema, notes = normalize_schema(None)  # type: ignore[arg-type]
    assert schema == {"type": "object"}
    assert [n.severity for n in notes if n.code == "parameters-null"] == ["warning"]


def test_list_parameters_are_an_error() -> None:
    _, notes = normalize_schema([])  # type: ignore[arg-type]
    assert [n.code for n in notes if n.severity == "error"] == ["parameters-not-object"]


def test_non_object_root_type_is_an_error() -> None:
    assert "root-not-object" in codes({"type": "string"})


def test_root_type_list_with_object_narrows() -> None:
    assert norm({"type": ["object", "null"]}) == {"type": "object"}


def test_root_ref_is_inlined() -> None:
    schema = {"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object", "properties": {}}}}
    assert norm(schema) == {
        "type": "object",
        "properties": {},
        "$defs": {"Args": {"type": "object", "properties": {}}},
    }


def test_root_any_of_is_flattened_with_required_of_every_variant() -> None:
    schema = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "k": {"type": "string"}},
                "required": ["a", "k"],
            },
            {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b", "k"]},
        ]
    }
    assert norm(schema) == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "k": {"type": "string"},
            "b": {"type": "string"},
        },
        "required": ["k"],
        "description": "(anyOf: at least one of {a*, k*} | {b*, k*})",
    }


def test_root_one_of_flattening_merges_enum_properties() -> None:
    schema = {
        "oneOf": [
            {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
            {"properties": {"kind": {"enum": ["b", "c"]}}, "required": ["kind"]},
        ]
    }
    assert norm(schema) == {
        "type": "object",
        "properties": {"kind": {"type": "string", "enum": ["a", "b", "c"]}},
        "required": ["kind"],
        "description": "(oneOf: exactly one of {kind*} | {kind*})",
    }


def test_root_union_flattening_keeps_top_level_required() -> None:
    schema = {
        "type": "object",
        "required": ["q"],
        "properties": {"q": {"type": "string"}},
        "anyOf": [{"required": ["x"]}, {"required": ["y"]}],
    }
    out = norm(schema)
    assert out["required"] == ["q"]
    assert out["description"] == "(anyOf: at least one of {x*} | {y*})"


def test_root_union_flattening_is_lossy() -> None:
    schema = {"anyOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}
    notes = normalize_schema(schema)[1]
    assert [(n.code, n.lossy) for n in notes] == [("root-union-flattened", True)]


def test_single_variant_root_union_is_lossless() -> None:
    schema = {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}}]}
    out, notes = normalize_schema(schema)
    assert out == {"type": "object", "properties": {"a": {"type": "string"}}}
    assert not any(n.lossy for n in notes)


def test_root_union_variants_behind_refs_are_resolved() -> None:
    schema = {
        "anyOf": [{"$ref": "#/$defs/A"}],
        "$defs": {"A": {"type": "object", "properties": {"a": {"type": "string"}}}},
    }
    assert norm(schema)["properties"] == {"a": {"type": "string"}}


def test_root_all_of_is_merged() -> None:
    schema = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]
    }
    assert norm(schema) == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }


def test_flattening_can_be_turned_off_for_mcp() -> None:
    schema = {"anyOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]}
    out, _ = normalize_schema(schema, flatten_root_union=False)
    assert out == {"type": "object", **schema}


def test_input_is_not_mutated() -> None:
    schema = {"properties": {"a": {"type": "string", "nullable": True}}, "definitions": {}}
    before = repr(schema)
    normalize_schema(schema)
    assert repr(schema) == before
