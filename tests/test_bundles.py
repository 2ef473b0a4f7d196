"""Every bundle built from the shipped definitions, validated offline with the official SDK
types, the 2020-12 meta-schema and our strict checker; plus the runtime's bundle API."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from anthropic.types import ToolParam
from google.genai import types as genai
from jsonschema import Draft202012Validator
from mcp_types import _v2025_11_25 as mcp_wire
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam
from toolc.schema import check_openai_strict, lint_tool_list

from tests.helpers import import_runtime
from tests.test_shipped import BUILD

BUNDLES = json.loads((BUILD / "toolc_runtime" / "bundles.json").read_text())["dialects"]
SCHEMA_KEY = {"openai": None, "openai-strict": None, "anthropic": "input_schema",
              "gemini-json": "parametersJsonSchema", "mcp": "inputSchema"}


def envelopes(dialect: str) -> list[tuple[str, dict[str, Any]]]:
    return sorted(BUNDLES[dialect]["tools"].items())


def schema_of(dialect: str, env: dict[str, Any]) -> dict[str, Any]:
    key = SCHEMA_KEY[dialect]
    return env["function"]["parameters"] if key is None else env[key]


@pytest.mark.parametrize("dialect", ["openai", "openai-strict"])
def test_openai_bundles(dialect: str) -> None:
    chat = pydantic.TypeAdapter(ChatCompletionToolParam)
    flat = pydantic.TypeAdapter(FunctionToolParam)
    for name, env in envelopes(dialect):
        chat.validate_python(env)
        responses = BUNDLES[dialect]["responses"][name]
        flat.validate_python(responses)
        assert "strict" in responses  # the Responses API defaults to strict: always explicit
        if env["function"]["strict"]:
            assert dialect == "openai-strict"
            assert check_openai_strict(env["function"]["parameters"]) == [], name


def test_anthropic_bundle() -> None:
    adapter = pydantic.TypeAdapter(ToolParam)
    for _, env in envelopes("anthropic"):
        assert adapter.validate_python(env)["input_schema"]["type"] == "object"


def test_gemini_bundle_passes_google_genai() -> None:
    for name, env in envelopes("gemini"):
        declaration = genai.FunctionDeclaration.model_validate(env)
        assert declaration.name == BUNDLES["gemini"]["wire"][name]
    genai.Tool.model_validate({"functionDeclarations": [e for _, e in envelopes("gemini")]})


def test_gemini_json_bundle() -> None:
    for _, env in envelopes("gemini-json"):
        genai.FunctionDeclaration.model_validate(env)


def test_mcp_bundle_passes_the_wire_model() -> None:
    for _, env in envelopes("mcp"):
        assert mcp_wire.Tool.model_validate(env).input_schema.type == "object"


@pytest.mark.parametrize("dialect", list(SCHEMA_KEY))
def test_json_schema_dialects_pass_the_meta_schema(dialect: str) -> None:
    for _, env in envelopes(dialect):
        Draft202012Validator.check_schema(schema_of(dialect, env))


@pytest.mark.parametrize("dialect", list(BUNDLES))
def test_every_bundle_lints_clean_per_tool(dialect: str) -> None:
    violations = lint_tool_list(dialect, [e for _, e in envelopes(dialect)])
    assert [v for v in violations if v.tool is not None] == []


def test_runtime_tool_definitions_and_decode_call() -> None:
    rt = import_runtime(BUILD, "toolc_runtime")
    tools = rt.resolve(agent_id="coder", model_provider="anthropic", sender_is_owner=True)
    defs = rt.tool_definitions(tools, "anthropic")
    # 2026.9's catalog opens with ls (no Claude Code name), then the aliased file tools.
    assert [d["name"] for d in defs][:4] == ["ls", "Read", "Write", "Edit"]  # Claude Code names
    assert "file_path" in defs[1]["input_schema"]["properties"]  # the alias property
    assert rt.dialect_for("google") == "gemini-json" and rt.dialect_for("openai") == "openai"
    assert rt.dialect_for("openai", "gpt-5-strict") == "openai-strict"
    assert rt.dialect_for("google-antigravity-anthropic") == rt.dialect_for("unknown")
    name, args = rt.decode_call("Read", {"file_path": "/a"}, "anthropic")
    assert (name, args) == ("read", {"path": "/a"})
    with pytest.raises(ValueError, match=r"^Missing required parameter: path \(path or "
                       r"file_path\)\. Supply correct parameters before retrying\.$"):
        rt.decode_call("Read", {"offset": 3}, "anthropic")
    with pytest.raises(PermissionError):
        rt.decode_call("gateway", {}, "anthropic", toolset=rt.resolve(agent_id="viewer"))
    grep = rt.decode_call("grep", {"pattern": "x", "dash_A": 2}, "google-vertex")
    assert grep == ("grep", {"pattern": "x", "-A": 2})
    responses = rt.tool_definitions(tools, "openai", api="responses")
    assert all(r["type"] == "function" and "strict" in r for r in responses)


def test_generated_models_validate_call_arguments() -> None:
    rt = import_runtime(BUILD, "toolc_runtime")
    assert rt.validate_args("read", {"path": "/a", "offset": 2}).path == "/a"
    with pytest.raises(ValueError, match="path"):
        rt.validate_args("read", {"path": 3})
    with pytest.raises(ValueError, match="command"):
        rt.decode_call("exec", {"command": 5}, "openai")  # validated before execution
    assert rt.decode_call("exec", {"command": 5}, "openai", validate=False)[0] == "exec"
    grep = rt.validate_args("grep", {"pattern": "x", "-A": 2})
    assert grep.model_dump(by_alias=True, exclude_none=True)["-A"] == 2
    assert rt.resolve(agent_id="viewer")["read"].model == "ReadParams"
