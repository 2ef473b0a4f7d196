"""Security invariants, held by construction, checked on random definitions and contexts."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.targets import target

from tests.helpers import Engines, engines_for
from tests.strategies import contexts, contexts_2026_9, definitions, definitions_for

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SUBAGENT_DENY = {"gateway", "agents_list", "whatsapp_login", "session_status", "cron",
                 "memory_search", "memory_get", "sessions_send"}


@SETTINGS
@given(data=definitions(), ctxs=st.lists(contexts, min_size=1, max_size=8),
       denied=st.sampled_from(["read", "exec", "message", "pa_one", "browser"]))
def test_global_deny_wins(data: dict[str, Any], ctxs: list[dict[str, Any]], denied: str) -> None:
    data["tools"]["deny"] = [*data["tools"].get("deny", []), denied]
    with tempfile.TemporaryDirectory() as tmp:
        engines = engines_for(Path(tmp), {"d.yaml": data})
        for ctx in ctxs:
            assert denied not in engines.both(**ctx)


# The invariants below share one compiled deployment per example (compiling dominates).
# Budget: 150 examples, split between OpenClaw 2026.3 (this test) and 2026.9
# (test_request_time_invariants_2026_9).
@settings(SETTINGS, max_examples=75)
@given(data=definitions(), ctxs=st.lists(contexts, min_size=1, max_size=8),
       parent=st.sampled_from(["agent:main:telegram:group:g1", "agent:a1:whatsapp:group:G1",
                               "agent:a2:telegram:group:g2:topic:3", "telegram:channel:*"]))
def test_security_invariants(data: dict[str, Any], ctxs: list[dict[str, Any]],
                             parent: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        engines = engines_for(Path(tmp), {"d.yaml": data})
        for ctx in ctxs:
            owner_only_never_reaches_a_non_owner(engines, data, ctx)
            subagent_never_gets_its_denied_tools(engines, data, ctx)
            undeclared_agent_gets_the_global_policy_only(engines, ctx)
            subagent_stays_in_the_group_it_was_spawned_from(engines, ctx, parent)


def owner_only_never_reaches_a_non_owner(engines: Engines, data: dict[str, Any],
                                         ctx: dict[str, Any]) -> None:
    owner_only = {t["name"] for t in data["catalog"] if t.get("ownerOnly")}
    for flag in (None, False):
        non_owner = {**ctx, "sender_is_owner": flag}
        assert not owner_only & set(engines.both(**non_owner)), ("owner-only", non_owner)


def subagent_never_gets_its_denied_tools(engines: Engines, data: dict[str, Any],
                                         ctx: dict[str, Any]) -> None:
    sub = data["tools"].get("subagents", {}).get("tools", {})
    explicit = {e.strip().lower() for e in sub.get("allow", []) + sub.get("alsoAllow", [])}
    configured = {e.strip().lower() for e in sub.get("deny", []) if "*" not in e and ":" not in e}
    if data.get("openclaw") == "2026.9":
        # resolveSubagentToolPolicyForSession: the always list stays, whatever allow says
        # (names the 2026.9 aliases rename, such as cron, are checked under their new name)
        configured = {"automations" if n == "cron" else n for n in configured}
        denied = set(target("2026.9").subagent_deny_always) | configured
    else:
        denied = (SUBAGENT_DENY - explicit) | configured
    names = set(engines.both(**{**ctx, "session_key": "agent:main:subagent:x"}))
    assert not denied & names, ("subagent deny", ctx)


def undeclared_agent_gets_the_global_policy_only(engines: Engines, ctx: dict[str, Any]) -> None:
    """OpenClaw 2026.3.2: no agent layer for an agent id that is not declared (as with no
    agent at all), never another agent's policy."""
    ctx = {k: v for k, v in ctx.items() if k not in ("agent_id", "session_key")}
    assert engines.both(**ctx, agent_id="no-such-agent") == engines.both(**ctx), (
        "undeclared agent", ctx)


def subagent_stays_in_the_group_it_was_spawned_from(engines: Engines, ctx: dict[str, Any],
                                                    parent: str) -> None:
    """A subagent whose own key names no group is bound by its parent session's group: the
    same tools as if it ran in that group, never the group-free (wider) set."""
    channel, group = {"agent:main:telegram:group:g1": ("telegram", "g1"),
                      "agent:a1:whatsapp:group:G1": ("whatsapp", "G1"),
                      "agent:a2:telegram:group:g2:topic:3": ("telegram", "g2"),
                      "telegram:channel:*": ("telegram", "*")}[parent]
    ctx = {k: v for k, v in ctx.items()
           if k not in ("session_key", "message_provider", "group_id", "spawned_by")}
    spawned = engines.both(**ctx, session_key="agent:main:subagent:child", spawned_by=parent)
    in_group = f"agent:main:subagent:{channel}:group:{group}"  # same depth, own group
    assert spawned == engines.both(**ctx, session_key=in_group), ("spawned_by", ctx, parent)


# -- OpenClaw 2026.9's request-time invariants ---------------------------------------------------
OWNER_ONLY_2026_9 = {"automations", "computer", "conversations_list", "conversations_send",
                     "conversations_turn", "gateway", "mobile_ui", "nodes", "openclaw",
                     "plugins", "portal", "screen", "sessions", "terminal"}


@settings(SETTINGS, max_examples=75)
@given(data=definitions_for("2026.9"), ctxs=st.lists(contexts_2026_9, min_size=1, max_size=8))
def test_request_time_invariants_2026_9(data: dict[str, Any],
                                        ctxs: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        engines = engines_for(Path(tmp), {"d.yaml": data})
        owner_only = OWNER_ONLY_2026_9 | {t["name"] for t in data["catalog"]
                                          if t.get("ownerOnly")}
        for ctx in ctxs:
            # the release's own answers: a group no session key names is ignored, not refused
            loose = {**ctx, "strict": False}
            # GATEWAY_OWNER_ONLY_CORE_TOOLS: never for a known non-owner
            assert not owner_only & set(engines.both(**{**loose, "sender_is_owner": False}))
            # unknown is not non-owner: it sees what the owner sees (off webchat, where the
            # owner skips sender policies)
            if (ctx.get("message_provider") or "").strip().lower() != "webchat":
                assert engines.both(**{**loose, "sender_is_owner": None}) == \
                    engines.both(**{**loose, "sender_is_owner": True}), ("owner unknown", ctx)
            # a caller's group id counts only when the session key or spawned_by names it
            alone = {k: v for k, v in ctx.items()
                     if k not in ("session_key", "spawned_by", "group_space", "group_channel")}
            without = {k: v for k, v in alone.items() if k != "group_id"}
            assert engines.both(**alone, strict=False) == engines.both(**without), (
                "trusted group", ctx)
            # ... and toolc refuses it (by default) rather than ignore it
            strict = engines.both(**alone)
            if (alone.get("group_id") or "").strip():
                assert strict[0] == "!UntrustedGroupError", ("untrusted group refused", ctx)
            else:
                assert strict == engines.both(**without), ("no group", ctx)
            # naming the agent is never refused without a session key
            named = engines.both(**{**alone, "agent_id": "a1"}, strict=False)
            assert named[:1] != ("!AgentSelectionRequiredError",), ("named agent", ctx)
