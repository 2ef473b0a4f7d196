"""Compile definitions into builds and read builds back: validate, build, the file map, and
the one check of a build's files (manifest digests, the runtime's own table) for every reader
(the runtime loader's rule, `toolc diff`, serve-mcp). The public face is ``toolc.api``."""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import json
import keyword
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

from ._version import __version__
from .audit.access_md import access_capped, access_markdown, access_term
from .audit.checks import base_checks, check_assertions, lint_channel
from .diagnostics import DefinitionsError, Diagnostic, Diagnostics
from .pipeline import stream
from .pipeline.analyze import Resolved, analyze, channel_checks
from .pipeline.bundles import build_bundles
from .pipeline.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR
from .pipeline.cache import BuildCache
from .pipeline.frontend import load_definitions, load_files
from .pipeline.model import ChannelDef
from .pipeline.provenance import ProvenanceBuilder
from .pipeline.render import (
    DEFAULT_PACKAGE,
    INIT_TEMPLATE,
    SOURCES,
    SOURCES_DIR,
    base_files,
    base_texts,
    compact_members,
    environment,
    join_members,
    render,
)
from .pipeline.routing import routes_json
from .pipeline.shards import SHARD_DIR, join_tables, split_tables
from .pipeline.stream import (
    Base,
    ChannelContext,
    ChannelResult,
    InputFile,
    NoBase,
    Reclassify,
    ScanMemo,
    Shape,
    UnitContext,
    UnitResult,
    UnitRun,
    base_key,
    can_fork,
    compile_channel,
    load_base,
    read_inputs,
    units,
)
from .pipeline.tables import TableBuilder, Tables
from .pipeline.units import outside_channels
from .pipeline.writer import (
    SIGNATURES,
    Staging,
    check_output_dir,
    diff_disk,
    matches_disk,
    output_lock,
    publish_with,
)
from .pipeline.yamlsrc import discover, paused_gc
from .runtime.bootstrap import DataMismatchError, Digests, read_checked, tree_problems
from .schema.models import generate_models
from .semantics.access import ClassSpace, TablesView
from .semantics.reference import ReferenceInterpreter, Resolution


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult:
    """What ``build`` did: the files it wrote (none when ``up_to_date``) and the warnings."""

    out_dir: Path
    files: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    counts: dict[str, int]
    up_to_date: bool
    # why the incremental cache was off although asked for (its secret or directory is not
    # this user's own: ``toolc.pipeline.cache``), else ""; the build is the same either way
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


class BuildError(Exception):
    """A build directory that is missing, not toolc's, incomplete or modified since."""


# Positions of a build's sources name the definitions directory by its usual name: the
# build records no path (builds are byte-identical wherever the definitions live).
BUILD_SOURCES_ROOT = "definitions"


def read_manifest(out: Path) -> dict[str, Any]:
    """A build's ``manifest.json``; BuildError when there is no toolc build at ``out``."""
    try:
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    except FileNotFoundError as exc:
        raise BuildError(f"{out.as_posix()}: not a toolc build (no manifest.json)") from exc
    except (OSError, ValueError) as exc:
        raise BuildError(f"{out.as_posix()}/manifest.json: unreadable ({exc})") from exc
    if not (isinstance(manifest, dict) and isinstance(manifest.get("files"), dict)
            and isinstance(manifest.get("package"), str)):
        raise BuildError(f"{out.as_posix()}/manifest.json: not written by toolc")
    return manifest


def _manifest_digests(out: Path, manifest: dict[str, Any]) -> Digests:
    return Digests(root=str(out), files=manifest["files"], shown=f"{out.as_posix()}/",
                   against=f"the sha256 in {out.as_posix()}/manifest.json",
                   advice="the build was modified; rebuild it with `toolc build`")


def read_build_file(out: Path, rel: str, manifest: dict[str, Any]) -> bytes:
    """A build's file, checked against the sha256 the manifest lists for it (the runtime
    loader's own check, ``toolc.runtime.bootstrap.read_checked``)."""
    try:
        return read_checked(_manifest_digests(out, manifest), rel)
    except DataMismatchError as exc:
        raise BuildError(str(exc)) from exc


def run_runtime(out: Path, name: str, manifest: dict[str, Any], source: bytes) -> ModuleType:
    """Run the runtime package of the build ``out`` as the module ``name``: its
    ``__init__.py`` from ``source``, the bytes the caller checked against ``manifest``, never
    through the import system (which would run a ``__pycache__`` entry in their place,
    without reading the source). The runtime then checks every other file it reads or runs
    against its own table, bytecode beside them included. The module stays in
    ``sys.modules`` under ``name``; BuildError (and no module) when the runtime refuses a
    file of the build."""
    init = out / manifest["package"] / "__init__.py"
    spec = ModuleSpec(name, None, origin=str(init), is_package=True)
    spec.has_location = True  # so __file__ names the file that was checked
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(compile(source, str(init), "exec", dont_inherit=True), module.__dict__)
    except BaseException as exc:
        sys.modules.pop(name, None)
        mismatch = getattr(module, "DataMismatchError", None)
        if mismatch is not None and isinstance(exc, mismatch):
            raise BuildError(str(exc)) from exc
        raise
    return module


@dataclass(frozen=True, slots=True, kw_only=True)
class VerifiedBuild:
    """A build directory whose every file was checked, and their bytes."""

    out: Path
    manifest: dict[str, Any]
    files: dict[str, bytes]

    def json(self, rel: str) -> Any:
        return json.loads(self.files[rel])

    def tables(self) -> dict[str, Any]:
        """The runtime's tables in one dictionary (``tables.json`` and its shards)."""
        package = self.manifest["package"]
        return join_tables(self.json(f"{package}/tables.json"),
                           lambda name: self.files[f"{package}/{name}"])


def read_tables(out: Path) -> dict[str, Any]:
    """A build's tables in one dictionary: ``tables.json`` and the shards it names, each
    checked against the manifest (``read_build_file``)."""
    manifest = read_manifest(out)
    package = manifest["package"]
    tables = json.loads(read_build_file(out, f"{package}/tables.json", manifest))
    return join_tables(tables, lambda name: read_build_file(out, f"{package}/{name}", manifest))


def tables_of_files(files: dict[str, str], package: str) -> dict[str, Any]:
    """The tables in one dictionary from a file map (``compile_files``)."""
    return join_tables(json.loads(files[f"{package}/tables.json"]),
                       lambda name: files[f"{package}/{name}"].encode("utf-8"))


def _checked_manifest(out: Path) -> dict[str, Any]:
    """A build's manifest, once it names only plain relative paths, every file it lists is
    there and no executable file is there that it does not list (BuildError otherwise)."""
    manifest = read_manifest(out)
    names = manifest["files"]
    bad = [rel for rel in names if not plain_relative(rel)]
    if bad or not all(isinstance(v, str) for v in names.values()):
        raise BuildError(f"{out.as_posix()}/manifest.json: not written by toolc (file "
                         f"names {', '.join(map(repr, bad[:3]))})")
    digests = _manifest_digests(out, manifest)
    problems = tree_problems(digests, ("manifest.json",))
    if problems:
        raise BuildError(f"{out.as_posix()}: {'; '.join(problems[:5])}"
                         f"{f' (and {len(problems) - 5} more)' if len(problems) > 5 else ''}; "
                         f"{digests.advice}")
    return manifest


def verify_build(out: Path) -> VerifiedBuild:
    """Check a whole build as the runtime loader checks its files (one shared check,
    ``toolc.runtime.bootstrap``): every file the manifest lists is there with its sha256,
    no executable file is there that it does not list, and the runtime's own digests (its
    ``__init__.py``, which the runtime trusts) agree with the manifest, so what a reader
    sees is what the runtime would run. BuildError says what is wrong."""
    manifest = _checked_manifest(out)
    names = manifest["files"]
    files = {rel: read_build_file(out, rel, manifest) for rel in sorted(names)}
    _check_runtime_digests(out, manifest, files)
    return VerifiedBuild(out=out, manifest=manifest, files=files)


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenedBuild:
    """A build directory whose manifest, layout and runtime digests were checked
    (``open_build``); each file is read, and checked against the manifest's sha256, only
    when a reader asks for it."""

    out: Path
    manifest: dict[str, Any]

    def digest(self, rel: str) -> str | None:
        """The sha256 the manifest lists for ``rel`` (None: not a file of this build)."""
        value = self.manifest["files"].get(rel)
        return value if isinstance(value, str) else None

    def read(self, rel: str) -> bytes:
        """``rel``'s bytes, checked against the manifest (BuildError when they differ)."""
        return read_build_file(self.out, rel, self.manifest)

    def json(self, rel: str) -> Any:
        return json.loads(self.read(rel))


def open_build(out: Path) -> OpenedBuild:
    """Check a build as ``verify_build`` does, except that no file beyond the runtime's
    ``__init__.py`` is read yet: the manifest names only plain relative paths, every file it
    lists is there, no executable file is there that it does not list, and the runtime's own
    digests agree with the manifest. The files a reader then asks for are checked as they are
    read (``OpenedBuild.read``), so a reader that needs a few files of a large build (``toolc
    diff``: the tables, catalog, bundles and the shards it compares) hashes only those, and
    still never reads bytes that differ from what the runtime would load. BuildError says
    what is wrong."""
    manifest = _checked_manifest(out)
    names = manifest["files"]
    init = f"{manifest['package']}/__init__.py"
    files = {init: read_build_file(out, init, manifest)} if init in names else {}
    _check_runtime_digests(out, manifest, files)
    return OpenedBuild(out=out, manifest=manifest)


def plain_relative(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and "\\" not in rel and not rel.startswith("/") and all(
        p not in ("", ".", "..") for p in parts)


def _check_runtime_digests(out: Path, manifest: dict[str, Any], files: dict[str, bytes]
                           ) -> None:
    """The runtime package's ``FILE_SHA256`` must list exactly the package's other files,
    with the manifest's digests: else the runtime would refuse (or read) what diff did not."""
    package = manifest["package"]
    init = f"{package}/__init__.py"
    if init not in files:
        raise BuildError(f"{out.as_posix()}: no runtime package {package}/ in the manifest")
    runtime = runtime_digests(files[init])
    if runtime is None:
        raise BuildError(f"{out.as_posix()}/{init}: no FILE_SHA256 table (not a toolc "
                         "runtime); rebuild it with `toolc build`")
    listed = {rel.removeprefix(f"{package}/"): digest for rel, digest in manifest["files"].items()
              if rel.startswith(f"{package}/") and rel not in (init, f"{package}/py.typed")}
    if runtime != listed:
        names = sorted(n for n in set(runtime) | set(listed) if runtime.get(n) != listed.get(n))
        raise BuildError(f"{out.as_posix()}/{init} and {out.as_posix()}/manifest.json disagree "
                         f"about {', '.join(names[:5])}: the build was modified; rebuild it "
                         "with `toolc build`")


def runtime_digests(init_source: bytes) -> dict[str, str] | None:
    """The ``FILE_SHA256`` table of a generated ``__init__.py``, read without running it."""
    try:
        tree = ast.parse(init_source)
    except (SyntaxError, ValueError):
        return None
    target: ast.expr
    value: ast.expr | None
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if not (isinstance(target, ast.Name) and target.id == "FILE_SHA256") or value is None:
            continue
        try:
            table = ast.literal_eval(value)
        except ValueError:
            return None
        if isinstance(table, dict) and all(isinstance(k, str) and isinstance(v, str)
                                           for k, v in table.items()):
            return table
        return None
    return None


def resolve_build(out: Path) -> Resolved:
    """The definitions a build was compiled from (its checked ``sources/``, or before them
    ``sources.json``), resolved. Positions name ``definitions/<path>``."""
    manifest = read_manifest(out)
    files = (_sources_json(out, manifest) if SOURCES in manifest["files"] else
             {rel: read_build_file(out, f"{SOURCES_DIR}/{rel}", manifest)
              for rel in manifest.get("sources") or ()})
    diags = Diagnostics()
    defs = load_files(files, BUILD_SOURCES_ROOT, diags)
    resolved = None if defs is None else analyze(defs, diags)
    if resolved is None:
        raise DefinitionsError(diags.sorted())
    return resolved


def _sources_json(out: Path, manifest: dict[str, Any]) -> dict[str, bytes]:
    """A build's definitions from ``sources.json`` (builds before ``sources/``)."""
    try:
        texts = json.loads(read_build_file(out, SOURCES, manifest))
        return {str(rel): str(text).encode("utf-8") for rel, text in texts.items()}
    except (ValueError, AttributeError) as exc:
        raise BuildError(f"{out.as_posix()}/{SOURCES}: not a map of file texts") from exc


def build_is_current(definitions_dir: Path, out: Path) -> bool:
    """Was ``out`` built from ``definitions_dir`` as it is now, by this toolc (the no-op
    check of ``toolc build``; output files are not re-hashed)? ``--strict`` changes no
    output, so a build made with or without it counts."""
    try:
        manifest = read_manifest(out)
    except BuildError:
        return False
    recorded = manifest.get("inputs_sha256")
    return any(recorded == inputs_digest(definitions_dir, package=manifest["package"],
                                         strict=strict) for strict in (False, True))


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
    incremental build cache (``toolc.pipeline.cache``); the file map is the same with or
    without it.
    """
    outputs = _MemoryOutputs()
    diagnostics, counts = _compile(Path(definitions_dir), outputs, _Options(
        package=package, strict=strict, with_models=with_models, cache=cache))
    return outputs.texts(), diagnostics, counts


# -- the compiler, over the units of toolc.pipeline.stream ----------------------------------------
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


def _kind(with_models: bool) -> str:
    """The cache's name for a channel file compiled on its own (``stream.unit_key``)."""
    return "unit" if with_models else "unit-tables"


def _compile(root: Path, outputs: _MemoryOutputs | _StagedOutputs, options: _Options,
             started: Started | None = None) -> tuple[list[Diagnostic], dict[str, int]]:
    """Compile ``root`` into ``outputs``: (diagnostics, counts); DefinitionsError on errors.
    Redone when a channel file is not what its scan said (``stream.Reclassify``).
    ``started``: ``_ahead`` called already (by ``build``, before its no-op check)."""
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


@dataclass(frozen=True, slots=True)
class _Last:
    """The last build of a definitions directory: its base (the cache key), the bytes of its
    channel files, and each file's (relative path, size, mtime): what ``_ahead`` reads."""

    base: str
    size: int
    stats: tuple[tuple[str, int, int], ...]


def _stats(root: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for path in discover(root) if root.is_dir() else []:
        st = path.stat()
        found.append((path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class _Contexts:
    """How a build's units get their context (``stream.UnitContext``), in this process or
    in a forked worker."""

    root: Path
    cache: BuildCache | None
    with_models: bool

    @property
    def display(self) -> str:
        return self.root.as_posix().rstrip("/")

    def of(self, base: Base) -> UnitContext:
        if base.defs is None or base.target is None:
            return UnitContext(root=self.root, display=self.display, channels=None,
                               target=None, cache=self.cache)
        resolved = base.resolved
        tables = provenance = None
        if resolved is not None:
            tables = TableBuilder(resolved, Diagnostics())
            provenance = ProvenanceBuilder(resolved) if self.with_models else None
        channels = ChannelContext(
            defs=base.defs, checks=channel_checks(base.defs, base.target), tables=tables,
            provenance=provenance, term=access_term,
            lint=None if resolved is None else functools.partial(lint_channel, resolved))
        return UnitContext(root=self.root, display=self.display, channels=channels,
                           target=base.target, cache=self.cache)

    def from_files(self, files: list[InputFile]) -> UnitContext:
        """A worker's context, its base read (from the cache) in the worker."""
        return self.of(load_base(files, self.display, self.cache))

    def by_key(self, key: str) -> UnitContext:
        """A worker's context from the base cached under ``key``; ``NoBase`` when it is not
        there (the building process compiles the unit)."""
        hit, base = (False, None) if self.cache is None else self.cache.get(key)
        if not hit or not isinstance(base, Base):
            raise NoBase(key)
        return self.of(base)

    def last_key(self, kind: str) -> str | None:
        """The cache entry naming the last build of these definitions (``_Last``)."""
        return None if self.cache is None else self.cache.key("last-base", [self.display, kind])


Started = tuple[UnitRun | None, _Last | None]


def _ahead(contexts: _Contexts, kind: str, *, unless_unchanged: bool = False) -> Started:
    """A worker started now on the base of the last build of these definitions, when that
    build had channel files to compile on their own (``UnitRun.ahead``), and that build.
    ``unless_unchanged``: not when every file has the size and mtime it had then (most
    likely a build with nothing to do: its no-op check decides)."""
    cache, key = contexts.cache, contexts.last_key(kind)
    if cache is None or key is None or not can_fork():
        return None, None
    hit, found = cache.get(key)
    last = found if hit and isinstance(found, _Last) else None
    if last is None or last.size < stream.OVERLAP_MIN_BYTES or (
            unless_unchanged and last.stats == _stats(contexts.root)):
        return None, last
    return UnitRun.ahead(functools.partial(contexts.by_key, last.base), kind, cache,
                         last.base), last


class _Compilation:
    """One attempt of ``_compile``: the base in this process, the channel files as units
    (``toolc.pipeline.stream``), then the steps over everything, from the units' results."""

    def __init__(self, root: Path, outputs: _MemoryOutputs | _StagedOutputs,
                 options: _Options, shapes: dict[str, Shape | None], memo: ScanMemo,
                 started: Started | None = None) -> None:
        self.root, self.outputs, self.options, self.shapes = root, outputs, options, shapes
        self.memo, self.started = memo, started
        self.contexts = _Contexts(root, options.cache, options.with_models)
        self.display = self.contexts.display
        self.diags = Diagnostics()
        self.digests: dict[str, str] = {}  # package-relative shard path -> sha256
        self.index: dict[str, dict[str, Any]] = {}  # tables.json's channels
        self.provenance: dict[str, dict[str, Any]] = {}
        self.groups = 0
        self.terms: list[int] = []
        self.streamed: list[str] = []  # the channel files compiled as units
        self.shaped: dict[str, Shape | None] = {}  # their shapes, as guessed
        self.last: _Last | None = None  # the last build's base (``ahead``)

    def run(self) -> tuple[list[Diagnostic], dict[str, int]]:
        kind = _kind(self.options.with_models)
        ahead, self.last = self.started or _ahead(self.contexts, kind)
        try:
            return self.run_with(kind, ahead)
        finally:
            if ahead is not None:
                ahead.close(wait=False)  # unless used (and closed) by ``units``

    def run_with(self, kind: str, ahead: UnitRun | None) -> tuple[list[Diagnostic],
                                                                 dict[str, int]]:
        """``run`` with the worker started ahead, if any (``_ahead``)."""
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
            last = _Last(base=key, size=sum(f.size for f in streamed), stats=_stats(self.root))
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


@cache
def _toolc_digest() -> bytes:
    """toolc's own code and templates: a changed compiler is a changed input."""
    root = Path(str(resources.files("toolc")))
    templates = Path(str(resources.files("toolc.templates")))
    # Logical names, so an editable checkout and an installed wheel agree.
    files = {f"toolc/{p.relative_to(root).as_posix()}": p
             for p in [*root.rglob("*.py"), *root.rglob("*.json")]
             if "templates" not in p.relative_to(root).parts and "__pycache__" not in p.parts}
    files.update({f"templates/{p.name}": p for p in templates.glob("*.jinja")})
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].read_bytes())
    return h.digest()


def default_cache_dir(definitions_dir: Path) -> Path:
    """``.toolc-cache/`` beside the definitions directory (in the project, outside both
    ``definitions/`` and ``build/``; gitignored)."""
    return Path(definitions_dir).resolve().parent / DEFAULT_CACHE_DIR


def cache_salt() -> bytes:
    """What every cache key holds: this toolc's version and the digest of its code and
    templates, so a changed compiler never reads an old entry."""
    return f"toolc {__version__}\0".encode() + _toolc_digest()


def inputs_digest(definitions_dir: Path, *, package: str, strict: bool) -> str:
    """Everything a build depends on: toolc itself, the options, and every input file."""
    return _inputs(definitions_dir, package=package, strict=strict)[0]


# The build that follows the inputs digest takes up to this many bytes of the files it read
# from it, instead of reading and hashing them again (the files of a million groups: not all).
KEEP_READ_BYTES = 64 << 20


def _inputs(definitions_dir: Path, *, package: str, strict: bool, keep: int = 0
            ) -> tuple[str, dict[str, tuple[str, bytes]]]:
    """``inputs_digest``, and the files it read (sha256, bytes) by relative path, up to
    ``keep`` bytes of them."""
    h = hashlib.sha256(f"{__version__}\0{package}\0{strict}\0".encode())
    h.update(_toolc_digest())
    kept = {}
    for path in discover(definitions_dir) if definitions_dir.is_dir() else []:
        rel = path.relative_to(definitions_dir).as_posix()
        raw = path.read_bytes()
        digest = hashlib.sha256(raw)
        h.update(rel.encode() + b"\0")
        h.update(digest.digest())
        if len(raw) <= keep:
            kept[rel] = (digest.hexdigest(), raw)
            keep -= len(raw)
    return h.hexdigest(), kept


def build(definitions_dir: str | Path = "definitions", out_dir: str | Path = "build", *,
          strict: bool = False, package_name: str = DEFAULT_PACKAGE,
          force: bool = False, lock_timeout: float | None = None,
          on_wait: Callable[[Path], None] | None = None,
          cache: bool | str | Path = True) -> BuildResult:
    """Compile ``definitions_dir`` into ``out_dir`` atomically; skip when nothing changed.

    Holds the output's lock from the no-op check to the swap: a concurrent writer of the
    same output makes this wait (``lock_timeout=None``) or raise ``LockTimeoutError`` after
    ``lock_timeout`` seconds; ``on_wait(lock_file)`` is called before waiting.

    ``cache``: the incremental build cache (``toolc.pipeline.cache``), read and written
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
        started = _ahead(_Contexts(defs, unit_cache, True), _kind(True), unless_unchanged=True)
        try:
            digest, read = _inputs(defs, package=package_name, strict=strict,
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
