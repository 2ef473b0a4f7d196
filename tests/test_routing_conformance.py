"""Messages in, against OpenClaw 2026.9.6's inbound path: what the routed run passes, and the
routing mode of the conformance harness (``python -m conformance --openclaw 2026.9
--routing``): its Python side without Node, and the oracle's ``route`` op where Node 24 and
the release are installed (``make conformance-setup``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import build_runtime, write_definitions

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
