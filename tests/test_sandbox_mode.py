"""Sandbox modes (issue 18 item 19): definitions carry OpenClaw's ``sandbox.mode`` (defaults and
per agent), ``default`` agents and ``session.scope``; when the caller does not pass
``sandboxed=True``, the runtime and the reference interpreter derive it from the session key
as OpenClaw 2026.3.2's ``resolveSandboxRuntimeStatus`` does, and an explicit ``False`` never
lifts a sandbox the definitions impose. ``make conformance`` holds the derivation to OpenClaw's
own function; these tests pin its cases, the import and the access classes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from toolc.api import validate
from toolc.cli import main
from toolc.review.diff import compute_diff, side_from_definitions
from toolc.rules.sandbox import SandboxModes, derive_sandboxed
from toolc.semantics.access import ClassSpace, TablesView

from tests.helpers import engines_for, write_definitions

CATALOG = [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"},
            "groups": g} for n, g in (("read", ["fs"]), ("exec", ["runtime"]),
                                      ("message", ["messaging"]))]
SANDBOX_POLICY = {"sandbox": {"tools": {"allow": ["read"], "deny": []}}}
FULL = ["exec", "message", "read"]
SANDBOXED = ["read"]


def defs(agents: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"catalog": CATALOG, "tools": SANDBOX_POLICY, "agents": agents, **top}


# -- the derivation, case by case (read off OpenClaw's runtime-status.ts and helpers) ---------
MODES = SandboxModes(default_mode="non-main", agents={"ops": "all", "home": "off"},
                     default_agent="work")


@pytest.mark.parametrize(("key", "sandboxed"), [
    (None, False), ("", False), ("   ", False),  # no session key: not sandboxed
    ("agent:work:main", False),  # the key's agent's main session
    ("main", False),  # the main alias, for the default agent (work)
    (" agent:work:main\n", False),  # trimmed as JavaScript trims
    ("\ufeffagent:work:main", False),  # JavaScript's trim strips a BOM
    ("agent:work:main\x1f", True),  # ... not U+001F (Python's strip would)
    ("Agent:work:main", True),  # the alias comparison is case-sensitive
    ("agent:WORK:main", True),
    ("agent:work:telegram:group:1", True), ("telegram:group:1", True),  # default agent: non-main
    ("agent:nobody:main", False), ("agent:nobody:x", True),  # undeclared: the defaults' mode
    ("agent:ops:main", True),  # all: even the main session
    ("agent:home:x", False),  # off
    ("global", True),  # not a main session without scope global
])
def test_the_derivation_follows_openclaw(key: str | None, sandboxed: bool) -> None:
    assert derive_sandboxed(MODES, key) is sandboxed


def test_scope_global_makes_global_the_main_session() -> None:
    modes = SandboxModes(default_mode="non-main", scope_global=True)
    assert [derive_sandboxed(modes, k) for k in ("global", "main", "agent:main:main",
                                                  "agent:main:x", "agent:a:main")] == [
        False, False, False, True, False]


# -- runtime and reference ----------------------------------------------------------------------
def test_runtime_and_reference_derive_sandboxed_from_the_mode(tmp_path: Path) -> None:
    engines = engines_for(tmp_path, {"d.yaml": defs(
        {"defaults": {"sandbox": {"mode": "non-main"}},
         "list": [{"id": "main"}, {"id": "ops", "default": True, "sandbox": {"mode": "all"}},
                  {"id": "home", "sandbox": {"mode": "off"}}]})})
    cases = [
        ({}, FULL),  # no session key
        ({"session_key": "agent:main:main"}, FULL),
        ({"session_key": "agent:main:telegram:group:1"}, SANDBOXED),
        ({"session_key": "agent:ops:main"}, SANDBOXED),
        ({"session_key": "main"}, SANDBOXED),  # the default agent is ops (all)
        ({"session_key": "agent:home:telegram:group:1"}, FULL),
        ({"agent_id": "home", "session_key": "agent:main:x"}, SANDBOXED),  # the key decides
        ({"session_key": "agent:home:x", "sandboxed": True}, SANDBOXED),  # True stays
    ]
    for ctx, tools in cases:
        assert sorted(engines.both(**ctx)) == tools, ctx


@pytest.mark.parametrize("key", ["agent:main:telegram:group:1", "agent:ops:main"])
def test_an_explicit_false_never_lifts_the_sandbox(tmp_path: Path, key: str) -> None:
    engines = engines_for(tmp_path, {"d.yaml": defs(
        {"defaults": {"sandbox": {"mode": "non-main"}},
         "list": [{"id": "main"}, {"id": "ops", "sandbox": {"mode": "all"}}]})})
    assert sorted(engines.both(session_key=key, sandboxed=False)) == SANDBOXED
    # the memo keys sandboxed=None and False alike: both stay sandboxed in any order
    assert sorted(engines.both(session_key=key)) == SANDBOXED
    assert sorted(engines.both(session_key=key, sandboxed=False)) == SANDBOXED


def test_a_bom_before_the_agent_part_still_names_the_agent(tmp_path: Path) -> None:
    # OpenClaw trims session keys with JavaScript's trim (a BOM goes): the key's agent is
    # a1, whose deny list applies; Python's strip kept the BOM and fell back to main
    engines = engines_for(tmp_path, {"d.yaml": {"catalog": CATALOG, "agents": {"list": [
        {"id": "main"}, {"id": "a1", "tools": {"deny": ["exec"]}}]}}})
    assert sorted(engines.both(session_key="\ufeffagent:a1:telegram:group:1")) == [
        "message", "read"]


# -- definitions --------------------------------------------------------------------------------
@pytest.mark.parametrize(("data", "where", "message"), [
    ({"agents": {"defaults": {"sandbox": {"mode": "sometimes"}}}}, "d.yaml:5:13",
     "agents.defaults.sandbox.mode: 'sometimes' is not one of"),
    ({"agents": {"list": [{"id": "a", "sandbox": {"mode": "nonmain"}}]}}, "d.yaml:6:13",
     'did you mean "non-main"'),
    ({"agents": {"list": [{"id": "a", "sandbox": {"scope": "agent"}}]}}, "d.yaml:6:7",
     'unknown key "scope" in agents.list[0].sandbox'),
    ({"agents": {"list": [{"id": "a", "default": "yes"}]}}, "d.yaml:5:14",
     "agents.list[0].default: expected boolean"),
    ({"session": {"scope": "per-peer"}}, "d.yaml:3:10", "session.scope: 'per-peer'"),
    ({"session": {"mainKey": "boss"}}, "d.yaml:3:3", 'unknown key "mainKey" in session'),
])
def test_bad_sandbox_values_are_positioned_errors(tmp_path: Path, data: dict[str, Any],
                                                  where: str, message: str) -> None:
    root = write_definitions(tmp_path / "defs", {"d.yaml": data, "c.yaml": {"catalog": CATALOG}})
    rendered = [d.render() for d in validate(root)]
    assert any(where in r and message in r and "error[TC11" in r for r in rendered), rendered


# -- import -------------------------------------------------------------------------------------
CONFIG = {
    "tools": {"sandbox": {"tools": {"allow": ["read"], "deny": ["exec"]}}},
    "agents": {"defaults": {"sandbox": {"mode": "non-main", "docker": {"network": "none"}}},
               "list": [{"id": "main", "default": True},
                        {"id": "ops", "sandbox": {"mode": "all"}}]},
    "session": {"scope": "per-sender", "mainKey": "boss"}}


def test_an_imported_sandbox_mode_applies_the_sandbox_policy(tmp_path: Path) -> None:
    """Before: the import refused non-main/all (or, with --allow-partial, dropped the mode,
    so every session answered without the sandbox policy)."""
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps(CONFIG), "utf-8")
    out = tmp_path / "defs"
    result = CliRunner().invoke(main, ["import-openclaw", str(config), "-o", str(out),
                                       "--openclaw", "2026.3"])
    assert result.exit_code == 0, result.output
    assert "session.mainKey: not imported; OpenClaw ignores it too" in result.output
    policy = yaml.safe_load((out / "openclaw" / "policy.yaml").read_text("utf-8"))
    assert policy["agents"] == {"defaults": {"sandbox": {"mode": "non-main"}},
                                "list": [{"id": "main", "default": True},
                                         {"id": "ops", "sandbox": {"mode": "all"}}]}
    assert policy["session"] == {"scope": "per-sender"}
    for key, sandboxed in (("agent:main:main", False), ("agent:main:telegram:group:1", True),
                           ("agent:ops:main", True), (None, False)):
        args = ["resolve", "--definitions", str(out)] + (["--session-key", key] if key else [])
        tools = CliRunner().invoke(main, args).output.split()
        assert ("exec" not in tools) is sandboxed, (key, tools)


def test_sandbox_keys_that_change_tools_still_need_allow_partial(tmp_path: Path) -> None:
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({"agents": {"list": [
        {"id": "main", "sandbox": {"mode": "all", "workspaceAccess": "ro"}},
        {"id": "off", "sandbox": {"mode": "off", "workspaceAccess": "ro"}}]}}), "utf-8")
    result = CliRunner().invoke(main, ["import-openclaw", str(config), "-o",
                                       str(tmp_path / "d"), "--openclaw", "2026.3"])
    assert result.exit_code == 1
    assert "agents.list[0].sandbox.workspaceAccess: left out, but it could change" \
        in result.output
    assert "agents.list[1].sandbox" not in result.output  # mode off: never sandboxed


# -- access classes -----------------------------------------------------------------------------
def test_a_diff_that_changes_a_mode_counts_the_sessions_it_sandboxes(tmp_path: Path) -> None:
    base = write_definitions(tmp_path / "base", {"d.yaml": defs({"list": [{"id": "main"}]})})
    head = write_definitions(tmp_path / "head", {"d.yaml": defs(
        {"defaults": {"sandbox": {"mode": "non-main"}}, "list": [{"id": "main"}]})})
    sides = [side_from_definitions(base), side_from_definitions(head)]
    tools = list(sides[1].tables["tools"])
    space = ClassSpace([TablesView(s.tables, tools) for s in sides], tools)
    assert [k.key for k in space.sandbox] == [(False, False), (True, True), (False, True)]
    point = space.classify(session_key="agent:main:telegram:group:1")
    assert space.sandbox[point[4]].key == (False, True)
    assert space.classify(session_key="agent:main:main")[4] == 0
    lost = {c.tool for c in compute_diff(*sides).changes if c.lost}
    assert lost == {"exec", "message"}
