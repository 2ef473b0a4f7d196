"""``toolc diff`` is exact: its per-tool class counts equal brute-force enumeration of every
context class through the reference interpreter, on random pairs of small definitions."""

from __future__ import annotations

import copy
import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.api import compile_files, resolve_definitions
from toolc.diagnostics import DefinitionsError
from toolc.review.delta import ToolChange
from toolc.review.diff import compute_diff, side_from_definitions
from toolc.semantics.access import ClassSpace, TablesView
from toolc.semantics.factored import Evaluator, bit_indices, blocks, gate_channels
from toolc.semantics.reference import ReferenceInterpreter

from tests.helpers import write_definitions
from tests.strategies import (
    ENTRY_POOL,
    KEYED_CHANNELS,
    SANDBOX_BLOCKS,
    by_provider,
    contexts,
    definitions,
    group_map,
    keyed_channel,
    split_files,
)

PAIRS = int(os.environ.get("TOOLC_DIFF_PAIRS", "300"))
PLUGIN_ENTRIES = ["pa_one", "pa_two", "pb_one", "plug_a", "plug_b", "group:plugins"]


def _shrink(data: dict[str, Any]) -> dict[str, Any]:
    """Keep brute force affordable: one channel with at most one account, two groups per
    map and two sender rules per group; two byProvider keys per config; two agents."""
    data = copy.deepcopy(data)
    channels = data["channels"]
    for name in list(channels)[1:]:
        del channels[name]
    for name, channel in channels.items():
        channels[name] = _shrink_channel(channel)
    if "list" in data["agents"]:  # 2026.9 draws may have no roster
        data["agents"]["list"] = data["agents"]["list"][:2]
    configs = [data["tools"], *(a.get("tools", {}) for a in data["agents"].get("list", []))]
    for cfg in configs:
        if "byProvider" in cfg:
            cfg["byProvider"] = dict(list(cfg["byProvider"].items())[:2])
    return data


def _shrink_channel(channel: dict[str, Any]) -> dict[str, Any]:
    # Slack and Discord try several keys, so each entry makes more classes: one sender rule
    senders = 1 if "guilds" in channel or "channels" in channel else 2
    if "accounts" in channel:
        channel["accounts"] = dict(list(channel["accounts"].items())[:1])
    if "guilds" in channel:
        channel["guilds"] = dict(list(channel["guilds"].items())[:2])
    maps = [channel.get(key) for key in ("groups", "channels")]
    maps += [a.get(key) for a in channel.get("accounts", {}).values()
             for key in ("groups", "channels")]
    maps += [g.get("channels") for g in channel.get("guilds", {}).values()]
    for gmap in maps:
        for gid in list(gmap or {})[2:]:
            del gmap[gid]
        for group in (gmap or {}).values():
            if "toolsBySender" in group:
                group["toolsBySender"] = dict(list(group["toolsBySender"].items())[:senders])
    for guild in channel.get("guilds", {}).values():
        if "toolsBySender" in guild:
            guild["toolsBySender"] = dict(list(guild["toolsBySender"].items())[:senders])
    return channel


@st.composite
def pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A base and a head that differs from it by a few policy edits (or is redrawn)."""
    base = _shrink(draw(definitions()))
    head = copy.deepcopy(base)
    edits = draw(st.lists(st.integers(0, 12), min_size=0, max_size=3))
    for edit in edits:
        agents = head["agents"]["list"]
        if edit == 0 and agents:
            agent = draw(st.sampled_from(agents))
            agent.setdefault("tools", {})["profile"] = draw(
                st.sampled_from(["minimal", "coding", "messaging", "full", "custom"]))
        elif edit == 1:
            head["tools"]["deny"] = draw(st.lists(st.sampled_from(ENTRY_POOL), max_size=2))
        elif edit == 2 and agents:
            agent = draw(st.sampled_from(agents))
            agent.setdefault("tools", {})["allow"] = draw(
                st.lists(st.sampled_from(ENTRY_POOL), max_size=3))
        elif edit == 3 and head["channels"]:
            name = next(iter(head["channels"]))
            if name in KEYED_CHANNELS:
                head["channels"][name] = _shrink_channel(draw(keyed_channel(name)))
            else:
                head["channels"][name]["groups"] = draw(group_map())
        elif edit == 4:
            head["tools"]["byProvider"] = dict(list(draw(by_provider()).items())[:2])
        elif edit == 5:
            head["agents"]["defaults"]["subagents"]["maxSpawnDepth"] = draw(st.integers(1, 3))
        elif edit == 6 and len(head["catalog"]) > 1:
            head["catalog"].pop(draw(st.integers(0, len(head["catalog"]) - 1)))
        elif edit == 7:
            head["tools"]["sandbox"] = {"tools": {"deny": draw(
                st.lists(st.sampled_from(ENTRY_POOL), max_size=2))}}
        elif edit == 8 and agents:
            # mentions: optional plugin tools become visible through another layer
            agent = draw(st.sampled_from(agents))
            agent.setdefault("tools", {})["alsoAllow"] = draw(
                st.lists(st.sampled_from(PLUGIN_ENTRIES), min_size=1, max_size=2))
        elif edit == 9 and head["channels"]:
            name = next(iter(head["channels"]))
            groups = head["channels"][name].setdefault(
                {"slack": "channels", "discord": "guilds"}.get(name, "groups"), {})
            gid = draw(st.sampled_from(["g1", "*", "-100"]))
            groups.setdefault(gid, {})["tools"] = {"alsoAllow": draw(
                st.lists(st.sampled_from(PLUGIN_ENTRIES), min_size=1, max_size=2))}
        elif edit == 10 and head["catalog"]:
            # presence: owner-only and optional flags, availability
            t = draw(st.sampled_from(head["catalog"]))
            flag = draw(st.sampled_from(["ownerOnly", "optional", "availability"]))
            if flag == "availability":
                t["availability"] = {"providers": draw(st.lists(
                    st.sampled_from(["openai", "anthropic"]), max_size=1))}
            elif flag == "optional" and t.get("plugin"):
                t["optional"] = not t.get("optional", False)
            elif flag == "ownerOnly":
                t["ownerOnly"] = not t.get("ownerOnly", False)
        elif edit == 12:
            # sandbox modes: sessions sandboxed on one side only
            target = draw(st.sampled_from([head["agents"]["defaults"], *agents]))
            target["sandbox"] = draw(SANDBOX_BLOCKS)
            if draw(st.booleans()):
                head["session"] = {"scope": draw(st.sampled_from(["global", "per-sender"]))}
        elif edit == 11:
            head["tools"]["subagents"] = {"tools": {"alsoAllow": draw(
                st.lists(st.sampled_from([*PLUGIN_ENTRIES, "sessions_send"]), max_size=2))}}
    return base, head


def _brute_force(space: ClassSpace, base: ReferenceInterpreter, head: ReferenceInterpreter
                 ) -> dict[tuple[int, ...], tuple[frozenset[str], frozenset[str]]]:
    """Every class's tool set on both sides, through the reference interpreter (the classes
    no request falls in have none: ``ClassSpace.holds``), as the release answers it: a
    group no session key names is ignored, not refused (``strict=False``)."""
    out = {}
    for point in itertools.product(*(range(len(d)) for d in space.dims())):
        if not space.holds(point):
            with pytest.raises(LookupError):
                space.flags(point)
            continue
        flags = space.flags(point)
        out[point] = (frozenset(base.resolve(**flags, strict=False).names),
                      frozenset(head.resolve(**flags, strict=False).names))
    return out


def _counts(classes: dict[tuple[int, ...], tuple[frozenset[str], frozenset[str]]]
            ) -> dict[str, tuple[int, int]]:
    counts: dict[str, list[int]] = {}
    for before, after in classes.values():
        for name in after - before:
            counts.setdefault(name, [0, 0])[0] += 1
        for name in before - after:
            counts.setdefault(name, [0, 0])[1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}


def _check_lines(change: ToolChange, classes: dict[tuple[int, ...], Any]) -> None:
    """Every class a line covers gains (or loses) the tool, or lacks it on both sides: the
    words never claim a class where the tool stayed visible or changed the other way."""
    for lines, gained in ((change.gained, True), (change.lost, False)):
        for cube, n in lines:
            hits = 0
            for point in itertools.product(*(bit_indices(b) for b in cube)):
                if point not in classes:
                    continue  # a class no request falls in: a line may cover it
                before, after = classes[point]
                was, now = change.tool in before, change.tool in after
                assert (not was and not now) or (now and not was if gained else was and not now)
                hits += was != now
            assert hits >= n > 0


def _group_only_plugin_tools(defs: Path) -> bool:
    """The build warns TC142: OpenClaw 2026.9 does not load a plugin tool that only a group
    names, which the access analysis does not model (it counts such a tool as loaded)."""
    _, diags, _ = compile_files(defs, package="x", with_models=False)
    return any(d.code == "TC142" for d in diags)


def _check(base: dict[str, Any], head: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """The diff's per-tool (gained, lost) counts, asserted equal to brute force."""
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [write_definitions(Path(tmp) / name, split_files(data, []))
                for name, data in (("base", base), ("head", head))]
        try:
            sides = [side_from_definitions(d) for d in dirs]
        except DefinitionsError:
            return {}  # an edit made the definitions invalid: nothing to compare
        result = compute_diff(*sides)
        refs = [ReferenceInterpreter(resolve_definitions(d)) for d in dirs]
        classes = _brute_force(result.space, *refs)
        got = {c.tool: (c.gained_count, c.lost_count) for c in result.changes}
        if got != _counts(classes) and any(_group_only_plugin_tools(d) for d in dirs):
            return {}  # the access analysis' documented approximation (TC142, 2026.9)
        assert got == _counts(classes)
        for change in result.changes:
            _check_lines(change, classes)
        return got


@settings(max_examples=PAIRS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pair=pairs())
def test_diff_counts_equal_brute_force(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _check(*pair)


def _deployment(**extra: Any) -> dict[str, Any]:
    """A small fixed deployment: core tools, an optional plugin tool, one channel."""
    tool = {"description": "A tool.", "parameters": {"type": "object"}}
    data: dict[str, Any] = {
        "catalog": [{"name": "read", **tool}, {"name": "exec", **tool},
                    {"name": "cron", "ownerOnly": True, **tool},
                    {"name": "pa_one", "plugin": "plug_a", "optional": True, **tool},
                    {"name": "pa_two", "plugin": "plug_a", **tool}],
        "profiles": {"coding": {"allow": ["read", "exec"]}, "full": {}},
        "tools": {},
        "agents": {"list": [{"id": "main"}, {"id": "viewer"}]},
        "channels": {"telegram": {"groups": {
            "g1": {"tools": {"allow": ["read", "pa_one"]}},
            "g2": {"toolsBySender": {"id:42": {"deny": ["exec"]}}}}}},
    }
    data.update(extra)
    return data


def test_mention_moves_from_a_group_to_the_agent() -> None:
    """Base: pa_one is visible only in group g1 (its allow list names it); head: the agent
    names it too, so it appears everywhere else for main, and g1 changes nothing."""
    base = _deployment()
    head = copy.deepcopy(base)
    head["agents"]["list"][0]["tools"] = {"alsoAllow": ["pa_one"]}
    got = _check(base, head)
    assert got["pa_one"][0] > 0 and got["pa_one"][1] == 0


def test_mention_leaves_the_agent_where_a_group_still_names_it() -> None:
    head = _deployment()
    base = copy.deepcopy(head)
    base["agents"]["list"][0]["tools"] = {"alsoAllow": ["pa_one"]}
    got = _check(base, head)
    assert got["pa_one"] == (0, got["pa_one"][1]) and got["pa_one"][1] > 0


def test_agent_deny_lifted_where_only_a_group_names_the_tool() -> None:
    base = _deployment()
    base["agents"]["list"][1]["tools"] = {"deny": ["pa_one"]}
    head = copy.deepcopy(base)
    del head["agents"]["list"][1]["tools"]
    got = _check(base, head)
    assert got == {"pa_one": (got["pa_one"][0], 0)} and got["pa_one"][0] > 0


def test_presence_change_and_group_change_together() -> None:
    base = _deployment()
    head = copy.deepcopy(base)
    head["catalog"][1]["ownerOnly"] = True  # exec: owners only
    head["channels"]["telegram"]["groups"]["g2"]["toolsBySender"]["*"] = {"deny": ["read"]}
    got = _check(base, head)
    assert got["exec"][1] > 0 and got["read"][1] > 0


def test_agent_profile_change() -> None:
    base = _deployment()
    head = copy.deepcopy(base)
    head["agents"]["list"][1]["tools"] = {"profile": "coding"}
    got = _check(base, head)
    assert set(got) == {"cron", "pa_one", "pa_two"} and all(g == 0 for g, _ in got.values())


@settings(max_examples=max(PAIRS // 3, 10), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=definitions())
def test_every_class_representative_reproduces_its_class(data: dict[str, Any]) -> None:
    """One build: the factored evaluation of every class equals the reference interpreter on
    the class's representative request (the flags `toolc resolve` is given)."""
    data = _shrink(data)
    with tempfile.TemporaryDirectory() as tmp:
        defs = write_definitions(Path(tmp) / "d", split_files(data, []))
        try:
            side = side_from_definitions(defs)
        except DefinitionsError:
            return
        ref = ReferenceInterpreter(resolve_definitions(defs))
        space = ClassSpace([TablesView(side.tables, side.tables["tools"])])
        tools = side.tables["tools"]
        ev = Evaluator(space, (1 << len(tools)) - 1)
        states = ev.ap_states()
        seen = 0
        for gi, classes in gate_channels(space).items():
            for xs, cbits, (res,) in blocks(ev, gi, ev.x_states(gi, states), classes):
                names = tuple(t for i, t in enumerate(tools) if res >> i & 1)
                for cube in xs.cubes(cbits):
                    for point in itertools.product(*(bit_indices(s) for s in cube)):
                        seen += 1
                        assert ref.resolve(**space.flags(point), strict=False).names == \
                            names, point
        assert seen == space.size()


@settings(max_examples=max(PAIRS // 3, 10), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pair=pairs(), ctxs=st.lists(contexts, min_size=1, max_size=12))
def test_every_request_falls_in_a_class_that_behaves_like_it(
        pair: tuple[dict[str, Any], dict[str, Any]], ctxs: list[dict[str, Any]]) -> None:
    """The partition is exact: any request gets, on both sides, the tools of its class's
    representative (so counting classes counts every request)."""
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [write_definitions(Path(tmp) / name, split_files(data, []))
                for name, data in (("base", pair[0]), ("head", pair[1]))]
        try:
            sides = [side_from_definitions(d) for d in dirs]
        except DefinitionsError:
            return
        tools = list(sides[1].tables["tools"]) + [
            t for t in sides[0].tables["tools"] if t not in set(sides[1].tables["tools"])]
        space = ClassSpace([TablesView(s.tables, tools) for s in sides], tools)
        refs = [ReferenceInterpreter(resolve_definitions(d)) for d in dirs]
        for ctx in ctxs:
            flags = space.flags(space.classify(**ctx))
            for ref in refs:
                assert ref.resolve(**ctx, strict=False).names == \
                    ref.resolve(**flags, strict=False).names, (ctx, flags)


def test_lines_widen_only_over_classes_counted_once() -> None:
    """A group rule mentions owner-only plugin tools for one sender. Agent main changes too
    (touched): its whole line and its own non-owner classes, where the tools are absent on
    both sides, must not both count in the widening pool (coverage sums overlaps), or a line
    widened over agents claims a1's sandboxed classes, where its sandbox list keeps plug_b
    on both sides."""
    tool = {"description": "A tool.", "parameters": {"type": "object"}}
    base: dict[str, Any] = {
        "catalog": [{"name": "web_search", "ownerOnly": True, **tool},
                    {"name": "pb_one", "ownerOnly": True, "plugin": "plug_b", **tool},
                    {"name": "plug_b", "ownerOnly": True, "plugin": "plug_b", "optional": True,
                     **tool}],
        "profiles": {"minimal": {"allow": ["session_status"]}, "full": {}},
        "tools": {"profile": "minimal", "alsoAllow": ["web_search"]},
        "agents": {"defaults": {"subagents": {"maxSpawnDepth": 1}}, "list": [
            {"id": "main"},
            {"id": "a1", "tools": {"profile": "full",
                                   "sandbox": {"tools": {"allow": ["plug_b"]}}}}]},
        "channels": {"telegram": {}},
    }
    head = copy.deepcopy(base)
    head["agents"]["list"][0]["tools"] = {"alsoAllow": ["pa_one"]}
    head["channels"]["telegram"] = {"groups": {
        "g2": {"toolsBySender": {"id:42": {"alsoAllow": ["group:plugins"]}}}}}
    got = _check(base, head)
    assert got["plug_b"][0] > 0


@pytest.mark.parametrize("target", ["2026.3", "2026.9"])
@pytest.mark.parametrize("mode", [None, "off", "non-main", "all"])
def test_a_subagent_at_depth_0_is_no_leaf_with_max_spawn_depth_1(target: str,
                                                                 mode: str | None) -> None:
    """With maxSpawnDepth 1 every spawn_depth >= 1 is a leaf, yet a subagent key at depth 0
    (2026.3: a bare `subagent:x` key; both: spawn_depth=0) is not: it keeps sessions_list.
    Its class is reached only through a session key, so under a sandbox mode that
    sandboxes such keys its unsandboxed classes are empty."""
    tool = {"description": "A tool.", "parameters": {"type": "object"}}
    data: dict[str, Any] = {
        "catalog": [{"name": n, **tool} for n in ("read", "sessions_list", "sessions_spawn")],
        "profiles": {"full": {}}, "tools": {},
        "agents": {"defaults": {"subagents": {"maxSpawnDepth": 1},
                                **({"sandbox": {"mode": mode}} if mode else {})},
                   "list": [{"id": "main", "default": target == "2026.9"},
                            {"id": "viewer", "sandbox": {"mode": "off"}}]},
        "channels": {},
    }
    if target == "2026.9":
        data["openclaw"] = "2026.9"
    ctxs = [{"session_key": "subagent:x"}, {"session_key": "subagent:x", "agent_id": "main"},
            {"session_key": "agent:viewer:subagent:x", "spawn_depth": 0},
            {"session_key": "agent:main:subagent:x", "spawn_depth": 0, "sandboxed": True}]
    with tempfile.TemporaryDirectory() as tmp:
        defs = write_definitions(Path(tmp) / "d", split_files(data, []))
        side = side_from_definitions(defs)
        ref = ReferenceInterpreter(resolve_definitions(defs))
        space = ClassSpace([TablesView(side.tables, side.tables["tools"])])
        for ctx in ctxs:
            flags = space.flags(space.classify(**ctx))
            if target == "2026.3" or "spawn_depth" in ctx:  # 2026.9: `subagent:x` is depth 1
                assert "sessions_list" in ref.resolve(**ctx).names
            assert ref.resolve(**flags).names == ref.resolve(**ctx).names, (ctx, flags)
    _check(data, {**data, "tools": {"deny": ["sessions_list"]}})
