"""Messages in, on the command line and in ``toolc.api``: ``toolc route``, ``resolve`` and
``explain`` with ``--peer`` (and the other routing options), ``--no-owner``, the refusal of a
group OpenClaw 2026.9 would ignore (``--no-strict`` for the release's silent answer) and
``toolc identity add`` storing a message. Small inline definitions with bindings, one build
per module and release."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from toolc import api
from toolc.audit.checks import resolve_command
from toolc.cli import main
from toolc.serve.mcp_identity import Identities

from tests.helpers import write_definitions

CATALOG = [{"name": name, "description": f"The {name} tool.", "parameters": {"type": "object"},
            **({"ownerOnly": True} if name == "gateway" else {})}
           for name in ("read", "exec", "message", "gateway")]
AGENTS = {"list": [{"id": "main", "default": True},
                   {"id": "support", "tools": {"deny": ["exec"]}},
                   {"id": "ops", "tools": {"deny": ["message"]}}]}
CHANNELS = {"telegram": {"groups": {"-100123": {
    "tools": {"deny": ["exec"]}, "toolsBySender": {"id:42": {"alsoAllow": ["exec"]}}}}}}
# one binding per tier, each on its own line of d.yaml (BINDING_LINE + index)
BINDINGS = [
    {"agentId": "support", "match": {"channel": "telegram",
                                     "peer": {"kind": "group", "id": "-100999"}}},
    {"agentId": "ops", "match": {"channel": "discord", "guildId": "g1", "roles": ["r1"]}},
    {"agentId": "support", "match": {"channel": "discord", "guildId": "g1"}},
    {"agentId": "ops", "match": {"channel": "msteams", "teamId": "t1"}},
    {"agentId": "support", "match": {"channel": "slack", "accountId": "work"}},
    {"agentId": "ops", "match": {"channel": "slack", "peer": {"kind": "channel", "id": "C1"}}},
    {"agentId": "support", "match": {"channel": "whatsapp", "accountId": "*"}},
    {"agentId": "ops", "match": {"channel": "signal", "peer": {"kind": "group", "id": "*"}}},
]
BINDINGS_TEXT = "bindings:\n" + "".join(f"  - {json.dumps(b)}\n" for b in BINDINGS)
BINDING_LINE = 4  # d.yaml: version, openclaw, "bindings:", then one binding a line


def _project(root: Path, release: str, **sections: Any) -> Path:
    """definitions/ (d.yaml: the bindings, e.yaml: the rest) and build/ under ``root``."""
    defs = root / "definitions"
    write_definitions(defs, {
        "d.yaml": f'version: 1\nopenclaw: "{release}"\n{BINDINGS_TEXT}',
        "e.yaml": {"catalog": CATALOG, "agents": AGENTS, "channels": CHANNELS, **sections}})
    api.build(defs, root / "build", cache=False)
    return root


@pytest.fixture(scope="module")
def p9(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("p9"), "2026.9",
                    session={"dmScope": "per-channel-peer"})


@pytest.fixture(scope="module")
def p3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("p3"), "2026.3")


def _run(root: Path, *args: str) -> Result:
    """``toolc ARGS`` in ``root``: build/ and definitions/ are the project's, as a user has
    them (positions are named as the definitions directory is)."""
    with contextlib.chdir(root):
        return CliRunner().invoke(main, list(args), env={"NO_COLOR": "1"})


def route_json(root: Path, *args: str) -> dict[str, Any]:
    result = _run(root, "route", "--json", *args)
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def at(index: int) -> str:
    return f"definitions/d.yaml:{BINDING_LINE + index}:5"


# -- toolc route: every tier and option -------------------------------------------------------
@pytest.mark.parametrize(("args", "agent", "key", "matched_by", "index"), [
    (["--channel", "telegram", "--peer", "group:-100999"], "support",
     "agent:support:telegram:group:-100999", "binding.peer", 0),
    (["--channel", "discord", "--guild", "g1", "--role", "r0", "--role", "r1",
      "--peer", "channel:c5"], "ops", "agent:ops:discord:channel:c5", "binding.guild+roles", 1),
    (["--channel", "discord", "--guild", "g1", "--role", "r9"], "support",
     "agent:support:main", "binding.guild", 2),
    (["--channel", "msteams", "--team", "t1", "--peer", "channel:19:ab"], "ops",
     "agent:ops:msteams:channel:19:ab", "binding.team", 3),
    (["--channel", "slack", "--account", "Work", "--peer", "direct:U7"], "support",
     "agent:support:slack:direct:u7", "binding.account", 4),
    (["--channel", "slack", "--peer", "channel:T9", "--parent-peer", "channel:C1"], "ops",
     "agent:ops:slack:channel:t9", "binding.peer.parent", 5),
    (["--channel", "whatsapp", "--account", "other", "--peer", "dm:+1555"], "support",
     "agent:support:whatsapp:direct:+1555", "binding.channel", 6),
    (["--channel", "signal", "--peer", "group:AbC="], "ops", "agent:ops:signal:group:AbC=",
     "binding.peer.wildcard", 7),
])
def test_route_names_the_tier_and_the_deciding_binding(
        p9: Path, args: list[str], agent: str, key: str, matched_by: str, index: int) -> None:
    found = route_json(p9, *args)
    assert (found["agent_id"], found["session_key"], found["matched_by"]) == \
        (agent, key, matched_by)
    assert found["binding"] == {"index": index, "source": at(index)}
    text = _run(p9, "route", *args)
    assert text.exit_code == 0, text.output
    assert text.stdout == f"agent {agent}, session {key} ({matched_by}, {at(index)})\n"


def test_route_json_shape(p9: Path) -> None:
    found = route_json(p9, "--channel", "Slack", "--account", "Work",
                       "--peer", "direct:U7", "--dm-scope", "per-account-channel-peer")
    assert set(found) == {"agent_id", "session_key", "main_session_key", "matched_by",
                          "account_id", "channel", "binding", "source"}
    assert found["session_key"] == "agent:support:slack:work:direct:u7"
    assert found["main_session_key"] == "agent:support:main"
    assert (found["channel"], found["account_id"]) == ("slack", "work")
    assert found["source"]["kind"] == "build" and found["source"]["current"] is True


def test_route_loader_binding_default_and_scopes(p9: Path) -> None:
    """telegram is configured: 2026.9's loader adds its channel-wide binding to the default
    agent (no position); slack's unmatched message takes the default agent."""
    added = _run(p9, "route", "--channel", "telegram", "--peer", "group:-100123")
    assert added.stdout == ("agent main, session agent:main:telegram:group:-100123 "
                            "(binding.channel, added by OpenClaw's loader)\n")
    assert route_json(p9, "--channel", "telegram")["binding"] == {"index": len(BINDINGS),
                                                                   "source": None}
    default = _run(p9, "route", "--channel", "slack", "--peer", "direct:U1")
    assert default.stdout == ("agent main, session agent:main:slack:direct:u1 "
                              "(default: no binding matches)\n")
    assert route_json(p9, "--channel", "slack")["binding"] is None
    main_key = route_json(p9, "--channel", "telegram", "--peer", "group:-1",
                          "--group-scope", "main")
    assert main_key["session_key"] == "agent:main:main"
    chosen = route_json(p9, "--channel", "irc", "--default-agent", "OPS")
    assert (chosen["agent_id"], chosen["matched_by"]) == ("ops", "default")


def test_route_from_definitions_names_their_files(p9: Path) -> None:
    result = _run(p9, "route", "--definitions", "definitions", "--channel", "telegram",
                  "--peer", "group:-100999", "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["binding"] == {"index": 0, "source": at(0)}
    assert found["source"]["kind"] == "definitions"
    assert "source: definitions definitions/" in result.stderr


def test_route_refusal_is_openclaws_reason(tmp_path: Path) -> None:
    """No binding matches and no default agent (agents.ownership: explicit): exit 1 with
    AgentSelectionRequiredError naming the channel and account, no traceback."""
    _project(tmp_path, "2026.9", agents={"ownership": "explicit", "list": AGENTS["list"][1:]})
    result = _run(tmp_path, "route", "--channel", "irc", "--account", "Ops")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines()[-1].startswith(
        "error: AgentSelectionRequiredError: agent selection required: no binding routes a "
        "message on irc account ops, and no default agent can be chosen; add a "
        "channel-wide binding for irc:ops")
    assert "Traceback" not in result.output
    refused = _run(tmp_path, "resolve", "--channel", "irc", "--peer", "direct:1")
    assert refused.exit_code == 1 and "no binding routes a message on irc" in refused.stderr
    with pytest.raises(api.AgentSelectionRequiredError, match="no binding routes"):
        api.route(tmp_path / "build", "irc")


def test_route_usage_errors(p9: Path, p3: Path) -> None:
    for peer in ("chat:1", "group:", "group"):
        bad = _run(p9, "route", "--channel", "telegram", "--peer", peer)
        assert bad.exit_code == 2, peer
        assert "Invalid value for '--peer': peer must be KIND:ID" in bad.stderr
    assert _run(p9, "route", "--peer", "group:1").exit_code == 2  # --channel is required
    old = _run(p3, "route", "--channel", "telegram", "--dm-scope", "per-peer")
    assert old.exit_code == 2
    assert "dm_scope (--dm-scope): OpenClaw 2026.3 routes take no dm_scope" in old.stderr


def test_route_under_2026_3(p3: Path) -> None:
    """2026.3.2 routes too: no loader binding (telegram is the default agent's by
    ``default``), no peer-wildcard tier (``*`` is an id), the whole key lowercased."""
    assert route_json(p3, "--channel", "telegram")["matched_by"] == "default"
    assert route_json(p3, "--channel", "signal", "--peer", "group:AbC=")["matched_by"] == \
        "default"
    found = route_json(p3, "--channel", "telegram", "--peer", "group:-100999")
    assert (found["matched_by"], found["binding"]) == ("binding.peer",
                                                       {"index": 0, "source": at(0)})


# -- resolve and explain route a message first ------------------------------------------------
def test_resolve_routes_the_message_first(p9: Path) -> None:
    """The message in group -100123 gets the group's policy through the session key the
    route builds (exec denied, but alsoAllowed to sender 42): no session key to write."""
    plain = _run(p9, "resolve", "--channel", "telegram", "--peer", "group:-100123",
                 "--sender-id", "7")
    assert plain.exit_code == 0, plain.output
    assert plain.stdout.split() == ["read", "message", "gateway"]
    assert ("route: agent main, session agent:main:telegram:group:-100123 (binding.channel, "
            "added by OpenClaw's loader)") in plain.stderr.splitlines()
    sender = _run(p9, "resolve", "--json", "--channel", "telegram", "--peer", "group:-100123",
                  "--sender-id", "42")
    out = json.loads(sender.stdout)
    assert set(out) == {"tools", "source", "route"}
    assert out["tools"] == ["read", "exec", "message", "gateway"]
    alone = route_json(p9, "--channel", "telegram", "--peer", "group:-100123")
    assert out["route"] == {k: v for k, v in alone.items() if k != "source"}
    routed = _run(p9, "resolve", "--channel", "telegram", "--peer", "group:-100999")
    assert routed.stdout.split() == ["read", "message", "gateway"]  # support denies exec
    assert f"binding.peer, {at(0)})" in routed.stderr
    reference = _run(p9, "resolve", "--definitions", "definitions", "--json", "--channel",
                     "discord", "--guild", "g1", "--role", "r1", "--peer", "channel:c5")
    assert json.loads(reference.stdout)["tools"] == ["read", "exec", "gateway"]  # ops
    assert json.loads(reference.stdout)["route"]["binding"]["source"] == at(1)


def test_plain_resolve_has_no_route(p9: Path) -> None:
    out = json.loads(_run(p9, "resolve", "--json", "--agent", "ops").stdout)
    assert set(out) == {"tools", "source"}


def test_explain_routes_the_message_first(p9: Path) -> None:
    text = _run(p9, "explain", "--build", "build", "--channel", "telegram", "--peer",
                "group:-100123", "--sender-id", "7", "exec")
    assert text.exit_code == 1, text.output  # not visible
    lines = text.stdout.splitlines()
    assert lines[0] == ("route: agent main, session agent:main:telegram:group:-100123 "
                        "(binding.channel, added by OpenClaw's loader)")
    assert lines[1].startswith("exec: not visible (removed by: group)")
    as_json = _run(p9, "explain", "--definitions", "definitions", "--json", "--channel",
                   "telegram", "--peer", "group:-100999", "exec")
    out = json.loads(as_json.stdout)
    assert out["decided_by"] == "agent"
    assert out["route"]["agent_id"] == "support"
    assert out["route"]["binding"] == {"index": 0, "source": at(0)}


def test_group_scope_main_means_no_group_policy(p9: Path) -> None:
    """``--group-scope main`` keys the group's message to the agent's main session, which
    names no group: 2026.9 applies no group policy (and toolc does not refuse the route's
    own group)."""
    result = _run(p9, "resolve", "--channel", "telegram", "--peer", "group:-100123",
                  "--group-scope", "main")
    assert result.exit_code == 0, result.output
    assert "exec" in result.stdout.split()


def test_routing_options_exclude_what_the_route_decides(p9: Path) -> None:
    for extra in (["--agent", "ops"], ["--session-key", "agent:ops:main"],
                  ["--group", "-1"], ["--group-space", "g"], ["--spawn-depth", "1"]):
        result = _run(p9, "resolve", "--channel", "telegram", "--peer", "group:-1", *extra)
        assert result.exit_code == 2, (extra, result.output)
        assert "the route decides the agent, the session key and the group" in result.stderr
    no_channel = _run(p9, "explain", "--peer", "group:-1", "exec")
    assert no_channel.exit_code == 2 and "needs its --channel" in no_channel.stderr


def test_api_route_resolve_and_explain_take_a_message(p9: Path) -> None:
    build, defs = p9 / "build", p9 / "definitions"
    found = api.route(build, "telegram", peer=("group", "-100999"))
    assert (found.agent_id, found.binding_source) == ("support", at(0))
    message = {"channel": "telegram", "peer": "group:-100123", "sender_id": "7"}
    result = api.resolve(build, request=message)
    assert result.names == ("read", "message", "gateway")
    assert result.route is not None and result.route.matched_by == "binding.channel"
    assert api.resolve(build, definitions=defs, request=message).names == result.names
    ex = api.explain("exec", build_dir=build, request=message)
    assert not ex.visible and ex.route == result.route
    with pytest.raises(ValueError, match="not both"):
        api.resolve(build, {"agent_id": "main"}, request=message)
    with pytest.raises(TypeError, match="unknown keyword"):
        api.route(build, "telegram", sender_id="7")
    with pytest.raises(api.RequestError, match="peer must be KIND:ID"):
        api.resolve(build, request={"channel": "telegram", "peer": "group"})


# -- --no-owner ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("release", "unset", "owner", "no_owner"), [
    ("2026.9", True, True, False),  # an unset owner keeps owner-only tools in 2026.9
    ("2026.3", False, True, False),
])
def test_no_owner_under_both_targets(p9: Path, p3: Path, release: str, unset: bool,
                                     owner: bool, no_owner: bool) -> None:
    root = p9 if release == "2026.9" else p3
    for flags, expected in (([], unset), (["--owner"], owner), (["--no-owner"], no_owner)):
        for engine in ([], ["--definitions", "definitions"]):
            result = _run(root, "resolve", "--agent", "main", *engine, *flags)
            assert result.exit_code == 0, result.output
            assert ("gateway" in result.stdout.split()) is expected, (release, flags, engine)
        explained = _run(root, "explain", "--build", "build", "--agent", "main", *flags,
                         "gateway")
        assert explained.exit_code == (0 if expected else 1), (release, flags)
    routed = _run(root, "resolve", "--channel", "whatsapp", "--peer", "direct:1", "--no-owner")
    assert "gateway" not in routed.stdout.split()


# -- a group OpenClaw 2026.9 would ignore ---------------------------------------------------
HINT = ("  hint: pass the message, --channel telegram --peer group:-100123 (toolc routes it, "
        "and its session key names the group), or that session key, --session-key "
        "agent:main:telegram:group:-100123")


@pytest.mark.parametrize("command", [
    ["resolve"], ["resolve", "--definitions", "definitions"], ["explain", "--build", "build"],
    ["explain", "--definitions", "definitions"]])
def test_a_group_the_session_key_does_not_name_is_refused(p9: Path, command: list[str]) -> None:
    tool = ["exec"] if command[0] == "explain" else []
    result = _run(p9, *command, "--agent", "main", "--channel", "telegram", "--group",
                  "-100123", "--sender-id", "7", *tool)
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert lines[-2].startswith("error: UntrustedGroupError: group_id='-100123' would be "
                                "ignored: OpenClaw 2026.9 applies a group's policy only when "
                                "the session key names the group")
    assert lines[-1] == HINT + "; --no-strict ignores the group as OpenClaw does"


def test_no_strict_gives_openclaws_silent_answer(p9: Path) -> None:
    """The fail-open the refusal prevents: OpenClaw 2026.9 ignores the group, exec stays."""
    args = ["--agent", "main", "--channel", "telegram", "--group", "-100123", "--no-strict"]
    assert "exec" in _run(p9, "resolve", *args).stdout.split()
    explained = _run(p9, "explain", "--build", "build", *args, "exec")
    assert explained.exit_code == 0
    assert ("group: skipped (group -100123 is ignored: neither the session key nor "
            "spawned_by names it (OpenClaw 2026.9 trusts only those))") in explained.stdout
    space = _run(p9, "resolve", "--channel", "discord", "--group-space", "g1")
    assert space.exit_code == 1 and "group_space='g1' would be ignored" in space.stderr
    named = _run(p9, "resolve", "--session-key", "agent:main:telegram:group:-100123",
                 "--group", "-100123")
    assert named.exit_code == 0 and "exec" not in named.stdout.split()


def test_2026_3_trusts_the_callers_group(p3: Path) -> None:
    result = _run(p3, "resolve", "--agent", "main", "--channel", "telegram", "--group",
                  "-100123")
    assert result.exit_code == 0, result.output
    assert "exec" not in result.stdout.split()


def test_api_refuses_unless_not_strict(p9: Path) -> None:
    context = {"agent_id": "main", "message_provider": "telegram", "group_id": "-100123"}
    for defs in (None, p9 / "definitions"):
        with pytest.raises(api.UntrustedGroupError) as caught:
            api.resolve(p9 / "build", context, definitions=defs)
        assert (caught.value.field, caught.value.value) == ("group_id", "-100123")
        assert "exec" in api.resolve(p9 / "build", context, definitions=defs,
                                     strict=False).names
    with pytest.raises(api.UntrustedGroupError):
        api.explain("exec", context, build_dir=p9 / "build")


# -- identity add ------------------------------------------------------------------------------
def test_identity_add_stores_a_message(p9: Path, tmp_path: Path) -> None:
    ids = tmp_path / "ids.yaml"
    added = _run(p9, "identity", "add", "alice", "--identities", str(ids), "--channel",
                 "telegram", "--account", "work", "--peer", "group:-100123", "--parent-peer",
                 "group:-1", "--guild", "g", "--team", "t", "--role", "r1", "--role", "r2",
                 "--default-agent", "ops", "--dm-scope", "per-peer", "--group-scope",
                 "per-group", "--sender-id", "42", "--sender-e164", "+1555",
                 "--sender-username", "al", "--sender-name", "Al", "--no-owner",
                 "--provider", "openai", "--model", "gpt-5", "--sandboxed")
    assert added.exit_code == 0, added.output
    identity = Identities.load(ids).lookup(added.stdout.strip())
    assert identity is not None
    assert dict(identity.context) == {
        "channel": "telegram", "account_id": "work", "peer": "group:-100123",
        "parent_peer": "group:-1", "guild_id": "g", "team_id": "t",
        "member_role_ids": ("r1", "r2"), "default_agent_id": "ops", "dm_scope": "per-peer",
        "group_scope": "per-group", "sender_id": "42", "sender_e164": "+1555",
        "sender_username": "al", "sender_name": "Al", "sender_is_owner": False,
        "model_provider": "openai", "model_id": "gpt-5", "sandboxed": True}
    assert list(identity.context) == list(dict(identity.context))  # Request's field order
    dm = _run(p9, "identity", "add", "bob", "--identities", str(ids), "--channel", "whatsapp",
              "--peer", "dm:+1")
    assert dm.exit_code == 0, dm.output
    assert dict(Identities.load(ids).lookup(dm.stdout.strip()).context) == {  # type: ignore[union-attr]
        "channel": "whatsapp", "peer": "dm:+1"}
    token = api.add_identity(ids, "carol", request={"channel": "telegram",
                                                    "peer": ("group", "-5"),
                                                    "member_role_ids": ("r",)})
    assert dict(Identities.load(ids).lookup(token).context) == {  # type: ignore[union-attr]
        "channel": "telegram", "peer": "group:-5", "member_role_ids": ("r",)}


def test_identity_add_refuses_an_untrusted_group(p9: Path, p3: Path, tmp_path: Path) -> None:
    ids = tmp_path / "ids.yaml"
    refused = _run(p9, "identity", "add", "eve", "--identities", str(ids), "--agent", "main",
                   "--channel", "telegram", "--group", "-100123", "--no-owner")
    assert refused.exit_code == 1, refused.output
    assert "Traceback" not in refused.output and not ids.exists()
    lines = refused.stderr.splitlines()
    assert lines[-2].startswith("error: UntrustedGroupError: group_id='-100123' would be "
                                "ignored")
    assert lines[-1] == HINT  # no --no-strict here: a stored identity is never lenient
    # without a build the group is refused too (the newest release's rule) ...
    nowhere = _run(p9, "identity", "add", "eve", "--identities", str(ids), "--build",
                   "missing", "--channel", "telegram", "--group", "-100123")
    assert nowhere.exit_code == 1 and "UntrustedGroupError" in nowhere.stderr
    # ... a session key that names it, or a 2026.3 build, which trusts the caller's group
    named = _run(p9, "identity", "add", "eve", "--identities", str(ids), "--session-key",
                 "agent:main:telegram:group:-100123", "--group", "-100123", "--no-owner")
    assert named.exit_code == 0, named.output
    old = _run(p3, "identity", "add", "frank", "--identities", str(ids), "--agent", "main",
               "--channel", "telegram", "--group", "-100123")
    assert old.exit_code == 0, old.output
    assert dict(Identities.load(ids).lookup(named.stdout.strip()).context) == {  # type: ignore[union-attr]
        "session_key": "agent:main:telegram:group:-100123", "group_id": "-100123",
        "sender_is_owner": False}
    with pytest.raises(api.UntrustedGroupError):
        api.add_identity(ids, "gina", {"group_channel": "#general"}, build_dir=p9 / "build")


def test_counterexample_commands_say_no_owner() -> None:
    """The access checks print a counterexample as a resolve command: a known non-owner is
    --no-owner there (under 2026.9 leaving the flag out keeps owner-only tools)."""
    assert resolve_command({"agent_id": "a", "sender_is_owner": False}) == \
        "toolc resolve --agent a --no-owner"
