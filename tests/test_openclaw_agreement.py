"""Where toolc used to differ from OpenClaw 2026.3.2's published code (hardening issue, items
17-26) and the context values that used to fail open (item 9). Both engines, every case."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from toolc.api import resolve_definitions
from toolc.cli import main
from toolc.rules.context import Context
from toolc.semantics.reference import ReferenceInterpreter

from tests.helpers import ROOT, build_runtime, write_definitions
from tests.test_semantics import PLUGIN, PROFILES, catalog, make

ENABLED = {"exec": {"applyPatch": {"enabled": True}}}


# -- 17: a plugin may name one of its tools after itself ----------------------------------------
def test_plugin_id_equal_to_its_own_tool_name(tmp_path: Path) -> None:
    lobster = [{"name": "lobster", "description": "Run a pipeline.", "plugin": "lobster",
                "parameters": {"type": "object"}},
               {"name": "lobster_status", "description": "Status.", "plugin": "lobster",
                "parameters": {"type": "object"}}]
    e = make(tmp_path, extra=lobster, tools={"deny": ["lobster"]})
    names = e.both()
    assert "read" in names and "lobster" not in names and "lobster_status" not in names
    only = make(tmp_path / "b", extra=lobster, tools={"allow": ["read", "lobster"]})
    assert only.both() == ("read", "lobster", "lobster_status")  # the id names the plugin


# -- 18: a group that contains exec implies apply_patch, in every kind of layer ------------------
@pytest.mark.parametrize("allow", [["group:runtime"], ["group:mine"], ["ex*"]])
@pytest.mark.parametrize("layer", ["tools", "profile", "byProvider", "agent", "group",
                                   "sandbox", "subagent"])
def test_group_with_exec_allows_apply_patch(tmp_path: Path, layer: str,
                                            allow: list[str]) -> None:
    tools: dict[str, Any] = dict(ENABLED)
    sections: dict[str, Any] = {"groups": {"group:mine": ["group:runtime"]}}
    ctx: dict[str, Any] = {"model_provider": "openai", "agent_id": "main"}
    if layer == "tools":
        tools["allow"] = allow
    elif layer == "profile":
        tools["profile"] = "mine"
        sections["profiles"] = {"mine": {"allow": allow}}
    elif layer == "byProvider":
        tools["byProvider"] = {"openai": {"allow": allow}}
    elif layer == "agent":
        sections["agents"] = {"list": [{"id": "main", "tools": {"allow": allow}}]}
    elif layer == "group":
        sections["channels"] = {"telegram": {"groups": {"g": {"tools": {"allow": allow}}}}}
        ctx.update(message_provider="telegram", group_id="g")
    elif layer == "sandbox":
        tools["sandbox"] = {"tools": {"allow": allow}}
        ctx["sandboxed"] = True
    else:
        tools["subagents"] = {"tools": {"allow": allow}}
        ctx["session_key"] = "agent:main:subagent:x"
    if "profiles" in sections:
        sections["profiles"] = {**PROFILES, **sections["profiles"]}
    e = make(tmp_path, tools=tools, **sections)
    names = e.both(**ctx)
    assert "exec" in names and "apply_patch" in names


# -- 19: a subagent keeps the group policy of the session that spawned it ----------------------
def test_subagent_inherits_the_spawning_group(tmp_path: Path) -> None:
    e = make(tmp_path, channels={"telegram": {"groups": {"-100123": {"tools": {
        "allow": ["read", "sessions_list"]}}}}})
    parent = "agent:main:telegram:group:-100123"
    sub = "agent:main:subagent:worker"
    assert e.both(session_key=sub, spawned_by=parent) == ("read",)  # + the subagent denies
    assert "exec" in e.both(session_key=sub)  # without spawned_by: no group layer
    # an explicit group and the session key's own group come first
    assert "exec" in e.both(session_key=sub, spawned_by=parent, message_provider="telegram",
                            group_id="-999")
    topic = "agent:main:telegram:group:-100123:topic:9"
    assert e.both(session_key=sub, spawned_by=topic) == ("read",)


# -- 20: the voice channel drops tts, as catalog data ---------------------------------------
def test_voice_channel_drops_tts_from_catalog_data(tmp_path: Path) -> None:
    extra = [{"name": "speak", "description": "Speak.", "availability":
              {"excludeChannels": ["voice"]}, "parameters": {"type": "object"}}]
    e = make(tmp_path, extra=extra)
    assert "speak" not in e.both(message_provider=" Voice ")
    assert "speak" in e.both(message_provider="telegram")
    assert "speak" in e.both()
    shipped = ReferenceInterpreter(resolve_definitions(ROOT / "definitions"))
    assert shipped.resolve(message_provider="telegram").inventory["tts"].kept
    assert not shipped.resolve(message_provider="voice").inventory["tts"].kept


# -- 21: apply_patch is opt-in; naming it does not make an allowlist core ------------------------
def test_apply_patch_is_opt_in(tmp_path: Path) -> None:
    e = make(tmp_path)
    assert "apply_patch" not in e.both(model_provider="openai", model_id="gpt-5")
    on = make(tmp_path / "b", tools=ENABLED)
    assert "apply_patch" in on.both(model_provider="openai", model_id="gpt-5")
    assert "apply_patch" not in on.both(model_provider="anthropic")
    # without apply_patch present, `allow: [apply_patch]` names no present core tool: the
    # plugin-only rule ignores the allowlist (core tools stay), as in OpenClaw
    absent = make(tmp_path / "c", tools={"allow": ["apply_patch"]})
    assert "read" in absent.both(model_provider="openai", model_id="gpt-5")
    present = make(tmp_path / "d", tools={"allow": ["apply_patch"], **ENABLED})
    assert present.both(model_provider="openai", model_id="gpt-5") == ("apply_patch",)


def test_blank_allow_models_entry_matches_nothing(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"exec": {"applyPatch": {"enabled": True, "allowModels": [" "]}}})
    assert "apply_patch" not in e.both(model_provider="openai", model_id="gpt-5")


# -- 22: agent-level tools.exec.applyPatch replaces the global object ------------------------
def test_agent_exec_apply_patch_replaces_global(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"exec": {"applyPatch": {"enabled": True,
                                                      "allowModels": ["gpt-5"]}}},
             agents={"list": [
                 {"id": "off", "tools": {"exec": {"applyPatch": {"allowModels": ["gpt-5"]}}}},
                 {"id": "any", "tools": {"exec": {"applyPatch": {"enabled": True}}}},
                 {"id": "inherit", "tools": {"exec": {}}}]})
    ctx: dict[str, Any] = {"model_provider": "openai", "model_id": "o3"}
    assert "apply_patch" not in e.both(**ctx)  # global: o3 is not in allowModels
    assert "apply_patch" in e.both(**ctx, agent_id="any")  # whole object replaced
    assert "apply_patch" not in e.both(**{**ctx, "model_id": "gpt-5"}, agent_id="off")
    assert "apply_patch" in e.both(**{**ctx, "model_id": "gpt-5"}, agent_id="inherit")


# -- 24/25: Telegram topics map to their chat; group ids are exact except on IRC -------------
def test_telegram_topic_ids_use_the_chat_policy(tmp_path: Path) -> None:
    e = make(tmp_path, channels={"telegram": {"groups": {
        "-100123": {"tools": {"deny": ["exec"]}}, "*": {"tools": {"deny": ["read"]}}}}})
    for gid in ("-100123:topic:7", "-100123:7", "-100123"):
        names = e.both(message_provider="telegram", group_id=gid)
        assert "exec" not in names and "read" in names, gid
    assert "exec" in e.both(message_provider="telegram", group_id="-100123:topic:x")
    assert "exec" not in e.both(session_key="agent:main:telegram:group:-100123:topic:7")
    # only Telegram parses topics
    w = make(tmp_path / "b", channels={"whatsapp": {"groups": {
        "-100123": {"tools": {"deny": ["exec"]}}}}})
    assert "exec" in w.both(message_provider="whatsapp", group_id="-100123:topic:7")


def test_group_ids_match_exactly_except_on_irc(tmp_path: Path) -> None:
    groups = {"groups": {"Ops": {"tools": {"deny": ["exec"]}},
                         "*": {"tools": {"deny": ["read"]}}}}
    e = make(tmp_path, channels={"telegram": groups, "irc": groups})
    tg = e.both(message_provider="telegram", group_id="ops")
    assert "exec" in tg and "read" not in tg  # no case-insensitive fallback: the `*` group
    irc = e.both(message_provider="irc", group_id="OPS")
    assert "exec" not in irc and "read" in irc
    assert e.both(message_provider="internet-relay-chat", group_id="ops") == irc  # alias


def test_account_defaults_to_default_and_folds_case(tmp_path: Path) -> None:
    e = make(tmp_path, channels={"telegram": {"groups": {"*": {"tools": {"deny": ["exec"]}}},
                                              "accounts": {
                                                  "default": {"groups": {"*": {"tools": {
                                                      "deny": ["read"]}}}},
                                                  "Work": {}}}})
    ctx: dict[str, Any] = {"message_provider": "telegram", "group_id": "g"}
    assert "read" not in e.both(**ctx)  # no account id: the `default` account
    assert "exec" not in e.both(**ctx, account_id="WORK")  # account without groups: channel's
    assert "read" not in e.both(**ctx, account_id=" ")


# -- 26: the shipped core catalog is the named release's; the 2026.3 starter is 2026.3.2's ------
def test_shipped_catalog_is_the_named_release(tmp_path: Path) -> None:
    """definitions/ name OpenClaw 2026.9 (since `toolc migrate`): their core catalog is
    2026.9.6's, in the release's order, its plugin tools carry the release's plugin ids and
    every tool the release's groups."""
    resolved = resolve_definitions(ROOT / "definitions")
    assert resolved.target.key == "2026.9"
    data = resolved.target.data
    assert data["release"] == "2026.9.6"
    tools = {t.name: t for t in resolved.tools}
    plugin_of = {n: pid for pid, p in data["plugins"].items() for n in p["tools"]}
    core = [n for n, t in tools.items() if t.plugin is None and t.channel is None]
    assert core == [t["name"] for t in data["tools"] if t["name"] not in plugin_of] \
        + list(data["outsideCatalog"])
    for name in ("memory_search", "memory_get"):
        assert tools[name].plugin == "memory-core"
    for name, t in tools.items():
        if name in plugin_of and t.channel is None:
            assert t.plugin == plugin_of[name], name
        groups = sorted(g.removeprefix("group:") for g, members in data["groups"].items()
                        if name in members)
        if name in plugin_of or (t.plugin is None and t.channel is None):
            assert sorted(t.groups) == groups, name
    assert tools["pdf"].plugin is None and "media" in tools["pdf"].groups
    runtime = build_runtime(ROOT / "definitions", tmp_path / "out")
    assert set(runtime.TOOL_NAMES) == set(tools)


def test_2026_3_starter_catalog_is_openclaw_2026_3_2(tmp_path: Path) -> None:
    """The 2026.3 starter (`toolc init --openclaw 2026.3`, compiler/targets/starter-2026.3/)
    holds 2026.3.2's core catalog, pdf outside every group and memory-core's tools."""
    defs = tmp_path / "d"
    shutil.copytree(ROOT / "compiler" / "targets" / "starter-2026.3", defs)
    resolved = resolve_definitions(defs)
    assert resolved.target.key == "2026.3"
    tools = {t.name: t for t in resolved.tools}
    assert tools["pdf"].plugin is None and tools["pdf"].groups == ()
    for name in ("memory_search", "memory_get"):
        assert tools[name].plugin == "memory-core"
    core = [n for n, t in tools.items() if t.plugin is None and t.channel is None]
    assert core == ["read", "write", "edit", "apply_patch", "exec", "process", "web_search",
                    "web_fetch", "sessions_list", "sessions_history", "sessions_send",
                    "sessions_spawn", "subagents", "session_status", "browser", "canvas",
                    "message", "cron", "gateway", "nodes", "agents_list", "image", "tts", "pdf"]
    runtime = build_runtime(defs, tmp_path / "out")
    assert set(runtime.TOOL_NAMES) == set(tools)


def test_memory_only_allowlist_is_plugin_only(tmp_path: Path) -> None:
    e = make(tmp_path, tools={"allow": ["memory_search", "memory_get"]})
    assert "read" in e.both()  # ignored: no core entry (warning TC140)
    assert "read" in make(tmp_path / "m", tools={"allow": ["group:memory"]}).both()
    plugins = make(tmp_path / "b", extra=PLUGIN, tools={"allow": ["read", "group:plugins"]})
    assert plugins.both() == ("read", "memory_search", "memory_get", "voice_call",
                              "voice_admin")
    by_id = make(tmp_path / "c", tools={"allow": ["read", "memory-core"]})
    assert by_id.both() == ("read", "memory_search", "memory_get")


# -- 9: malformed context values are refused, never read as "allow more" -----------------------
BAD_VALUES: list[tuple[str, Any]] = [
    ("spawn_depth", math.nan), ("spawn_depth", 1.0), ("spawn_depth", -1), ("spawn_depth", True),
    ("spawn_depth", "2"), ("sandboxed", 1), ("sandboxed", "true"), ("sender_is_owner", 1),
    ("sender_is_owner", "yes"), ("group_id", 42), ("sender_id", 42), ("agent_id", b"main"),
    ("session_key", ["agent:main:x"]), ("spawned_by", 1),
]


@pytest.mark.parametrize(("key", "value"), BAD_VALUES)
def test_ill_typed_context_values_raise(tmp_path: Path, key: str, value: Any) -> None:
    e = make(tmp_path, tools={"sandbox": {"tools": {"allow": ["read"]}}})
    for resolve in (e.runtime.resolve, e.runtime.resolve_uncached, e.reference.resolve):
        with pytest.raises(TypeError, match=key):
            resolve(**{key: value})
    # also after a valid request filled the memo with the key that value would hash to
    e.runtime.resolve(spawn_depth=1, sandboxed=True, sender_is_owner=True)
    e.runtime.resolve(spawn_depth=1, sandboxed=False, sender_is_owner=False)
    try:
        got = e.runtime.resolve(**{key: value})
    except TypeError:
        return
    # a memo hit may skip the check, but never with a wider result than the narrowest reading
    if key == "sandboxed":
        assert set(got.names) <= set(e.both(sandboxed=True))
    elif key == "sender_is_owner":
        assert set(got.names) <= set(e.both(sender_is_owner=False))
    else:
        assert key == "spawn_depth"
        assert set(got.names) <= set(e.both(spawn_depth=int(value)))


def test_blank_strings_are_absent_and_never_skip_a_layer(tmp_path: Path) -> None:
    e = make(tmp_path, channels={"telegram": {"groups": {"g": {"tools": {"allow": ["read"]}}}}})
    key = "agent:main:telegram:group:g"
    assert e.both(session_key=key) == ("read",)
    for blank in ("", "  "):
        assert e.both(session_key=key, group_id=blank) == ("read",)
        assert e.both(session_key=key, message_provider=blank) == ("read",)
        assert e.both(session_key=key, agent_id=blank) == ("read",)


def test_nan_depth_never_turns_a_leaf_into_an_orchestrator(tmp_path: Path) -> None:
    e = make(tmp_path)
    leaf = e.both(session_key="agent:main:subagent:x")
    assert "sessions_spawn" not in leaf
    with pytest.raises(TypeError, match="spawn_depth"):
        e.runtime.resolve(session_key="agent:main:subagent:x", spawn_depth=math.nan)


def test_context_of_normalizes_blanks() -> None:
    ctx = Context.of(group_id=" ", sender_id="", agent_id="main")
    assert ctx.group_id is None and ctx.sender_id is None and ctx.agent_id == "main"


def test_cli_spawned_by_flag(tmp_path: Path) -> None:
    defs = write_definitions(tmp_path / "defs", {"d.yaml": {
        "catalog": catalog(), "channels": {"telegram": {"groups": {"-1": {"tools": {
            "allow": ["read"]}}}}}}})
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(defs), "-o", str(out)]).exit_code == 0
    flags = ["--session-key", "agent:main:subagent:w", "--spawned-by",
             "agent:main:telegram:group:-1", "--json"]
    for engine in (["--build", str(out)], ["--definitions", str(defs), "--engine", "reference"]):
        result = CliRunner().invoke(main, ["resolve", *engine, *flags])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["tools"] == ["read"]


def test_integer_like_sender_keys_come_first_like_a_javascript_object(tmp_path: Path) -> None:
    """OpenClaw iterates a JSON object: integer-like keys ("42") before the others, so of two
    keys for one sender the untyped "42" wins over an earlier "id:42"."""
    e = make(tmp_path, channels={"telegram": {"groups": {"g": {"toolsBySender": {
        "id:42": {"deny": ["read"]}, "42": {"allow": ["read"]}, "id:7": {"allow": ["exec"]},
        "007": {"allow": ["write"]}}}}}})
    ctx: dict[str, Any] = {"message_provider": "telegram", "group_id": "g"}
    assert e.both(**ctx, sender_id="42") == ("read",)
    assert e.both(**ctx, sender_id="7") == ("exec",)
    assert e.both(**ctx, sender_id="007") == ("write",)
