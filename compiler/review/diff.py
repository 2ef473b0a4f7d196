"""``toolc diff``: exactly who gains or loses which tool between two builds.

Each side is a build directory, a definitions directory (compiled in memory) or a git
revision (its definitions compiled from a temporary worktree that is removed afterwards).
Access changes are computed on the factored tables over the common refinement of both
sides' context classes (``access.ClassSpace``), never by enumerating the product.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..audit.markdown import code, codes
from ..audit.words import Words, plural
from ..builds.compile import compile_files
from ..builds.read import BuildError, OpenedBuild, open_build
from ..locks import LockTimeoutError, lock_path, locked
from ..pipeline.render import dump_json
from ..pipeline.routing import ROUTES
from ..pipeline.shards import (
    assemble_channel,
    channel_shards,
    join_tables,
    map_shard,
    parse_shard,
)
from ..pipeline.yamlsrc import paused_gc
from ..semantics.access import DIMS, ClassSpace, InlineStacks, TablesView, Unread, runs_bits
from ..semantics.factored import Cube, bit_indices
from ..semantics.messages import route_command
from ..semantics.routes import Routed
from ..targets import request_rules
from . import routing
from .delta import ToolChange, compute_delta
from .folding import CountedWords
from .routing import RoutingDelta, compute_routing, same_routing

# 2: "dimensions" gives each dimension's number of classes (format 1 listed every label: at
# 100,000 groups, hundreds of thousands of channel labels, and labels of channels whose
# shards are the same on both sides are never read)
DIFF_FORMAT = 2


class DiffInputError(Exception):
    """A side that is neither a build, a definitions directory nor a git revision."""


class ShardSource(Protocol):
    """Where a side's shards come from: a build directory (each file checked against its
    manifest) or a compiled file map."""

    def digest(self, name: str) -> str:
        """The sha256 of shard ``name``'s bytes (a path relative to the runtime package).
        Equal digests let a diff leave a shard unparsed or parse it from the other side, so
        this is the digest of the bytes there, never only what a manifest says of them."""

    def read(self, name: str) -> bytes:
        """Shard ``name``'s bytes."""


@dataclass(frozen=True, slots=True)
class _BuildShards:
    build: OpenedBuild
    package: str
    # shards whose bytes were found to match the manifest (a file is read and hashed once
    # for its digest; parsing it reads and checks it again, a small part of the parse)
    _checked: set[str] = field(default_factory=set, compare=False, repr=False)

    def digest(self, name: str) -> str:
        """The manifest's sha256 of ``name``, once the file was read and found to have it
        (``OpenedBuild.read``: the runtime's own check), without parsing it: another build's
        shard put in its place, the manifest left as it was, is refused here."""
        found = self.build.digest(f"{self.package}/{name}")
        if found is None:
            raise DiffInputError(f"{self.build.out.as_posix()}: refusing to compare this "
                                 f"build: tables.json names a shard {name} that "
                                 "manifest.json does not list")
        if name not in self._checked:
            self.read(name)
        return found

    def read(self, name: str) -> bytes:
        try:
            raw = self.build.read(f"{self.package}/{name}")
        except BuildError as exc:
            raise DiffInputError(f"{self.build.out.as_posix()}: refusing to compare this "
                                 f"build: {exc}") from exc
        self._checked.add(name)
        return raw


@dataclass(frozen=True, slots=True)
class _FileShards:
    files: dict[str, str]
    package: str

    def digest(self, name: str) -> str:
        return hashlib.sha256(self.read(name)).hexdigest()

    def read(self, name: str) -> bytes:
        return self.files[f"{self.package}/{name}"].encode("utf-8")


@dataclass(frozen=True, slots=True, kw_only=True)
class Side:
    """One side of a diff: ``tables.json``'s data (``index``) and its shards, read only when
    a comparison needs them (``side_views``)."""

    label: str
    index: dict[str, Any]
    shards: ShardSource
    catalog: dict[str, Any]
    bundles: dict[str, Any]
    warnings: tuple[tuple[str, str], ...]  # (code, message), positions left out
    routes: dict[str, Any] | None = None  # routes.json (None: a build from before routing)
    _joined: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def tables(self) -> dict[str, Any]:
        """The one-dictionary tables (``join_tables``: every shard read), for readers that
        want them whole (``toolc report``, ACCESS.md, tests)."""
        if not self._joined:
            self._joined.update(join_tables(self.index, self.shards.read))
        return self._joined


# -- loading ---------------------------------------------------------------------------------
def side_from_build(out: Path, label: str | None = None) -> Side:
    """A build directory, checked as its runtime checks its files (``builds.open_build``: the
    manifest, the layout, the runtime's own digests), reading only what a diff compares:
    ``tables.json``, ``catalog.json``, ``bundles.json`` and, later, the table shards, each
    checked against its sha256 as it is read (every shard ``tables.json`` names, parsed or
    not: ``_BuildShards``). A build whose files differ from its manifest, or whose manifest
    differs from its runtime, is refused, never compared."""
    try:
        build = open_build(out)
        package = build.manifest["package"]
        with paused_gc():
            index = build.json(f"{package}/tables.json")
            catalog = build.json(f"{package}/catalog.json")
            bundles = build.json(f"{package}/bundles.json")
            routes = (build.json(f"{package}/{ROUTES}")
                      if build.digest(f"{package}/{ROUTES}") is not None else None)
    except BuildError as exc:
        raise DiffInputError(f"{out.as_posix()}: refusing to compare this build: {exc}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        raise DiffInputError(f"{out.as_posix()}: not a readable toolc build ({exc})") from exc
    try:
        warnings = _warnings(build.manifest.get("warnings", []))
    except (KeyError, TypeError) as exc:
        raise DiffInputError(f"{out.as_posix()}: not a readable toolc build ({exc})") from exc
    return Side(label=label or out.as_posix(), index=index, shards=_BuildShards(build, package),
                catalog=catalog, bundles=bundles, warnings=warnings, routes=routes)


def side_from_definitions(defs: Path, label: str | None = None) -> Side:
    """Compile in memory; raises DefinitionsError when the definitions have errors."""
    files, _, _ = compile_files(defs, with_models=False)
    manifest = json.loads(files["manifest.json"])
    package = manifest["package"]
    return Side(label=label or defs.as_posix(),
                index=json.loads(files[f"{package}/tables.json"]),
                shards=_FileShards(files, package),
                catalog=json.loads(files[f"{package}/catalog.json"]),
                bundles=json.loads(files[f"{package}/bundles.json"]),
                warnings=_warnings(manifest.get("warnings", [])),
                routes=json.loads(files[f"{package}/{ROUTES}"])
                if f"{package}/{ROUTES}" in files else None)


def side_views(sides: Sequence[Side], tools: Sequence[str], *, skip: bool = True
               ) -> list[TablesView]:
    """The sides' tables over one tool index. Shards are read here, each content once
    (``_Channels``). With ``skip``, the shards of channels that cannot change the result are
    not parsed at all, only checked (``unread_channels``)."""
    if not all(side.index.get("sharded") for side in sides):  # builds from before shards
        return [TablesView(side.tables, tools) for side in sides]
    unread = unread_channels(sides) if skip else {}
    reader = _Channels(InlineStacks(max(len(side.index["stacks"]) for side in sides)))
    views = []
    for side in sides:
        channels, used = reader.side(side, unread)
        views.append(TablesView(side.index, tools, channels=channels, inline=reader.inline,
                                inline_ids=used, unread=unread))
    return views


class _Channels:
    """The channels of a diff's sides, read from their shards: a shard whose sha256 both
    sides list is parsed once and shared, its inline stacks numbered in one pool, so both
    sides' entries name the same stacks; and a channel whose index entry and shards are the
    same on both sides is one object, which tells ``ClassSpace`` that one side's answers
    stand for both."""

    def __init__(self, inline: InlineStacks) -> None:
        self.inline = inline
        self._parsed: dict[str, tuple[dict[str, Any] | None, Any, frozenset[int]]] = {}
        self._assembled: dict[tuple[str, ...], tuple[dict[str, Any], set[int]]] = {}

    def side(self, side: Side, unread: Mapping[str, Unread]
             ) -> tuple[dict[str, dict[str, Any]], set[int]]:
        """One side's channels (of an unread one, its index entry only: ``ClassSpace``
        counts it from its summary) and the stack numbers they name."""
        channels: dict[str, dict[str, Any]] = {}
        used: set[int] = set()
        for name, ch in side.index["channels"].items():
            if name in unread:
                channels[name] = ch
                continue
            digests = [side.shards.digest(n) for n in channel_shards(ch)]
            key = (name, json.dumps(ch, sort_keys=True), *digests)
            found = self._assembled.get(key)
            if found is None:
                found = self._assembled[key] = self._assemble(side, ch)
            channels[name] = found[0]
            used |= found[1]
        return channels, used

    def _assemble(self, side: Side, ch: dict[str, Any]) -> tuple[dict[str, Any], set[int]]:
        ids: set[int] = set()
        return assemble_channel(ch, lambda name: self._shard(side, name, ids)), ids

    def _shard(self, side: Side, name: str, ids: set[int]) -> tuple[dict[str, Any] | None, Any]:
        key = side.shards.digest(name)
        hit = self._parsed.get(key)
        if hit is None:
            hit = self._parsed[key] = _parse_shard(side.shards.read(name), name, self.inline)
        ids |= hit[2]
        return hit[0], hit[1]


def unread_channels(sides: Sequence[Side]) -> dict[str, Unread]:
    """The channels of two builds whose shards cannot change the diff, so are not parsed.

    When everything outside the channels in ``tables.json`` is the same on both sides (tools
    and their order, which the shards' bitsets are written in; masks, gates, agents,
    providers, the global, subagent and sender layers, the release's rules), no agent side
    differs, so the diff evaluates only channel classes whose group layer differs; and a
    channel whose index entry and shards are the same on both sides has the same classes
    and answers on both, none of which differs. Shards are compared by the sha256 of each
    file's bytes (``ShardSource.digest``: a build's shards are hashed, which is cheap, not
    parsed), never by the manifests' word alone, which would let another build's shard put
    in the place of one pass unseen. Of such a channel the diff needs only what
    ``split_tables`` recorded (``summary``): how many classes it has and which tools the
    stripping layers they reach test. Not under OpenClaw 2026.9's channel
    semantics, whose classes are formed across every channel at once, and not for Slack's
    and Discord's keyed channels (no summary is recorded)."""
    if len(sides) != 2:
        return {}
    base, head = sides
    rest = [{k: v for k, v in side.index.items() if k != "channels"} for side in sides]
    if rest[0] != rest[1] or request_rules(rest[0]).group_id_needs_session:
        return {}
    out = {}
    for name, ch in base.index["channels"].items():
        summary = ch.get("summary")
        if summary is None or head.index["channels"].get(name) != ch:
            continue
        if all(base.shards.digest(n) == head.shards.digest(n) for n in channel_shards(ch)):
            out[name] = Unread(classes=int(summary["classes"]),
                               witnesses=runs_bits(summary["witnesses"]),
                               all_witnesses=runs_bits(summary["all_witnesses"]))
    return out


def _parse_shard(raw: bytes, name: str, inline: InlineStacks
                 ) -> tuple[dict[str, Any] | None, Any, frozenset[int]]:
    """A shard's (group map, spaces) with its stacks numbered in ``inline``, and those numbers."""
    ids: set[int] = set()

    def number(text: str) -> int:
        found = inline.id(text)
        ids.add(found)
        return found

    try:
        gmap, spaces = parse_shard(raw.decode("utf-8"))
    except (ValueError, KeyError, TypeError) as exc:
        raise DiffInputError(f"{name}: not a readable shard ({exc})") from exc
    return (*map_shard(gmap, spaces, number), frozenset(ids))


def side_from_revision(rev: str, defs: Path, label: str | None = None) -> Side:
    """The definitions at ``rev`` (same path inside the repository as ``defs``), compiled
    from a temporary git worktree that is removed afterwards, whatever happens; one left by
    a killed run is removed by the next run (``_remove_stale_worktrees``)."""
    root, rel = _repository_path(defs)
    commit = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=root)
    place = _worktrees_dir(root)
    _remove_stale_worktrees(place, root)
    run = place / f"{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(run)
    try:
        with locked(run):  # held while the worktree lives: a later run sees it is in use
            tree = run / "tree"
            try:
                _git(["worktree", "add", "--detach", "--quiet", str(tree), commit], cwd=root)
                _fault("worktree-added")
                where = tree / rel
                if not where.is_dir():
                    raise DiffInputError(f"{rev}: has no {rel.as_posix()}/ directory")
                return side_from_definitions(where, label=label or f"{rev}:{rel.as_posix()}")
            finally:
                _remove_worktree(run, root)
    finally:
        lock_path(run).unlink(missing_ok=True)  # a unique name: nobody locks it again
        _git(["worktree", "prune"], cwd=root, check=False)


# Tests set this to SIGKILL a run at a named step ("worktree-added").
FAULT_HOOK: Callable[[str], None] | None = None


def _fault(step: str) -> None:
    if FAULT_HOOK is not None:
        FAULT_HOOK(step)


def _repository_path(defs: Path) -> tuple[Path, Path]:
    """(repository root, ``defs`` relative to it); DiffInputError when ``defs`` is not
    inside the repository (revisions are read at the same path inside it)."""
    where = defs if defs.is_dir() else Path.cwd()
    try:
        top = _git(["rev-parse", "--show-toplevel"], cwd=where)
    except DiffInputError as exc:
        raise DiffInputError(f"--definitions {defs.as_posix()}: {where.as_posix()} is not "
                             f"inside a git repository; revisions (and --base-rev) are read "
                             f"from the repository that holds the definitions ({exc})") from exc
    root = Path(top)
    try:
        rel = defs.resolve().relative_to(root.resolve())
    except ValueError:
        raise DiffInputError(f"--definitions {defs.as_posix()} is outside the git repository "
                             f"{root.as_posix()}; revisions (and --base-rev) are read at the "
                             "definitions' path inside the repository: give a path inside "
                             "it") from None
    return root, rel


def _worktrees_dir(root: Path) -> Path:
    """Where temporary worktrees live: inside the repository's git directory, so that the
    next run finds one a killed run left behind (and nothing lands in a shared /tmp)."""
    common = Path(_git(["rev-parse", "--git-common-dir"], cwd=root))
    place = (common if common.is_absolute() else root / common) / "toolc-diff"
    place.mkdir(exist_ok=True)
    return place


def _remove_stale_worktrees(place: Path, root: Path) -> None:
    """Remove the worktrees of runs that died (SIGKILL, power loss): a run holds its
    directory's lock while it lives, and the kernel drops the lock when it dies."""
    for run in sorted(place.iterdir()):
        if not run.is_dir() or run.is_symlink():
            continue
        try:
            with locked(run, timeout=0):
                if run.is_dir():
                    _remove_worktree(run, root)
                lock_path(run).unlink(missing_ok=True)
        except LockTimeoutError:
            continue  # a live run's worktree


def _remove_worktree(run: Path, root: Path) -> None:
    _git(["worktree", "remove", "--force", str(run / "tree")], cwd=root, check=False)
    shutil.rmtree(run, ignore_errors=True)


def _git(args: list[str], *, cwd: Path, check: bool = True) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=False)
    except OSError as exc:
        raise DiffInputError(f"git is not available: {exc}") from exc
    if check and proc.returncode != 0:
        message = proc.stderr.strip() or f"git {' '.join(args)} failed"
        raise DiffInputError(message)
    return proc.stdout.strip()


def load_side(spec: str, *, definitions: Path = Path("definitions")) -> Side:
    """A build directory, a definitions directory, or a git revision."""
    path = Path(spec)
    if path.is_dir():
        if (path / "manifest.json").is_file():
            return side_from_build(path)
        return side_from_definitions(path)
    if path.exists():
        raise DiffInputError(f"{spec}: a file; expected a build directory, a definitions "
                             "directory or a git revision")
    try:
        return side_from_revision(spec, definitions)
    except DiffInputError as exc:
        raise DiffInputError(f"{spec}: not a directory, and not a git revision of this "
                             f"repository ({exc})") from exc


def _warnings(raw: Iterable[dict[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({(w["code"], w["message"]) for w in raw}))


# -- computing -------------------------------------------------------------------------------
@dataclass(slots=True, kw_only=True)
class DiffResult:
    base: str
    head: str
    space: ClassSpace
    tools: list[str]
    changes: list[ToolChange]
    added: list[str]
    removed: list[str]
    schema_changed: dict[str, list[str]]  # tool -> dialects
    warnings_added: list[tuple[str, str]]
    warnings_removed: list[tuple[str, str]]
    words: Words
    targets: tuple[str, str]  # the OpenClaw release each side follows (base, head)
    # the messages that run elsewhere (None: a side from before routing)
    routing: RoutingDelta | None = None

    @property
    def target_text(self) -> str:
        base, head = self.targets
        return f"OpenClaw {head}" if base == head else f"OpenClaw {base} -> {head}"

    @property
    def routes_changed(self) -> bool:
        return self.routing is not None and bool(self.routing.changes)

    @property
    def access_changed(self) -> bool:
        """Some class gains or loses a tool, or some message runs elsewhere (another agent
        or session key: another conversation, whatever its tools)."""
        return bool(self.changes) or self.routes_changed

    @property
    def widened(self) -> bool:
        return any(c.gained for c in self.changes) or (
            self.routing is not None and self.routing.widened)


def compute_diff(base: Side, head: Side, *, skip: bool | None = None) -> DiffResult:
    """The exact access delta from ``base`` to ``head``. ``skip``: leave unread the shards
    of channels that cannot change it (``unread_channels``); by default when both sides are
    build directories (the others are in memory already)."""
    if skip is None:
        skip = all(isinstance(side.shards, _BuildShards) for side in (base, head))
    if not same_routing(base.routes, head.routes):  # routed runs read every channel
        skip = False
    with paused_gc():
        return _compute_diff(base, head, skip)


def _compute_diff(base: Side, head: Side, skip: bool) -> DiffResult:
    head_tools = list(head.index["tools"])
    in_head = set(head_tools)
    tools = head_tools + [t for t in base.index["tools"] if t not in in_head]
    space = ClassSpace(side_views([base, head], tools, skip=skip), tools)
    changes = compute_delta(space)
    if _names_unread(space, changes):  # pragma: no cover - a change lies in changed channels
        space = ClassSpace(side_views([base, head], tools, skip=False), tools)
        changes = compute_delta(space)
    base_names = {t["name"] for t in base.catalog["tools"]}
    head_names = {t["name"] for t in head.catalog["tools"]}
    schema_changed: dict[str, list[str]] = {}
    for name in sorted(base_names & head_names):
        dialects = sorted(d for d in set(base.bundles["dialects"]) | set(head.bundles["dialects"])
                          if _envelope(base, d, name) != _envelope(head, d, name))
        if dialects:
            schema_changed[name] = dialects
    return DiffResult(
        base=base.label, head=head.label, space=space, tools=tools, changes=changes,
        added=sorted(head_names - base_names), removed=sorted(base_names - head_names),
        schema_changed=schema_changed,
        warnings_added=sorted(set(head.warnings) - set(base.warnings)),
        warnings_removed=sorted(set(base.warnings) - set(head.warnings)),
        words=CountedWords(space), targets=(side_target(base), side_target(head)),
        routing=compute_routing([base.routes, head.routes], space))


def _names_unread(space: ClassSpace, changes: Iterable[ToolChange]) -> bool:
    """Whether a line names a class of a channel left unread, which the diff could not
    describe: by construction it never does (such classes are alike on both sides, and a
    line widens over the whole dimension or not at all), so this is a guard, and the diff
    is then computed again with every shard read."""
    unread = space.unread_classes()
    if not unread:
        return False
    full = (1 << len(space.channels)) - 1
    return any(c[2] != full and c[2] & unread
               for change in changes for c, _ in (*change.gained, *change.lost))


def side_target(side: Side) -> str:
    """The release a side's tables follow (builds from before targets follow the default)."""
    return request_rules(side.index).openclaw


def _envelope(side: Side, dialect: str, tool: str) -> Any:
    return side.bundles["dialects"].get(dialect, {}).get("tools", {}).get(tool)


def _n(count: int) -> str:
    return f"{count:,} class" + ("" if count == 1 else "es")


# -- output formats --------------------------------------------------------------------------
def to_json(result: DiffResult) -> dict[str, Any]:
    """The stable JSON form (``format`` 2), documented in docs/reference/review.md."""
    space = result.space
    words = result.words
    dims = space.dims()

    def cube(cw: tuple[Cube, int]) -> dict[str, Any]:
        c, n = cw
        out: dict[str, Any] = {"count": n, "words": words.cube(c)}
        for d, (dim, values) in enumerate(zip(DIMS, dims, strict=True)):
            out[dim] = (None if c[d] == words.full[d]
                        else [values[i].label for i in bit_indices(c[d])])
        return out

    return {
        "format": DIFF_FORMAT, "base": result.base, "head": result.head,
        "classes": space.size(), "access_changed": result.access_changed,
        "target": {"base": result.targets[0], "head": result.targets[1]},
        "widened": result.widened,
        "dimensions": {dim: len(values) for dim, values in zip(DIMS, dims, strict=True)},
        "access": [{"tool": c.tool,
                    "gained": {"count": c.gained_count, "classes": [cube(x) for x in c.gained]},
                    "lost": {"count": c.lost_count, "classes": [cube(x) for x in c.lost]}}
                   for c in result.changes],
        "routing": routing.to_json(result.routing),
        "catalog": {"added": result.added, "removed": result.removed,
                    "schema_changed": result.schema_changed},
        "warnings": {"added": [{"code": c, "message": m} for c, m in result.warnings_added],
                     "removed": [{"code": c, "message": m} for c, m in result.warnings_removed]},
    }


def to_text(result: DiffResult, *, color: bool = False, limit: int = 12) -> str:
    def paint(text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if color else text

    space = result.space
    lines = [f"toolc diff {result.base} -> {result.head} ({_n(space.size())}"
             f"{_messages(result)}, {result.target_text})"]
    if not result.changes:
        lines.append("access: no tool is gained or lost in any class")
    for c in result.changes:
        for sign, cubes, verb, ansi in (("+", c.gained, "gained", "32"),
                                        ("-", c.lost, "lost", "31")):
            if not cubes:
                continue
            total = sum(n for _, n in cubes)
            if len(cubes) == 1:
                words = result.words.cube(cubes[0][0])
                where = "in every context" if words == "every context" else f"by {words}"
                lines.append(paint(f"{sign} {c.tool}: {verb} {where} ({_n(total)})", ansi))
                continue
            lines.append(paint(f"{sign} {c.tool}: {verb} in {_n(total)}", ansi))
            lines += [paint(f"    {result.words.cube(x)} ({_n(n)})", ansi)
                      for x, n in cubes[:limit]]
            if len(cubes) > limit:
                lines.append(f"    ... and {len(cubes) - limit} more groups of classes "
                             "(--format json lists all)")
    lines += _routing_text(result, paint, limit)
    lines += [paint(f"+ catalog: tool {t} added", "32") for t in result.added]
    lines += [paint(f"- catalog: tool {t} removed", "31") for t in result.removed]
    lines += [f"~ catalog: schema of {t} changed ({', '.join(d)})"
              for t, d in result.schema_changed.items()]
    lines += [f"+ warning[{c}]: {msg}" for c, msg in result.warnings_added]
    lines += [f"- warning[{c}]: {msg}" for c, msg in result.warnings_removed]
    return "\n".join(lines) + "\n"


def _messages(result: DiffResult) -> str:
    """The header's count of message classes (when the sides route differently)."""
    found = result.routing.messages if result.routing is not None else None
    return "" if found is None else \
        f", {found:,} message class" + ("" if found == 1 else "es")


def _routing_text(result: DiffResult, paint: Callable[[str, str], str], limit: int
                  ) -> list[str]:
    """``~ route:`` lines: each message class that runs elsewhere, its route on each side,
    the tools its run gains and loses, and a message of the class (``toolc route``); the
    classes that read alike follow it in one line."""
    delta = result.routing
    if delta is None or not delta.changes:
        return []
    lines = []
    groups = routing.folded(delta.changes)
    for change, alike in groups[:limit]:
        before, after = change.klass.routes
        ansi = "32" if change.gained else "31" if change.lost else "33"
        lines += [paint(f"~ route: {change.klass.words}: {routing.headline(change)}", ansi),
                  f"    before: {routing.side_words(delta, 0, before)}",
                  f"    after:  {routing.side_words(delta, 1, after)}"]
        parts = routing.tool_parts(change)
        lines += [paint(f"    {sign} {', '.join(tools)}" + (f" ({where})" if where else ""),
                        "32" if sign == "+" else "31") for sign, tools, where in parts]
        if not parts:
            lines.append("    no tool gained or lost")
        lines.append(f"    e.g. toolc route {route_command(change.message)}")
        if alike:
            shown = "; ".join(c.klass.words for c in alike[:6])
            more = f"; and {len(alike) - 6} more" if len(alike) > 6 else ""
            classes = plural(len(alike), "more message class", "more message classes")
            lines.append(f"    the same for {classes}: {shown}{more}")
    if len(groups) > limit:
        rest = sum(1 + len(alike) for _, alike in groups[limit:])
        lines.append(f"~ route: ... and {rest} more message classes (--format json lists "
                     "all)")
    return lines


def to_markdown(result: DiffResult, *, limit: int = 30) -> str:
    """A pull-request comment. Every name from the definitions (tools, agents, providers,
    channels, groups, senders, warning texts) and the sides' labels are code spans
    (``markdown.code``): a hostile name cannot close a block, link, embed or mention."""
    space = result.space
    out = [f"### toolc diff: {code(result.base)} → {code(result.head)}", "",
           f"Semantics: {result.target_text}.", ""]
    if not result.changes:
        out.append(f"No tool access change in any of the {_n(space.size())}."
                   if result.routes_changed else
                   f"No access change in any of the {_n(space.size())}.")
    else:
        gained = sum(1 for c in result.changes if c.gained)
        lost = sum(1 for c in result.changes if c.lost)
        out += [f"**{plural(len(result.changes), 'tool')} change access** ({gained} gained "
                f"somewhere, {lost} lost somewhere) across {_n(space.size())}.", "",
                "| tool | gained in | lost in |", "|---|---:|---:|"]
        out += [f"| {code(c.tool, table=True)} | {c.gained_count:,} | {c.lost_count:,} |"
                for c in result.changes]
    out += _routing_markdown(result, limit)
    if result.added or result.removed or result.schema_changed:
        out += ["", "| catalog | tools |", "|---|---|"]
        if result.added:
            out.append(f"| added | {codes(result.added, table=True)} |")
        if result.removed:
            out.append(f"| removed | {codes(result.removed, table=True)} |")
        for t, d in result.schema_changed.items():
            out.append(f"| schema changed | {code(t, table=True)} "
                       f"({codes(d, table=True)}) |")
    if result.changes:
        out += ["", "<details><summary>Who gains and loses what</summary>", ""]
        for c in result.changes:
            for verb, cubes in (("gained", c.gained), ("lost", c.lost)):
                if cubes:
                    out.append(f"- {code(c.tool)} {verb} in {_n(sum(n for _, n in cubes))}:")
                    out += [f"  - {_md_cube(result.words, x)} ({_n(n)})"
                            for x, n in cubes[:limit]]
                    if len(cubes) > limit:
                        out.append(f"  - … and {len(cubes) - limit} more")
        out += ["", "</details>"]
    if result.warnings_added or result.warnings_removed:
        out += ["", "<details><summary>Warnings</summary>", ""]
        out += [f"- new: {code(c)} {code(m)}" for c, m in result.warnings_added]
        out += [f"- gone: {code(c)} {code(m)}" for c, m in result.warnings_removed]
        out += ["", "</details>"]
    return "\n".join(out) + "\n"


def _routing_markdown(result: DiffResult, limit: int) -> list[str]:
    """The messages that run elsewhere: one table row per set of classes that read alike
    (every name a code span)."""
    delta = result.routing
    if delta is None or not delta.changes:
        return []
    moved = sum(1 for c in delta.changes if c.klass.agent_changed)
    widening = sum(1 for c in delta.changes if c.gained)
    out = ["", f"**{plural(len(delta.changes), 'message class', 'message classes')} run "
           f"elsewhere** ({moved} on another agent, {len(delta.changes) - moved} under "
           f"another session key only; {widening} gain tools).", "",
           "| message | route: before → after | tools |", "|---|---|---|"]
    groups = routing.folded(delta.changes)
    for change, alike in groups[:limit]:
        before, after = change.klass.routes
        tools = "; ".join(
            f"{sign} {codes(names, table=True)}" + (f" ({where})" if where else "")
            for sign, names, where in routing.tool_parts(change)) or "no change"
        also = (f" (and {codes([c.klass.words for c in alike[:6]], table=True)}"
                + (f", … {len(alike) - 6} more" if len(alike) > 6 else "") + ")"
                if alike else "")
        out.append(f"| {code(change.klass.words, table=True)}{also} "
                   f"| {_md_route(delta, 0, before)} → {_md_route(delta, 1, after)} "
                   f"| {tools} |")
    if len(groups) > limit:
        rest = sum(1 + len(alike) for _, alike in groups[limit:])
        out.append(f"| … and {rest} more | | |")
    return out


def _md_route(delta: RoutingDelta, side: int, r: Routed) -> str:
    if r.refused is not None:
        return f"refused: {code(r.refused, table=True)}"
    return (f"{code(r.agent_id, table=True)}: {code(r.session_key, table=True)} "
            f"({code(delta.where(side, r), table=True)})")


def _md_cube(words: Words, cube: Cube) -> str:
    parts = words.parts(cube)
    return ", ".join(code(p) for p in parts) if parts else "every context"


def render_diff(result: DiffResult, fmt: str, *, color: bool = False) -> str:
    with paused_gc():
        return _render_diff(result, fmt, color=color)


def _render_diff(result: DiffResult, fmt: str, *, color: bool = False) -> str:
    if fmt == "json":
        return dump_json(to_json(result))
    if fmt == "markdown":
        return to_markdown(result)
    return to_text(result, color=color)
