"""Decoding a provider's tool call in the generated runtime: exact wire names, strict
validation that returns the validated values, and only verified code and data."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest
from toolc.api import compile_files
from toolc.pipeline.writer import publish

from tests.helpers import import_runtime, write_definitions

CATALOG = [
    {"name": "exec", "description": "Run a command.", "parameters": {
        "type": "object", "additionalProperties": False, "required": ["command"],
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"},
                       "elevated": {"type": "boolean"},
                       "host": {"type": "string", "enum": ["sandbox", "gateway"]},
                       "yieldMs": {"type": "integer", "default": 10000}}}},
    {"name": "read_file", "description": "Read a file.", "wireNames": {"anthropic": "Read"},
     "paramAliases": {"file_path": "path"}, "parameters": {
         "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}},
    {"name": "grep", "description": "Search.", "parameters": {
        "type": "object", "required": ["pattern"],
        "properties": {"pattern": {"type": "string"}, "-A": {"type": "integer"}}}},
]
_count = [0]


def _runtime(tmp: Path, *, models: bool = True) -> tuple[ModuleType, Path]:
    defs = write_definitions(tmp / "defs", {"d.yaml": {"catalog": CATALOG}})
    _count[0] += 1
    package = f"toolc_calls_{_count[0]}"
    files, _, _ = compile_files(defs, package=package, with_models=models)
    publish(files, tmp / "out")
    return import_runtime(tmp / "out", package), tmp / "out" / package


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    return _runtime(tmp_path_factory.mktemp("calls"))[0]


# -- 5: strict validation, validated values returned --------------------------------------------
@pytest.mark.parametrize("bad", [{"elevated": "false"}, {"timeout": "30"}, {"timeout": True},
                                 {"elevated": 1}, {"host": "elsewhere"}, {"command": 5},
                                 {"nope": 1}])
def test_ambiguous_json_types_are_refused(rt: ModuleType, bad: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        rt.decode_call("exec", {"command": "ls", **bad}, "openai")


def test_decode_returns_the_validated_values(rt: ModuleType) -> None:
    name, args = rt.decode_call("exec", {"command": "ls", "timeout": 30, "elevated": False,
                                         "host": "sandbox"}, "openai")
    assert name == "exec"
    assert args == {"command": "ls", "timeout": 30, "elevated": False, "host": "sandbox"}
    assert args["elevated"] is False  # not the truthy string "false"
    assert "yieldMs" not in args  # defaults stay the tool's business: only what was sent


def test_arguments_may_be_json_text(rt: ModuleType) -> None:
    assert rt.decode_call("exec", '{"command": "ls", "timeout": 5}', "openai") == (
        "exec", {"command": "ls", "timeout": 5})
    assert rt.decode_call("exec", b'{"command": "ls"}', "openai")[1] == {"command": "ls"}
    for text in ('["ls"]', "{not json"):
        with pytest.raises(ValueError, match="exec: arguments"):
            rt.decode_call("exec", text, "openai")


def test_aliased_and_renamed_properties_come_back_under_their_json_names(rt: ModuleType
                                                                         ) -> None:
    assert rt.decode_call("grep", {"pattern": "x", "-A": 2}, "openai")[1] == {
        "pattern": "x", "-A": 2}
    assert rt.decode_call("Read", {"file_path": "/a"}, "anthropic")[1] == {"path": "/a"}


def test_validate_false_returns_the_decoded_arguments(rt: ModuleType) -> None:
    assert rt.decode_call("exec", {"command": "ls", "timeout": "30"}, "openai",
                          validate=False)[1] == {"command": "ls", "timeout": "30"}


# -- 7: wire names are decoded exactly ----------------------------------------------------------
def test_wire_names_are_exact(rt: ModuleType) -> None:
    assert rt.decode_call("Read", {"path": "/a"}, "anthropic")[0] == "read_file"
    for wrong in ("read", "READ", "read_file ", "Exec"):
        with pytest.raises(rt.UnknownToolError, match="anthropic"):
            rt.decode_call(wrong, {"path": "/a"}, "anthropic")
    assert rt.decode_call("read_file", {"path": "/a"}, "openai")[0] == "read_file"
    with pytest.raises(KeyError):  # UnknownToolError is a KeyError
        rt.decode_call("Read", {"path": "/a"}, "openai")


def test_toolset_still_limits_what_a_model_may_call(rt: ModuleType) -> None:
    tools = rt.resolve()
    assert "exec" in tools
    only_grep = rt.ToolSet(0, ("grep",))
    with pytest.raises(PermissionError):
        rt.decode_call("exec", {"command": "ls"}, "openai", toolset=only_grep)


# -- 10: models.py and every data file are verified before use ----------------------------------
def test_tampered_models_py_is_refused(tmp_path: Path) -> None:
    runtime, package = _runtime(tmp_path)
    models = package / "models.py"
    models.write_text(models.read_text() + "\nimport os  # injected\n")
    with pytest.raises(runtime.DataMismatchError, match=r"models\.py"):
        runtime.validate_args("exec", {"command": "ls"})


def test_tampered_bundles_are_refused(tmp_path: Path) -> None:
    runtime, package = _runtime(tmp_path)
    bundles = package / "bundles.json"
    bundles.write_text(bundles.read_text().replace('"exec"', '"exec "', 1))
    with pytest.raises(runtime.DataMismatchError, match=r"bundles\.json"):
        runtime.tool_definitions(runtime.resolve(), "openai")


def test_verified_models_run_from_the_checked_bytes(tmp_path: Path) -> None:
    runtime, package = _runtime(tmp_path)
    assert runtime.validate_args("exec", {"command": "ls"}).command == "ls"
    # once loaded, a later change on disk cannot swap the code that runs
    (package / "models.py").write_text("raise SystemExit('replaced')\n")
    assert runtime.validated_args("exec", {"command": "pwd"}) == {"command": "pwd"}


def test_a_build_without_models_says_so(tmp_path: Path) -> None:
    runtime, _ = _runtime(tmp_path, models=False)
    with pytest.raises(RuntimeError, match="without parameter models"):
        runtime.validate_args("exec", {"command": "ls"})
