"""``python -m conformance.migrate_check``: the diff ``toolc migrate`` prints, confirmed by the
releases.

The shipped definitions as they were for 2026.3 (``tests/fixtures/shipped-2026.3/`` plus the
2026.3 starter files) are copied twice into a temporary directory and one copy is migrated with
toolc's own ``migrate --openclaw 2026.9`` (``api.migrate``). Every line of the access diff it
prints comes with one explained request (``MigrateResult.why``: the representative request of
the line's first group of classes). Both sides are expressed as an OpenClaw config (``express``:
the definitions' ``tools``, ``agents``, ``channels`` and ``plugins`` sections as they are,
toolc's own named groups expanded into their members, plugin stand-ins for the catalog tools of
plugins the release does not bundle, as ``roundtrip.stub_plugins`` and ``run9`` do) and asked:

- openclaw@2026.3.2 (``oracle.mjs``) must answer the line's "before" side for its request (a
  ``-`` line: the tool was visible; a ``+`` line: it was not), and
- openclaw@2026.9.6 (``oracle9.mjs``, the config through the release's own loader) its
  "after" side (``+``: visible; ``-``: not; a request the release refuses to build tools for is
  "not visible" and must be what toolc's ``after`` says: "the request is refused").

Each access line is also asked at ``--per-line`` seeded requests of its classes: a line's
classes are those where the change happens plus, so that it reads simply, classes where the
tool is absent on both sides (``review.delta``'s ``widen``); each of those requests must be the
change or the tool absent in both releases.

The catalog lines are checked against the releases' own data: a tool ``added`` must be one
2026.9.6 builds and 2026.3.2 does not, a tool ``removed`` the reverse; a ``schema changed``
line must carry, after the migration, exactly the parameter schema 2026.9.6's own factory
builds (``oracle9``'s ``schemas`` op), different from the schema before.

One row per line (``confirmed`` / ``NOT confirmed``), then the reverse check: ``--samples``
requests drawn (seeded) from the diff's class space, and for each of them every tool both
sides' catalogs have whose access the diff says did not change there; both releases must agree
that it did not (visible in both, or in neither). Exit 1 on any unconfirmed line or
disagreement.

What cannot be expressed for a release is said, never skipped silently: toolc's
``spawn_depth`` keyword becomes a subagent session key of that depth
(``agent:<id>:subagent:...``; OpenClaw reads the depth from the key when its session store has
none); named groups (``groups:``) have no OpenClaw counterpart and are expanded; assertions,
providers and toolc's profile files are not config (the releases use their built-in profiles).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from toolc import api
from toolc.api.project import MigrateResult, Why
from toolc.rules.context import parse_session_key
from toolc.semantics.factored import bit_indices
from toolc.semantics.reference import ReferenceInterpreter
from toolc.targets import target
from toolc.targets.starter import STARTER_FILES, starter_text

from conformance.__main__ import RELEASES, Oracle, fetch
from conformance.extract import parameters_2026_9

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "tests" / "fixtures" / "shipped-2026.3"
# OpenClaw config sections a definitions file may hold in OpenClaw's own shape.
SECTIONS = ("tools", "agents", "channels", "plugins", "session")
# Policy lists inside those sections whose entries may name a toolc group.
LIST_KEYS = ("allow", "alsoAllow", "deny")
# Catalog tools 2026.9.6 builds only for a kind of run a request does not describe (oracle9's
# RUN_MODE_ONLY): the oracle never builds them, toolc offers them wherever policy allows.
RUN_MODE_ONLY = frozenset({"heartbeat_respond", "github_identity_status", "github_publish",
                           "suggest_task", "dismiss_task"})


def shipped_2026_3(dst: Path) -> Path:
    """The shipped definitions as they were for 2026.3: the starter files plus the fixture."""
    for rel in STARTER_FILES["2026.3"]:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        (dst / rel).write_text(starter_text("2026.3", rel), "utf-8")
    shutil.copytree(FIXTURE, dst, dirs_exist_ok=True)
    return dst


# -- definitions -> an OpenClaw config ----------------------------------------------------------
@dataclass(slots=True)
class Expressed:
    """One side's definitions as OpenClaw sees them."""

    config: dict[str, Any]
    plugins: list[dict[str, Any]]  # stand-ins: {"id", "tools": [{"name", "optional"}]}
    notes: list[str] = field(default_factory=list)


def _documents(defs: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(defs.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text("utf-8"))
        if isinstance(data, dict):
            yield path.relative_to(defs).as_posix(), data


def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


def express(defs: Path, bundled: set[str], channel_plugins: Mapping[str, list[str]] | None = None
            ) -> Expressed:
    """The OpenClaw config and plugin stand-ins for the definitions ``defs``; ``bundled``: the
    plugin ids the release's oracle already stands in for (bundled or built in);
    ``channel_plugins``: channel -> the tools of its official external plugin, for a release
    whose core no longer builds a channel's tools (2026.9.6: ``@openclaw/whatsapp`` declares
    ``whatsapp_login``), so a channel tool of the definitions is that plugin's there."""
    config: dict[str, Any] = {}
    groups: dict[str, list[str]] = {}
    stand_ins: dict[str, list[dict[str, Any]]] = {}
    notes = []
    for rel, data in _documents(defs):
        _merge(config, {k: v for k, v in data.items() if k in SECTIONS})
        groups.update(data.get("groups") or {})
        for tool in data.get("catalog") or []:
            plugin = tool.get("plugin")
            channel = tool.get("channel")
            if channel and channel_plugins is not None:
                if tool["name"] not in channel_plugins.get(channel, ()):
                    notes.append(f"{rel}: {tool['name']} ({channel}) is no tool of the "
                                 "release's channel plugin: not expressed")
                    continue
                plugin = channel
            if plugin and plugin not in bundled:
                stand_ins.setdefault(plugin, []).append(
                    {"name": tool["name"], "optional": bool(tool.get("optional"))})
        if data.get("assertions"):
            notes.append(f"{rel}: assertions are toolc's checks, not OpenClaw config")
    for where in _drop_toolc_only(config, ""):
        notes.append(f"{where}: toolc's exec allowlist (OpenClaw keeps its allowlist in the "
                     "exec approvals file, not the config; it decides no tool's visibility): "
                     "left out")
    if groups:
        notes.append("named groups expanded into their members (OpenClaw has none): "
                      + ", ".join(sorted(groups)))
        _expand_groups(config, groups)
    for channel, tools in sorted((channel_plugins or {}).items()):
        if channel in stand_ins:  # the whole official plugin, as installed
            named = {t["name"] for t in stand_ins[channel]}
            stand_ins[channel] += [{"name": t, "optional": False} for t in tools
                                   if t not in named]
    plugins = [{"id": pid, "tools": tools} for pid, tools in sorted(stand_ins.items())]
    if plugins:
        notes.append("plugin stand-ins: " + ", ".join(
            f"{p['id']} ({', '.join(t['name'] for t in p['tools'])})" for p in plugins))
    return Expressed(config=config, plugins=plugins, notes=notes)


def _drop_toolc_only(node: Any, at: str) -> list[str]:
    """Remove ``exec.allowlist`` wherever a tools block has it; the paths removed."""
    out = []
    if isinstance(node, dict):
        exec_block = node.get("exec")
        if isinstance(exec_block, dict) and "allowlist" in exec_block:
            del exec_block["allowlist"]
            out.append(f"{at}exec.allowlist".lstrip("."))
        for key, value in node.items():
            out += _drop_toolc_only(value, f"{at}{key}.")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            label = value.get("id", i) if isinstance(value, dict) else i
            out += _drop_toolc_only(value, f"{at.rstrip('.')}[{label}].")
    return out


def ask(oracle: Oracle, request: Mapping[str, Any]) -> Any:
    """The oracle's answer, a refusal (``error_kind``) included."""
    assert oracle.proc.stdin is not None and oracle.proc.stdout is not None
    oracle.proc.stdin.write(json.dumps(request) + "\n")
    oracle.proc.stdin.flush()
    answer = json.loads(oracle.proc.stdout.readline())
    if "error" in answer and "error_kind" not in answer:
        raise RuntimeError(f"oracle: {answer['error']}")
    return answer


def _expand_groups(node: Any, groups: Mapping[str, Sequence[str]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in LIST_KEYS and isinstance(value, list):
                node[key] = _expanded(value, groups, ())
            else:
                _expand_groups(value, groups)
    elif isinstance(node, list):
        for value in node:
            _expand_groups(value, groups)


def _expanded(entries: Sequence[str], groups: Mapping[str, Sequence[str]],
              seen: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for entry in entries:
        if entry in groups and entry not in seen:
            out += _expanded(groups[entry], groups, (*seen, entry))
        elif entry not in out:
            out.append(entry)
    return out


def official_channel_plugins(package: Path) -> dict[str, list[str]]:
    """Channel id -> the tools its official external plugin declares (``contracts.tools``),
    from the release's own bundled catalog of official plugins."""
    out: dict[str, list[str]] = {}
    pattern = re.compile(r'"contracts":\s*\{\s*"tools":\s*\[([^\]]*)\]\s*\},\s*'
                         r'"channel":\s*\{\s*"id":\s*"([a-z0-9-]+)"')
    for path in sorted((package / "dist").glob("official-external-plugin-bundled-catalogs-*.mjs")):
        for tools, channel in pattern.findall(path.read_text("utf-8")):
            out.setdefault(channel, re.findall(r'"([^"]+)"', tools))
    return out


def oracle_context(context: Mapping[str, Any]) -> dict[str, Any]:
    """A toolc request as the oracles take it: ``spawn_depth`` N becomes a session key with N
    subagent levels under the request's agent (OpenClaw reads the depth from the key)."""
    ctx = dict(context)
    depth = ctx.pop("spawn_depth", None)
    if depth:
        agent = ctx.get("agent_id") or "main"
        ctx.setdefault("session_key", f"agent:{agent}" + ":subagent:x" * int(depth))
    return ctx


# -- the releases' answers ----------------------------------------------------------------------
def _visible(result: Mapping[str, Any], tool: str) -> bool | str:
    """True/False, or the refusal's kind."""
    if "error_kind" in result:
        return str(result["error_kind"])
    return tool in result["tools"]


def _shown(answer: bool | str) -> str:
    if isinstance(answer, str):
        return f"refused ({answer})"
    return "visible" if answer else "absent"


@dataclass(slots=True)
class Row:
    line: str  # the diff line, as toolc prints it (sign, tool, where)
    request: str
    before: str
    after: str
    confirmed: bool
    why: str = ""
    note: str = ""
    status: str = ""  # "" (asked) or "not expressible"
    samples: int = 0  # further requests of the line's classes asked


class Sides:
    """toolc's reference interpreter on both sides of the migration."""

    def __init__(self, before: Path, after: Path) -> None:
        self.before = ReferenceInterpreter(api.resolve_definitions(before))
        resolved = api.resolve_definitions(after)
        self.after = ReferenceInterpreter(resolved)
        # owner-only tools of the migrated project that 2026.9.6 does not hold owner-only
        owner_only = set(target("2026.9").data["ownerOnly"])
        self.owner_only_kept = {t.name for t in resolved.defs.tools
                                if t.owner_only and t.name not in owner_only}

    def visible(self, context: Mapping[str, Any], tool: str) -> tuple[bool, bool]:
        return (_toolc_visible(self.before, context, tool),
                _toolc_visible(self.after, context, tool))


def _group_ignored(context: Mapping[str, Any]) -> bool:
    """A group request 2026.9 treats as no group: its session key names no group."""
    return bool(context.get("group_id")) and parse_session_key(
        context.get("session_key")).group is None


def _toolc_visible(ref: ReferenceInterpreter, context: Mapping[str, Any], tool: str) -> bool:
    try:
        # the release's answer: a group the session key does not name is ignored
        return tool in ref.resolve(**context, strict=False).names
    except Exception:  # a refusal (AgentSelectionRequiredError): no tools
        return False


def request_for(why: Why, result: MigrateResult, sides: Sides, rng: random.Random
                ) -> tuple[dict[str, Any], str]:
    """The request to ask for one line: toolc's explained request when toolc's own reference
    shows the line's change there, else the first of up to 200 seeded requests of the line's
    classes that does (and a note saying so)."""
    want = (why.sign == "-", why.sign == "+")
    if sides.visible(why.context, why.tool) == want:
        return dict(why.context), ""
    assert result.diff is not None
    change = next(c for c in result.diff.changes if c.tool == why.tool)
    cubes = [cube for cube, _ in (change.lost if why.sign == "-" else change.gained)]
    for _ in range(200):
        cube = rng.choice(cubes)
        point = [rng.choice(bit_indices(bits)) for bits in cube]
        context = result.diff.space.flags(point)
        if sides.visible(context, why.tool) == want:
            return context, ("toolc's explained request does not show this change in toolc "
                             f"itself (before: {why.before}; after: {why.after}); asked "
                             "another request of the line's classes")
    return dict(why.context), "no request of the line's classes shows the change in toolc"


def line_samples(why: Why, result: MigrateResult, count: int, rng: random.Random
                 ) -> list[dict[str, Any]]:
    """``count`` seeded requests of the line's classes. A line's classes are where the change
    happens and, so that the line reads simply, classes where the tool is absent on both sides
    (``review.delta``: ``widen``); every request of them must be one or the other."""
    assert result.diff is not None
    change = next(c for c in result.diff.changes if c.tool == why.tool)
    cubes = [cube for cube, _ in (change.lost if why.sign == "-" else change.gained)]
    out = []
    for _ in range(count):
        cube = rng.choice(cubes)
        out.append(result.diff.space.flags([rng.choice(bit_indices(bits)) for bits in cube]))
    return out


def check_access(why: Sequence[Why], result: MigrateResult, sides: Sides,
                 releases: Mapping[str, tuple[Oracle, Expressed]], seed: int, per_line: int
                 ) -> list[Row]:
    """One row per access line of the diff: its request shows the change in both releases, and
    each of ``per_line`` requests of its classes is the change or absent on both sides."""
    rng = random.Random(seed)
    chosen = [request_for(w, result, sides, rng) for w in why]
    asked = [[oracle_context(ctx)] + [oracle_context(c) for c in line_samples(
        w, result, per_line, rng)] for w, (ctx, _) in zip(why, chosen, strict=True)]
    flat = [ctx for group in asked for ctx in group]
    answers = {line: ask(oracle, {"op": "resolve", "config": side.config,
                                  "plugins": side.plugins, "contexts": flat})["results"]
               for line, (oracle, side) in releases.items()}
    rows = []
    at = 0
    for w, contexts, (_, note) in zip(why, asked, chosen, strict=True):
        old = answers["2026.3"][at:at + len(contexts)]
        new = answers["2026.9"][at:at + len(contexts)]
        at += len(contexts)
        rows.append(_access_row(w, contexts, old, new, note))
    return rows


def _access_row(w: Why, contexts: Sequence[Mapping[str, Any]], old: Sequence[Any],
                new: Sequence[Any], note: str) -> Row:
    ctx = contexts[0]
    request = ", ".join(f"{k}={v!r}" for k, v in sorted(ctx.items())) or "no context"
    line = f"{w.sign} {w.tool} ({w.where})"
    if w.tool in RUN_MODE_ONLY:
        return Row(line, request, "-", "-", confirmed=True, status="not expressible",
                   why=f"2026.9.6 builds {w.tool} only for a kind of run a request does not "
                   "describe (heartbeat, task suggestion, GitHub publication; runModeOnly in "
                   "the release data): toolc offers it wherever the policy allows it")
    want = (w.sign == "-", w.sign == "+")
    before, after = _visible(old[0], w.tool), _visible(new[0], w.tool)
    after_ok = after is want[1] or (
        isinstance(after, str) and not want[1]
        and after == "AgentSelectionRequired" and w.after.startswith("the request is refused"))
    ok = before is want[0] and after_ok
    # the line's other requests: the change, or the tool absent on both sides
    off = [(c, _shown(_visible(o, w.tool)), _shown(_visible(n, w.tool)))
           for c, o, n in zip(contexts[1:], old[1:], new[1:], strict=True)
           if ((_visible(o, w.tool) is True), (_visible(n, w.tool) is True))
           not in (want, (False, False))]
    why = "" if ok else f"toolc: before {w.before!r}, after {w.after!r}"
    if off:
        c, b, a = off[0]
        why += (f"{'; ' if why else ''}{len(off)} of {len(contexts) - 1} requests of the line's "
                f"classes are neither the change nor absent on both sides, e.g. {c}: "
                f"2026.3.2 {b}, 2026.9.6 {a}")
    return Row(line=line, request=request, before=_shown(before), after=_shown(after),
               confirmed=ok and not off, note=note, why=why,
               samples=len(contexts) - 1)


def check_catalog(result: MigrateResult, schemas: Mapping[str, Any], data3: Mapping[str, Any],
                  data9: Mapping[str, Any], after: Path) -> list[Row]:
    """One row per catalog line: tools added or removed, schemas changed."""
    assert result.diff is not None
    built9 = _release_tools(data9)
    built3 = _release_tools(data3)
    rows = []
    for tool in result.diff.added:
        ok = tool in built9 and tool not in built3
        rows.append(Row(f"+ catalog: tool {tool} added", "the release's catalog",
                        _shown(tool in built3), _shown(tool in built9), ok))
    for tool in result.diff.removed:
        ok = tool in built3 and tool not in built9
        rows.append(Row(f"- catalog: tool {tool} removed", "the release's catalog",
                        _shown(tool in built3), _shown(tool in built9), ok))
    migrated = _catalog_parameters(after)
    for tool in sorted(result.diff.schema_changed):
        ok = migrated.get(tool) == schemas.get(tool)
        rows.append(Row(f"~ catalog: schema of {tool} changed", "the tool's parameters",
                        "toolc's 2026.3 starter schema",
                        "2026.9.6's own schema" if ok else "differs from 2026.9.6's", ok))
    return rows


def _release_tools(data: Mapping[str, Any]) -> set[str]:
    names = {t["name"] for t in data["tools"]} | set(data.get("outsideCatalog", ()))
    # 2026.3.2's channel tool (built when WhatsApp is configured) is in no catalog section
    names |= set(data.get("ownerOnly", ()))
    return names | {t for p in data["plugins"].values() for t in p["tools"]}


def _catalog_parameters(defs: Path) -> dict[str, Any]:
    return {tool["name"]: tool.get("parameters")
            for _, data in _documents(defs) for tool in data.get("catalog") or []}


# -- the reverse: what the diff says did not change ------------------------------------------------
def _in(cube: Sequence[int], point: Sequence[int]) -> bool:
    return all((bits >> i) & 1 for bits, i in zip(cube, point, strict=True))


def unchanged_pairs(result: MigrateResult, samples: int, seed: int, shared: set[str]
                    ) -> list[tuple[dict[str, Any], list[str]]]:
    """``samples`` requests drawn from the diff's classes, each with the shared tools the diff
    says keep their access there."""
    assert result.diff is not None
    diff = result.diff
    rng = random.Random(seed)
    changed = {c.tool: [cube for cube, _ in (*c.gained, *c.lost)] for c in diff.changes}
    out = []
    for _ in range(samples):
        point = [rng.randrange(len(dim)) for dim in diff.space.dims()]
        same = sorted(t for t in shared
                      if not any(_in(cube, point) for cube in changed.get(t, ())))
        out.append((oracle_context(diff.space.flags(point)), same))
    return out


def check_unchanged(pairs: Sequence[tuple[dict[str, Any], list[str]]],
                    releases: Mapping[str, tuple[Oracle, Expressed]], toolc: Sides
                    ) -> tuple[int, list[dict[str, Any]]]:
    """(pairs checked, the disagreements): each disagreement says whether toolc's own
    reference interpreter changes the tool there (the diff's classes then miss a change toolc
    makes) or not (toolc and a release differ)."""
    contexts = [oracle_context(ctx) for ctx, _ in pairs]
    answers = {line: ask(oracle, {"op": "resolve", "config": side.config,
                                  "plugins": side.plugins, "contexts": contexts})["results"]
               for line, (oracle, side) in releases.items()}
    checked = 0
    disagreements = []
    for (ctx, tools), oracle_ctx, old, new in zip(pairs, contexts, answers["2026.3"],
                                                  answers["2026.9"], strict=True):
        for tool in tools:
            checked += 1
            before, after = _visible(old, tool), _visible(new, tool)
            # a refused request has no tools: the same as "absent" for a tool's access
            if (before is True) == (after is True):
                continue
            ours = toolc.visible(ctx, tool)
            kind = ("toolc's reference changes it too: the diff's classes miss this change"
                    if ours[0] != ours[1] else "toolc keeps it: toolc and a release differ")
            if ours[0] != ours[1] and _group_ignored(oracle_ctx):
                kind += (" (a group request whose session key does not name the group: 2026.9 "
                         "ignores its groupId, Target switch group_id_needs_session, which the "
                         "access analysis does not split classes on)")
            elif tool in toolc.owner_only_kept and ctx.get("sender_is_owner") is False:
                kind = (f"not verifiable: {tool} is owner-only by the catalog flag of the 2026.3 "
                        "starter file migrate keeps (and says so); in 2026.9.6 the tool comes "
                        "from the official channel plugin, which the release does not bundle, "
                        "so whether it is owner-only there cannot be read from the release "
                        "(the stand-in is not; core tools follow GATEWAY_OWNER_ONLY_CORE_TOOLS)")
            disagreements.append({"kind": kind, "context": oracle_ctx, "tool": tool,
                                  "2026.3.2": _shown(before), "2026.9.6": _shown(after),
                                  "toolc": [_shown(v) for v in ours]})
    return checked, disagreements


# -- the run ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.migrate_check",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=300,
                        help="requests of the reverse check (default 300)")
    parser.add_argument("--per-line", type=int, default=8,
                        help="further requests of each access line's classes (default 8)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.monotonic()
    oracles, packages = {}, {}
    try:
        for line in ("2026.3", "2026.9"):
            node, package = fetch(line)
            packages[line] = Path(package)
            oracles[line] = Oracle(package, node=node, script=RELEASES[line][1])
        with tempfile.TemporaryDirectory(prefix="toolc-migrate-check-") as tmp:
            return run(oracles, packages, Path(tmp), args, started)
    finally:
        for oracle in oracles.values():
            oracle.close()


def run(oracles: Mapping[str, Oracle], packages: Mapping[str, Path], work: Path,
        args: argparse.Namespace, started: float) -> int:
    before, after = shipped_2026_3(work / "before"), shipped_2026_3(work / "after")
    result = api.migrate(after, openclaw="2026.9")
    assert result.diff is not None
    cat9 = oracles["2026.9"].ask({"op": "catalog"})
    bundled9 = {p["id"] for p in cat9["plugins"]}
    sides = {"2026.3": express(before, {"memory-core"}),
             "2026.9": express(after, bundled9, official_channel_plugins(packages["2026.9"]))}
    releases = {line: (oracles[line], sides[line]) for line in sides}
    print(f"toolc migrate --openclaw 2026.9 on the shipped 2026.3 definitions "
          f"({len(result.why)} access lines, {len(result.diff.added)} tools added, "
          f"{len(result.diff.removed)} removed, {len(result.diff.schema_changed)} schemas "
          "changed); each access line asked of openclaw@2026.3.2 (before) and "
          "openclaw@2026.9.6 (after)")
    for line, side in sides.items():
        for note in side.notes:
            print(f"  expressed for {line}: {note}")
    loaded = ask(oracles["2026.9"], {"op": "loadconfig", "config": sides["2026.9"].config})
    if "error_kind" in loaded:
        print(f"  2026.9.6's loader refuses the migrated config: {loaded.get('issues')}")
        return 1
    schemas = parameters_2026_9(oracles["2026.9"].ask({"op": "schemas"}))["parameters"]
    data = {line: target(line).data for line in ("2026.3", "2026.9")}
    toolc = Sides(before, after)
    rows = check_access(result.why, result, toolc, releases, args.seed, args.per_line)
    rows += check_catalog(result, schemas, data["2026.3"], data["2026.9"], after)
    for r in rows:
        mark = r.status or ("confirmed" if r.confirmed else "NOT confirmed")
        answers = "" if r.status else f"  2026.3.2: {r.before}; 2026.9.6: {r.after}"
        print(f"{mark:<15} {r.line[:100]}{answers}")
        if r.note or r.status or not r.confirmed:
            print(f"    request: {r.request}")
        for text in (r.note, r.why):
            if text:
                print(f"    {text}")
    shared = ({t.name for t in api.resolve_definitions(before).defs.tools}
              & {t.name for t in api.resolve_definitions(after).defs.tools}) - RUN_MODE_ONLY
    pairs = unchanged_pairs(result, args.samples, args.seed, shared)
    checked, disagreements = check_unchanged(pairs, releases, toolc)
    kinds = Counter(d["kind"] for d in disagreements)
    for d in disagreements[:10]:
        print(f"  unchanged per the diff, the releases disagree: {json.dumps(d)}")
    unverifiable = [d for d in disagreements if d["kind"].startswith("not verifiable")]
    disagreements = [d for d in disagreements if d not in unverifiable]
    bad = sum(not r.confirmed for r in rows)
    inexpressible = sum(bool(r.status) for r in rows)
    print(f"access and catalog lines: {len(rows)}: confirmed {len(rows) - bad - inexpressible}, "
          f"not expressible {inexpressible}, NOT confirmed {bad} (each access line at its "
          f"request and {sum(r.samples for r in rows)} more requests of the lines' classes, "
          f"seed {args.seed})")
    print(f"unchanged per the diff: {checked} (request, tool) pairs over {len(pairs)} requests "
          f"(seed {args.seed}); the releases disagree on "
          f"{len(disagreements) + len(unverifiable)}, {len(disagreements)} of them failures")
    for kind, count in kinds.most_common():
        print(f"    {count}: {kind}")
    cache = packages["2026.9"].parent.parent.parent
    out = cache / "results" / f"migrate-check-seed{args.seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": [dataclasses.asdict(r) for r in rows],
                               "expressed": {k: v.notes for k, v in sides.items()},
                               "unchanged_checked": checked,
                               "disagreements": disagreements,
                               "unverifiable": unverifiable}, indent=2) + "\n", "utf-8")
    print(f"  details: {out} ({time.monotonic() - started:.0f} s)")
    return 1 if bad or disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
