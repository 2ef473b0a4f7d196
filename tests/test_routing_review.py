"""Review sees routing (issue 32, item 5): ``toolc diff`` reports a binding change as the
messages that run elsewhere (another agent, another session key) and the tools their runs
gain or lose; ``ACCESS.md`` and the access report list each agent's bindings.

The brute-force test holds the diff's message classes to the generated runtime: on random
binding sets, every message of a small message space gets, before and after, the route
``toolc_runtime.route`` gives it and the tools ``resolve_message`` gives its run."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.api import build, compile_files, report
from toolc.cli import main
from toolc.review.diff import compute_diff, render_diff, side_from_definitions
from toolc.review.routing import RouteChange
from toolc.semantics.factored import class_tools
from toolc.semantics.messages import MessageSpace, context
from toolc.semantics.routes import Message, RouteTable, route

from tests.helpers import build_runtime, write_definitions
from tests.test_access_md import assert_inert

EXAMPLES = int(os.environ.get("TOOLC_ROUTING_EXAMPLES", "12"))
TOOL = {"description": "A tool.", "parameters": {"type": "object"}}
MOVE = {"agentId": "viewer", "match": {"channel": "telegram", "peer": {"kind": "group",
                                                                       "id": "-100123"}}}


def deployment(**extra: Any) -> dict[str, Any]:
    """2026.9: main (the default agent: OpenClaw's loader binds every configured channel to
    it) codes, the viewer reads and searches; group -100123 denies exec."""
    data: dict[str, Any] = {
        "openclaw": "2026.9",
        "catalog": [{"name": n, **TOOL} for n in ("read", "write", "exec", "web_search")],
        "profiles": {"coding": {"allow": ["read", "write", "exec"]}, "full": {}},
        "tools": {},
        "agents": {"list": [{"id": "main", "default": True, "tools": {"profile": "coding"}},
                            {"id": "viewer", "tools": {"allow": ["read", "web_search"]}}]},
        "channels": {"telegram": {"groups": {"-100123": {"tools": {"deny": ["exec"]}}}}},
    }
    data.update(extra)
    return data


def _defs(root: Path, name: str, data: dict[str, Any]) -> Path:
    return write_definitions(root / name, {"d.yaml": data})


def _diff(tmp: Path, base: dict[str, Any], head: dict[str, Any]) -> Any:
    return compute_diff(side_from_definitions(_defs(tmp, "base", base)),
                        side_from_definitions(_defs(tmp, "head", head)))


def _cli(tmp: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["diff", str(tmp / "base"), str(tmp / "head"), *args])
    return result.exit_code, result.output


def _change(result: Any, peer: tuple[str, str] | None, **fields: Any) -> RouteChange:
    """The one change of a Telegram message with ``peer`` (and ``fields``), not a thread's."""
    assert result.routing is not None
    fields.setdefault("channel", "telegram")
    found = [c for c in result.routing.changes if c.message.peer == peer
             and c.message.parent_peer is None
             and all(getattr(c.message, k) == v for k, v in fields.items())]
    assert len(found) == 1, [c.klass.words for c in result.routing.changes]
    return found[0]


# -- a binding moves a group -----------------------------------------------------------------
def test_a_group_bound_to_another_agent_moves_with_the_tools_its_run_gains_and_loses(
        tmp_path: Path) -> None:
    result = _diff(tmp_path, deployment(), deployment(bindings=[MOVE]))
    moved = _change(result, ("group", "-100123"), account_id=None)
    before, after = moved.klass.routes
    assert (before.agent_id, before.matched_by, before.session_key) == (
        "main", "binding.channel", "agent:main:telegram:group:-100123")
    assert (after.agent_id, after.matched_by, after.session_key) == (
        "viewer", "binding.peer", "agent:viewer:telegram:group:-100123")
    # the group still denies exec on both sides: the move costs write, brings web_search
    every = moved.classes
    assert moved.lost == {"write": every} and moved.gained == {"web_search": every}
    assert result.access_changed and result.widened
    assert not result.changes  # no context class changes: the agents' policies did not
    # only the group (as a group or a channel chat, and threads under it) moves
    assert {c.message.peer for c in result.routing.changes} == {
        ("group", "-100123"), ("channel", "-100123"), ("direct", "toolc-other"),
        ("group", "toolc-other"), ("channel", "toolc-other")}
    assert all(c.message.peer in {("group", "-100123"), ("channel", "-100123")}
               or c.message.parent_peer == ("group", "-100123")
               for c in result.routing.changes)

    code, text = _cli(tmp_path)
    assert code == 2
    assert ("~ route: channel telegram, group -100123: agent main -> agent viewer\n"
            "    before: session agent:main:telegram:group:-100123 (binding.channel, added by "
            "OpenClaw's loader)\n"
            "    after:  session agent:viewer:telegram:group:-100123 (binding.peer at "
            "d.yaml:") in text
    assert "    + web_search\n    - write\n    e.g. toolc route --channel telegram --peer " \
        "group:-100123\n" in text
    assert "message classes, OpenClaw 2026.9)" in text.splitlines()[0]
    code, _ = _cli(tmp_path, "--fail-on", "widen")
    assert code == 3
    code, raw = _cli(tmp_path, "--format", "json")
    data = json.loads(raw)
    assert data["access_changed"] and data["widened"] and data["access"] == []
    entry = next(c for c in data["routing"]["changes"]
                 if c["message"] == {"channel": "telegram", "peer": ["group", "-100123"]})
    assert entry["before"]["agent_id"] == "main" and entry["before"]["added_by_loader"]
    assert entry["after"]["agent_id"] == "viewer"
    assert entry["after"]["binding"].startswith("d.yaml:")
    assert entry["witness"] == "toolc route --channel telegram --peer group:-100123"
    assert entry["gained"] == [{"tool": "web_search", "count": entry["classes"]}]
    assert data["routing"]["messages"] >= len(data["routing"]["changes"])
    code, md = _cli(tmp_path, "--format", "markdown")
    assert "run elsewhere** (5 on another agent, 0 under another session key only; " \
        "5 gain tools)" in md
    assert "| `channel telegram, group -100123` (and `channel telegram, channel chat " \
        "-100123`) | `main`: `agent:main:telegram:group:-100123` (`binding.channel, added " \
        "by OpenClaw's loader`) → `viewer`: " in md


def test_the_moved_groups_tools_are_the_runtimes(tmp_path: Path) -> None:
    """The tools a moved group's run gets on each side are what the generated runtime's
    resolve_message gives that message (the witness)."""
    result = _diff(tmp_path, deployment(), deployment(bindings=[MOVE]))
    runtimes = [build_runtime(tmp_path / name, tmp_path / f"out-{name}")
                for name in ("base", "head")]
    names = result.space.tool_names
    for change in result.routing.changes:
        if any(p is None for p in change.klass.points):
            continue
        found = class_tools(result.space, change.klass.points)
        for side, (rt, point) in enumerate(zip(runtimes, change.klass.points, strict=True)):
            routed, tools = rt.resolve_message(**change.message._asdict())
            assert routed.agent_id == change.klass.routes[side].agent_id
            expected = {n for i, n in enumerate(names) if found[point][side] >> i & 1}
            assert set(tools.names) == expected, change.klass.words


# -- a session key alone ---------------------------------------------------------------------
@pytest.mark.parametrize("where", ["binding", "session"])
def test_group_scope_main_takes_the_groups_restrictions_away(tmp_path: Path,
                                                             where: str) -> None:
    """2026.9 applies a group's policy only through the session key: with groupScope main
    the group runs in the agent's main session, without its deny list (a widening)."""
    if where == "binding":
        head = deployment(bindings=[{"agentId": "main", "match": {
            "channel": "telegram", "accountId": "*"}, "session": {"groupScope": "main"}}])
    else:
        head = deployment(session={"groupScope": "main"})
    result = _diff(tmp_path, deployment(), head)
    group = _change(result, ("group", "-100123"), account_id=None)
    before, after = group.klass.routes
    assert before.agent_id == after.agent_id == "main"
    assert (before.session_key, after.session_key) == (
        "agent:main:telegram:group:-100123", "agent:main:main")
    assert group.gained == {"exec": group.classes} and not group.lost
    other = _change(result, ("group", "toolc-other"), account_id=None)
    assert not other.gained and not other.lost  # another session, the same tools
    assert result.widened and not result.changes
    code, text = _cli(tmp_path, "--fail-on", "widen")
    assert code == 3
    assert "~ route: channel telegram, group -100123: agent main, another session key\n" in text
    assert "    after:  session agent:main:main (" in text
    assert "~ route: channel telegram, any other group: agent main, another session key\n" \
        in text and "    no tool gained or lost\n" in text


def test_dm_scope_puts_direct_chats_in_sandboxed_sessions(tmp_path: Path) -> None:
    """A DM keyed per peer is no longer the main session: sandbox mode non-main sandboxes
    it, and the sandbox policy takes exec away (the session key alone changed)."""
    sandboxed = {"tools": {"sandbox": {"tools": {"deny": ["exec"]}}},
                 "agents": {"defaults": {"sandbox": {"mode": "non-main"}},
                            "list": deployment()["agents"]["list"]}}
    result = _diff(tmp_path, deployment(**sandboxed),
                   deployment(**sandboxed, session={"dmScope": "per-channel-peer"}))
    dm = _change(result, ("direct", "toolc-other"), account_id=None)
    assert [r.session_key for r in dm.klass.routes] == [
        "agent:main:main", "agent:main:telegram:direct:toolc-other"]
    assert dm.lost == {"exec": dm.classes} and not dm.gained
    assert result.access_changed and not result.widened


def test_a_message_refused_before_and_routed_after_gains_its_tools(tmp_path: Path) -> None:
    """agents.ownership explicit: no default agent, so a message no binding matches is
    refused; a binding that routes it gives its run tools (a widening)."""
    agents = {"ownership": "explicit", "list": deployment()["agents"]["list"]}
    agents["list"] = [{k: v for k, v in a.items() if k != "default"} for a in agents["list"]]
    head = deployment(agents=agents, bindings=[{"agentId": "viewer", "match": {
        "channel": "telegram", "accountId": "*"}}])
    result = _diff(tmp_path, deployment(agents=agents), head)
    group = _change(result, ("group", "toolc-other"), account_id=None)
    assert group.klass.routes[0].refused is not None
    assert group.gained == {"read": group.classes, "web_search": group.classes}
    text = render_diff(result, "text")
    assert ": refused -> agent viewer\n    before: refused: no binding routes a message on " \
        "telegram account default, and no default agent can be chosen\n" in text


# -- no change -------------------------------------------------------------------------------
def test_reordering_bindings_with_no_effect_shows_no_change(tmp_path: Path) -> None:
    one = {"agentId": "viewer", "match": {"channel": "telegram", "peer": {"kind": "group",
                                                                          "id": "g1"}}}
    two = {"agentId": "main", "match": {"channel": "telegram", "accountId": "*"}}
    three = {"agentId": "viewer", "match": {"channel": "discord", "guildId": "G"}}
    result = _diff(tmp_path, deployment(bindings=[one, two, three]),
                   deployment(bindings=[three, two, one]))
    assert result.routing is not None and result.routing.messages
    assert result.routing.changes == [] and not result.access_changed
    code, text = _cli(tmp_path)
    assert code == 0 and "~ route" not in text


def test_reordering_bindings_of_one_tier_moves_what_both_match(tmp_path: Path) -> None:
    """The first binding of a tier wins: swapping two channel-wide bindings moves the
    channel (the contrast to the test above)."""
    a = {"agentId": "viewer", "match": {"channel": "telegram", "accountId": "*"}}
    b = {"agentId": "main", "match": {"channel": "telegram", "accountId": "*"}}
    result = _diff(tmp_path, deployment(bindings=[a, b]), deployment(bindings=[b, a]))
    assert result.routing.changes and all(
        [r.agent_id for r in c.klass.routes] == ["viewer", "main"]
        for c in result.routing.changes)


def test_identical_routes_are_not_enumerated(tmp_path: Path) -> None:
    result = _diff(tmp_path, deployment(bindings=[MOVE]),
                   deployment(bindings=[MOVE], tools={"deny": ["exec"]}))
    assert result.routing is not None and result.routing.messages is None
    assert result.changes and not result.routing.changes  # exec lost: a class change


def test_a_side_from_before_routing_has_no_routing_view(tmp_path: Path) -> None:
    base = side_from_definitions(_defs(tmp_path, "base", deployment()))
    head = side_from_definitions(_defs(tmp_path, "head", deployment(bindings=[MOVE])))
    result = compute_diff(dataclasses.replace(base, routes=None), head)
    assert result.routing is None and not result.access_changed
    assert json.loads(render_diff(result, "json"))["routing"] is None


def test_builds_are_compared_on_their_verified_routes(tmp_path: Path) -> None:
    """Build sides read routes.json like every file: checked against the manifest."""
    for name, data in (("base", deployment()), ("head", deployment(bindings=[MOVE]))):
        build(_defs(tmp_path, f"{name}-defs", data), tmp_path / name)
    code, text = _cli(tmp_path)
    assert code == 2 and "~ route: channel telegram, group -100123: agent main -> agent " \
        "viewer" in text
    routes = tmp_path / "head" / "toolc_runtime" / "routes.json"
    routes.write_text(routes.read_text().replace('"viewer"', '"main"'))
    code, text = _cli(tmp_path)
    assert code == 1 and "routes.json" in text


# -- ACCESS.md and the report list the bindings ------------------------------------------------
def test_access_md_lists_each_agents_bindings(tmp_path: Path) -> None:
    defs = _defs(tmp_path, "d", deployment(bindings=[MOVE, {
        "agentId": "viewer", "match": {"channel": "discord", "guildId": "G1",
                                       "roles": ["mod", "admin"]},
        "session": {"groupScope": "main"}}]))
    text = compile_files(defs)[0]["ACCESS.md"]
    section = text[text.index("## Routing"):text.index("## agent")]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows[0] == "| `main` | `channel telegram, every account` | added by OpenClaw's " \
        "loader |"
    assert rows[1].startswith("| `viewer` | `channel telegram, account default, group "
                              "-100123` | `d.yaml:")
    assert rows[2].startswith("| `viewer` | `channel discord, account default, guild G1, any "
                              "of the roles mod, admin, groupScope main` | `d.yaml:")
    assert "A message no binding matches runs as agent `main` (the default agent)." in section
    assert "Session keys: dmScope `main`, groupScope `per-group`." in section


def test_hostile_names_in_bindings_are_inert(tmp_path: Path) -> None:
    hostile = "g`](http://x.example)@team\n# h1 <img src=x>"
    binding = {"agentId": "viewer", "match": {"channel": "telegram", "peer": {
        "kind": "group", "id": hostile}}}
    defs = _defs(tmp_path, "head", deployment(bindings=[binding]))
    assert_inert(compile_files(defs)[0]["ACCESS.md"], [hostile])
    _defs(tmp_path, "base", deployment())
    code, md = _cli(tmp_path, "--format", "markdown")
    assert code == 2
    assert_inert(md, [hostile])


def test_the_report_lists_each_agents_bindings(tmp_path: Path) -> None:
    defs = _defs(tmp_path, "d", deployment(bindings=[MOVE]))
    page = report(str(defs))
    data = json.loads(page.html.split('<script id="data" type="application/json">')[1]
                      .split("</script>")[0])
    rows = data["routes"]["rows"]
    assert rows[0] == ["main", "channel telegram, every account", None]
    assert rows[1][:2] == ["viewer", "channel telegram, account default, group -100123"]
    assert rows[1][2].startswith("d.yaml:")
    assert data["routes"]["default"] == \
        "A message no binding matches runs as agent main (the default agent)."
    assert 'id="routes"' in page.html


# -- brute force: the message classes are the runtime's routes ---------------------------------
AGENTS = ["main", "viewer", "support"]
CHANNELS = ["telegram", "discord", "slack"]
ACCOUNTS: list[str | None] = [None, "work", "zz"]
PEERS: list[tuple[str, str] | None] = [
    None, ("direct", "u1"), ("direct", "u2"), ("direct", "zz"), ("group", "g1"),
    ("group", "g2"), ("group", "zz"), ("channel", "g1"), ("group", "*")]
PARENTS: list[tuple[str, str] | None] = [None, ("group", "g1"), ("direct", "u1")]
GUILDS: list[str | None] = [None, "G1"]
TEAMS: list[str | None] = [None, "T1"]
ROLES: list[tuple[str, ...]] = [(), ("r1",), ("r2",), ("r2", "r1")]


@st.composite
def binding(draw: st.DrawFn, *, sessions: bool) -> dict[str, Any]:
    match: dict[str, Any] = {"channel": draw(st.sampled_from(CHANNELS[:2]))}
    account = draw(st.sampled_from([None, "work", "*"]))
    if account is not None:
        match["accountId"] = account
    if draw(st.booleans()):
        match["peer"] = {"kind": draw(st.sampled_from(["direct", "group", "channel"])),
                         "id": draw(st.sampled_from(["g1", "g2", "u1", "*"]))}
    if draw(st.integers(0, 3)) == 0:
        match["guildId"] = "G1"
    if draw(st.integers(0, 4)) == 0:
        match["teamId"] = "T1"
    if draw(st.integers(0, 3)) == 0:
        match["roles"] = draw(st.lists(st.sampled_from(["r1", "r2"]), min_size=1, max_size=2))
    out: dict[str, Any] = {"agentId": draw(st.sampled_from(AGENTS)), "match": match}
    if sessions and draw(st.integers(0, 3)) == 0:
        out["session"] = draw(st.sampled_from([{"groupScope": "main"}, {"groupScope":
                                               "per-group"}, {"dmScope": "per-peer"}]))
    return out


@st.composite
def routing_pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two small deployments that differ in their bindings (and maybe their session
    settings): three agents, group policies on Telegram and Discord (a guild), two configured
    channels."""
    nine = draw(st.integers(0, 3)) > 0
    explicit = nine and draw(st.integers(0, 4)) == 0  # a 2026.9 key
    agents: dict[str, Any] = {"list": [
        {"id": "main", **({} if explicit else {"default": True}),
         "tools": {"profile": "coding"}},
        {"id": "viewer", "tools": {"allow": ["read", "web_search"]}},
        {"id": "support", "tools": {"deny": ["write"]}}]}
    if explicit:
        agents["ownership"] = "explicit"
    base = deployment(agents=agents, channels={
        "telegram": {"groups": {"g1": {"tools": {"deny": ["exec"]}}}},
        "discord": {"guilds": {"G1": {"tools": {"deny": ["web_search"]}, "channels": {
            "g1": {"tools": {"deny": ["write"]}}}}}}})
    if not nine:
        del base["openclaw"]
    base["bindings"] = draw(st.lists(binding(sessions=nine), max_size=4))
    session: dict[str, Any] = {}
    if draw(st.booleans()):
        session["dmScope"] = draw(st.sampled_from(["per-peer", "per-channel-peer",
                                                   "per-account-channel-peer"]))
        if draw(st.booleans()):
            session["identityLinks"] = {"alice": ["telegram:u1", "u2"]}
    if session:
        base["session"] = session
    head = copy.deepcopy(base)
    bindings = head["bindings"]
    for edit in draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)):
        if edit == 0 and len(bindings) > 1:
            i, j = draw(st.permutations(range(len(bindings))))[:2]
            bindings[i], bindings[j] = bindings[j], bindings[i]
        elif edit == 1 and bindings:
            bindings.pop(draw(st.integers(0, len(bindings) - 1)))
        elif edit == 2 and bindings:
            draw(st.sampled_from(bindings))["agentId"] = draw(st.sampled_from(AGENTS))
        elif edit == 3:
            bindings.insert(draw(st.integers(0, len(bindings))), draw(binding(sessions=nine)))
        elif edit == 4 and nine:
            head["session"] = {**head.get("session", {}), "groupScope": draw(
                st.sampled_from(["main", "per-group"]))}
    return base, head


def _routed(runtime: Any, message: Message) -> tuple[Any, ...]:
    """The runtime's route of a message, and the tools of its run (or its refusal)."""
    try:
        routed, tools = runtime.resolve_message(**message._asdict())
    except runtime.AgentSelectionRequiredError:
        return ("refused",), frozenset()
    return (routed.agent_id, routed.session_key, routed.matched_by, routed.binding,
            routed.account_id), frozenset(tools.names)


def _messages() -> list[Message]:
    return [Message(c, a, p, q, g, t, r) for c, a, p, q, g, t, r in itertools.product(
        CHANNELS, ACCOUNTS, PEERS, PARENTS, GUILDS, TEAMS, ROLES)]


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pair=routing_pairs())
def test_message_classes_route_and_resolve_as_the_runtime(
        pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        result = _diff(root, *pair)
        sides = [side_from_definitions(root / name) for name in ("base", "head")]
        tables = [RouteTable.from_json(side.routes or {}) for side in sides]
        runtimes = [build_runtime(root / name, root / f"out-{name}")
                    for name in ("base", "head")]
        space = MessageSpace(tables, result.space)
        points = [p for k in space.classes if k.points for p in k.points if p]
        tools = class_tools(result.space, points)
        names = result.space.tool_names
        for message in _messages():
            runs = [_routed(rt, message) for rt in runtimes]
            klass = space.classes[space.classify(message)]
            for side, ((got, _), table) in enumerate(zip(runs, tables, strict=True)):
                port = route(table, message)
                assert got == (("refused",) if port.refused else (
                    port.agent_id, port.session_key, port.matched_by, port.binding,
                    port.account_id)), message
                mine = klass.routes[side]
                assert (mine.refused is None) == (got[0] != "refused")
                assert got[0] == "refused" or (mine.agent_id, mine.matched_by) == (got[0], got[2])
            moved = runs[0][0][:2] != runs[1][0][:2]
            assert klass.changed == moved, (message, runs, klass)
            if not moved:
                continue
            assert klass.points is not None
            for side, point in enumerate(klass.points):
                expected = set() if point is None else {
                    n for i, n in enumerate(names) if tools[point][side] >> i & 1}
                assert runs[side][1] == expected, (message, side)
        reported = {c.klass.message for c in result.routing.changes} if result.routing else set()
        assert reported == {k.message for k in space.classes if k.changed}


def test_the_route_port_refuses_what_the_runtime_refuses(tmp_path: Path) -> None:
    """``semantics.routes.route`` is the runtime's route, refusals and context included
    (the runtime's ``Request.context`` is what ``messages.context`` builds)."""
    agents = {"ownership": "explicit", "list": [{"id": "main"}, {"id": "viewer"}]}
    defs = _defs(tmp_path, "d", deployment(agents=agents, bindings=[MOVE]))
    runtime = build_runtime(defs, tmp_path / "out")
    table = RouteTable.from_json(side_from_definitions(defs).routes or {})
    for message in _messages():
        port = route(table, message)
        try:
            got = runtime.route(**message._asdict())
        except runtime.AgentSelectionRequiredError:
            assert port.refused is not None
            continue
        expected = runtime.Request(**message._asdict()).context(got)
        assert {k: v for k, v in expected.items() if v is not None} == context(message, port)
