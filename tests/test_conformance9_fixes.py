"""Differences ``python -m conformance --openclaw 2026.9`` found between toolc and
openclaw@2026.9.6, each pinned by a hand-written case citing the release function (runtime and
reference interpreter both: ``Engines.both``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from toolc.api import AgentSelectionRequiredError

from tests.helpers import Engines, engines_for

CORE = ["read", "exec", "terminal", "portal", "session_status"]


def engines(tmp: Path, key: str, **rest: Any) -> Engines:
    catalog = [{"name": n, "description": f"The {n} tool.", "parameters": {"type": "object"}}
               for n in CORE]
    return engines_for(tmp / key, {"defs.yaml": {"openclaw": key, "catalog": catalog, **rest}})


# createOpenClawTools (2026.9.6): `options.sandboxed ? [] : [terminal, portal]`: the host
# terminal and portal are never built for a sandboxed run, whatever the policies allow.
@pytest.mark.parametrize("sandbox", [{"sandboxed": True}, {"session_key": "agent:main:x"}])
def test_host_only_tools_are_not_built_in_a_sandboxed_run(tmp_path: Path,
                                                          sandbox: dict[str, Any]) -> None:
    agents = {"defaults": {"sandbox": {"mode": "all"}}} if "session_key" in sandbox else {}
    tools = {"sandbox": {"tools": {"allow": ["*"]}}}
    e = engines(tmp_path, "2026.9", tools=tools, agents=agents)
    assert set(e.both(**sandbox)) == {"read", "exec", "session_status"}
    assert set(e.both()) == set(CORE)  # outside the sandbox


def test_host_only_tools_stay_in_2026_3(tmp_path: Path) -> None:
    e = engines(tmp_path, "2026.3", tools={"sandbox": {"tools": {"allow": ["*"]}}})
    assert set(e.both(sandboxed=True)) == set(CORE)


# createOpenClawTools (2026.9.6) builds `transcripts` only for a channel caller
# (resolveTranscriptCaller): resolveGatewayMessageChannel(messageProvider) is a gateway message
# channel (isGatewayMessageChannel: webchat or a deliverable channel id, aliases resolved) and
# the sender id is not blank.
@pytest.mark.parametrize(("ctx", "built"), [
    ({"message_provider": "telegram", "sender_id": "42"}, True),
    ({"message_provider": " WebChat ", "sender_id": "42"}, True),
    ({"message_provider": "lark", "sender_id": "42"}, True),  # normalizeMessageChannel alias
    ({"message_provider": "telegram"}, False),
    ({"message_provider": "telegram", "sender_id": "  "}, False),
    ({"message_provider": "voice", "sender_id": "42"}, False),
    ({"message_provider": "discord-voice", "sender_id": "42"}, False),
    ({"sender_id": "42", "session_key": "agent:main:telegram:direct:42"}, False),
])
def test_transcripts_only_for_a_channel_caller(tmp_path: Path, ctx: dict[str, Any],
                                               built: bool) -> None:
    e = engines_for(tmp_path / "t", {"defs.yaml": {"openclaw": "2026.9", "catalog": [
        {"name": n, "description": n, "parameters": {"type": "object"}}
        for n in ("read", "transcripts")]}})
    assert set(e.both(**ctx)) == ({"read", "transcripts"} if built else {"read"})


def test_transcripts_for_every_caller_in_2026_3(tmp_path: Path) -> None:
    e = engines_for(tmp_path / "t", {"defs.yaml": {"openclaw": "2026.3", "catalog": [
        {"name": n, "description": n, "parameters": {"type": "object"}}
        for n in ("read", "transcripts")]}})
    assert set(e.both()) == {"read", "transcripts"}


# resolveSandboxRuntimeStatus (2026.9.6) -> resolveSessionAgentId: a session key without an
# agent (`cron:job1`, `main`, `global`) belongs to the request's agent (the explicit agent id),
# and only without one to the default agent; the sandbox mode is that agent's.
@pytest.mark.parametrize(("ctx", "sandboxed"), [
    ({"agent_id": "main", "session_key": "cron:job1"}, False),  # main: no sandbox block
    ({"agent_id": "a1", "session_key": "cron:job1"}, True),
    ({"session_key": "agent:a1:x", "agent_id": "a1"}, True),
    ({"session_key": "agent:main:x"}, False),
])
def test_sandbox_mode_of_the_selected_agent(tmp_path: Path, ctx: dict[str, Any],
                                            sandboxed: bool) -> None:
    agents = {"ownership": "explicit",
              "entries": {"a1": {"sandbox": {"mode": "all"}}, "a2": {"sandbox": {"mode": "all"}}}}
    tools = {"sandbox": {"tools": {"allow": ["read"]}}}
    e = engines(tmp_path, "2026.9", tools=tools, agents=agents)
    assert set(e.both(**ctx)) == ({"read"} if sandboxed else set(CORE))


# resolveStoredSubagentCapabilities (2026.9.6) reads the depth of a subagent key without an
# agent (`subagent:x`) through resolveSessionAgentId without the request's agent id: on a roster
# with no default agent (agents.ownership explicit) OpenClaw refuses the request whatever
# agent_id says; an agent-scoped subagent key, or a roster with a default, is answered.
@pytest.mark.parametrize(("ownership", "ctx", "refused"), [
    ("explicit", {"session_key": "subagent:x", "agent_id": "a2"}, True),
    ("explicit", {"session_key": "subagent:x:subagent:y", "agent_id": "main"}, True),
    ("explicit", {"session_key": "agent:a2:subagent:x", "agent_id": "a2"}, False),
    ("explicit", {"session_key": "cron:job1", "agent_id": "a2"}, False),
    ("default", {"session_key": "subagent:x", "agent_id": "a2"}, False),
])
def test_agentless_subagent_key_needs_a_default_agent(tmp_path: Path, ownership: str,
                                                      ctx: dict[str, Any], refused: bool) -> None:
    entries: dict[str, Any] = {"main": {}, "a1": {}, "a2": {}}
    agents: dict[str, Any] = {"entries": entries}
    if ownership == "explicit":
        agents["ownership"] = "explicit"
    else:
        entries["a1"] = {"default": True}
    e = engines(tmp_path, "2026.9", agents=agents)
    if refused:
        # the generated runtime raises its own copy of the class
        with pytest.raises(ValueError, match="subagent key without an agent") as raised:
            e.runtime.resolve(**ctx)
        assert type(raised.value).__name__ == "AgentSelectionRequiredError"
        with pytest.raises(AgentSelectionRequiredError):
            e.reference.resolve(**ctx)
    else:
        assert "read" in e.both(**ctx)  # answered (runtime == reference)


# resolveSandboxToolPolicyForAgent (2026.9.6) hands the sandbox lists on expanded
# (expandResolvedPolicy -> expandToolGroups), and collectExplicitAllowlist feeds them to
# createPluginToolAllowlist: a sandbox allow of group:ui loads the browser plugin's tool, which
# a global allow of group:ui does not (a core group does not load a plugin tool). Found by the
# routing conformance run (`--routing`, seed 2).
def test_sandbox_allow_group_loads_its_plugin_tools(tmp_path: Path) -> None:
    def tool(name: str, **more: Any) -> dict[str, Any]:
        return {"name": name, "description": f"The {name} tool.",
                "parameters": {"type": "object"}, "groups": ["ui"], **more}

    catalog = [tool("screen"), tool("browser", plugin="browser"), {
        "name": "read", "description": "The read tool.", "parameters": {"type": "object"}}]
    sandbox = {"sandbox": {"tools": {"allow": ["read", "group:ui"]}}}
    e = engines_for(tmp_path / "s", {"defs.yaml": {"openclaw": "2026.9", "catalog": catalog,
                                                   "tools": sandbox}})
    assert set(e.both(sandboxed=True)) == {"read", "screen", "browser"}
    g = engines_for(tmp_path / "g", {"defs.yaml": {"openclaw": "2026.9", "catalog": catalog,
                                                   "tools": {"allow": ["read", "group:ui"]}}})
    assert set(g.both()) == {"read", "screen"}
