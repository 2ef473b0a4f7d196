"""Compile definitions into a build: validate, build, ``build --check`` and the file map, by
driving the pipeline's stages over the base and the channel files compiled on their own
(``toolc.builds.stream``), then the steps over everything. The public face is ``toolc.api``."""

from __future__ import annotations

import functools
import hashlib
import keyword
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..audit.access_md import access_capped, access_markdown
from ..audit.checks import base_checks, check_assertions
from ..diagnostics import DefinitionsError, Diagnostic, Diagnostics
from ..pipeline.analyze import Resolved, analyze
from ..pipeline.bundles import build_bundles
from ..pipeline.frontend import load_definitions
from ..pipeline.memo import outside_channels
from ..pipeline.model import ChannelDef
from ..pipeline.render import (
    DEFAULT_PACKAGE,
    INIT_TEMPLATE,
    SOURCES_DIR,
    base_files,
    base_texts,
    compact_members,
    environment,
    join_members,
    render,
)
from ..pipeline.routing import routes_json
from ..pipeline.shards import SHARD_DIR, join_tables, split_tables
from ..pipeline.tables import TableBuilder, Tables
from ..pipeline.writer import (
    SIGNATURES,
    Staging,
    check_output_dir,
    diff_disk,
    matches_disk,
    output_lock,
    publish_with,
)
from ..pipeline.yamlsrc import paused_gc
from ..schema.models import generate_models
from ..semantics.access import ClassSpace, TablesView
from ..semantics.reference import ReferenceInterpreter, Resolution
from .cache import BuildCache
from .incremental import (
    KEEP_READ_BYTES,
    LastBuild,
    Started,
    UnitContexts,
    cache_salt,
    default_cache_dir,
    digest_inputs,
    file_stats,
    inputs_digest,
    start_ahead,
    unit_kind,
)
from .stream import (
    Base,
    ChannelResult,
    Reclassify,
    ScanMemo,
    Shape,
    UnitContext,
    UnitResult,
    UnitRun,
    base_key,
    compile_channel,
    load_base,
    read_inputs,
    units,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult:
    """What ``build`` did: the files it wrote (none when ``up_to_date``) and the warnings."""

    out_dir: Path
    files: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    counts: dict[str, int]
    up_to_date: bool
    # why the incremental cache was off although asked for (its secret or directory is not
    # this user's own: ``toolc.builds.cache``), else ""; the build is the same either way
    cache_off: str = ""


def _front(definitions_dir: Path, diags: Diagnostics, cache: BuildCache | None = None
           ) -> Resolved | None:
    defs = load_definitions(definitions_dir, diags, cache)
    return None if defs is None else analyze(defs, diags)


def resolve_definitions(definitions_dir: Path) -> Resolved:
    """Load and check definitions; raises DefinitionsError when there are errors."""
    diags = Diagnostics()
    resolved = _front(Path(definitions_dir), diags)
    if resolved is None:
        raise DefinitionsError(diags.sorted())
    return resolved


def load_reference(definitions_dir: str | Path) -> ReferenceInterpreter:
    """Load and check a definitions directory once; raises DefinitionsError on errors."""
    return ReferenceInterpreter(resolve_definitions(Path(definitions_dir)))


def reference_resolve(definitions_dir: str | Path, **context: Any) -> Resolution:
    """Evaluate one request against a definitions directory with the reference interpreter."""
    return load_reference(definitions_dir).resolve(**context)


def validate(definitions_dir: str | Path, *, strict: bool = False) -> list[Diagnostic]:
    """Run the front end and the table compiler (for its warnings); write nothing."""
    options = _Options(package=DEFAULT_PACKAGE, strict=strict, with_models=False)
    try:
        diagnostics, _ = _compile(Path(definitions_dir), _MemoryOutputs(keep_sources=False),
                                  options)
    except DefinitionsError as exc:
        return list(exc.diagnostics)
    return diagnostics


def compile_files(definitions_dir: Path, *, package: str = DEFAULT_PACKAGE,
                  strict: bool = False, with_models: bool = True,
                  cache: BuildCache | None = None,
                  ) -> tuple[dict[str, str], list[Diagnostic], dict[str, int]]:
    """The build as a file map, plus diagnostics; raises DefinitionsError on errors.

    ``with_models=False`` leaves out ``models.py`` (the typed parameter models),
    ``ACCESS.md`` (the review table) and the provenance: resolution never uses them, and
    the differential tests and ``toolc diff`` build thousands of runtimes. ``cache``: the
    incremental build cache (``toolc.builds.cache``); the file map is the same with or
    without it.
    """
    outputs = _MemoryOutputs()
    diagnostics, counts = _compile(Path(definitions_dir), outputs, _Options(
        package=package, strict=strict, with_models=with_models, cache=cache))
    return outputs.texts(), diagnostics, counts


# -- the compiler, over the units of toolc.builds.stream ------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class _Options:
    package: str
    strict: bool
    with_models: bool
    cache: BuildCache | None = None
    inputs: str | None = None  # the inputs digest the manifest records (``stamped_files``)
    # files the inputs digest read, by relative path: (sha256, bytes), not read again
    read: Mapping[str, tuple[str, bytes]] = field(default_factory=dict)


class _MemoryOutputs:
    """A build's files in memory (``keep_sources=False``: the definitions are not kept)."""

    def __init__(self, *, keep_sources: bool = True) -> None:
        self.files: dict[str, bytes] = {}
        self.keep_sources = keep_sources

    def add(self, rel: str, data: bytes, digest: str | None = None) -> None:
        if self.keep_sources or not rel.startswith(f"{SOURCES_DIR}/"):
            self.files[rel] = data

    def read(self, rel: str) -> bytes:
        return self.files[rel]

    def reset(self) -> None:
        self.files.clear()

    def texts(self) -> dict[str, str]:
        return {rel: data.decode("utf-8") for rel, data in sorted(self.files.items())}


class _StagedOutputs:
    """A build's files written into the directory ``publish_with`` swaps in."""

    def __init__(self, staging: Staging) -> None:
        self.staging = staging

    def add(self, rel: str, data: bytes, digest: str | None = None) -> None:
        self.staging.write(rel, data, digest)

    def read(self, rel: str) -> bytes:
        return self.staging.read(rel)

    def reset(self) -> None:
        self.staging.clear()


_ATTEMPTS = 3  # a build whose channel files are not what they seemed is redone at most twice


def _compile(root: Path, outputs: _MemoryOutputs | _StagedOutputs, options: _Options,
             started: Started | None = None) -> tuple[list[Diagnostic], dict[str, int]]:
    """Compile ``root`` into ``outputs``: (diagnostics, counts); DefinitionsError on errors.
    Redone when a channel file is not what its scan said (``stream.Reclassify``).
    ``started``: ``start_ahead`` called already (by ``build``, before its no-op check)."""
    shapes: dict[str, Shape | None] = {}
    memo = ScanMemo(options.cache, root.as_posix().rstrip("/"))
    for attempt in range(_ATTEMPTS):
        try:
            with paused_gc():
                done = _Compilation(root, outputs, options, shapes, memo,
                                    started if attempt == 0 else None).run()
            memo.save()
            return done
        except Reclassify as again:
            outputs.reset()
            shapes.update(again.shapes if attempt < _ATTEMPTS - 2 else
                          dict.fromkeys(again.shapes, None) | dict.fromkeys(shapes, None))
    raise AssertionError("unreachable: the last attempt streams nothing")


class _Compilation:
    """One attempt of ``_compile``: the base in this process, the channel files as units
    (``toolc.builds.stream``), then the steps over everything, from the units' results."""

    def __init__(self, root: Path, outputs: _MemoryOutputs | _StagedOutputs,
                 options: _Options, shapes: dict[str, Shape | None], memo: ScanMemo,
                 started: Started | None = None) -> None:
        self.root, self.outputs, self.options, self.shapes = root, outputs, options, shapes
        self.memo, self.started = memo, started
        self.contexts = UnitContexts(root, options.cache, options.with_models)
        self.display = self.contexts.display
        self.diags = Diagnostics()
        self.digests: dict[str, str] = {}  # package-relative shard path -> sha256
        self.index: dict[str, dict[str, Any]] = {}  # tables.json's channels
        self.provenance: dict[str, dict[str, Any]] = {}
        self.groups = 0
        self.terms: list[int] = []
        self.streamed: list[str] = []  # the channel files compiled as units
        self.shaped: dict[str, Shape | None] = {}  # their shapes, as guessed
        self.last: LastBuild | None = None  # the last build's base (``ahead``)

    def run(self) -> tuple[list[Diagnostic], dict[str, int]]:
        kind = unit_kind(self.options.with_models)
        ahead, self.last = self.started or start_ahead(self.contexts, kind)
        try:
            return self.run_with(kind, ahead)
        finally:
            if ahead is not None:
                ahead.close(wait=False)  # unless used (and closed) by ``units``

    def run_with(self, kind: str, ahead: UnitRun | None) -> tuple[list[Diagnostic],
                                                                 dict[str, int]]:
        """``run`` with the worker started ahead, if any (``start_ahead``)."""
        options, diags = self.options, self.diags
        files = read_inputs(self.root, diags, self.outputs, self.shapes, self.memo,
                            options.read)
        if files is None:
            raise DefinitionsError(diags.sorted(strict=options.strict))
        streamed = [f for f in files if f.shape is not None]
        self.streamed = [f.rel for f in streamed]
        self.shaped = {f.rel: f.shape for f in streamed}
        cache = options.cache
        key = None if cache is None else base_key(cache, files, self.display)
        sources = {f.rel: f.digest for f in files}
        last_key = self.contexts.last_key(kind)
        if cache is not None and last_key is not None and key is not None:
            last = LastBuild(base=key, size=sum(f.size for f in streamed),
                             stats=file_stats(self.root))
            if last != self.last:
                cache.put(last_key, last)
        # with the base in the cache, the changed units start at once, each worker reading
        # the base itself (or read already, ``ahead``), while this process reads it too and
        # does the rest
        if cache is not None and key is not None and cache.has(key):
            with units(functools.partial(self.contexts.from_files, files), kind, streamed,
                       cache, key, ahead=ahead) as run:
                base = load_base(files, self.display, cache)
                return self.compile(base, self.contexts.of(base), run, sources)
        base = load_base(files, self.display, cache)
        ctx = self.contexts.of(base)  # forked workers inherit it
        with units(lambda: ctx, kind, streamed, cache, key, ahead=ahead) as run:
            return self.compile(base, ctx, run, sources)

    def compile(self, base: Base, ctx: UnitContext, run: UnitRun, sources: dict[str, str]
                ) -> tuple[list[Diagnostic], dict[str, int]]:
        """The base's work while the units compile, then everything over all channels."""
        failures: list[Exception] = []
        work = None
        try:
            work = _BaseWork(self, base, ctx) if base.resolved is not None else None
        except Exception as exc:  # a base built on a wrong guess may fail: see below
            failures.append(exc)
        done: dict[str, UnitResult] = {}
        for found in run.results(ctx):
            if isinstance(found, Exception):
                failures.append(found)
            else:
                result, *hits = found
                done[result.rel] = self.unit(result, hits)
        results = [done[rel] for rel in self.streamed if rel in done]
        # a wrong guess at a channel file's shape is found here, and makes anything built on
        # it moot (failures included): the build is redone
        self.check_shapes(results)
        if failures:
            raise failures[0]
        self.report(base, results)
        if work is None or self.diags.has_errors():
            raise DefinitionsError(self.diags.sorted(strict=self.options.strict))
        return work.finish(results, sources)

    def unit(self, result: UnitResult, hits: list[bool | None]) -> UnitResult:
        """Write a unit's shards and keep the rest of its result."""
        file_hit, unit_hit = hits
        cache = self.options.cache
        if cache is not None:
            if file_hit is not None:
                cache.stats.count("file", file_hit)
            cache.stats.count("unit", bool(unit_hit))
        return replace(result, channels=tuple(self.channel(ch) for ch in result.channels))

    def channel(self, result: ChannelResult) -> ChannelResult:
        """Write a compiled channel's shards; its result without them."""
        package = self.options.package
        for path, data in sorted(result.shards.items()):
            digest = self.digests[path] = result.digests[path]
            self.outputs.add(f"{package}/{path}", data, digest)
        if result.index is not None:
            self.index[result.name] = result.index
            self.groups += result.groups
            self.terms.append(result.term)
        if result.provenance is not None:
            self.provenance[result.name] = result.provenance
        return replace(result, shards={})

    def check_shapes(self, results: list[UnitResult]) -> None:
        wrong = {r.rel: r.shape for r in results if r.sound and r.shape != self.shaped[r.rel]}
        if wrong:
            raise Reclassify(wrong)

    def report(self, base: Base, results: list[UnitResult]) -> None:
        """The diagnostics up to the analysis, as one in-memory pass reports them: the
        files' problems alone when a file is unusable, else everything up to the analysis;
        the later stages' only when nothing failed (``_BaseWork`` adds the base's)."""
        diags = self.diags
        diags.extend(base.load)
        for r in results:
            diags.extend(r.load)
        if not base.ok or not all(r.sound for r in results):
            return
        diags.extend(base.diags.items)
        for r in results:
            diags.extend([*r.folded, *r.release, *(d for ch in r.channels for d in ch.analysis)])
        if not diags.has_errors():
            diags.extend(d for r in results for ch in r.channels for d in ch.late)


class _BaseWork:
    """The base's share of a build, done while the units compile: its tables, provenance,
    bundles, models and lints, and the channels of files that hold more than channels."""

    def __init__(self, c: _Compilation, base: Base, ctx: UnitContext) -> None:
        assert base.resolved is not None and ctx.channels is not None
        assert ctx.channels.tables is not None
        self.c, self.resolved, self.ctx = c, base.resolved, ctx.channels
        cache, defs = c.options.cache, base.resolved.defs
        late = Diagnostics()
        builder = ctx.channels.tables
        self.tables = outside_channels(cache, "tables-base", defs,
                                       functools.partial(_base_tables, builder), late)
        self.memory = [self.in_memory(ch) for ch in defs.channels]
        with_models = c.options.with_models
        self.texts = outside_channels(cache, "texts" if with_models else "texts-tables", defs,
                                      self.base_texts, late)
        base_checks(self.resolved, self.tables.data, late, cache)
        self.late = late
        provenance = ctx.channels.provenance
        # provenance.json's and tables.json's members outside the channels, as text
        self.prov = None if provenance is None else outside_channels(
            cache, "provenance-base", defs,
            lambda _: compact_members(provenance.provenance()), Diagnostics())
        self.index = outside_channels(cache, "tables-index", defs,
                                      lambda _: _index_members(self.tables.data), Diagnostics())
        # the files that depend on the base alone are written now, while the units compile
        package = c.options.package
        self.written = {}
        for rel, text in sorted(base_files(self.texts, package).items()):
            data = text.encode("utf-8")
            digest = self.written[rel] = hashlib.sha256(data).hexdigest()
            c.outputs.add(rel, data, digest)
        environment().get_template(INIT_TEMPLATE)  # parsed now, rendered last

    def base_texts(self, diags: Diagnostics) -> dict[str, str]:
        """The catalog, bundles and models files (``render.base_texts``): cached as text."""
        resolved, cache = self.resolved, self.c.options.cache
        bundles = outside_channels(cache, "bundles", resolved.defs,
                                   lambda d: build_bundles(resolved, d), diags)
        models = (outside_channels(cache, "models", resolved.defs, lambda _: generate_models(
            {t.name: dict(t.parameters) for t in resolved.tools}), Diagnostics())
                  if self.c.options.with_models else None)
        return base_texts(resolved, bundles, models)

    def in_memory(self, ch: ChannelDef) -> ChannelResult:
        """A channel of a file holding more than channels (analysed with the base), cached
        on its own (keyed as ``units._channel_key``)."""
        cache, defs = self.c.options.cache, self.resolved.defs
        digest = defs.file_digests.get(ch.pos.file)
        if cache is None or not defs.unit_base or digest is None:
            return compile_channel(self.ctx, ch, analysed=True)
        kind = "channel-unit" if self.c.options.with_models else "channel-unit-tables"
        return cache.unit(kind, [defs.unit_base, ch.pos.file, digest, str(ch.pos), ch.name],
                          lambda: compile_channel(self.ctx, ch, analysed=True))

    def finish(self, results: list[UnitResult], sources: Mapping[str, str]
               ) -> tuple[list[Diagnostic], dict[str, int]]:
        """Everything over all channels, then the files that are left."""
        c, options = self.c, self.c.options
        memory = [c.channel(result) for result in self.memory]
        diags = c.diags
        diags.extend(self.late.items)
        diags.extend(d for result in memory for d in result.late)
        channels = join_members(compact_members(c.index))
        tables = join_members({**self.index.members, "channels": channels})

        def joined() -> dict[str, Any]:
            index, _ = split_tables(self.tables.data)
            index["channels"] = dict(sorted(c.index.items()))
            return join_tables(index, lambda name: c.outputs.read(f"{options.package}/{name}"))

        full = _Lazy(joined)
        self.assertions(full, diags, bool(results))
        if diags.has_errors(strict=options.strict):
            raise DefinitionsError(diags.sorted(strict=options.strict))
        access = None
        if options.with_models:
            routes = routes_json(self.resolved)
            access = access_capped(self.tables.data, c.terms, len(c.index), routes) or \
                access_markdown(full.get(), routes)
        prov = None
        if self.prov is not None:
            prov = join_members({**self.prov,
                                 "channels": join_members(compact_members(c.provenance))})
        counts = {**self.tables.counts, "groups": c.groups, **self.index.counts,
                  "shards": sum(1 for path in c.digests if path.startswith(f"{SHARD_DIR}/"))}
        found = diags.sorted()
        files = render(self.resolved, tables, package=options.package, written=self.written,
                       shards=c.digests, sources=sources, counts=counts,
                       warnings=[d for d in found if d.severity == "warning"], access=access,
                       provenance=prov, inputs=options.inputs)
        for rel, text in sorted(files.items()):
            data = text.encode("utf-8")
            c.outputs.add(rel, data, hashlib.sha256(data).hexdigest())
        return found, counts

    def assertions(self, full: _Lazy, diags: Diagnostics, streamed: bool) -> None:
        """The assertions over every context class (the whole tables, joined from the
        shards). Their counterexamples are explained by the reference interpreter, which
        needs the channels' model: a violation with channel files compiled on their own is
        reported by the in-memory pass instead."""
        found = Diagnostics()
        check_assertions(self.resolved, lambda: ClassSpace([TablesView(
            full.get(), list(full.get()["tools"]))]), found)
        if streamed and any(d.code == "TC300" for d in found.items):
            raise Reclassify(dict.fromkeys(self.c.streamed, None))
        diags.extend(found.items)


@dataclass(frozen=True, slots=True)
class _Index:
    """``tables.json`` outside the channels: its members as text (``compact_members``), and
    the counts of its interned lists (the manifest's)."""

    members: dict[str, str]
    counts: dict[str, int]


def _index_members(data: Mapping[str, Any]) -> _Index:
    index, _ = split_tables(data)
    index.pop("channels", None)
    return _Index(members=compact_members(index),
                  counts={k: len(index[k]) for k in ("bitsets", "layers", "stacks")})


def _base_tables(builder: TableBuilder, diags: Diagnostics) -> Tables:
    """The tables without the channels (each compiled into its shards on its own)."""
    builder.diags = diags
    return builder.build()


class _Lazy:
    """A value computed on first use."""

    def __init__(self, compute: Callable[[], dict[str, Any]]) -> None:
        self.compute = compute
        self.value: dict[str, Any] | None = None

    def get(self) -> dict[str, Any]:
        if self.value is None:
            self.value = self.compute()
        return self.value


def build(definitions_dir: str | Path = "definitions", out_dir: str | Path = "build", *,
          strict: bool = False, package_name: str = DEFAULT_PACKAGE,
          force: bool = False, lock_timeout: float | None = None,
          on_wait: Callable[[Path], None] | None = None,
          cache: bool | str | Path = True) -> BuildResult:
    """Compile ``definitions_dir`` into ``out_dir`` atomically; skip when nothing changed.

    Holds the output's lock from the no-op check to the swap: a concurrent writer of the
    same output makes this wait (``lock_timeout=None``) or raise ``LockTimeoutError`` after
    ``lock_timeout`` seconds; ``on_wait(lock_file)`` is called before waiting.

    ``cache``: the incremental build cache (``toolc.builds.cache``), read and written
    under the same lock: True, ``.toolc-cache/`` beside ``definitions_dir``
    (``default_cache_dir``); a path, that directory; False, a clean build (``--no-cache``).
    The build is byte for byte the same either way.
    """
    defs, out = Path(definitions_dir), Path(out_dir)
    check_package_name(package_name)
    check_output_dir(out, defs)
    with output_lock(out, timeout=lock_timeout, on_wait=on_wait):
        check_output_dir(out, defs)  # again: the output may have changed while we waited
        unit_cache = (None if cache is False else BuildCache(
            default_cache_dir(defs) if cache is True else Path(cache), cache_salt()))
        cache_off = "" if unit_cache is None else unit_cache.off
        # a changed file: a worker starts on the last build's base while the files are read
        started = start_ahead(UnitContexts(defs, unit_cache, True), unit_kind(True),
                              unless_unchanged=True)
        try:
            digest, read = digest_inputs(defs, package=package_name, strict=strict,
                                         keep=KEEP_READ_BYTES)
            if not force and matches_disk(out, digest):
                return BuildResult(out_dir=out, files=(), diagnostics=(), counts={},
                                   up_to_date=True, cache_off=cache_off)
            options = _Options(package=package_name, strict=strict, with_models=True,
                               cache=unit_cache, inputs=digest, read=read)
            done: list[tuple[list[Diagnostic], dict[str, int], list[str]]] = []

            def fill(staging: Staging) -> None:
                outputs = _StagedOutputs(staging)
                diagnostics, counts = _compile(defs, outputs, options, started)
                done.append((diagnostics, counts, staging.files()))
                staging.write_all(_kept_signature(out, staging.read("manifest.json")))

            publish_with(fill, out)
        finally:
            if started[0] is not None:
                started[0].close(wait=False)  # unless used (and closed) by ``units``
    diagnostics, counts, files = done[0]
    return BuildResult(out_dir=out, files=tuple(sorted(files)), diagnostics=tuple(diagnostics),
                       counts=counts, up_to_date=False, cache_off=cache_off)


def _kept_signature(out: Path, manifest: bytes) -> dict[str, bytes]:
    """The signature of ``out`` when the new build is byte for byte the one it signs (the
    same ``manifest.json``, which holds every file's sha256): ``build --force`` keeps it;
    any other rebuild drops it, since it would no longer verify."""
    try:
        if (out / "manifest.json").read_bytes() != manifest:
            return {}
        return {SIGNATURES: (out / SIGNATURES).read_bytes()}
    except OSError:
        return {}


def check_package_name(name: str) -> None:
    """The generated package must import, and must not shadow the standard library."""
    if not (name.isascii() and name.isidentifier()):
        raise ValueError(f"package name {name!r} is not an ASCII Python identifier")
    if keyword.iskeyword(name):
        raise ValueError(f"package name {name!r} is a Python keyword")
    if name in sys.stdlib_module_names:
        raise ValueError(f"package name {name!r} would shadow the standard-library module "
                         f"of that name")


def stamped_files(definitions_dir: Path, *, package: str, strict: bool,
                  cache: BuildCache | None = None,
                  ) -> tuple[dict[str, str], list[Diagnostic], dict[str, int]]:
    """``compile_files`` with the inputs digest recorded in the manifest: exactly what
    ``build`` writes (and what ``build --check`` compares). The digest is kept out of render
    because it is about the files on disk, not the definitions' meaning."""
    outputs = _MemoryOutputs()
    diagnostics, counts = _compile(definitions_dir, outputs, _Options(
        package=package, strict=strict, with_models=True, cache=cache,
        inputs=inputs_digest(definitions_dir, package=package, strict=strict)))
    return outputs.texts(), diagnostics, counts


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """``build --check``: the files of ``out`` that differ from a fresh build (drift)."""

    out_dir: Path
    stale: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]


def check_build(definitions_dir: str | Path = "definitions", out_dir: str | Path = "build", *,
                strict: bool = False, package_name: str = DEFAULT_PACKAGE) -> CheckResult:
    """Compare ``out_dir`` with a fresh build of ``definitions_dir``, writing nothing; raises
    DefinitionsError on errors (warnings too with ``strict``)."""
    defs, out = Path(definitions_dir), Path(out_dir)
    check_package_name(package_name)
    files, diagnostics, _ = stamped_files(defs, package=package_name, strict=strict)
    return CheckResult(out_dir=out, stale=tuple(diff_disk(files, out)),
                       diagnostics=tuple(diagnostics))
