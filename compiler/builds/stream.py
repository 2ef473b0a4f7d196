"""Channel files compiled on their own: a million groups in bounded memory, and incremental
builds that redo only the file that changed.

A definitions file whose top-level keys are only ``version``, ``openclaw`` and ``channels``
(a *channel file*) is a unit. Once the rest of the definitions (the *base*: catalog, agents,
tools, profiles, groups, plugins, providers, the release) is loaded and analysed, each unit
is compiled on its own, in a forked worker process when there is much to do: its file read
and checked, its channels modelled and analysed, their tables and provenance recorded and
written as shard texts, their lints run (``compile_unit``). The file's YAML graph and model
die with the unit: what comes back (``UnitResult``) is the shard texts, the diagnostics by
stage and a few numbers, never the model, and one result is one entry of the incremental
cache (keyed on the base, ``unit_base``, and the file's bytes).

The base needs two things from the channel files before they are read: their ``openclaw``
value and their channels' names (tool availability reads them; so does the cache key).
``scan_shape`` reads them off the file's text with a few regular expressions; each unit
checks the guess against the file it loaded (``shape_of``), and a build whose guess was
wrong is redone with what the units found (``Reclassify``), so a guess can cost time, never
a byte. A file the scan cannot read plainly, and definitions where two files define one
channel or disagree on ``openclaw`` (errors, reported as they always were), take the
in-memory path: the file is modelled with the base, as every file once was.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import multiprocessing
import re
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import yaml

from ..diagnostics import Diagnostic, Diagnostics, Pos
from ..pipeline.analyze import ChannelChecks, Resolved, analyze, check_channel
from ..pipeline.frontend import (
    LoadedFile,
    _Builder,
    _channel_folded,
    _load_all,
    _release,
    build_model,
    check_release_keys,
    load_one,
    merge_sections,
    tree_paths,
)
from ..pipeline.model import ChannelDef, Definitions
from ..pipeline.provenance import ProvenanceBuilder, channel_provenance, record_both
from ..pipeline.recording import record_channel
from ..pipeline.render import SOURCES_DIR
from ..pipeline.tables import TableBuilder, channel_shards
from ..pipeline.workers import worker_count
from ..rules.names import normalize_key
from ..targets import Target, target
from .cache import BuildCache

CHANNEL_FILE_KEYS = frozenset({"version", "openclaw", "channels"})
# Units are compiled in worker processes (one per core) when at least this many bytes of
# channel files are to be compiled (fewer are not worth forking for); tests lower it.
PARALLEL_MIN_BYTES = 8 << 20
# Fewer bytes than that, but this many, are compiled in one worker process while this one
# does the rest of the build (an incremental build: the base and the cached units).
OVERLAP_MIN_BYTES = 256 << 10


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- what a channel file says outside its channels ---------------------------------------------
@dataclass(frozen=True, slots=True)
class Shape:
    """A channel file's top-level values other than ``channels`` (JSON, sorted keys) and its
    channel keys as written, in file order."""

    rest: str
    channels: tuple[str, ...]

    @property
    def openclaw(self) -> Any:
        return json.loads(self.rest).get("openclaw")


def shape_of(data: Any) -> Shape | None:
    """The shape of a loaded file, None when it is not a channel file."""
    if not (isinstance(data, dict) and "channels" in data and set(data) <= CHANNEL_FILE_KEYS
            and isinstance(data["channels"], dict)):
        return None
    rest = {k: v for k, v in data.items() if k != "channels"}
    return Shape(rest=json.dumps(rest, sort_keys=True, ensure_ascii=False),
                 channels=tuple(data["channels"]))


_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TOP = re.compile(rb"\n([^\s#][^\n]*)")  # a line starting in column 1 (not the first line)
_PLAIN_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:str")


def _line(line: bytes) -> tuple[str, Any, bool] | None:
    """One ``key: value`` line: its key as written, its value (int or str) and whether the
    value is empty (a block follows); None when it is anything else."""
    try:
        loader = _Loader(line.decode("utf-8"))
        try:
            node = loader.get_single_node()
            if not (isinstance(node, yaml.MappingNode) and len(node.value) == 1):
                return None
            key, value = node.value[0]
            # a key is its text, whatever it resolves to (``yamlsrc``: `on` stays "on")
            if not (isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge"
                    and isinstance(value, yaml.ScalarNode)):
                return None
            if value.tag == "tag:yaml.org,2002:null" and value.value == "":
                return str(key.value), None, True
            if value.tag not in _PLAIN_TAGS:
                return None
            return str(key.value), loader.construct_object(value), False
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeDecodeError, ValueError):
        return None


def scan_shape(raw: bytes) -> Shape | None:
    """A guess at the shape of an unloaded file (``shape_of``) from its plainly written
    lines: top-level ``key: value`` lines, and the keys one level below ``channels:``. None
    when the file is not a channel file or is written some other way (flow style, anchors,
    tabs, documents, odd indentation): such a file takes the in-memory path."""
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    tops = [(m.start(1), m.end(1)) for m in _TOP.finditer(raw, start)]
    if raw[start:start + 1] not in (b"", b" ", b"\t", b"\n", b"\r", b"#"):
        tops.insert(0, (start, raw.find(b"\n", start) % (len(raw) + 1)))
    values: dict[str, Any] = {}
    channels: tuple[str, ...] | None = None
    for i, (begin, end) in enumerate(tops):
        parsed = _line(raw[begin:end])
        if parsed is None or parsed[0] in values or parsed[0] not in CHANNEL_FILE_KEYS:
            return None
        key, value, empty = parsed
        values[key] = value
        if key == "channels":
            if not empty:
                return None
            stop = tops[i + 1][0] if i + 1 < len(tops) else len(raw)
            channels = _channel_keys(raw, end, stop)
            if channels is None:
                return None
        elif empty:
            return None  # a value on the lines below: not read here
    if channels is None:
        return None
    values.pop("channels")
    return Shape(rest=json.dumps(values, sort_keys=True, ensure_ascii=False), channels=channels)


def _channel_keys(raw: bytes, begin: int, end: int) -> tuple[str, ...] | None:
    """The keys of the block mapping between ``begin`` and ``end`` (the lines below
    ``channels:``), each on a plain line of its own with nothing after its colon, at the
    first such line's indentation. (Lines indented less, or with tabs, make the file invalid
    or the guess wrong, which the unit finds: not looked for here.)"""
    first = re.compile(rb"\n( +)[^\s#]").search(raw, begin, end)
    if first is None or b"\t" in raw[begin:first.start(1)]:
        return None
    indent = len(first.group(1))
    keys = []
    for m in re.compile(rb"\n {%d}([^\s#][^\n]*)" % indent).finditer(raw, begin, end):
        parsed = _line(m.group(1))
        if parsed is None or not parsed[2]:
            return None
        keys.append(parsed[0])
    return tuple(keys)


# -- the inputs ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class InputFile:
    """One definitions file: its bytes (None for a channel file, which its unit reads again)
    and, for a channel file, its shape."""

    rel: str
    digest: str
    size: int
    raw: bytes | None
    shape: Shape | None


class Outputs(Protocol):
    """Where a build's files go as they are compiled (``toolc.builds.compile``), with their sha256
    when known."""

    def add(self, rel: str, data: bytes, digest: str | None = None) -> None: ...

    def read(self, rel: str) -> bytes: ...


class ScanMemo:
    """``scan_shape``'s answers by file digest (it is a function of the bytes alone), kept in
    the cache between builds (one entry per definitions directory, holding the files of its
    last build), so that a rebuild scans only the files that changed."""

    def __init__(self, cache: BuildCache | None, display: str) -> None:
        self.cache = cache
        self.key = None if cache is None else cache.key("scan", [display])
        found: dict[str, Shape | None] = {}
        if cache is not None and self.key is not None:
            hit, value = cache.get(self.key)
            if hit and isinstance(value, dict):
                found = value
        self.known: dict[str, Shape | None] = found
        self.used: dict[str, Shape | None] = {}

    def shape(self, digest: str, raw: bytes) -> Shape | None:
        if digest in self.known:
            shape = self.known[digest]
        else:
            shape = scan_shape(raw)
        self.used[digest] = shape
        return shape

    def save(self) -> None:
        """Keep the answers this build used (when they are not what the entry holds)."""
        if self.cache is not None and self.key is not None and self.used != self.known:
            self.cache.put(self.key, self.used)


def read_inputs(root: Path, diags: Diagnostics, outputs: Outputs,
                shapes: Mapping[str, Shape | None] | None = None,
                memo: ScanMemo | None = None,
                read: Mapping[str, tuple[str, bytes]] | None = None) -> list[InputFile] | None:
    """Every definitions file below ``root`` in path order, read once: its bytes go to
    ``outputs`` as ``sources/<relative path>`` (what ``toolc explain --build`` reads back),
    and a channel file's bytes are dropped. ``shapes``: files whose shape is known (from a
    previous attempt), instead of scanned; ``memo``: scans of earlier builds; ``read``:
    files read already (sha256 and bytes by relative path). Reports what ``read_tree``
    reports."""
    paths = tree_paths(root, diags)
    if paths is None:
        return None
    out = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        if read is not None and rel in read:
            digest, raw = read[rel]
        else:
            raw = path.read_bytes()
            digest = sha256(raw)
        outputs.add(f"{SOURCES_DIR}/{rel}", raw, digest)
        if shapes is not None and rel in shapes:
            shape = shapes[rel]
        else:
            shape = scan_shape(raw) if memo is None else memo.shape(digest, raw)
        out.append(InputFile(rel=rel, digest=digest, size=len(raw),
                             raw=None if shape else raw, shape=shape))
    return out


class Reclassify(Exception):
    """A channel file's shape was guessed wrong, or the channel files conflict: the build
    starts again with ``shapes`` (None: the file takes the in-memory path)."""

    def __init__(self, shapes: Mapping[str, Shape | None]) -> None:
        super().__init__(f"{len(shapes)} file(s) reclassified")
        self.shapes = dict(shapes)


class DefinitionsChanged(RuntimeError):
    """A definitions file changed while the build read it."""


# -- the base -------------------------------------------------------------------------------------
@dataclass(slots=True, kw_only=True)
class Base:
    """Everything but the channel files, loaded, modelled and analysed: ``load`` holds the
    per-file problems, ``diags`` the rest (folded keys, merging, release keys, analysis)."""

    load: tuple[Diagnostic, ...]
    ok: bool  # every base file loaded and structurally sound
    diags: Diagnostics = field(default_factory=Diagnostics)
    defs: Definitions | None = None
    resolved: Resolved | None = None
    target: Target | None = None


def base_key(cache: BuildCache, inputs: list[InputFile], display: str) -> str:
    """The base's cache key: every base file's bytes, every channel file's shape, every
    file's name, and the display path positions name."""
    parts = [display]
    for f in inputs:
        parts += [f.rel, f.digest if f.shape is None else
                  "\0".join(["shape", f.shape.rest, *f.shape.channels])]
    return cache.key("base", parts)


def load_base(inputs: list[InputFile], display: str, cache: BuildCache | None) -> Base:
    """The base: the files without a shape, and what the channel files' shapes say; from
    the cache when none of that changed (``base_key``)."""
    if cache is None:
        return _load_base(inputs, display, None)
    key = base_key(cache, inputs, display)
    hit, value = cache.get(key)
    cache.stats.count("base", hit)
    if hit:
        return value  # type: ignore[no-any-return]
    base = _load_base(inputs, display, cache)
    cache.put(key, base)
    return base


def _load_base(inputs: list[InputFile], display: str, cache: BuildCache | None) -> Base:
    files = {f.rel: f.raw for f in inputs if f.shape is None and f.raw is not None}
    loaded = _load_all(files, display, cache)
    base = Base(load=tuple(d for one in loaded for d in one.diagnostics),
                ok=all(one.complete and one.structural_ok for one in loaded))
    if not base.ok:
        return base
    # TC126 goes with the units' own (reported only when every file is sound)
    base.diags.extend(d for one in loaded for d in one.folded)
    sources = [one.source for one in loaded if one.source is not None]
    streamed = [f for f in inputs if f.shape is not None]
    sections = merge_sections(sources, base.diags)
    _check_streamed(sections, streamed, display)
    openclaw = next((f.shape.openclaw for f in streamed if f.shape is not None
                     and f.shape.openclaw is not None), None)
    release = _release(sections) if "openclaw" in sections else target(openclaw)
    check_release_keys(sources, release, base.diags)
    defs = build_model(sources, sections, display)
    digests = {f"{display}/{f.rel}": f.digest for f in inputs}
    names = tuple(ch for f in streamed if f.shape is not None for ch in _names(f.shape))
    defs = replace(
        defs, files=tuple(f.rel for f in inputs), file_digests=digests,
        openclaw=defs.openclaw if "openclaw" in sections else openclaw,
        openclaw_pos=(defs.openclaw_pos if "openclaw" in sections
                      else Pos(file=f"{display}/{inputs[0].rel}", line=1, col=1)),
        streamed_channels=names)
    defs = replace(defs, unit_base=unit_base(sources, streamed, defs, display))
    base.defs, base.target = defs, release
    base.resolved = analyze(defs, base.diags)
    return base


def _names(shape: Shape) -> tuple[str, ...]:
    return tuple(normalize_key(name) for name in shape.channels)


def _check_streamed(sections: Mapping[str, list[tuple[Any, Any]]], streamed: list[InputFile],
                    display: str) -> None:
    """Channel files that conflict with each other or with the base (a channel defined twice,
    TC103; ``openclaw`` values that differ, TC105) are errors whose messages name positions
    only a loaded file knows: the build is redone with every file in memory."""
    seen = {_channel_folded(name) for _, value in sections.get("channels", []) for name in value}
    values = {json.dumps(v, sort_keys=True) for _, v in sections.get("openclaw", [])}
    for f in streamed:
        assert f.shape is not None
        names = [_channel_folded(name) for name in f.shape.channels]
        if f.shape.openclaw is not None:
            values.add(json.dumps(f.shape.openclaw, sort_keys=True))
        if len(values) > 1 or len(set(names)) < len(names) or seen & set(names):
            raise Reclassify({g.rel: None for g in streamed})
        seen.update(names)


def unit_base(sources: list[Any], streamed: list[InputFile], defs: Definitions,
              display: str) -> str:
    """What a channel's compiled tables depend on besides the channel itself (the cache key
    of every unit): every base file byte for byte, except that of a file holding only
    channels its other top-level values count (``frontend.unit_base``), and of a channel
    file its shape's; every file's name; the names of every channel."""
    parts = {}
    for src in sources:
        if "channels" in src.data and set(src.data) <= CHANNEL_FILE_KEYS:
            rest = {k: v for k, v in src.data.items() if k != "channels"}
            parts[src.path] = "json:" + json.dumps(rest, sort_keys=True, ensure_ascii=False)
        else:
            parts[src.path] = "sha256:" + defs.file_digests[src.path]
    for f in streamed:
        assert f.shape is not None
        parts[f"{display}/{f.rel}"] = "json:" + f.shape.rest
    h = hashlib.sha256()
    for path in sorted(parts):
        h.update(f"{path}\0{parts[path]}\0".encode())
    names = sorted((*(ch.name for ch in defs.channels), *defs.streamed_channels))
    h.update("\0".join(names).encode())
    h.update(b"\0files\0" + "\0".join(defs.files).encode())
    return h.hexdigest()


# -- one channel ------------------------------------------------------------------------------
Lint = Callable[[ChannelDef, Diagnostics], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelContext:
    """What compiling one channel on its own reads (inherited by forked workers)."""

    defs: Definitions
    checks: ChannelChecks
    tables: TableBuilder | None  # None: the base has errors, nothing is compiled
    provenance: ProvenanceBuilder | None  # None: no provenance (``with_models=False``)
    lint: Lint | None = None  # the group lints (``toolc.audit.checks.lint_channel``)
    term: Callable[[Mapping[str, Any]], int] | None = None  # ACCESS.md's estimate's part


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelResult:
    """One channel compiled: its diagnostics by stage, its entries in ``tables.json`` and
    ``provenance.json`` and its shards (``{path below the runtime package: bytes}``)."""

    name: str
    analysis: tuple[Diagnostic, ...]  # reported with analyze's
    late: tuple[Diagnostic, ...] = ()  # the tables' warnings and lints: when nothing failed
    index: dict[str, Any] | None = None  # None: not compiled
    provenance: dict[str, Any] | None = None
    shards: dict[str, bytes] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)  # each shard's sha256
    groups: int = 0
    term: int = 0


def compile_channel(ctx: ChannelContext, ch: ChannelDef, *, analysed: bool = False
                    ) -> ChannelResult:
    """One channel's checks (unless ``analyse`` reported them: ``analysed``), tables,
    provenance and lints."""
    analysis = Diagnostics()
    if not analysed:
        check_channel(ctx.defs, ch, ctx.checks, analysis)
    if ctx.tables is None or analysis.has_errors():
        return ChannelResult(name=ch.name, analysis=tuple(analysis.items))
    files: dict[str, bytes] = {}
    prov = None
    if ctx.provenance is not None:
        unit, recorded = record_both(ctx.provenance, ch)
        prov = _shards(channel_provenance(ch.name, recorded), files)
        del recorded
    else:
        unit = record_channel(ctx.tables, ctx.tables.channel, ch)
    # 2026.9's channel classes are formed across every channel at once: none is summarized
    summarize = not ctx.tables.r.target.group_id_needs_session
    index = _shards(channel_shards(ch.name, unit, summarize=summarize), files)
    late = Diagnostics()
    late.extend(unit[2])
    if ctx.lint is not None:
        ctx.lint(ch, late)
    return ChannelResult(name=ch.name, analysis=tuple(analysis.items), late=tuple(late.items),
                         index=index, provenance=prov, shards=files,
                         digests={path: sha256(data) for path, data in files.items()},
                         groups=sum(len(m) for m in ch.entry_maps()),
                         term=ctx.term(unit[1]) if ctx.term is not None else 0)


def _shards(made: tuple[dict[str, Any], dict[str, str]], files: dict[str, bytes]
            ) -> dict[str, Any]:
    """An index and its shards: the shards go into ``files`` as bytes (each text dropped as
    soon as it is encoded), the index is returned."""
    index, texts = made
    for path in sorted(texts):
        files[path] = texts.pop(path).encode("utf-8")
    return index


# -- one channel file ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class UnitResult:
    """One channel file compiled (see the module docstring): diagnostics by stage, the shape
    found, and its channels' results in file order."""

    rel: str
    load: tuple[Diagnostic, ...]
    sound: bool  # loaded, a mapping, structurally valid
    shape: Shape | None  # what the loaded file is (None: not a channel file, or not sound)
    folded: tuple[Diagnostic, ...] = ()
    release: tuple[Diagnostic, ...] = ()
    channels: tuple[ChannelResult, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class UnitContext:
    """What every unit of one build reads (inherited by forked workers)."""

    root: Path
    display: str
    channels: ChannelContext | None  # None: the base did not load; units only load
    target: Target | None
    cache: BuildCache | None


def compile_unit(ctx: UnitContext, file: InputFile, *, defer: bool = False
                 ) -> tuple[UnitResult, bool | None]:
    """One channel file (see the module docstring) and whether its load came from the cache
    (None: no cache); ``defer``: its load's cache entry waits in ``_PENDING``."""
    raw = (ctx.root / file.rel).read_bytes()
    if sha256(raw) != file.digest:
        raise DefinitionsChanged(f"{ctx.display}/{file.rel} changed while toolc was building; "
                                 "build again")
    path = f"{ctx.display}/{file.rel}"
    loaded, hit = _loaded(ctx.cache, raw, path, file.digest, defer)
    del raw
    src = loaded.source
    sound = loaded.complete and loaded.structural_ok and src is not None
    result = UnitResult(rel=file.rel, load=loaded.diagnostics, sound=sound,
                        shape=shape_of(src.data) if sound and src is not None else None)
    if not sound or src is None or result.shape != file.shape or ctx.channels is None:
        return result, hit
    assert ctx.target is not None
    release = Diagnostics()
    check_release_keys([src], ctx.target, release)
    builder = _Builder(src, senders=ctx.target.senders)
    modelled = [builder.channel(name, block, ("channels", name))
                for name, block in src.data["channels"].items()]
    result = replace(result, folded=loaded.folded, release=tuple(release.items))
    # the file's values and positions die here (the model keeps the positions it uses):
    # the memory they held serves the tables
    del loaded, src, builder
    done = []
    while modelled:
        done.append(compile_channel(ctx.channels, modelled.pop(0)))
    return replace(result, channels=tuple(done)), hit


def _loaded(cache: BuildCache | None, raw: bytes, path: str, digest: str, defer: bool
            ) -> tuple[LoadedFile, bool | None]:
    """``load_one`` through the cache's ``file`` entries (``frontend._load_all``'s key)."""
    if cache is None:
        return load_one(raw, path), None
    key = cache.key("file", [path, digest])
    hit, value = cache.get(key)
    if hit:
        return value, True
    value = load_one(raw, path)
    if defer:
        _PENDING.append((key, value))
    else:
        cache.put(key, value)
    return value, False


def unit_key(cache: BuildCache, base: str, file: InputFile, kind: str) -> str:
    """A unit's cache key: the base's key (``base_key``: the base's inputs, and the display
    path its positions name) and the file's bytes."""
    return cache.key(kind, [base, file.rel, file.digest])


# -- running units ----------------------------------------------------------------------------
ContextOf = Callable[[], UnitContext]
# What a forked worker compiles with: the context (made once per worker), the kind, the
# base's key of its units' cache entries, and whether to defer writing its loads' entries.
_FORKED: list[tuple[ContextOf, str, str | None, bool]] = []
_CONTEXT: list[UnitContext] = []  # a worker's context, once made
# A worker's cache writes that wait until its result is sent (``_flush``).
_PENDING: list[tuple[str, Any]] = []


class NoBase(Exception):
    """A worker started ahead of its build (``UnitRun.ahead``) could not read the base: the
    unit is compiled in the building process instead."""


def _work(file: InputFile) -> tuple[UnitResult, bool | None, bool]:
    """A worker's unit: from the cache, else compiled and stored (the cache is shared)."""
    _prepare()
    _, kind, base, defer = _FORKED[0]
    return _unit(_CONTEXT[0], kind, base, file, defer=defer)


def _prepare() -> None:
    """Make the worker's context (once). A worker lives for one build, and collects no
    cycles in it (``yamlsrc.paused_gc``: what the build's process pauses, a worker started
    ahead forks before): resumed, the collector's first pass would walk every object the
    worker made, twice per unit (the base, then the unit)."""
    gc.disable()
    if not _CONTEXT:
        _CONTEXT.append(_FORKED[0][0]())


def _flush() -> None:
    """Write the cache entries a worker kept back (``UnitRun``: after its result is sent)."""
    ctx = _CONTEXT[0] if _CONTEXT else None
    while _PENDING and ctx is not None and ctx.cache is not None:
        ctx.cache.put(*_PENDING.pop())


def _unit(ctx: UnitContext, kind: str, base: str | None, file: InputFile, *,
          defer: bool = False) -> tuple[UnitResult, bool | None, bool]:
    """(result, whether its load came from the cache, whether the unit did). Stored only
    when its base compiled (the same base always does) and its shape was what was guessed;
    ``defer``: stored by ``_flush``, after the result is sent."""
    cache = ctx.cache
    key = None if cache is None or base is None else unit_key(cache, base, file, kind)
    if cache is not None and key is not None:
        hit, value = cache.get(key)
        if hit:
            return value, None, True
    result, file_hit = compile_unit(ctx, file, defer=defer)
    compiled = ctx.channels is not None and ctx.channels.tables is not None
    if cache is not None and key is not None and compiled and result.shape == file.shape:
        if defer:
            _PENDING.append((key, result))
        else:
            cache.put(key, result)
    return result, file_hit, False


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _pool_size(size: int, tasks: int) -> int:
    """Worker processes for ``tasks`` units of ``size`` bytes to compile (0: none, they are
    compiled in this process)."""
    if size < OVERLAP_MIN_BYTES or not can_fork():
        return 0
    return worker_count(tasks) if size >= PARALLEL_MIN_BYTES else 1


Attempt = tuple[UnitResult, bool | None, bool]


class UnitRun:
    """Units started: the ones the cache holds are read here (``results``), the others are
    compiled in forked workers when there is much to compile, while the caller does the
    base's work. ``context_of`` makes a worker's context; it may be called before the caller
    has the base (an incremental build whose base is cached: the worker reads it from the
    cache too, and its unit starts at once)."""

    def __init__(self, context_of: ContextOf, kind: str, cache: BuildCache | None,
                 base: str | None) -> None:
        self.context_of, self.kind, self.cache, self.base = context_of, kind, cache, base
        self.files: list[InputFile] = []
        self.workers = 0
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[str, Future[Attempt]] = {}

    @classmethod
    def ahead(cls, context_of: ContextOf, kind: str, cache: BuildCache, base: str) -> UnitRun:
        """One worker started before the build has read its definitions, reading the base
        its last build had (``base``) from the cache, so that a unit of a small change starts
        as soon as it is known (``start``). Used only when the base is that one (the caller
        checks); a worker that cannot read it hands its units back (``NoBase``)."""
        run = cls(context_of, kind, cache, base)
        run._fork(1)
        assert run._pool is not None
        run._pool.submit(_prepare)
        return run

    def _fork(self, workers: int) -> None:
        # one worker beside this process (an incremental build): the loads' cache entries are
        # written after the results are sent, while this process finishes the build
        _FORKED.append((self.context_of, self.kind, self.base, workers == 1))
        context = multiprocessing.get_context("fork")
        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)

    def todo(self, files: list[InputFile]) -> list[InputFile]:
        """The files the cache does not hold."""
        cache, base = self.cache, self.base
        return [f for f in files if cache is None or base is None
                or not cache.has(unit_key(cache, base, f, self.kind))]

    def start(self, files: list[InputFile]) -> None:
        """Compile ``files`` (those the cache does not hold in workers when there is much to
        compile, or in the worker already started)."""
        self.files = files
        todo = self.todo(files)
        if self._pool is None:
            workers = _pool_size(sum(f.size for f in todo), len(todo))
            if not workers:
                return
            self._fork(workers)
        assert self._pool is not None
        # largest first, so that one big file does not run alone at the end
        for f in sorted(todo, key=lambda f: -f.size):
            self._futures[f.rel] = self._pool.submit(_work, f)
        if self.workers == 1:
            self._pool.submit(_flush)

    def results(self, ctx: UnitContext) -> Iterator[Attempt | Exception]:
        """Every unit's result (``ctx``: this process's context), the cached ones first,
        then the workers' as each is done (so that no finished result waits in memory for a
        slower one), or what it raised (a unit compiled on a base that a wrong guess made
        may fail: the caller decides once it has every result)."""
        for f in self.files:
            if f.rel not in self._futures:
                yield self._outcome(functools.partial(_unit, ctx, self.kind, self.base, f))
        # a finished future holds its result: none is kept once it is handed on
        files = {id(future): f for f in self.files
                 if (future := self._futures.get(f.rel)) is not None}
        running = as_completed(list(self._futures.values()))
        self._futures.clear()
        for future in running:
            outcome = self._outcome(future.result)
            if isinstance(outcome, NoBase):
                if self.cache is not None:
                    self.cache.stats.count("no-base", True)
                outcome = self._outcome(functools.partial(
                    _unit, ctx, self.kind, self.base, files[id(future)]))
            del future
            yield outcome

    @staticmethod
    def _outcome(get: Callable[[], Attempt]) -> Attempt | Exception:
        try:
            return get()
        except DefinitionsChanged:
            raise
        except Exception as exc:
            return exc

    def close(self, *, wait: bool = True) -> None:
        """Stop the workers once their tasks are done (the cache entries they write are
        written under the build's lock); ``wait=False``, for a worker started ahead that only
        reads a base the build turned out not to need: it exits when it is done."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)
            self._pool = None
            _FORKED.clear()


@contextmanager
def units(context_of: ContextOf, kind: str, files: list[InputFile],
          cache: BuildCache | None, base: str | None, *, ahead: UnitRun | None = None
          ) -> Iterator[UnitRun]:
    """``UnitRun`` (``ahead``: the one started ahead, used when it reads this base), its
    workers stopped when the block ends (whatever it raised)."""
    run = ahead if ahead is not None and ahead.base == base else None
    if ahead is not None and run is None:
        ahead.close(wait=False)
    todo = [] if run is None else run.todo(files)
    if run is not None and _pool_size(sum(f.size for f in todo), len(todo)) > 1:
        run.close(wait=False)  # much to compile: a worker per core
        run = None
    if ahead is not None and cache is not None:
        cache.stats.count("ahead", run is not None)
    run = run or UnitRun(context_of, kind, cache, base)
    try:
        run.start(files)
        yield run
    finally:
        run.close()
