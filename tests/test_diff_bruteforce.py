"""``toolc diff`` is exact: its per-tool class counts equal brute-force enumeration of every
context class through the reference interpreter, on random pairs of small definitions."""

from __future__ import annotations

import copy
import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.access import Analysis, ClassSpace, TablesView
from toolc.api import resolve_definitions
from toolc.diagnostics import DefinitionsError
from toolc.diff import compute_diff, side_from_definitions
from toolc.reference import ReferenceInterpreter

from tests.helpers import write_definitions
from tests.strategies import ENTRY_POOL, by_provider, definitions, group_map, split_files

PAIRS = int(os.environ.get("TOOLC_DIFF_PAIRS", "300"))


def _shrink(data: dict[str, Any]) -> dict[str, Any]:
    """Keep brute force affordable: one channel, two byProvider keys per config."""
    data = copy.deepcopy(data)
    channels = data["channels"]
    for name in list(channels)[1:]:
        del channels[name]
    configs = [data["tools"], *(a.get("tools", {}) for a in data["agents"]["list"])]
    for cfg in configs:
        if "byProvider" in cfg:
            cfg["byProvider"] = dict(list(cfg["byProvider"].items())[:2])
    return data


@st.composite
def pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A base and a head that differs from it by a few policy edits (or is redrawn)."""
    base = _shrink(draw(definitions()))
    head = copy.deepcopy(base)
    edits = draw(st.lists(st.integers(0, 7), min_size=0, max_size=3))
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
    return base, head


def _brute_force(space: ClassSpace, base: ReferenceInterpreter, head: ReferenceInterpreter
                 ) -> dict[str, tuple[int, int]]:
    counts: dict[str, list[int]] = {}
    for point in itertools.product(*(range(len(d)) for d in space.dims())):
        flags = space.flags(point)
        before = set(base.resolve(**flags).names)
        after = set(head.resolve(**flags).names)
        for name in after - before:
            counts.setdefault(name, [0, 0])[0] += 1
        for name in before - after:
            counts.setdefault(name, [0, 0])[1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}


@settings(max_examples=PAIRS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pair=pairs())
def test_diff_counts_equal_brute_force(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [write_definitions(Path(tmp) / name, split_files(data, []))
                for name, data in zip(("base", "head"), pair, strict=True)]
        try:
            sides = [side_from_definitions(d) for d in dirs]
        except DefinitionsError:
            return  # an edit made the definitions invalid: nothing to compare
        result = compute_diff(*sides)
        refs = [ReferenceInterpreter(resolve_definitions(d)) for d in dirs]
        expected = _brute_force(result.space, *refs)
        got = {c.tool: (c.gained_count, c.lost_count) for c in result.changes}
        assert got == expected


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
        analysis = Analysis(space)
        tools = side.tables["tools"]
        seen = 0
        for block in analysis.blocks():
            names = tuple(t for i, t in enumerate(tools) if block.results[0] >> i & 1)
            for cube in analysis.cubes(block):
                for point in itertools.product(*(sorted(s) for s in cube)):
                    seen += 1
                    assert ref.resolve(**space.flags(point)).names == names, point
        assert seen == space.size()
