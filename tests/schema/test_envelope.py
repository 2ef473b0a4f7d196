"""Wire objects per dialect."""

from __future__ import annotations

import pytest
from toolc.schema import clean_schema, responses_envelope, tool_envelope

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def test_openai_chat_envelope_says_strict_false() -> None:
    cleaned = clean_schema(SCHEMA, "openai")
    assert tool_envelope("openai", name="search", description="Find.", cleaned=cleaned) == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Find.",
            "parameters": cleaned.schema,
            "strict": False,
        },
    }


def test_openai_strict_envelope_takes_the_flag_from_the_cleaning() -> None:
    cleaned = clean_schema(SCHEMA, "openai-strict")
    env = tool_envelope("openai-strict", name="search", description="Find.", cleaned=cleaned)
    assert env["function"]["strict"] is True
    lossy = clean_schema(
        {"type": "object", "properties": {"u": {"format": "uri"}}}, "openai-strict"
    )
    env = tool_envelope("openai-strict", name="search", description="Find.", cleaned=lossy)
    assert env["function"]["strict"] is False


def test_responses_envelope_is_flat_and_always_has_strict() -> None:
    cleaned = clean_schema(SCHEMA, "openai")
    assert responses_envelope(name="search", description="Find.", cleaned=cleaned) == {
        "type": "function",
        "name": "search",
        "description": "Find.",
        "parameters": cleaned.schema,
        "strict": False,
    }
    strict = clean_schema(SCHEMA, "openai-strict")
    assert responses_envelope(name="s", description="d", cleaned=strict)["strict"] is True


def test_anthropic_envelope() -> None:
    cleaned = clean_schema(SCHEMA, "anthropic")
    assert tool_envelope("anthropic", name="search", description="Find.", cleaned=cleaned) == {
        "name": "search",
        "description": "Find.",
        "input_schema": SCHEMA,
    }


def test_gemini_envelope() -> None:
    cleaned = clean_schema(SCHEMA, "gemini")
    assert tool_envelope("gemini", name="search", description="Find.", cleaned=cleaned) == {
        "name": "search",
        "description": "Find.",
        "parameters": {
            "type": "OBJECT",
            "properties": {"q": {"type": "STRING"}},
            "required": ["q"],
        },
    }


def test_gemini_envelope_omits_parameters_without_arguments() -> None:
    cleaned = clean_schema({"type": "object", "properties": {}}, "gemini")
    assert tool_envelope("gemini", name="now", description="Time.", cleaned=cleaned) == {
        "name": "now",
        "description": "Time.",
    }


def test_gemini_json_envelope() -> None:
    cleaned = clean_schema(SCHEMA, "gemini-json")
    assert tool_envelope("gemini-json", name="search", description="Find.", cleaned=cleaned) == {
        "name": "search",
        "description": "Find.",
        "parametersJsonSchema": SCHEMA,
    }


def test_mcp_envelope_with_optional_title() -> None:
    cleaned = clean_schema(SCHEMA, "mcp")
    assert tool_envelope("mcp", name="search", description="Find.", cleaned=cleaned) == {
        "name": "search",
        "description": "Find.",
        "inputSchema": SCHEMA,
    }
    titled = tool_envelope("mcp", name="s", description="d", cleaned=cleaned, title="Search")
    assert titled["title"] == "Search"


def test_dialect_mismatch_is_refused() -> None:
    cleaned = clean_schema(SCHEMA, "anthropic")
    with pytest.raises(ValueError, match="cleaned for 'anthropic'"):
        tool_envelope("openai", name="s", description="d", cleaned=cleaned)
    with pytest.raises(ValueError, match="openai dialect"):
        responses_envelope(name="s", description="d", cleaned=cleaned)


def test_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown dialect"):
        clean_schema(SCHEMA, "bedrock")
