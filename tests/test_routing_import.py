"""``toolc import-openclaw`` keeps routing (issue 32): route ``bindings`` and the session
settings are written in OpenClaw's shape, and the imported build routes a message as OpenClaw
2026.9.6 does. The expected routes are read off the release's ``resolveAgentRoute``
(dist/resolve-route-*.mjs; each row names the rule); with Node and the release installed
(``make conformance-setup``) the same messages also go through the release itself, over the
config its own loader made (the cross-check for every tier and for the loader's added
bindings belongs to ``make conformance``'s route op)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from toolc.api import validate
from toolc.cli import main
from toolc.importers.openclaw import ImportRefused, import_openclaw, parse_config

from tests.helpers import ROOT, build_runtime

SIGNAL_GROUP = "Hn2Dl8tJ+cYp0t6tRzQ8vUpZ4eQGZ3r7sXyW9kLmN1o="
TEAM = "19:abcdef0123456789@thread.tacv2"
GUILD, ROLE = "123456789012345678", "987654321098765432"

# A household-and-work gateway on 2026.9.6: bindings of every tier, per-binding session
# overrides, an ACP binding, and session settings (one person linked across channels).
CONFIG = f"""\
// OpenClaw 2026.9.6: route bindings of every tier
{{
  meta: {{ lastTouchedVersion: "2026.9.6" }},
  agents: {{
    entries: {{
      main: {{ default: true, tools: {{ profile: "coding" }} }},
      family: {{ tools: {{ profile: "messaging" }} }},
      ops: {{ tools: {{ profile: "coding", deny: ["browser"] }} }},
      support: {{ tools: {{ profile: "messaging", deny: ["message"] }} }},
    }},
  }},
  channels: {{
    telegram: {{
      botToken: "123456:not-a-real-token",
      accounts: {{ personal: {{ botToken: "654321:not-a-real-token" }}, biz: {{}} }},
      groups: {{ "-1001234567890": {{ tools: {{ deny: ["exec"] }} }} }},
    }},
    discord: {{ token: "not-a-real-discord-token" }},
    slack: {{ botToken: "xoxb-not-real", appToken: "xapp-not-real" }},
    signal: {{
      account: "+15550001111",
      groups: {{ "{SIGNAL_GROUP}": {{ tools: {{ deny: ["web_fetch"] }} }} }},
    }},
    whatsapp: {{ allowFrom: ["+15551234567"] }},
    msteams: {{}},
  }},
  bindings: [
    {{ agentId: "family", comment: "mum, on the personal bot",
      match: {{ channel: "telegram", accountId: "personal",
               peer: {{ kind: "direct", id: "123456789" }} }} }},
    {{ agentId: "ops", match: {{ channel: "telegram",
                                peer: {{ kind: "group", id: "-1001234567890" }} }},
      session: {{ groupScope: "per-group" }} }},
    {{ agentId: "support",
      match: {{ channel: "whatsapp", accountId: "*", peer: {{ kind: "group", id: "*" }} }} }},
    {{ agentId: "ops", match: {{ channel: "discord", guildId: "{GUILD}", roles: ["{ROLE}"] }} }},
    {{ agentId: "family", match: {{ channel: "discord", guildId: "{GUILD}" }} }},
    {{ agentId: "support", match: {{ channel: "msteams", teamId: "{TEAM}" }} }},
    {{ agentId: "family", match: {{ channel: "telegram", accountId: "personal" }},
      session: {{ dmScope: "per-account-channel-peer" }} }},
    {{ agentId: "support", match: {{ channel: "slack", accountId: "*" }} }},
    {{ agentId: "family",
      match: {{ channel: "signal", peer: {{ kind: "group", id: "{SIGNAL_GROUP}" }} }} }},
    {{ type: "acp", agentId: "ops",
      match: {{ channel: "discord", accountId: "*",
               peer: {{ kind: "channel", id: "222333444555666777" }} }},
      acp: {{ mode: "persistent" }} }},
  ],
  session: {{
    dmScope: "per-channel-peer",
    identityLinks: {{ alice: ["telegram:123456789", "whatsapp:+15551234567"] }},
    mainKey: "work",
  }},
}}
"""

# (message as resolveAgentRoute's input, (agentId, sessionKey, matchedBy)); the main session
# key is always agent:<agent>:main (session.mainKey is forced to "main").
ROUTES: list[tuple[dict[str, Any], tuple[str, str, str]]] = [
    # binding.peer; identityLinks: alice's DM key (dmScope per-channel-peer)
    ({"channel": "telegram", "accountId": "personal", "peer": {"kind": "direct",
                                                               "id": "123456789"}},
     ("family", "agent:family:telegram:direct:alice", "binding.peer")),
    # binding.peer of a group: the key has no account
    ({"channel": "telegram", "peer": {"kind": "group", "id": "-1001234567890"}},
     ("ops", "agent:ops:telegram:group:-1001234567890", "binding.peer")),
    # binding.peer.wildcard on every account ("*")
    ({"channel": "whatsapp", "accountId": "biz", "peer": {"kind": "group",
                                                          "id": "120363025246125486@g.us"}},
     ("support", "agent:support:whatsapp:group:120363025246125486@g.us",
      "binding.peer.wildcard")),
    # binding.guild+roles before binding.guild; a channel peer keeps its kind in the key
    ({"channel": "discord", "peer": {"kind": "channel", "id": "555"}, "guildId": GUILD,
      "memberRoleIds": [ROLE]},
     ("ops", "agent:ops:discord:channel:555", "binding.guild+roles")),
    ({"channel": "discord", "peer": {"kind": "channel", "id": "555"}, "guildId": GUILD},
     ("family", "agent:family:discord:channel:555", "binding.guild")),
    ({"channel": "msteams", "peer": {"kind": "channel", "id": "19:general@thread.tacv2"},
      "teamId": TEAM},
     ("support", "agent:support:msteams:channel:19:general@thread.tacv2", "binding.team")),
    # binding.account; the binding's own dmScope puts the account in the key
    ({"channel": "telegram", "accountId": "personal", "peer": {"kind": "direct", "id": "777"}},
     ("family", "agent:family:telegram:personal:direct:777", "binding.account")),
    # binding.channel (accountId "*"); peer ids are lowercased...
    ({"channel": "slack", "peer": {"kind": "channel", "id": "C0123ABCD"}},
     ("support", "agent:support:slack:channel:c0123abcd", "binding.channel")),
    # ...except a Signal group's
    ({"channel": "signal", "peer": {"kind": "group", "id": SIGNAL_GROUP}},
     ("family", f"agent:family:signal:group:{SIGNAL_GROUP}", "binding.peer")),
    # the loader's added channel-wide binding to the legacy default agent: binding.channel
    ({"channel": "whatsapp", "peer": {"kind": "direct", "id": "+15551234567"}},
     ("main", "agent:main:whatsapp:direct:alice", "binding.channel")),
    ({"channel": "telegram", "peer": {"kind": "direct", "id": "123456789"}},
     ("main", "agent:main:telegram:direct:alice", "binding.channel")),
    # the ACP binding is no route binding: its conversation routes by the guild-less tiers
    ({"channel": "discord", "peer": {"kind": "channel", "id": "222333444555666777"}},
     ("main", "agent:main:discord:channel:222333444555666777", "binding.channel")),
]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _route_kwargs(message: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """resolveAgentRoute's input as toolc_runtime.route's arguments."""
    names = {"accountId": "account_id", "guildId": "guild_id", "teamId": "team_id",
             "memberRoleIds": "member_role_ids"}
    kwargs = {names[k]: v for k, v in message.items() if k in names}
    if "peer" in message:
        kwargs["peer"] = (message["peer"]["kind"], message["peer"]["id"])
    return message["channel"], kwargs


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result, ModuleType]:
    tmp = tmp_path_factory.mktemp("routing")
    (tmp / "openclaw.json5").write_text(CONFIG, "utf-8")
    result = run("import-openclaw", str(tmp / "openclaw.json5"), "-o", str(tmp / "defs"))
    return tmp / "defs", result, build_runtime(tmp / "defs", tmp / "out")


def test_bindings_and_session_settings_are_kept_in_openclaws_shape(
        imported: tuple[Path, Result, ModuleType]) -> None:
    defs, result, _ = imported
    assert result.exit_code == 0, result.output
    assert "check: 0 error(s), 0 warning(s)" in result.output
    policy = yaml.safe_load((defs / "openclaw/policy.yaml").read_text("utf-8"))
    config = parse_config(CONFIG.encode(), "c.json5")
    # every route binding as written, in order; the ACP binding (the last) left out
    assert policy["bindings"] == config["bindings"][:-1]
    assert policy["session"] == {"dmScope": "per-channel-peer", "identityLinks": {
        "alice": ["telegram:123456789", "whatsapp:+15551234567"]}}
    lines = [line.strip() for line in result.output.splitlines()]
    acp = [line for line in lines if line.startswith("bindings[9] (an ACP binding")]
    assert len(acp) == 1 and "discord channel 222333444555666777" in acp[0], result.output
    assert any(line.startswith("session.mainKey: not imported") for line in lines)
    assert "session.mainKey" in lines  # left out, and noted why


@pytest.mark.parametrize(("message", "expected"), ROUTES,
                         ids=[m["channel"] + ":" + e[2] for m, e in ROUTES])
def test_the_imported_build_routes_as_openclaw_2026_9_6(
        imported: tuple[Path, Result, ModuleType], message: dict[str, Any],
        expected: tuple[str, str, str]) -> None:
    _, _, runtime = imported
    channel, kwargs = _route_kwargs(message)
    found = runtime.route(channel, **kwargs)
    agent, key, matched_by = expected
    assert (found.agent_id, found.session_key, found.main_session_key, found.matched_by) \
        == (agent, key, f"agent:{agent}:main", matched_by)


def test_a_routed_group_gets_its_groups_policy_and_the_deciding_binding_is_named(
        imported: tuple[Path, Result, ModuleType]) -> None:
    _, _, runtime = imported
    route, tools = runtime.resolve_message("telegram", peer=("group", "-1001234567890"),
                                           sender_id="42")
    assert route.agent_id == "ops" and "exec" not in tools.names  # the group denies it
    assert runtime.route("telegram", peer=("direct", "9")).agent_id == "main"
    assert "exec" in runtime.resolve_message("telegram", peer=("direct", "9"))[1].names
    assert route.describe().endswith("(binding.peer at openclaw/policy.yaml:47:3)")
    route, tools = runtime.resolve_message("signal", peer=("group", SIGNAL_GROUP))
    assert route.agent_id == "family" and "web_fetch" not in tools.names


# -- against the release itself ---------------------------------------------------------
def _cache() -> Path:
    return Path(os.environ.get("TOOLC_CONFORMANCE_CACHE",
                               Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                               / "toolc"))


def _node() -> tuple[str, str] | None:
    node = next(iter(sorted(_cache().glob("node-24/node_modules/*/bin/node"))), None)
    package = next(iter(sorted(_cache().glob("openclaw-2026.9.*/node_modules/openclaw"))), None)
    if node is None or package is None or shutil.which("sh") is None:
        return None
    return str(node), str(package)


def _node_json(args: list[str], text: str) -> Any:
    proc = subprocess.run(args, input=text, capture_output=True, text=True, timeout=300,
                          check=True)
    return json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("{")))


@pytest.mark.skipif(_node() is None, reason="no Node 24 and openclaw@2026.9 (make "
                    "conformance-setup)")
def test_the_release_loads_the_config_and_routes_the_messages_so() -> None:
    found = _node()
    assert found is not None
    node, package = found
    config = parse_config(CONFIG.encode(), "c.json5")
    loaded = _node_json([node, str(ROOT / "conformance" / "oracle9.mjs"), package],
                        json.dumps({"op": "loadconfig", "config": config}) + "\n")
    assert "error_kind" not in loaded, loaded
    # (the loader's config through JSON: the route input of every message here reaches a
    # binding, so the legacy default agent the loader retains out of band is not needed)
    answer = _node_json([node, str(ROOT / "tests" / "fixtures" / "resolve_route9.mjs"), package],
                        json.dumps({"config": loaded["config"],
                                    "messages": [m for m, _ in ROUTES]}))
    assert [(r["agentId"], r["sessionKey"], r["matchedBy"]) for r in answer["routes"]] \
        == [e for _, e in ROUTES]
    assert {r["mainSessionKey"] for r in answer["routes"]} \
        == {f"agent:{e[0]}:main" for _, e in ROUTES}


# -- what is left out, refused, or changed ----------------------------------------------
def _policy(config: dict[str, Any], **kw: Any) -> dict[str, Any]:
    files = import_openclaw(config, "c.json", **kw).files
    data: dict[str, Any] = yaml.safe_load(files["openclaw/policy.yaml"]) or {}
    return data


ROSTER = {"agents": {"entries": {"main": {"default": True}, "work": {}}}}
ROSTER_3 = {"agents": {"list": [{"id": "main", "default": True}, {"id": "work"}]}}


def test_a_binding_to_an_undeclared_agent_is_the_loaders_refusal_under_2026_9() -> None:
    config = {**ROSTER, "bindings": [{"agentId": "wrok", "match": {"channel": "telegram"}}]}
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.9")
    assert refused.value.messages == [
        "bindings[0].agentId: OpenClaw 2026.9 refuses the config: unknown agent id 'wrok' "
        '(not in agents.entries) (did you mean "work"?)']


def test_under_2026_3_it_is_refused_unless_allow_partial_which_routes_it_as_2026_3_does(
        ) -> None:
    config = {**ROSTER_3, "bindings": [{"agentId": "wrok", "match": {"channel": "telegram"}},
                                       {"agentId": "main", "match": {"channel": "slack"}}]}
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", openclaw="2026.3")
    (message,) = refused.value.messages
    assert message.startswith("bindings[0].agentId: routes to agent 'wrok', which agents.list "
                              'does not declare (did you mean "work"?): OpenClaw 2026.3 routes '
                              "the messages it matches to the default agent 'main' instead")
    result = import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.3")
    policy = yaml.safe_load(result.files["openclaw/policy.yaml"])
    assert [b["agentId"] for b in policy["bindings"]] == ["main", "main"]
    assert any(n.startswith("bindings[0].agentId: routes to agent 'wrok'") for n in result.notes)


def test_without_a_roster_a_binding_to_another_agent_is_refused_unless_left_out() -> None:
    # 2026.3.2 runs "work" as an agent of its own (no roster: pickFirstExistingAgentId keeps
    # the id), which definitions cannot say (they route only to declared agents)
    config = {"bindings": [{"agentId": "work", "match": {"channel": "telegram"}},
                           {"agentId": "main", "match": {"channel": "slack"}}]}
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", openclaw="2026.3")
    assert "the config declares no agents" in refused.value.messages[0]
    result = import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.3")
    assert yaml.safe_load(result.files["openclaw/policy.yaml"])["bindings"] \
        == [config["bindings"][1]]
    assert any(p.startswith("bindings[0].agentId (routes to agent 'work'")
               for p in result.partial)
    # 2026.9.6's loader fills in a `main` entry, and then refuses the binding
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.9")
    assert refused.value.messages == ["bindings[0].agentId: OpenClaw 2026.9 refuses the "
                                      "config: unknown agent id 'work' (not in agents.entries)"]


def test_the_build_would_refuse_what_the_import_refuses(tmp_path: Path) -> None:
    # (why the import decides: kept as written, the definitions would not build, TC170)
    files = import_openclaw({**ROSTER, "bindings": [
        {"agentId": "work", "match": {"channel": "telegram"}}]}, "c.json",
        openclaw="2026.9").files
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text.replace("agentId: work", "agentId: wrok"), "utf-8")
    assert [d.code for d in validate(tmp_path) if d.severity == "error"] == ["TC170"]


@pytest.mark.parametrize(("binding", "line"), [
    ({"agentId": "main", "match": {"channel": " "}},
     "bindings[0] (no channel: OpenClaw ignores the binding)"),
    ({"agentId": "main", "match": {"channel": "telegram", "peer": {"kind": "group", "id": " "}}},
     "bindings[0] (a peer without an id: OpenClaw ignores the binding)"),
])
def test_a_binding_openclaw_ignores_is_left_out_and_listed(binding: dict[str, Any],
                                                           line: str) -> None:
    result = import_openclaw({"bindings": [binding]}, "c.json", openclaw="2026.9")
    assert line in result.left_out
    assert "bindings" not in (yaml.safe_load(result.files["openclaw/policy.yaml"]) or {})


def test_2026_3_reads_dm_as_direct_and_has_no_peer_wildcard() -> None:
    config = {**ROSTER_3, "bindings": [
        {"agentId": "work", "match": {"channel": "telegram", "peer": {"kind": "dm", "id": "*"}}}]}
    result = import_openclaw(config, "c.json", openclaw="2026.3")
    policy = yaml.safe_load(result.files["openclaw/policy.yaml"])
    assert policy["bindings"][0]["match"]["peer"] == {"kind": "direct", "id": "*"}
    assert any(n.startswith('bindings[0].match.peer.kind: peer kind "dm" imported as "direct"')
               for n in result.notes)
    assert any("OpenClaw 2026.3 has no peer wildcard" in n for n in result.notes)


def test_a_binding_2026_3_refuses_is_left_out_as_access_relevant() -> None:
    # (OpenClaw's own docs, tools/multi-agent-sandbox-tools.md, still write `provider`)
    config = {**ROSTER_3, "bindings": [
        {"agentId": "work", "match": {"provider": "whatsapp", "accountId": "*"}},
        {"agentId": "work", "match": {"channel": "slack"}}]}
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", openclaw="2026.3")
    assert refused.value.messages[0].startswith(
        "bindings[0].match.provider: OpenClaw 2026.3 refuses the config: unknown key "
        "'provider'")
    result = import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.3")
    policy = yaml.safe_load(result.files["openclaw/policy.yaml"])
    assert policy["bindings"] == [config["bindings"][1]]
    with pytest.raises(ImportRefused):  # 2026.9's loader refuses the config
        import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.9")


def test_2026_9_keys_imported_for_2026_3_are_access_relevant() -> None:
    config = {**ROSTER_3, "session": {"groupScope": "main", "dmScope": "per-peer"},
              "bindings": [{"agentId": "work", "match": {"channel": "telegram"},
                            "session": {"dmScope": "per-peer"}}]}
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", openclaw="2026.3")
    assert sorted(m.split(":")[0] for m in refused.value.messages) \
        == ["bindings[0].session", "session.groupScope"]
    result = import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.3")
    policy = yaml.safe_load(result.files["openclaw/policy.yaml"])
    assert policy["session"] == {"dmScope": "per-peer"}
    assert policy["bindings"] == [{"agentId": "work", "match": {"channel": "telegram"}}]


# -- secrets in the kept routing positions ---------------------------------------------
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
ORDINARY_IDS = [
    ("telegram", "direct", "123456789"), ("telegram", "group", "-1001234567890"),
    ("whatsapp", "direct", "+15551234567"), ("whatsapp", "group", "120363025246125486@g.us"),
    ("discord", "channel", "1234567890123456789"), ("slack", "channel", "C0123ABCDEF"),
    ("msteams", "channel", "19:abcdef0123456789@thread.tacv2"),
    ("matrix", "channel", "!OGEhHVWSdvArJzumhm:matrix.org"),
    ("signal", "direct", "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"),
    ("signal", "group", SIGNAL_GROUP),
]


def test_ordinary_chat_ids_and_linked_identities_pass() -> None:
    bindings = [{"agentId": "main", "match": {"channel": c, "peer": {"kind": k, "id": i}}}
                for c, k, i in ORDINARY_IDS]
    links = {"alice": [f"{c}:{i}" for c, k, i in ORDINARY_IDS if k == "direct"]}
    policy = _policy({"bindings": bindings, "session": {"identityLinks": links},
                      "channels": {"signal": {"groups": {SIGNAL_GROUP: {"tools": {
                          "deny": ["exec"]}}}}}}, openclaw="2026.9")
    assert policy["bindings"] == bindings
    assert policy["session"]["identityLinks"] == links
    assert SIGNAL_GROUP in policy["channels"]["signal"]["groups"]


@pytest.mark.parametrize(("config", "path"), [
    # a token where a chat id belongs
    ({"bindings": [{"agentId": "main", "match": {"channel": "telegram",
                                                 "peer": {"kind": "direct", "id": GITHUB}}}]},
     "bindings[0].match.peer.id"),
    # the config's own bot token as a chat id
    ({"channels": {"telegram": {"botToken": "123456:AAbbCCddEE"}},
      "bindings": [{"agentId": "main", "match": {"channel": "telegram",
                                                 "peer": {"kind": "group",
                                                          "id": "123456:AAbbCCddEE"}}}]},
     "bindings[0].match.peer.id"),
    # random-looking, on a Signal chat but not a Signal group id's shape
    ({"bindings": [{"agentId": "main", "match": {"channel": "signal", "peer": {
        "kind": "group", "id": "Zq8Xw2Lk9Pm4Rt7Yv1Bn6Hc3Jd5Fs0GaQe"}}}]},
     "bindings[0].match.peer.id"),
    # a Signal group id's shape where no Signal chat is named
    ({"bindings": [{"agentId": "main", "match": {"channel": "telegram", "peer": {
        "kind": "group", "id": SIGNAL_GROUP}}}]}, "bindings[0].match.peer.id"),
    ({"bindings": [{"agentId": "main", "match": {"channel": "slack", "guildId": GITHUB}}]},
     "bindings[0].match.guildId"),
    ({"session": {"identityLinks": {"alice": ["telegram:1", f"slack:{GITHUB}"]}}},
     "session.identityLinks.alice[1]"),
])
def test_a_credential_in_a_routing_position_is_refused_and_never_printed(
        config: dict[str, Any], path: str) -> None:
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", openclaw="2026.9")
    (message,) = refused.value.messages
    assert message.startswith(f"{path}: holds a credential"), message
    assert GITHUB not in message and "AAbbCCddEE" not in message
    # --allow-partial leaves out the whole binding (a binding without part of its match would
    # route other messages), or the one linked id
    result = import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.9")
    text = result.files["openclaw/policy.yaml"]
    assert GITHUB not in text and "AAbbCCddEE" not in text and SIGNAL_GROUP not in text
    assert "Zq8Xw2Lk" not in text
    policy = yaml.safe_load(text) or {}
    assert "bindings" not in policy
    if "session" in config:
        assert policy["session"] == {"identityLinks": {"alice": ["telegram:1"]}}
