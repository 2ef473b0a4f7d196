"""``toolc diff`` leaves unread the shards of channels that cannot change it: the summary
``split_tables`` records per channel counts exactly the classes the class space builds for it,
a diff that skips such channels says exactly what one that reads everything says, and an
unread shard is really not parsed, yet checked like a read one (a tampered one is refused)."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.api import build, compile_files
from toolc.builds.read import tables_of_files
from toolc.diagnostics import DefinitionsError
from toolc.pipeline.groups import channel_maps
from toolc.pipeline.shards import map_entry
from toolc.review.diff import (
    DiffInputError,
    compute_diff,
    side_from_build,
    side_from_definitions,
    to_json,
    unread_channels,
)
from toolc.semantics.access import ClassSpace, TablesView, runs_bits

from tests.helpers import write_definitions
from tests.strategies import CHANNELS, KEYED_CHANNELS, definitions, group_map, split_files

EXAMPLES = 60


def _index_and_tables(data: dict[str, Any], tmp: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    defs = write_definitions(tmp, split_files(data, []))
    files, _, _ = compile_files(defs, package="x", with_models=False)
    return json.loads(files["x/tables.json"]), tables_of_files(files, "x")


def _general_space(tables: dict[str, Any]) -> ClassSpace:
    """One build's classes through the general (two-sided) construction: two views of the
    same tables that do not share their channel objects."""
    tools = list(tables["tools"])
    return ClassSpace([TablesView(tables, tools), TablesView(tables, tools)], tools)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=definitions())
def test_the_recorded_summary_counts_the_class_space(data: dict[str, Any],
                                                     tmp_path_factory: pytest.TempPathFactory
                                                     ) -> None:
    index, tables = _index_and_tables(data, tmp_path_factory.mktemp("summary"))
    space = _general_space(tables)
    view = space.views[0]
    for name, entry in index["channels"].items():
        summary = entry.get("summary")
        assert (summary is None) == (entry["rule"]["kind"] != "groups")
        if summary is None:
            continue
        mine = [ci for ci, k in enumerate(space.channels)
                if k.key[1] is not None and k.key[1][0] == name and k.key[0] == space.gate(name)]
        assert summary["classes"] == len(mine)
        reached = 0
        for ci in mine:
            for stack in space.channel_stacks(ci)[0]:
                if stack >= 0:
                    reached |= view.witnesses(stack)
        assert runs_bits(summary["witnesses"]) == reached
        leaves: list[int] = []
        for gmap in channel_maps(view.channels[name]):
            for e in gmap["exact"].values():
                map_entry(e, leaves.append)
        every = 0
        for stack in leaves:
            if stack >= 0:
                every |= view.witnesses(stack)
        assert runs_bits(summary["all_witnesses"]) == every


@st.composite
def group_edits(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A base (with every plain channel), and a head whose one groups channel's group map
    is redrawn."""
    base = draw(definitions())
    for name in CHANNELS:
        base["channels"].setdefault(name, {"groups": draw(group_map())})
    head = copy.deepcopy(base)
    plain = [n for n in head["channels"] if n not in KEYED_CHANNELS]
    if plain:
        name = draw(st.sampled_from(plain))
        head["channels"][name]["groups"] = draw(group_map())
    return base, head


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(pair=group_edits())
def test_a_diff_that_skips_channels_says_what_one_reading_everything_says(
        pair: tuple[dict[str, Any], dict[str, Any]],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.mktemp("pair")
    try:
        sides = [side_from_definitions(write_definitions(tmp / name, split_files(data, [])),
                                       label=name)
                 for name, data in (("base", pair[0]), ("head", pair[1]))]
    except DefinitionsError:
        return  # the edit made the definitions invalid: nothing to compare
    fast = compute_diff(*sides, skip=True)
    full = compute_diff(*sides, skip=False)
    assert to_json(fast) == to_json(full)
    assert fast.space.size() == full.space.size()


# -- builds on disk ------------------------------------------------------------------------------
TOOLS = ["read", "write", "exec", "browser", "message"]
CATALOG = [{"name": n, "description": f"{n}.", "parameters": {"type": "object"}} for n in TOOLS]


def _groups(deny: str, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"*": {"tools": {"deny": [deny]}}}
    for i in range(n):
        out[f"-100{i}"] = {"tools": {"deny": [TOOLS[i % len(TOOLS)]]},
                           "toolsBySender": {f"id:{i}": {"allow": ["read"]}}}
    return out


def _definitions(*, whatsapp_deny: str = "browser", viewer_deny: str = "write"
                 ) -> dict[str, Any]:
    return {"d.yaml": {
        "catalog": CATALOG,
        "agents": {"list": [{"id": "main"},
                            {"id": "viewer", "tools": {"deny": [viewer_deny]}}]},
        "channels": {
            "telegram": {"groups": _groups("write", 4),
                         "accounts": {"work": {"groups": _groups("exec", 3)}}},
            "whatsapp": {"groups": _groups(whatsapp_deny, 2)},
            "irc": {"groups": {"#Ops": {"tools": {"deny": ["exec"]}}, "*": {}}}}}}


def _build(tmp: Path, name: str, data: dict[str, Any]) -> Path:
    write_definitions(tmp / f"defs-{name}", data)
    build(tmp / f"defs-{name}", tmp / name)
    return tmp / name


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("unread")
    return {"base": _build(tmp, "base", _definitions()),
            "group": _build(tmp, "group", _definitions(whatsapp_deny="message")),
            "agent": _build(tmp, "agent", _definitions(whatsapp_deny="message",
                                                       viewer_deny="exec"))}


def _shard(out: Path, channel: str) -> Path:
    index = json.loads((out / "toolc_runtime" / "tables.json").read_text())
    return out / "toolc_runtime" / index["channels"][channel]["groups"]


def _tampered(out: Path, channel: str, tmp: Path) -> Path:
    copy_of = tmp / f"{out.name}-tampered-{channel}"
    shutil.copytree(out, copy_of)
    shard = _shard(copy_of, channel)
    shard.write_bytes(shard.read_bytes().replace(b'"-1000"', b'"-1009"'))
    return copy_of


def test_only_the_changed_channel_is_read(builds: dict[str, Path]) -> None:
    sides = [side_from_build(builds["base"]), side_from_build(builds["group"])]
    assert set(unread_channels(sides)) == {"telegram", "irc"}
    agent = [side_from_build(builds["base"]), side_from_build(builds["agent"])]
    assert unread_channels(agent) == {}  # an agent's change meets every channel
    fast, full = compute_diff(*sides), compute_diff(*sides, skip=False)
    assert fast.changes and to_json(fast) == to_json(full)


def _consistently_replaced(out: Path, channel: str, raw: bytes, tmp: Path) -> Path:
    """A copy of ``out`` whose ``channel`` shard is ``raw``, with the manifest and the
    runtime's digests rewritten to match (what only a signature tells from a real build)."""
    copy_of = tmp / f"{out.name}-replaced-{channel}"
    shutil.copytree(out, copy_of)
    shard, init = _shard(copy_of, channel), copy_of / "toolc_runtime" / "__init__.py"
    old, new = (hashlib.sha256(b).hexdigest() for b in (shard.read_bytes(), raw))
    old_init = hashlib.sha256(init.read_bytes()).hexdigest()
    shard.write_bytes(raw)
    init.write_text(init.read_text().replace(old, new))
    manifest = copy_of / "manifest.json"
    manifest.write_text(manifest.read_text().replace(old, new).replace(
        old_init, hashlib.sha256(init.read_bytes()).hexdigest()))
    return copy_of


def test_an_unread_shard_is_not_parsed(builds: dict[str, Path], tmp_path: Path) -> None:
    want = to_json(compute_diff(side_from_build(builds["base"]),
                                side_from_build(builds["group"])))
    # telegram is the same on both sides: a shard it holds that is no shard at all (on both
    # sides, each side's digests agreeing) is never parsed
    garbage = b"not a shard\n"
    base, head = (_consistently_replaced(builds[n], "telegram", garbage, tmp_path)
                  for n in ("base", "group"))
    got = to_json(compute_diff(side_from_build(base), side_from_build(head)))
    assert {k: v for k, v in got.items() if k not in ("base", "head")} == {
        k: v for k, v in want.items() if k not in ("base", "head")}
    with pytest.raises(DiffInputError, match="not a readable shard"):
        compute_diff(side_from_build(base), side_from_build(head), skip=False)


def test_every_shard_is_checked_parsed_or_not(builds: dict[str, Path], tmp_path: Path) -> None:
    # telegram is the same on both sides: left unparsed, its tampered shard is still refused
    for sides in ((builds["base"], _tampered(builds["group"], "telegram", tmp_path)),
                  (_tampered(builds["base"], "telegram", tmp_path), builds["group"])):
        with pytest.raises(DiffInputError, match=r"telegram\.[0-9a-f]+\.shard does not match"):
            compute_diff(*map(side_from_build, sides))
    # whatsapp changed: its shard is read, and a tampered one refused
    with pytest.raises(DiffInputError, match="refusing to compare this build"):
        compute_diff(side_from_build(builds["base"]),
                     side_from_build(_tampered(builds["group"], "whatsapp", tmp_path)))
    # with an agent's change every shard is parsed, a shard both sides hold from one side
    # only, yet checked on both
    again = tmp_path / "again"
    again.mkdir()
    for sides in ((_tampered(builds["base"], "telegram", again), builds["agent"]),
                  (builds["base"], _tampered(builds["agent"], "telegram", again))):
        with pytest.raises(DiffInputError, match="refusing to compare this build"):
            compute_diff(*map(side_from_build, sides))
