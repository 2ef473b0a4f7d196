"""The 2026.9 config shapes in definitions: what the model carries, and the errors that keep
each release's keys to projects that follow it (TC107), 2026.9's roster rules (TC108) and its
exec.mode rule (TC109). Format only: the engines' meaning of these fields is tested elsewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from toolc.api import validate
from toolc.builds import resolve_definitions
from toolc.pipeline.frontend import sender_key
from toolc.targets import target

from .helpers import write_definitions

CATALOG = {"catalog": [
    {"name": n, "description": n, "parameters": {"type": "object"}}
    for n in ("read", "exec", "browser", "message")]}


def _defs(tmp_path: Path, policy: dict[str, Any], openclaw: str | None = "2026.9") -> Path:
    head = {} if openclaw is None else {"openclaw": openclaw}
    return write_definitions(tmp_path / "defs", {"catalog.yaml": CATALOG,
                                                 "policy.yaml": {**head, **policy}})


def _codes(root: Path) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in validate(root) if d.severity != "note"]


NINE = {
    "tools": {
        "toolsBySender": {"channel:Discord:123": {"alsoAllow": ["exec"]},
                          "id:guest": {"deny": ["exec"]}, "*": {"deny": ["browser"]}},
        "sandbox": {"tools": {"alsoAllow": ["browser"]}},
        "exec": {"mode": "ask", "host": "auto"},
    },
    "agents": {
        "defaults": {"experimental": {"localModelLean": True}},
        "entries": {
            "main": {"default": True},
            "ops": {"experimental": {"localModelLean": False},
                    "tools": {"toolsBySender": {"e164:+1555": {"deny": ["read"]}},
                              "sandbox": {"tools": {"alsoAllow": ["exec"]}},
                              "exec": {"mode": "deny"}}},
        },
    },
}


def test_2026_9_shapes_are_modelled(tmp_path: Path) -> None:
    resolved = resolve_definitions(_defs(tmp_path, NINE))
    defs = resolved.defs
    assert resolved.target.key == "2026.9"
    glob = defs.tools_config
    assert [(r.kind, r.value, r.channel) for r in glob.by_sender] == [
        ("channel", "123", "discord"), ("id", "guest", None), ("*", "*", None)]
    assert [e.text for e in glob.sandbox_also_allow.items] == ["browser"]  # type: ignore[union-attr]
    assert glob.exec_mode is not None and glob.exec_mode.text == "ask"
    assert glob.exec_host is not None and glob.exec_host.text == "auto"
    assert [(a.id, a.roster, a.index, a.default, a.local_model_lean) for a in defs.agents] == [
        ("main", "entries", 0, True, None), ("ops", "entries", 1, False, False)]
    ops = defs.agents[1].tools
    assert ops is not None
    assert [(r.kind, r.value) for r in ops.by_sender] == [("e164", "+1555")]
    assert ops.exec_mode is not None and ops.exec_mode.text == "deny"
    assert defs.local_model_lean is True
    assert defs.roster_pos is not None and defs.roster_pos.line > 1


def test_entries_keep_javascript_key_order(tmp_path: Path) -> None:
    policy = {"agents": {"ownership": "explicit",
                         "entries": {"zed": {}, "7": {}, "alpha": {}, "3": {}}}}
    defs = resolve_definitions(_defs(tmp_path, policy)).defs
    assert [(a.id, a.index) for a in defs.agents] == [("3", 0), ("7", 1), ("zed", 2),
                                                      ("alpha", 3)]
    assert defs.agents_ownership == "explicit"


@pytest.mark.parametrize("policy, where", [
    ({"tools": {"toolsBySender": {"id:1": {"deny": ["exec"]}}}}, "tools.toolsBySender"),
    ({"tools": {"sandbox": {"tools": {"alsoAllow": ["exec"]}}}},
     "tools.sandbox.tools.alsoAllow"),
    ({"tools": {"exec": {"mode": "full"}}}, "tools.exec.mode"),
    ({"tools": {"exec": {"host": "auto"}}}, "tools.exec.host: 'auto'"),
    ({"agents": {"entries": {"main": {}}}}, "agents.entries"),
    ({"agents": {"ownership": "explicit", "list": [{"id": "a"}]}}, "agents.ownership"),
    ({"agents": {"defaults": {"experimental": {"localModelLean": True}}}},
     "agents.defaults.experimental"),
    ({"agents": {"list": [{"id": "a", "tools": {"toolsBySender": {"*": {}}}}]}},
     "agents.list[0].tools.toolsBySender"),
])
@pytest.mark.parametrize("openclaw", ["2026.3", None])
def test_2026_9_keys_in_a_2026_3_project(tmp_path: Path, policy: dict[str, Any], where: str,
                                         openclaw: str | None) -> None:
    diags = validate(_defs(tmp_path, policy, openclaw))
    errors = [d for d in diags if d.severity == "error"]
    assert [d.code for d in errors] == ["TC107"]
    assert errors[0].message.startswith(where)
    assert 'openclaw: "2026.9"' in (errors[0].hint or "")


def test_channel_sender_key_in_a_2026_3_project(tmp_path: Path) -> None:
    policy = {"channels": {"telegram": {"groups": {"-1": {"toolsBySender": {
        "channel:telegram:42": {"deny": ["exec"]}}}}}}}
    assert [c for c, _ in _codes(_defs(tmp_path, policy, "2026.3"))] == ["TC107"]
    defs = resolve_definitions(_defs(tmp_path / "nine", policy)).defs
    rule = defs.channels[0].groups[0].senders[0]  # type: ignore[index]
    assert (rule.kind, rule.channel, rule.value) == ("channel", "telegram", "42")


@pytest.mark.parametrize("agents, message", [
    ({"entries": {"a": {}, "b": {}}}, "several agents needs one default"),
    ({"list": [{"id": "a"}, {"id": "b"}]}, "several agents needs one default"),
    ({"entries": {"a": {"default": True}, "b": {"default": True}}}, "2 agents have default"),
    ({"ownership": "explicit", "entries": {"a": {"default": True}}}, "cannot be combined"),
    ({"entries": {"a": {}}, "list": [{"id": "b"}]}, "agents.list and agents.entries"),
])
def test_rosters_2026_9_refuses(tmp_path: Path, agents: dict[str, Any], message: str) -> None:
    found = _codes(_defs(tmp_path, {"agents": agents}))
    assert [c for c, _ in found][:1] == ["TC108"]
    assert any(message in m for _, m in found)


@pytest.mark.parametrize("agents", [
    {"entries": {"a": {}}}, {"entries": {"a": {}, "b": {"default": True}}},
    {"ownership": "explicit", "entries": {"a": {}, "b": {}}}, {"list": [{"id": "solo"}]},
    {"entries": {}},
])
def test_rosters_2026_9_accepts(tmp_path: Path, agents: dict[str, Any]) -> None:
    assert _codes(_defs(tmp_path, {"agents": agents})) == []


def test_exec_mode_beside_security(tmp_path: Path) -> None:
    policy = {"tools": {"exec": {"mode": "ask", "security": "full", "host": "gateway"}}}
    assert [c for c, _ in _codes(_defs(tmp_path, policy))] == ["TC109"]


@pytest.mark.parametrize("key, parsed", [
    ("channel:discord:123", ("channel", "123", "discord")),
    ("CHANNEL: Google-Chat : Ab", ("channel", "ab", "googlechat")),
    ("channel:discord", ("channel", "", None)),
    ("id:@Bob", ("id", "@bob", None)),
    ("username:@Bob", ("username", "bob", None)),
    (" id :x", ("id", "id :x", None)),
    ("*", ("*", "*", None)),
    ("Bob", ("id", "bob", None)),
])
def test_typed_sender_keys_of_2026_9(key: str, parsed: tuple[str, str, str | None]) -> None:
    assert sender_key(target("2026.9").senders, key) == parsed
