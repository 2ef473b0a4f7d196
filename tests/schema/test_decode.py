"""decode_call_args: provider arguments back to the tool's own names and optionality."""

from __future__ import annotations

from toolc.schema import clean_schema, decode_call_args

GREP = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string"},
        "-A": {"type": "integer"},
        "opts": {"type": "object", "properties": {"-i": {"type": "boolean"}}},
        "globs": {"type": "array", "items": {"type": "object", "properties": {"x.y": {}}}},
    },
    "required": ["pattern"],
}


def test_gemini_wire_names_are_reversed_at_every_depth() -> None:
    cleaned = clean_schema(GREP, "gemini")
    args = {"pattern": "a", "dash_A": 2, "opts": {"dash_i": True}, "globs": [{"x_y": "1"}]}
    assert decode_call_args(args, cleaned) == {
        "pattern": "a",
        "-A": 2,
        "opts": {"-i": True},
        "globs": [{"x.y": "1"}],
    }


def test_gemini_json_renames_inside_defs_are_reversed() -> None:
    schema = {
        "type": "object",
        "properties": {"o": {"$ref": "#/$defs/O"}},
        "$defs": {"O": {"type": "object", "properties": {"-C": {"type": "integer"}}}},
    }
    cleaned = clean_schema(schema, "gemini-json")
    assert decode_call_args({"o": {"dash_C": 3}}, cleaned) == {"o": {"-C": 3}}


def test_strict_nulls_of_optional_properties_are_omitted() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": ["string", "null"]},
            "n": {"type": "integer"},
            "o": {
                "type": "object",
                "properties": {"k": {"type": "string"}},
                "additionalProperties": False,
            },
        },
        "required": ["q"],
    }
    cleaned = clean_schema(schema, "openai-strict")
    assert cleaned.strict
    args = {"q": None, "n": None, "o": {"k": None}}
    assert decode_call_args(args, cleaned) == {"q": None, "o": {}}


def test_any_of_branches_are_followed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "u": {
                "anyOf": [
                    {"type": "object", "properties": {"-a": {"type": "string"}}},
                    {"type": "object", "properties": {"-b": {"type": "string"}}},
                ]
            }
        },
    }
    cleaned = clean_schema(schema, "gemini-json")
    assert decode_call_args({"u": {"dash_b": "x"}}, cleaned) == {"u": {"-b": "x"}}


def test_nothing_to_undo_returns_a_copy() -> None:
    cleaned = clean_schema({"type": "object", "properties": {}}, "anthropic")
    args = {"a": 1}
    out = decode_call_args(args, cleaned)
    assert out == args
    assert out is not args
