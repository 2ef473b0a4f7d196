"""OpenClaw 2026.9.6's request-time rules, each beside its 2026.3.2 behaviour, in the reference
interpreter and the generated runtime (one build per target and scenario).

Each test names the release function it follows (openclaw@2026.9.6 ``dist/``):

* owner: ``createOpenClawCodingToolsInternal`` (agent-tools-*.mjs) denies
  ``GATEWAY_OWNER_ONLY_CORE_TOOLS`` (dangerous-tools-*.mjs) only when ``senderIsOwner ===
  false``;
* agent selection: ``resolveEffectiveToolPolicy`` (agent-tools.policy-*.mjs) ->
  ``resolveSessionAgentIds`` -> ``resolveSelectedSessionAgentId`` (agent-scope-*.mjs),
  ``resolveDefaultAgentId`` / ``resolveSoleAgentId`` (agent-scope-config-*.mjs), which throw
  ``AgentSelectionRequiredError``;
* trusted group id: ``resolveTrustedGroupId``, ``resolveGroupContextFromSessionKey``,
  ``buildScopedGroupIdCandidates`` and ``resolveGroupToolPolicyOutcome``
  (agent-tools.policy-*.mjs), ``resolveChannelGroupToolsPolicy`` (group-policy-*.mjs);
* sender layer: ``resolveSenderToolPolicy`` (sender-tool-policy-*.mjs) with
  ``matchToolsBySenderPolicy`` (group-policy-*.mjs), a step after the group step
  (``buildDefaultToolPolicyPipelineSteps``), skipped for the owner on webchat
  (``isOwnerInternalSession``, conversation-capability-profile-*.mjs);
* byProvider: ``resolveProviderToolPolicyEntry`` (provider-tool-policy-*.mjs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from toolc.api import build, compile_files
from toolc.builds import read_tables
from toolc.cli import main
from toolc.diagnostics import DefinitionsError
from toolc.pipeline.writer import publish
from toolc.runtime._errors import AgentSelectionRequiredError
from toolc.semantics.access import ClassSpace, TablesView

from tests.helpers import ROOT, Engines, engines_for, import_runtime, write_definitions

NAMES = ["read", "exec", "message", "gateway", "nodes", "web_search"]


def _catalog(owner_only: tuple[str, ...] = ("gateway",)) -> list[dict[str, Any]]:
    out = []
    for name in NAMES:
        tool: dict[str, Any] = {"name": name, "description": f"The {name} tool.",
                                "parameters": {"type": "object"}}
        if name in owner_only:
            tool["ownerOnly"] = True
        out.append(tool)
    return out


def _engines(tmp: Path, target: str | None, **sections: Any) -> Engines:
    data: dict[str, Any] = {"catalog": _catalog(), **sections}
    if target is not None:
        data["openclaw"] = target
    return engines_for(tmp, {"d.yaml": data})


# -- owner ------------------------------------------------------------------------------------
def test_owner_unknown_keeps_owner_only_tools_in_2026_9(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9")
    assert {"gateway", "nodes"} <= set(e.both())
    assert {"gateway", "nodes"} <= set(e.both(sender_is_owner=None))
    assert {"gateway", "nodes"} <= set(e.both(sender_is_owner=True))
    # GATEWAY_OWNER_ONLY_CORE_TOOLS by name: nodes goes too, though the catalog does not flag it
    assert not {"gateway", "nodes"} & set(e.both(sender_is_owner=False))


def test_owner_unknown_removes_owner_only_tools_in_2026_3(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.3")
    assert "gateway" not in e.both()
    assert "gateway" not in e.both(sender_is_owner=False)
    assert "gateway" in e.both(sender_is_owner=True)
    assert "nodes" in e.both(sender_is_owner=False)  # 2026.3.2 reads the tools' flags only


@pytest.mark.parametrize("malformed", [0, 1, "yes", "", []])
def test_a_malformed_owner_never_hits_a_wider_cached_entry(tmp_path: Path,
                                                           malformed: Any) -> None:
    e = _engines(tmp_path, "2026.9")
    rt = e.runtime
    wide = rt.resolve(sender_is_owner=None).names
    assert "gateway" in wide
    with pytest.raises(TypeError):  # nothing cached for it yet: the check refuses it
        rt.resolve(sender_is_owner=malformed)
    narrow = rt.resolve(sender_is_owner=False).names
    try:
        hit = rt.resolve(sender_is_owner=malformed).names
    except TypeError:
        return
    assert hit == narrow  # at most the known non-owner's entry


# -- agent selection --------------------------------------------------------------------------
AGENTS = {"list": [{"id": "a1", "tools": {"deny": ["read"]}},
                   {"id": "a2", "tools": {"deny": ["exec"]}}]}


def test_no_agent_uses_the_default_agent(tmp_path: Path) -> None:
    roster = {"list": [AGENTS["list"][0], {**AGENTS["list"][1], "default": True}]}
    e = _engines(tmp_path, "2026.9", agents=roster)
    assert e.both() == e.both(agent_id="a2")
    assert "exec" not in e.both()
    # the session key's agent wins over the default
    assert e.both(session_key="agent:a1:main") == e.both(agent_id="a1")


def test_no_agent_uses_the_sole_agent(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9", agents={"list": [AGENTS["list"][0]]})
    assert "read" not in e.both()


def test_no_agent_with_explicit_ownership_is_refused(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9", agents={**AGENTS, "ownership": "explicit"})
    for ctx in ({}, {"session_key": "main"}, {"message_provider": "telegram"}):
        with pytest.raises(e.runtime.AgentSelectionRequiredError) as rt_err:
            e.runtime.resolve(**ctx)
        with pytest.raises(AgentSelectionRequiredError) as ref_err:
            e.reference.resolve(**ctx)
        assert str(rt_err.value) == str(ref_err.value)
        assert rt_err.value.agent_ids == ("a1", "a2")
        assert isinstance(rt_err.value, ValueError)
    assert "read" not in e.both(agent_id="a1")
    assert e.both(agent_id="nobody") == e.both(agent_id="other")  # undeclared: no agent layer


def test_session_agent_and_explicit_agent_must_agree(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9", agents={**AGENTS, "ownership": "explicit"})
    refused = e.both(session_key="agent:a1:main", agent_id="a2")
    assert refused[0] == "!AgentSelectionRequiredError" and "'a1', not 'a2'" in refused[1]
    assert e.both(session_key="agent:A1:main", agent_id="a1") == e.both(agent_id="a1")
    # classifySessionKeyShape "malformed_agent": OpenClaw refuses default-agent resolution
    assert e.both(session_key="agent::x")[0] == "!AgentSelectionRequiredError"


def test_2026_3_agent_resolution_is_unchanged(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.3", agents=AGENTS)
    everything = e.both(sender_is_owner=True)
    assert {"read", "exec"} <= set(everything)  # no agent: no agent layer, never a refusal
    assert e.both(session_key="agent:a1:main", agent_id="a2", sender_is_owner=True) == \
        e.both(agent_id="a2", sender_is_owner=True)


# -- trusted group id -------------------------------------------------------------------------
CHANNELS = {"telegram": {"groups": {"g1": {"tools": {"deny": ["message"]}},
                                    "g2": {"tools": {"deny": ["read"]}},
                                    "g1:topic:7": {"tools": {"deny": ["exec"]}}}}}


def test_a_callers_group_counts_only_when_the_session_names_it(tmp_path: Path) -> None:
    e9 = _engines(tmp_path / "9", "2026.9", channels=CHANNELS)
    e3 = _engines(tmp_path / "3", "2026.3", channels=CHANNELS)
    caller = {"message_provider": "telegram", "group_id": "g1"}
    # no session key names g1: OpenClaw ignores it, toolc refuses it unless told not to
    assert e9.both(**caller)[0] == "!UntrustedGroupError"
    assert "message" in e9.both(**caller, strict=False)
    assert "message" not in e3.both(**caller)
    named = {"session_key": "agent:main:telegram:group:g1"}
    assert "message" not in e9.both(**named, group_id="g1")
    # another group than the session's: dropped, the session's group applies
    assert e9.both(**named, group_id="g2")[0] == "!UntrustedGroupError"
    assert e9.both(**named, group_id="g2", strict=False) == e9.both(**named)
    # spawned_by names groups too
    assert "read" not in e9.both(spawned_by="agent:main:telegram:group:g2", group_id="g2")


def test_session_key_channel_wins_over_the_message_provider(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9", channels=CHANNELS)
    ctx = {"session_key": "agent:main:telegram:group:g1", "message_provider": "whatsapp"}
    assert "message" not in e.both(**ctx)


def test_scoped_group_ids_are_tried_most_specific_first(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9", channels=CHANNELS)
    topic = e.both(session_key="agent:main:telegram:group:g1:topic:7")
    assert "exec" not in topic and "message" in topic  # g1:topic:7 before g1
    sender = e.both(session_key="agent:main:telegram:group:g1:topic:9:sender:42")
    assert "message" not in sender  # g1:topic:9:sender:42, g1:topic:9, then g1
    thread = e.both(session_key="agent:main:telegram:group:g2:thread:5")
    assert "read" not in thread  # the thread suffix is cut first


# -- the sender layer -------------------------------------------------------------------------
SENDERS = {"toolsBySender": {"channel:telegram:42": {"deny": ["exec"]},
                             "id:42": {"deny": ["web_search"]}, "*": {"deny": ["read"]}}}


def test_global_and_agent_tools_by_sender(tmp_path: Path) -> None:
    roster = {"list": [{"id": "a1", "default": True,
                        "tools": {"toolsBySender": {"username:alice": {"deny": ["message"]}}}}]}
    e = _engines(tmp_path, "2026.9", tools=SENDERS, agents=roster)
    assert "read" not in e.both()  # the global "*" rule
    assert "exec" not in e.both(sender_id="42", message_provider="telegram")
    assert "exec" in e.both(sender_id="42", message_provider="whatsapp")
    assert "web_search" not in e.both(sender_id="42", message_provider="whatsapp")
    # the session key's delivery route names the sender's channel
    assert "exec" not in e.both(sender_id="42", session_key="agent:a1:telegram:direct:42")
    # the agent's rule wins; the global one is then not read
    alice = e.both(sender_username="@Alice")
    assert "message" not in alice and "read" in alice
    # the owner on webchat gets no sender policy
    assert "read" in e.both(sender_is_owner=True, message_provider="webchat")


def test_channel_keys_in_group_sender_rules(tmp_path: Path) -> None:
    channels = {"telegram": {"groups": {"*": {"toolsBySender": {
        "channel:telegram:7": {"deny": ["exec"]}, "id:7": {"deny": ["read"]}}}}}}
    e = _engines(tmp_path, "2026.9", channels=channels)
    got = e.both(session_key="agent:main:telegram:group:g1", sender_id="7")
    assert "exec" not in got and "read" in got


# -- byProvider -------------------------------------------------------------------------------
def test_a_slash_model_id_is_provider_prefixed(tmp_path: Path) -> None:
    tools = {"byProvider": {"openrouter/anthropic/claude": {"deny": ["exec"]},
                            "anthropic/claude": {"deny": ["read"]}}}
    e9 = _engines(tmp_path / "9", "2026.9", tools=tools)
    e3 = _engines(tmp_path / "3", "2026.3", tools=tools)
    ctx = {"model_provider": "openrouter", "model_id": "anthropic/claude"}
    assert "exec" not in e9.both(**ctx) and "read" in e9.both(**ctx)
    assert "read" not in e3.both(**ctx) and "exec" in e3.both(**ctx)


# -- access analysis --------------------------------------------------------------------------
def test_access_classes_have_three_owner_values_in_2026_9(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9")
    tables = read_tables(tmp_path / "out")
    space = ClassSpace([TablesView(tables, tables["tools"])])
    assert [k.label for k in space.owner] == ["owner unknown", "owner", "known non-owner"]
    for value in (None, True, False):
        point = space.classify(sender_is_owner=value)
        flags = space.flags(point)
        assert e.both(**flags) == e.both(sender_is_owner=value)


# -- the command line -------------------------------------------------------------------------
def test_resolve_and_explain_refuse_without_an_agent(tmp_path: Path) -> None:
    defs = tmp_path / "defs"
    _engines(tmp_path, "2026.9", agents={**AGENTS, "ownership": "explicit"})
    for args in (["resolve", "--definitions", str(defs)],
                 ["explain", "--definitions", str(defs), "read"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        assert "AgentSelectionRequiredError: agent selection required" in result.stderr
        assert "one of: a1, a2" in result.stderr


# -- serve-mcp --------------------------------------------------------------------------------
def test_serve_mcp_refuses_a_context_without_an_agent(tmp_path: Path) -> None:
    """A 2026.9 build whose roster needs a chosen agent: serve-mcp without --agent warns at
    start (--strict refuses), and listing tools is an invalid request, not a crash nor an
    empty or global list."""
    defs = write_definitions(tmp_path / "defs", {"d.yaml": {
        "openclaw": "2026.9", "catalog": _catalog(),
        "agents": {**AGENTS, "ownership": "explicit"}}})
    build(defs, tmp_path / "build")
    cmd = [sys.executable, "-m", "toolc.cli", "serve-mcp", "--build", str(tmp_path / "build")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    strict = subprocess.run([*cmd, "--strict"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL, env=env, check=False)
    assert strict.returncode == 1, strict.stderr
    assert "every request is refused: agent selection required" in strict.stderr
    assert "Traceback" not in strict.stderr

    async def listing() -> str:
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=str(ROOT), env=env)
        with (tmp_path / "stdio.log").open("w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                with pytest.raises(MCPError) as err:
                    await session.list_tools()
                return str(err.value)

    message = anyio.run(listing)
    assert "refused: agent selection required" in message and "one of: a1, a2" in message


def test_the_wrap_owner_guard_follows_the_target(tmp_path: Path) -> None:
    """The wrapped call's owner guard refuses whom ``resolve`` leaves out: under 2026.9 only
    ``sender_is_owner=False``, also for a release owner-only name the catalog does not flag."""
    defs = write_definitions(tmp_path / "defs", {"d.yaml": {
        "openclaw": "2026.9", "catalog": _catalog()}})
    package = "toolc_engA_wrap"
    files, _, _ = compile_files(defs, package=package, with_models=True)
    publish(files, tmp_path / "out")
    rt = import_runtime(tmp_path / "out", package)
    impls = {"gateway": lambda a, c: "gw", "nodes": lambda a, c: "nodes"}
    toolset = rt.resolve(sender_is_owner=True)
    for owner, expected in ((None, "gw"), (True, "gw"), (False, None)):
        tools = rt.wrap(toolset, impls, context=rt.CallContext(sender_is_owner=owner))
        for name in ("gateway", "nodes"):
            result = tools.call(name, {})
            if expected is None:
                assert result.details["error"] == "Tool restricted to owner senders.", name
            else:
                assert not result.is_error, (name, owner)


# -- 2026.9's generic group resolver ----------------------------------------------------------
def test_only_the_generic_groups_map_is_read_in_2026_9(tmp_path: Path) -> None:
    """resolveGroupToolPolicyOutcome: without a loaded channel plugin every channel goes
    through resolveChannelGroupToolsPolicy on channels.<ch>.groups: Slack's channels map is not
    read, IRC ids are exact and its e164 sender keys count."""
    channels = {"slack": {"channels": {"C1": {"tools": {"deny": ["exec"]}}}},
                "irc": {"groups": {"#Dev": {"tools": {"deny": ["read"]}},
                                   "*": {"toolsBySender": {"e164:+1555": {"deny": ["message"]}}}}}}
    e9 = _engines(tmp_path / "9", "2026.9", channels=channels)
    e3 = _engines(tmp_path / "3", "2026.3", channels=channels)
    slack = {"session_key": "agent:main:slack:channel:C1"}
    assert "exec" in e9.both(**slack)
    assert "exec" not in e3.both(**slack, group_id="C1", message_provider="slack")
    irc = {"session_key": "agent:main:irc:group:#dev", "sender_e164": "+1555"}
    assert "read" in e9.both(**irc) and "message" not in e9.both(**irc)
    assert "read" not in e3.both(**irc) and "message" in e3.both(**irc)


def test_an_empty_account_groups_map_inherits_the_channels(tmp_path: Path) -> None:
    """resolveChannelGroups: with at most one account, an account's empty groups map inherits
    the channel's groups (2026.3.2 read the empty map)."""
    channels = {"telegram": {"groups": {"g1": {"tools": {"deny": ["exec"]}}},
                             "accounts": {"work": {"groups": {}}}}}
    ctx = {"session_key": "agent:main:telegram:group:g1", "account_id": "work",
           "message_provider": "telegram", "group_id": "g1"}
    assert "exec" not in _engines(tmp_path / "9", "2026.9", channels=channels).both(**ctx)
    assert "exec" in _engines(tmp_path / "3", "2026.3", channels=channels).both(**ctx)


def test_request_channel_aliases_of_2026_9(tmp_path: Path) -> None:
    """normalizeMessageChannel: `teams` is msteams in 2026.9.6."""
    e = _engines(tmp_path, "2026.9", tools={"toolsBySender": {
        "channel:msteams:42": {"deny": ["exec"]}}})
    assert "exec" not in e.both(sender_id="42", message_provider="Teams")


def test_refusal_codes(tmp_path: Path) -> None:
    e = _engines(tmp_path, "2026.9", agents={**AGENTS, "ownership": "explicit"})
    assert e.both()[2] == "AGENT_SELECTION_REQUIRED"
    assert e.both(session_key="agent:x")[2] == "MALFORMED_AGENT_SESSION_KEY"


def test_a_plugin_named_like_an_owner_only_tool_loses_its_tools(tmp_path: Path) -> None:
    """The owner-only deny expands plugin ids like any deny (a plugin `screen`)."""
    catalog = [*_catalog(), {"name": "node_ping", "description": "Ping.", "plugin": "screen",
                             "parameters": {"type": "object"}}]
    e = engines_for(tmp_path, {"d.yaml": {"openclaw": "2026.9", "catalog": catalog,
                                          "plugins": {"entries": {"screen": {"enabled": True}}}}})
    assert "node_ping" in e.both()
    assert "node_ping" not in e.both(sender_is_owner=False)


def test_explain_names_the_2026_9_rules(tmp_path: Path) -> None:
    """toolc explain shows the sender layer and, with --no-strict (OpenClaw's silent
    behaviour), why a caller's group was ignored."""
    _engines(tmp_path, "2026.9", tools=SENDERS, channels=CHANNELS)
    defs = str(tmp_path / "defs")
    result = CliRunner().invoke(main, ["explain", "--definitions", defs, "--channel", "telegram",
                                       "--group", "g1", "--sender-id", "42", "--no-strict",
                                       "exec"])
    assert result.exit_code == 1, result.output
    assert "group g1 is ignored: neither the session key nor spawned_by names it" in \
        result.output
    assert "tools.toolsBySender" in result.output and "channel:telegram:42" in result.output
    owner = CliRunner().invoke(main, ["explain", "--definitions", defs, "--owner", "gateway"])
    assert owner.exit_code == 0, owner.output


def test_owner_assertions_have_three_values_in_2026_9(tmp_path: Path) -> None:
    """`owner: false` is the known non-owner, `owner: unknown` the request that does not say
    (it keeps owner-only tools under 2026.9, so `never` fails there)."""
    defs = write_definitions(tmp_path / "defs", {"d.yaml": {
        "openclaw": "2026.9", "catalog": _catalog(),
        "assertions": [{"never": {"tools": ["gateway", "nodes"], "owner": False}},
                       {"never": {"tool": "nodes", "owner": "unknown"}}]}})
    with pytest.raises(DefinitionsError) as err:
        compile_files(defs, with_models=False)
    fails = [d.message for d in err.value.diagnostics if d.code == "TC300"]
    assert len(fails) == 1 and 'never {tool: "nodes", owner: "unknown"}' in fails[0], fails


def test_access_classify_follows_agent_selection(tmp_path: Path) -> None:
    """A request without an agent falls into its default agent's class (2026.9) and one the
    release refuses has no class."""
    roster = {"list": [AGENTS["list"][0], {**AGENTS["list"][1], "default": True}]}
    _engines(tmp_path / "d", "2026.9", agents=roster)
    tables = read_tables(tmp_path / "d" / "out")
    space = ClassSpace([TablesView(tables, tables["tools"])])
    agent = space.classify()[0]
    assert space.agents[agent].key == ("a2",)
    with pytest.raises(AgentSelectionRequiredError):
        space.classify(session_key="agent:a1:main", agent_id="a2")


def test_subagent_depth_from_the_session_key(tmp_path: Path) -> None:
    """getSubagentDepth (2026.9.6): `(^|:)subagent:` in an agent key's REST, so
    `subagent:a:subagent:b` is depth 2 (2026.3.2 counted `:subagent:`: 1)."""
    defaults = {"defaults": {"subagents": {"maxSpawnDepth": 2}}}
    catalog = [*_catalog(), {"name": "sessions_spawn", "description": "Spawn.",
                             "parameters": {"type": "object"}}]
    data = {"catalog": catalog, "agents": defaults}
    e9 = engines_for(tmp_path / "9", {"d.yaml": {**data, "openclaw": "2026.9"}})
    e3 = engines_for(tmp_path / "3", {"d.yaml": {**data, "openclaw": "2026.3"}})
    key = {"session_key": "subagent:a:subagent:b"}
    assert "sessions_spawn" not in e9.both(**key)  # depth 2 >= maxSpawnDepth: a leaf
    assert "sessions_spawn" in e3.both(**key)  # depth 1: not a leaf
    assert "sessions_spawn" in e9.both(session_key="agent:main:subagent:a")
