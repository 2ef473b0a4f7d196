"""The provider error texts of provider-schemas.md section 3 as negative tests.

Each trigger is either repaired by `clean_schema` (the raw schema lints with the provider's
complaint, the cleaned one lints clean) or reported (by `lint_tool_list` or an error note).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from toolc.schema import clean_schema, lint_tool_list, tool_envelope


def raw_envelope(
    dialect: str, schema: Any, *, name: str = "tool", strict: bool = False
) -> dict[str, Any]:
    """An envelope holding `schema` exactly as given (not cleaned)."""
    if dialect in ("openai", "openai-strict"):
        fn = {"name": name, "description": "d", "parameters": schema, "strict": strict}
        return {"type": "function", "function": fn}
    key = {
        "anthropic": "input_schema",
        "gemini": "parameters",
        "gemini-json": "parametersJsonSchema",
        "mcp": "inputSchema",
    }[dialect]
    return {"name": name, "description": "d", key: schema}


def lint_messages(dialect: str, envelopes: list[dict[str, Any]]) -> list[str]:
    return [v.message for v in lint_tool_list(dialect, envelopes)]


def cleaned_envelope(dialect: str, schema: Any) -> dict[str, Any]:
    cleaned = clean_schema(schema, dialect)
    assert cleaned.errors == (), cleaned.errors
    return tool_envelope(dialect, name="tool", description="d", cleaned=cleaned)


@dataclass(frozen=True)
class Case:
    number: int
    dialect: str
    schema: Any
    error: str  # a fragment of the provider's complaint our lint reproduces
    strict: bool = False


def props(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


REPAIRED = [
    Case(
        1,
        "openai-strict",
        {**props(params={"type": "string"}), "additionalProperties": False},
        "'required' is required to be supplied and to be an array including every key in "
        "properties. Missing 'params'.",
        strict=True,
    ),
    Case(
        2,
        "openai-strict",
        {
            **props(
                value={"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
            ),
            "required": ["value"],
            "additionalProperties": False,
        },
        "In context=('properties', 'value'), 'additionalProperties' is required to be supplied "
        "and to be false.",
        strict=True,
    ),
    Case(
        3,
        "openai",
        props(paths={"type": "array"}),
        "In context=('properties', 'paths'), array schema missing items.",
    ),
    Case(
        4,
        "openai",
        props(
            figsize={
                "anyOf": [
                    {"type": "array", "prefixItems": [{"type": "number"}] * 2},
                    {"type": "null"},
                ]
            }
        ),
        "In context=('properties', 'figsize', 'anyOf', '0'), array schema missing items.",
    ),
    Case(5, "openai", {"type": "object"}, "In context=(), object schema missing properties."),
    Case(
        6,
        "openai",
        {"anyOf": [props(a={"type": "string"}), props(b={"type": "string"})]},
        "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at "
        "the top level",
    ),
    Case(
        7,
        "openai-strict",
        {
            **props(method_name_filter={"description": "x"}),
            "required": ["method_name_filter"],
            "additionalProperties": False,
        },
        "In context=('properties', 'method_name_filter'), schema must have a 'type' key.",
        strict=True,
    ),
    Case(
        9,
        "openai-strict",
        {
            **props(placeholder={"type": "string", "default": "x"}),
            "required": ["placeholder"],
            "additionalProperties": False,
        },
        "In context=('properties', 'placeholder'), 'default' is not permitted.",
        strict=True,
    ),
    Case(
        10,
        "openai-strict",
        {
            **props(
                u={
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                            "required": ["a", "b"],
                            "additionalProperties": False,
                        },
                        {
                            "type": "object",
                            "properties": {"a": {"type": "string"}, "c": {"type": "string"}},
                            "required": ["a", "c"],
                            "additionalProperties": False,
                        },
                    ]
                }
            ),
            "required": ["u"],
            "additionalProperties": False,
        },
        "Objects provided via 'anyOf' must not share identical first keys",
        strict=True,
    ),
    Case(
        14,
        "openai-strict",
        {
            **props(tags={"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
            "required": ["tags"],
            "additionalProperties": False,
        },
        "'uniqueItems' is not permitted.",
        strict=True,
    ),
    Case(
        15,
        "anthropic",
        {"oneOf": [props(a={"type": "string"}), props(b={"type": "string"})]},
        "not have 'oneOf'/'anyOf'/'allOf'",
    ),
    Case(
        16,
        "anthropic",
        props(n={"type": "number", "minimum": 0, "exclusiveMinimum": True}),
        "JSON schema is invalid (draft 2020-12): True is not of type 'number'.",
    ),
    Case(17, "anthropic", {"properties": {"a": {"type": "string"}}}, "Field required"),
    Case(
        21,
        "gemini",
        props(kind={"anyOf": [{"const": "circle"}, {"const": "square"}]}),
        'Unknown name "const"',
    ),
    Case(
        22,
        "gemini",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **props(
                m={
                    "type": "object",
                    "additionalProperties": True,
                    "propertyNames": {"pattern": "^a"},
                }
            ),
        },
        'Unknown name "$schema"',
    ),
    Case(
        23,
        "gemini",
        props(tags={"type": ["array", "null"], "items": {"type": "string"}}),
        "Proto field is not repeating, cannot start list.",
    ),
    Case(
        24,
        "gemini",
        props(accountability={"type": "integer", "enum": [1, 2]}),
        "enum: only allowed for STRING type",
    ),
    Case(
        25,
        "gemini",
        props(url={"type": "string", "format": "uri"}),
        "only 'enum' and 'date-time' are supported for STRING type",
    ),
    Case(
        26,
        "gemini",
        props(params={"type": "object", "properties": {}}),
        "properties: should be non-empty for OBJECT type.",
    ),
    Case(27, "gemini", props(system_tools={"type": "array"}), "items: missing field."),
    Case(29, "gemini", props(kind={"type": "enum", "enum": ["a", "b"]}), "Invalid value at"),
    Case(
        30,
        "gemini-json",
        {
            **props(q={"$ref": "#/$defs/QuestionOption", "type": "object"}),
            "$defs": {
                "QuestionOption": {"type": "object", "properties": {"x": {"type": "string"}}}
            },
        },
        "$ref '#/$defs/QuestionOption' was set alongside unsupported fields",
    ),
    Case(
        32,
        "gemini-json",
        props(a={"type": "string", "title": "A"}),
        "title is not allowed (MALFORMED_FUNCTION_CALL)",
    ),
    Case(
        32,
        "gemini",
        props(a={"type": "STRING", "title": "A"}),
        "title is not allowed (MALFORMED_FUNCTION_CALL)",
    ),
    Case(
        33,
        "gemini",
        {"properties": {"a": {"type": "string"}}},
        "functionDeclaration parameters schema should be of type OBJECT.",
    ),
]


@pytest.mark.parametrize("case", REPAIRED, ids=lambda c: f"{c.number}-{c.dialect}")
def test_trigger_is_linted_raw_and_repaired_by_cleaning(case: Case) -> None:
    raw = lint_messages(case.dialect, [raw_envelope(case.dialect, case.schema, strict=case.strict)])
    assert any(case.error in m for m in raw), raw
    assert lint_messages(case.dialect, [cleaned_envelope(case.dialect, case.schema)]) == []


def test_8_parameters_list_or_null() -> None:
    for bad in ([], None):
        raw = lint_messages("openai", [raw_envelope("openai", bad)])
        assert raw == [f"{bad!r} is not of type 'object', 'boolean'"]
    assert clean_schema(None, "openai").schema == {"type": "object", "properties": {}}  # type: ignore[arg-type]
    assert [n.code for n in clean_schema([], "openai").errors] == ["parameters-not-object"]  # type: ignore[arg-type]


def test_11_19_20_28_tool_names() -> None:
    assert lint_messages("openai", [raw_envelope("openai", props(), name="a.b c")]) == [
        "tool name 'a.b c' does not match the pattern '^[a-zA-Z0-9_-]{1,64}$'."
    ]
    assert lint_tool_list("anthropic", [raw_envelope("anthropic", props(), name="fs/read")])
    long_name = "mcp__" + "server" * 8 + "__" + "tool" * 6
    assert lint_tool_list("anthropic", [raw_envelope("anthropic", props(), name=long_name)])
    assert lint_tool_list("gemini", [raw_envelope("gemini", props(), name="1tool")])
    assert lint_tool_list("gemini", [raw_envelope("gemini", props(), name="ok_name.v2")]) == []


def test_12_too_many_tools() -> None:
    envelopes = [raw_envelope("openai", props(), name=f"t{i}") for i in range(133)]
    assert lint_messages("openai", envelopes) == [
        "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an "
        "array with length 133 instead."
    ]


def test_13_description_too_long() -> None:
    env = raw_envelope("openai", props())
    env["function"]["description"] = "x" * 1103
    assert lint_messages("openai", [env]) == [
        "string too long. Expected a string with maximum length 1024, but got a string with "
        "length 1103 instead."
    ]


def test_18_duplicate_names() -> None:
    envelopes = [raw_envelope("anthropic", props(), name="read")] * 2
    assert lint_messages("anthropic", envelopes) == [
        "Tool names must be unique ('read' appears 2 times)."
    ]


def test_31_36_unresolved_refs_are_reported() -> None:
    schema = props(target_object={"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Missing"}]})
    for dialect in ("gemini-json", "mcp"):
        raw = lint_messages(dialect, [raw_envelope(dialect, schema)])
        assert any("can't resolve reference #/$defs/Missing" in m for m in raw), raw
        assert [n.code for n in clean_schema(schema, dialect).errors] == ["ref-unresolved"]


def test_anthropic_strict_limits() -> None:
    optional = props(**{f"o{i}": {"type": "string"} for i in range(25)})
    env = {**raw_envelope("anthropic", {**optional, "additionalProperties": False}), "strict": True}
    assert lint_messages("anthropic", [env]) == ["25 optional parameters in strict tools > 24."]
    recursive = {
        **props(t={"$ref": "#/$defs/T"}),
        "additionalProperties": False,
        "$defs": {
            "T": {
                "type": "object",
                "properties": {"c": {"$ref": "#/$defs/T"}},
                "additionalProperties": False,
            }
        },
    }
    env = {**raw_envelope("anthropic", recursive), "strict": True}
    assert [v.code for v in lint_tool_list("anthropic", [env])] == ["anthropic-strict-recursion"]


def test_anthropic_strict_tool_count() -> None:
    closed = {**props(), "additionalProperties": False}
    envs = [{**raw_envelope("anthropic", closed, name=f"t{i}"), "strict": True} for i in range(21)]
    assert lint_messages("anthropic", envs) == ["21 strict tools > 20."]


def test_missing_schema_is_reported_where_required() -> None:
    env = {"name": "t", "description": "d"}
    assert lint_messages("anthropic", [env]) == ["input_schema: Field required."]
    assert lint_messages("gemini", [env]) == []


def test_gemini_parameters_and_json_schema_together_are_reported() -> None:
    env = {
        **raw_envelope("gemini", {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}),
        "parametersJsonSchema": {"type": "object"},
    }
    assert [v.code for v in lint_tool_list("gemini", [env])] == ["schema-conflict"]
