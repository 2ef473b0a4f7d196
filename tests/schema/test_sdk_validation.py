"""Offline validation of cleaned tools with the official SDK types (provider-schemas.md
section 4) plus the draft 2020-12 meta-schema and our own checkers."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator
from toolc.schema import (
    DIALECTS,
    check_openai_strict,
    clean_schema,
    lint_tool_list,
    responses_envelope,
    tool_envelope,
)

# The seven samples of the section-4 experiment plus two real tools.
SAMPLES: dict[str, dict[str, Any]] = {
    "A-root-anyof": {
        "anyOf": [
            {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
            {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        ]
    },
    "B-ref-defs": {
        "type": "object",
        "properties": {"item": {"$ref": "#/$defs/Item"}},
        "required": ["item"],
        "$defs": {
            "Item": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            }
        },
    },
    "C-format-pattern": {
        "type": "object",
        "properties": {"email": {"type": "string", "format": "email", "pattern": "^[^@]+@[^@]+$"}},
    },
    "D-const": {"type": "object", "properties": {"kind": {"const": "circle"}}},
    "E-type-list": {
        "type": "object",
        "properties": {"note": {"type": ["string", "null"]}},
        "additionalProperties": False,
    },
    "F-meta": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Args",
        "type": "object",
        "properties": {
            "n": {"type": "integer", "exclusiveMinimum": 0, "default": 1, "examples": [2]}
        },
    },
    "G-recursive": {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
    },
    "grep": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": {"type": "string"},
            "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
            "-A": {"type": "number"},
            "-i": {"type": "boolean"},
            "head_limit": {"type": "number"},
        },
        "required": ["pattern"],
        "additionalProperties": False,
        "$schema": "http://json-schema.org/draft-07/schema#",
    },
    "todo": {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {
                            "type": "string",
                            "enum": ["pending", "in_progress", "completed"],
                        },
                    },
                    "required": ["content", "status"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["todos"],
        "additionalProperties": False,
    },
}
JSON_DIALECTS = [d for d in DIALECTS if d != "gemini"]
# Gemini cannot express recursion: that sample is a build error there, by design.
EXPECTED_ERRORS = {("gemini", "G-recursive")}
CASES = [(d, s) for d in DIALECTS for s in SAMPLES if (d, s) not in EXPECTED_ERRORS]


def envelope(dialect: str, sample: str) -> dict[str, Any]:
    cleaned = clean_schema(SAMPLES[sample], dialect)
    assert cleaned.errors == ()
    return tool_envelope(dialect, name="tool_1", description="A tool.", cleaned=cleaned)


@pytest.mark.parametrize(("dialect", "sample"), CASES)
def test_cleaned_tools_lint_clean(dialect: str, sample: str) -> None:
    assert lint_tool_list(dialect, [envelope(dialect, sample)]) == []


@pytest.mark.parametrize("dialect", JSON_DIALECTS)
@pytest.mark.parametrize("sample", SAMPLES)
def test_json_dialects_pass_the_2020_12_meta_schema(dialect: str, sample: str) -> None:
    Draft202012Validator.check_schema(clean_schema(SAMPLES[sample], dialect).schema)


def test_gemini_recursion_is_a_build_error() -> None:
    assert [n.code for n in clean_schema(SAMPLES["G-recursive"], "gemini").errors] == [
        "ref-recursive"
    ]


@pytest.mark.parametrize("sample", SAMPLES)
def test_strict_results_pass_the_strict_checker(sample: str) -> None:
    cleaned = clean_schema(SAMPLES[sample], "openai-strict")
    if cleaned.strict:
        assert check_openai_strict(cleaned.schema) == []


def test_strict_decisions_per_sample() -> None:
    strict = {s for s in SAMPLES if clean_schema(SAMPLES[s], "openai-strict").strict}
    # A loses its root union, F its default (both would be lossy in strict mode).
    assert strict == {
        "B-ref-defs",
        "C-format-pattern",
        "D-const",
        "E-type-list",
        "G-recursive",
        "grep",
        "todo",
    }


# --- google-genai


@pytest.mark.parametrize("sample", [s for s in SAMPLES if ("gemini", s) not in EXPECTED_ERRORS])
def test_google_genai_accepts_gemini_declarations(sample: str) -> None:
    types = pytest.importorskip("google.genai.types")
    declaration = types.FunctionDeclaration.model_validate(envelope("gemini", sample))
    assert declaration.name == "tool_1"


@pytest.mark.parametrize("sample", ["D-const", "E-type-list", "B-ref-defs", "F-meta"])
def test_google_genai_rejects_the_raw_samples(sample: str) -> None:
    types = pytest.importorskip("google.genai.types")
    raw = {"name": "tool_1", "parameters": SAMPLES[sample]}
    with pytest.raises(Exception):  # noqa: B017 - ValidationError, or the SDK crashes on lists
        types.FunctionDeclaration.model_validate(raw)


@pytest.mark.parametrize("sample", ["B-ref-defs", "D-const", "E-type-list", "F-meta", "todo"])
def test_google_genai_json_schema_model_accepts_gemini_json(sample: str) -> None:
    # JSONSchema is an approximate allow-list (it lacks prefixItems/propertyOrdering).
    types = pytest.importorskip("google.genai.types")
    types.JSONSchema.model_validate(clean_schema(SAMPLES[sample], "gemini-json").schema)
    declaration = types.FunctionDeclaration.model_validate(envelope("gemini-json", sample))
    assert declaration.parameters is None


# --- MCP


@pytest.mark.parametrize("sample", SAMPLES)
def test_mcp_wire_tool_model_accepts(sample: str) -> None:
    wire = pytest.importorskip("mcp_types._v2025_11_25")
    tool = wire.Tool.model_validate(envelope("mcp", sample))
    assert tool.input_schema.type == "object"


def test_mcp_tool_name_validation() -> None:
    names = pytest.importorskip("mcp.shared.tool_name_validation")
    assert names.validate_tool_name("tool_1").is_valid


# --- OpenAI and Anthropic envelopes (TypedDicts through pydantic)


@pytest.mark.parametrize("sample", SAMPLES)
@pytest.mark.parametrize("dialect", ["openai", "openai-strict"])
def test_openai_envelopes_validate(dialect: str, sample: str) -> None:
    pydantic = pytest.importorskip("pydantic")
    chat = pytest.importorskip("openai.types.chat")
    responses = pytest.importorskip("openai.types.responses")
    pydantic.TypeAdapter(chat.ChatCompletionToolParam).validate_python(envelope(dialect, sample))
    cleaned = clean_schema(SAMPLES[sample], dialect)
    flat = responses_envelope(name="tool_1", description="A tool.", cleaned=cleaned)
    pydantic.TypeAdapter(responses.FunctionToolParam).validate_python(flat)


@pytest.mark.parametrize("sample", SAMPLES)
def test_anthropic_envelope_validates(sample: str) -> None:
    pydantic = pytest.importorskip("pydantic")
    types = pytest.importorskip("anthropic.types")
    env = envelope("anthropic", sample)
    validated = pydantic.TypeAdapter(types.ToolParam).validate_python(env)
    assert validated["input_schema"]["type"] == "object"
