"""Every example of the design notes, run through both engines (they must also agree)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Engines, engines_for

CORE = ["read", "write", "edit", "apply_patch", "exec", "process", "web_search", "web_fetch",
        "memory_search", "memory_get", "sessions_list", "sessions_history", "sessions_send",
        "sessions_spawn", "subagents", "session_status", "browser", "canvas", "message", "cron",
        "gateway", "nodes", "agents_list", "image", "tts"]
SECTION = {"read": "fs", "write": "fs", "edit": "fs", "apply_patch": "fs", "exec": "runtime",
           "process": "runtime", "web_search": "web", "web_fetch": "web",
           "memory_search": "memory", "memory_get": "memory", "browser": "ui", "canvas": "ui",
           "message": "messaging", "cron": "automation", "gateway": "automation",
           "image": "media", "tts": "media"}
PROFILES = {"minimal": {"allow": ["session_status"]},
            "coding": {"allow": ["group:fs", "group:runtime", "group:sessions", "group:memory",
                                 "image"]},
            "messaging": {"allow": ["group:messaging", "sessions_list", "sessions_history",
                                    "sessions_send", "session_status"]},
            "full": {}}


def catalog(extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    tools = []
    for name in CORE:
        t: dict[str, Any] = {"name": name, "description": f"{name} tool",
                             "parameters": {"type": "object"}}
        section = SECTION.get(name, "sessions" if name.startswith("session")
                              or name == "subagents" else "agents")
        t["groups"] = [section]
        if name in ("cron", "gateway"):
            t["ownerOnly"] = True
        if name.startswith("memory_"):  # the bundled memory-core plugin's tools (2026.3.2)
            t["plugin"] = "memory-core"
        if name == "apply_patch":
            t["availability"] = {"providers": ["openai", "openai-codex"]}
        tools.append(t)
    return tools + (extra or [])


def make(tmp: Path, **sections: Any) -> Engines:
    base: dict[str, Any] = {"catalog": catalog(sections.pop("extra", None)),
                            "profiles": PROFILES}
    base.update(sections)
    return engines_for(tmp, {"defs.yaml": base})


PLUGIN = [{"name": "voice_call", "description": "Call", "plugin": "voice",
           "parameters": {"type": "object"}},
          {"name": "voice_admin", "description": "Admin", "plugin": "voice", "optional": True,
           "parameters": {"type": "object"}}]


def test_read_only_viewer(tmp_path: Path) -> None:
    e = make(tmp_path, agents={"list": [{"id": "viewer", "tools": {
        "allow": ["read", "web_search", "web_fetch", "session_status"],
        "deny": ["group:runtime", "write", "edit"]}}]})
    assert e.both(agent_id="viewer") == ("read", "web_search", "web_fetch", "session_status")


def test_coder_profile_gets_apply_patch_only_on_openai(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"profile": "coding", "exec": {"applyPatch": {"enabled": True}}})
    coding = e.both(model_provider="openai", model_id="gpt-5")
    assert "apply_patch" in coding and "exec" in coding and "browser" not in coding
    assert "apply_patch" not in e.both(model_provider="anthropic", model_id="claude")
    assert "cron" not in coding  # owner-only; the seed coding profile has no cron either


def test_apply_patch_follows_exec_and_allow_models(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"allow": ["exec"], "exec": {"applyPatch": {
        "enabled": True, "allowModels": ["gpt-5"]}}})
    assert e.both(model_provider="openai", model_id="gpt-5") == ("apply_patch", "exec")
    assert e.both(model_provider="openai", model_id="gpt-4o") == ("exec",)
    assert e.both(model_provider="openai", model_id="openai/gpt-5") == ("exec",)
    disabled = make(tmp_path / "b", tools={"exec": {"applyPatch": {"enabled": False}}})
    assert "apply_patch" not in disabled.both(model_provider="openai")
    # opt-in (OpenClaw 2026.3.2): without `enabled: true` there is no apply_patch at all
    unset = make(tmp_path / "c", tools={"exec": {"applyPatch": {"allowModels": ["gpt-5"]}}})
    assert "apply_patch" not in unset.both(model_provider="openai", model_id="gpt-5")


def test_messenger_profile_with_also_allow(tmp_path: Path) -> None:
    e = make(tmp_path, agents={"list": [{"id": "support", "tools": {
        "profile": "messaging", "alsoAllow": ["web_fetch"]}}]})
    assert e.both(agent_id="support") == ("web_fetch", "sessions_list", "sessions_history",
                                          "sessions_send", "session_status", "message")


def test_agent_also_allow_replaces_global_at_the_profile_step(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"profile": "minimal", "alsoAllow": ["read"]},
             agents={"list": [{"id": "a", "tools": {"alsoAllow": ["write"]}}]})
    assert e.both(agent_id="main") == ("read", "session_status")
    assert e.both(agent_id="a") == ("write", "session_status")  # global read: blocked


def test_mixed_policy_layers_only_narrow(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"profile": "coding", "deny": ["process"], "byProvider": {
        "openai": {"deny": ["write"]}, "openai/gpt-4o-mini": {"profile": "minimal"}},
        "exec": {"applyPatch": {"enabled": True}}},
        agents={"list": [{"id": "main", "tools": {"allow": ["read", "write", "exec", "browser"],
                                                   "byProvider": {"openai": {"deny": ["exec"]}}}}]})
    assert e.both(agent_id="main") == ("read", "write", "exec")
    # `exec` in the agent allow list implies apply_patch; deny lists carry no implication
    assert e.both(agent_id="main", model_provider="openai", model_id="gpt-5") == (
        "read", "apply_patch")
    # the model key shadows the provider key: no `deny: [write]`, but the minimal profile
    assert e.both(agent_id="main", model_provider="openai", model_id="gpt-4o-mini") == ()


def test_agent_resolution_follows_openclaw(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"deny": ["tts"]},
             agents={"list": [{"id": "main", "tools": {"allow": ["read"]}},
                              {"id": "other", "tools": {"allow": ["write"]}}]})
    everything = tuple(n for n in CORE if n not in ("apply_patch", "cron", "gateway", "tts"))
    # an undeclared agent, or no agent id and no session key: no agent layer, global only
    assert e.both(agent_id="nobody") == everything
    assert e.both(session_key="agent:nobody:telegram:dm:1") == everything
    assert e.both() == everything
    assert e.both(model_provider="openai", group_id="g") == everything
    # a session key without an agent part means the default agent `main`
    assert e.both(session_key="telegram:group:g") == ("read",)
    assert e.both(session_key="agent:OTHER:x") == ("write",)
    assert e.both(agent_id=" Other ", session_key="agent:main:x") == ("write",)


GROUPS = {"telegram": {"groups": {
    "-100": {"tools": {"deny": ["exec"]},
             "toolsBySender": {"id:42": {"alsoAllow": ["exec"]},
                               "username:@alice": {"allow": ["read"]},
                               "name:Bob": {"deny": ["read"]}}},
    "*": {"tools": {"deny": ["browser"]}, "toolsBySender": {"id:7": {"allow": ["message"]}}}},
    "accounts": {"work": {"groups": {"*": {"tools": {"allow": ["session_status"]}}}}}}}


def test_group_specific_beats_wildcard(tmp_path: Path) -> None:
    e = make(tmp_path, channels=GROUPS)
    specific = e.both(message_provider="telegram", group_id="-100", sender_id="7")
    assert "exec" not in specific and "browser" in specific  # "*" sender rule never overrides
    other = e.both(message_provider="telegram", group_id="-999")
    assert "browser" not in other and "exec" in other
    assert e.both(message_provider="telegram", group_id="-999", sender_id="7") == ("message",)
    assert e.both(session_key="agent:main:telegram:group:-100:topic:5") == specific


def test_per_sender_rules(tmp_path: Path) -> None:
    e = make(tmp_path, channels=GROUPS)
    ctx: dict[str, Any] = {"message_provider": "telegram", "group_id": "-100"}
    assert "exec" in e.both(**ctx, sender_id="42")
    assert e.both(**ctx, sender_username="Alice") == ("read",)
    assert "read" not in e.both(**ctx, sender_name="bob")
    assert e.both(**ctx, account_id="WORK") == ("session_status",)


def test_sender_name_collision_never_matches_ids(tmp_path: Path) -> None:
    e = make(tmp_path, channels=GROUPS)
    ctx: dict[str, Any] = {"message_provider": "telegram", "group_id": "-100"}
    base = e.both(**ctx)
    assert e.both(**ctx, sender_name="42") == base
    assert e.both(**ctx, sender_username="42") == base
    assert "exec" in e.both(**ctx, sender_id="42", sender_name="Bob")  # id is tried first


def test_subagent_denies(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"subagents": {"tools": {"alsoAllow": ["sessions_send"],
                                                      "deny": ["browser"]}}})
    leaf = e.both(session_key="agent:main:subagent:abc")
    for name in ("gateway", "agents_list", "session_status", "cron", "memory_search",
                 "memory_get", "sessions_list", "sessions_history", "sessions_spawn", "browser"):
        assert name not in leaf
    assert "sessions_send" in leaf and "subagents" in leaf


def test_subagent_depth_and_max_spawn_depth(tmp_path: Path) -> None:
    e = make(tmp_path, agents={"defaults": {"subagents": {"maxSpawnDepth": 2}}})
    orchestrator = e.both(session_key="agent:main:subagent:a")
    assert "sessions_spawn" in orchestrator and "session_status" not in orchestrator
    leaf = e.both(session_key="agent:main:subagent:a:subagent:b")
    assert "sessions_spawn" not in leaf
    assert e.both(spawn_depth=2) == leaf


def test_sandbox_defaults_and_image_rule(tmp_path: Path) -> None:
    e = make(tmp_path, extra=PLUGIN, tools={"sandbox": {"tools": {"deny": ["canvas"]}}})
    sandboxed = e.both(sandboxed=True, sender_is_owner=True)
    assert "exec" in sandboxed and "canvas" not in sandboxed  # allow default, deny configured
    assert "browser" not in sandboxed and "voice_call" not in sandboxed
    assert "image" in sandboxed
    default = make(tmp_path / "b").both(sandboxed=True, sender_is_owner=True)
    assert "browser" not in default and "cron" not in default and "exec" in default
    custom = make(tmp_path / "c", tools={"sandbox": {"tools": {"allow": ["read"]}}})
    assert custom.both(sandboxed=True) == ("read", "image")


def test_owner_only(tmp_path: Path) -> None:
    e = make(tmp_path)
    assert "cron" in e.both(sender_is_owner=True)
    for owner in (None, False):
        ctx = {} if owner is None else {"sender_is_owner": owner}
        names = e.both(**ctx)
        assert "cron" not in names and "gateway" not in names


def test_plugin_only_allowlist_is_ignored_and_optional_tools(tmp_path: Path) -> None:
    e = make(tmp_path, extra=PLUGIN, tools={"allow": ["voice_call"]})
    names = e.both()
    assert "read" in names and "voice_call" in names and "voice_admin" not in names
    optional = make(tmp_path / "b", extra=PLUGIN, tools={"alsoAllow": ["voice_admin"]})
    assert "voice_admin" in optional.both()
    by_id = make(tmp_path / "c", extra=PLUGIN, tools={"allow": ["read", "voice"]})
    assert by_id.both() == ("read", "voice_call", "voice_admin")
    star = make(tmp_path / "d", extra=PLUGIN, tools={"allow": ["*"]})
    assert "voice_admin" not in star.both()  # `*` never enables optional tools


def test_owner_only_tools_do_not_count_as_present_core(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"allow": ["cron"]})
    assert e.both(sender_is_owner=True) == ("cron",)
    assert "read" in e.both()  # for a non-owner the allowlist has no present core tool


def test_disabled_plugin_tools_are_absent(tmp_path: Path) -> None:
    e = make(tmp_path, extra=PLUGIN, plugins={"entries": {"voice": {"enabled": False}}},
             tools={"alsoAllow": ["group:plugins"]})
    assert not any(n.startswith("voice") for n in e.both())


def test_tool_name_aliases_in_policies(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"allow": [" BASH ", "apply-patch"],
                              "exec": {"applyPatch": {"enabled": True}}})
    assert e.both(model_provider="openai") == ("apply_patch", "exec")


@pytest.mark.parametrize("allow", [[], [""]])
def test_empty_allow_restricts_nothing(tmp_path: Path, allow: list[str]) -> None:
    e = make(tmp_path, tools={"allow": allow, "deny": ["read"]})
    assert len(e.both(sender_is_owner=True)) == len(CORE) - 2  # read and apply_patch
