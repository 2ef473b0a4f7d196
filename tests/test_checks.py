"""Assertions and policy lints: exact against brute force through the reference interpreter,
and the import layering they rely on (each stage uses only the ones below it)."""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.api import compile_files, resolve_definitions
from toolc.audit.checks import Patterns, check_assertion, resolve_command
from toolc.diagnostics import BUILTIN, DefinitionsError
from toolc.pipeline.model import AssertionDef, Entry
from toolc.review.diff import side_from_definitions
from toolc.rules.context import (
    CLI_OPTIONS,
    CONTEXT_KEYS,
    Context,
    group_context,
    parse_session_key,
    subagent9,
)
from toolc.rules.names import (
    normalize_account_id,
    normalize_agent_id,
    normalize_channel,
    normalize_key,
)
from toolc.semantics.access import ClassSpace, TablesView
from toolc.semantics.factored import bit_indices
from toolc.semantics.reference import ReferenceInterpreter

from tests.helpers import ROOT, write_definitions
from tests.strategies import CHANNELS, CORE, MODELS, PROVIDERS, contexts, definitions, split_files
from tests.test_diff_bruteforce import _group_only_plugin_tools, _shrink

EXAMPLES = int(os.environ.get("TOOLC_ASSERTION_EXAMPLES", "120"))

@st.composite
def patterns(draw: st.DrawFn) -> dict[str, Any]:
    where: dict[str, Any] = {}

    def pick(key: str, pool: list[str]) -> None:
        if draw(st.booleans()):
            where[key] = draw(st.one_of(st.just("*"), st.lists(
                st.sampled_from(pool), min_size=1, max_size=2).map(tuple)))

    pick("agent", ["main", "a1", "a2", "nobody", "A1"])
    pick("provider", [*PROVIDERS, "other"])
    pick("model", [*MODELS, "x"])
    pick("channel", [*CHANNELS, "slack"])
    pick("account", ["work", "home", "default"])
    pick("group", ["g1", "G1", "g2", "-100", "-100:topic:7", "zzz"])
    pick("sender", ["id:42", "42", "username:alice", "name:bob", "e164:+1555", "id:7"])
    for key in ("owner", "sandboxed"):
        if draw(st.booleans()):
            where[key] = draw(st.booleans())
    if draw(st.booleans()):
        where["subagent"] = draw(st.sampled_from([False, True, "leaf", "non-leaf"]))
    return where


def _channel_group(ctx: dict[str, Any]) -> tuple[str | None, str | None]:
    """The request's channel and group as the policy reads them (plainly, for the test)."""
    session = parse_session_key(ctx.get("session_key") or None)
    sc, sg = group_context(ctx.get("spawned_by") or None)
    mp = ctx.get("message_provider")
    channel = normalize_channel(mp) if mp and mp.strip() else (session.channel or sc)
    gid = ctx.get("group_id")
    group = gid if gid and gid.strip() else (session.group or sg)
    return channel, (group.strip() if group else None)


def matches(where: dict[str, Any], ctx: dict[str, Any], leaf_depth: int,
            leading: bool = False) -> bool:
    """A plain reading of a pattern against one request (``leading``: 2026.9's subagent
    depth, getSubagentDepth)."""
    def one(p: Any, value: str | None, norm: Any) -> bool:
        if p is None:
            return True
        if p == "*":
            return value is not None
        return value is not None and value in {norm(x) for x in p}

    def text(key: str) -> str | None:
        v = ctx.get(key)
        return v.strip() if isinstance(v, str) and v.strip() else None

    session = parse_session_key(text("session_key"))
    agent = text("agent_id")
    agent = normalize_agent_id(agent) if agent else (
        normalize_agent_id(session.agent) if session.agent else None)
    channel, group = _channel_group(ctx)
    account = text("account_id")
    senders = set()
    for kind, key in (("id", "sender_id"), ("e164", "sender_e164"),
                      ("username", "sender_username"), ("name", "sender_name")):
        v = text(key)
        if v:
            v = v.lower()
            senders.add((kind, v.removeprefix("@") if kind in ("id", "username") else v))
    depth = ctx.get("spawn_depth")
    key_sub, key_depth = (subagent9(text("session_key")) if leading
                          else (session.is_subagent, session.depth))
    is_sub = key_sub or (depth or 0) >= 1
    if depth is None:
        depth = key_depth
    # depth 0 (a stored 0, or 2026.3's bare `subagent:` key) is never a leaf
    kind = None if not is_sub else "leaf" if 1 <= depth and depth >= leaf_depth else "non-leaf"
    sub = where.get("subagent")
    sender = where.get("sender")
    return (one(where.get("agent"), agent, normalize_agent_id)
            and one(where.get("provider"), normalize_key(text("model_provider")) or None,
                    normalize_key)
            and one(where.get("model"), normalize_key(text("model_id")) or None, normalize_key)
            and one(where.get("channel"), channel, normalize_channel)
            and one(where.get("account"), normalize_account_id(account), normalize_account_id)
            and one(where.get("group"), group, str.strip)
            and (sender is None or (bool(senders) if sender == "*" else any(
                (k, v.lower().removeprefix("@") if k in ("id", "username") else v.lower())
                in senders for k, _, v in (s.partition(":") if ":" in s else ("id", ":", s)
                                           for s in sender))))
            and ("owner" not in where or where["owner"] == (ctx.get("sender_is_owner") is True))
            and ("sandboxed" not in where
                 or where["sandboxed"] == (ctx.get("sandboxed") is True))
            and (sub is None or (sub is False and kind is None) or (sub is True and kind)
                 or sub == kind))


def _depth_zero(ctx: dict[str, Any], leading: bool) -> bool:
    """A subagent request at depth 0 (a stored 0, or a key that counts none)."""
    key = ctx.get("session_key")
    key = key.strip() if isinstance(key, str) and key.strip() else None
    session = parse_session_key(key)
    key_sub, key_depth = subagent9(key) if leading else (session.is_subagent, session.depth)
    depth = ctx.get("spawn_depth")
    return (key_sub or (depth or 0) >= 1) and (key_depth if depth is None else depth) == 0


def _assertion(kind: str, tools: list[str], where: dict[str, Any]) -> AssertionDef:
    return AssertionDef(kind=kind, pos=BUILTIN,  # type: ignore[arg-type]
                        tools=tuple(Entry(text=t, pos=BUILTIN) for t in tools), where=where,
                        field_pos={}, text="")


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=definitions(), where=patterns(), kind=st.sampled_from(["never", "always"]),
       tools=st.lists(st.sampled_from([*CORE, "pa_one"]), min_size=1, max_size=2, unique=True),
       ctxs=st.lists(contexts, min_size=1, max_size=10))
def test_assertion_check_equals_brute_force(data: dict[str, Any], where: dict[str, Any],
                                            kind: str, tools: list[str],
                                            ctxs: list[dict[str, Any]]) -> None:
    """Exact: the violating classes counted equal brute force over the selected classes
    (each through its witness request, which must match the pattern and fall in the class);
    a reported counterexample violates through the reference; random requests that match
    the pattern and violate are never missed."""
    data = _shrink(data)
    with tempfile.TemporaryDirectory() as tmp:
        defs = write_definitions(Path(tmp) / "d", split_files(data, []))
        try:
            side = side_from_definitions(defs)
        except DefinitionsError:
            return
        resolved = resolve_definitions(defs)
        ref = ReferenceInterpreter(resolved)
        view = TablesView(side.tables, side.tables["tools"])
        space = ClassSpace([view])
        tools = [t for t in tools if t in {x.name for x in resolved.defs.tools}]
        if not tools:
            return
        a = _assertion(kind, tools, where)
        try:
            _check_equals_brute_force(space, view, ref, a, tools, kind, where, ctxs)
        except AssertionError:
            if _group_only_plugin_tools(defs):
                return  # the access analysis' documented approximation (TC142, 2026.9)
            raise


def _check_equals_brute_force(space: ClassSpace, view: TablesView, ref: ReferenceInterpreter,
                              a: AssertionDef, tools: list[str], kind: str,
                              where: dict[str, Any], ctxs: list[dict[str, Any]]) -> None:
    v = check_assertion(space, Patterns(space), a, tools)

    def violates(flags: dict[str, Any]) -> bool:
        names = set(ref.resolve(**flags, strict=False).names)
        return (any(t in names for t in tools) if kind == "never"
                else any(t not in names for t in tools))

    sel = Patterns(space).select(where)
    bad = 0
    for point in itertools.product(*(bit_indices(b) for b in sel.cube)):
        if not space.holds(point):
            continue  # no request falls there
        flags = sel.flags(point)
        assert matches(where, flags, view.leaf_depth), (where, flags)
        assert space.classify(**flags) == point, (flags, point)
        bad += violates(flags)
    assert (v.classes if v else 0) == bad
    if v is not None:
        assert matches(where, v.flags, view.leaf_depth) and violates(v.flags)
    else:
        for ctx in ctxs:
            if view.leaf_depth == 1 and _depth_zero(ctx, view.depth_leading):
                # depth 0 is never a leaf; with maxSpawnDepth 1 no class has that verdict
                # and the class space counts it as depth 1 (a documented approximation)
                continue
            assert not (matches(where, ctx, view.leaf_depth, view.depth_leading)
                        and violates(ctx)), ctx


def test_resolve_command_quotes_values() -> None:
    assert resolve_command({"agent_id": "a b", "sender_is_owner": True, "spawn_depth": 2,
                            "sandboxed": False}) == \
        "toolc resolve --agent 'a b' --owner --spawn-depth 2"


def _build(tmp: Path, text: str) -> list[str]:
    defs = tmp / "d"
    defs.mkdir()
    (defs / "a.yaml").write_text(text)
    try:
        _, diags, _ = compile_files(defs, with_models=False)
    except DefinitionsError as exc:
        diags = exc.diagnostics
    return [f"{d.code} {d.message}" for d in diags]


_CATALOG = """version: 1
catalog:
  - {name: read, description: Read., parameters: {type: object}}
  - {name: exec, description: Run., parameters: {type: object}}
  - {name: message, description: Send., parameters: {type: object}}
profiles: {full: {}, chat: {allow: [message]}}
tools: {profile: full}
"""


def test_topic_lint_claims_only_unreachable_entries(tmp_path: Path) -> None:
    """Every topic entry TC311 calls unused is never selected by the reference, for any
    sender; one it leaves alone is selected for some sender."""
    text = _CATALOG + """channels:
  telegram:
    groups:
      "-1:topic:2": {tools: {deny: [read]}}
      "-1": {toolsBySender: {"id:5": {deny: [exec]}}}
      "-3:topic:4": {tools: {deny: [read]}}
      "-3": {toolsBySender: {"*": {deny: [exec]}}}
"""
    msgs = _build(tmp_path, text)
    unused = [m for m in msgs if m.startswith("TC311")]
    assert len(unused) == 1 and '"-3:topic:4"' in unused[0]
    ref = ReferenceInterpreter(resolve_definitions(tmp_path / "d"))
    for gid, reachable in (("-1:topic:2", True), ("-3:topic:4", False)):
        picked = [ref.group_match(Context.of(sender_id=s), "telegram", gid).entry
                  for s in (None, "5", "9")]
        assert any(e is not None and e.id == gid for e in picked) == reachable


def test_strict_turns_lints_into_errors(tmp_path: Path) -> None:
    text = _CATALOG + """agents:
  list:
    - id: viewer
      tools: {profile: chat, allow: [read, message]}
"""
    defs = tmp_path / "d"
    defs.mkdir()
    (defs / "a.yaml").write_text(text)
    with pytest.raises(DefinitionsError) as exc:
        compile_files(defs, strict=True, with_models=False)
    # the note that the file names no `openclaw` release stays a note: notes never fail
    assert [(d.code, d.severity) for d in exc.value.diagnostics] == [
        ("TC106", "note"), ("TC312", "error")]
    compile_files(defs, strict=False, with_models=False)


def test_shipped_assertions_hold_and_are_checked() -> None:
    resolved = resolve_definitions(ROOT / "definitions")
    assert len(resolved.defs.assertions) >= 3


def test_assertions_on_a_tool_the_build_leaves_out(tmp_path: Path) -> None:
    """A disabled plugin's tool is in the catalog but never present: `never` holds and
    `always` fails in every matching class (it was a KeyError)."""
    tool = "  - {name: pa, description: P., parameters: {type: object}, plugin: plug}\n"
    text = _CATALOG.replace("profiles:", tool + "profiles:") + """\
plugins: {entries: {plug: {enabled: false}}}
assertions:
  - never: {tool: pa}
  - always: {tool: pa, owner: true}
"""
    msgs = _build(tmp_path, text)
    fails = [m for m in msgs if m.startswith("TC300")]
    assert len(fails) == 1 and "always" in fails[0] and "pa not visible" in fails[0]


def test_resolve_command_knows_every_context_keyword() -> None:
    """Every keyword a class representative can carry reaches the command line (the Slack
    and Discord keywords were missing)."""
    assert set(CLI_OPTIONS) == set(CONTEXT_KEYS)
    assert resolve_command({"message_provider": "discord", "group_space": "g",
                            "group_channel": "#general"}) == \
        "toolc resolve --channel discord --group-space g --group-channel '#general'"
