"""Compile definitions into builds and read builds back: validate, build, the file map, and
the one check of a build's files (manifest digests, the runtime's own table) for every reader
(the runtime loader's rule, `toolc diff`, serve-mcp). The public face is ``toolc.api``."""

from __future__ import annotations

import ast
import hashlib
import json
import keyword
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ._version import __version__
from .audit.access_md import access_markdown
from .audit.checks import run_checks
from .diagnostics import DefinitionsError, Diagnostic, Diagnostics
from .pipeline.analyze import Resolved, analyze
from .pipeline.bundles import build_bundles
from .pipeline.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR
from .pipeline.cache import BuildCache
from .pipeline.frontend import load_definitions, load_files
from .pipeline.provenance import build_provenance
from .pipeline.render import DEFAULT_PACKAGE, SOURCES, dump_json, render
from .pipeline.shards import join_tables
from .pipeline.tables import build_tables
from .pipeline.units import outside_channels
from .pipeline.writer import (
    SIGNATURES,
    check_output_dir,
    diff_disk,
    matches_disk,
    output_lock,
    publish,
)
from .pipeline.yamlsrc import discover
from .runtime.bootstrap import DataMismatchError, Digests, read_checked, tree_problems
from .schema.models import generate_models
from .semantics.reference import ReferenceInterpreter, Resolution


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult:
    """What ``build`` did: the files it wrote (none when ``up_to_date``) and the warnings."""

    out_dir: Path
    files: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    counts: dict[str, int]
    up_to_date: bool


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


def verify_build(out: Path) -> VerifiedBuild:
    """Check a whole build as the runtime loader checks its files (one shared check,
    ``toolc.runtime.bootstrap``): every file the manifest lists is there with its sha256,
    no executable file is there that it does not list, and the runtime's own digests (its
    ``__init__.py``, which the runtime trusts) agree with the manifest, so what a reader
    sees is what the runtime would run. BuildError says what is wrong."""
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
    """The definitions a build was compiled from (its checked ``sources.json``), resolved.
    Positions name ``definitions/<path>``."""
    manifest = read_manifest(out)
    try:
        texts = json.loads(read_build_file(out, SOURCES, manifest))
        files = {str(rel): str(text).encode("utf-8") for rel, text in texts.items()}
    except (ValueError, AttributeError) as exc:
        raise BuildError(f"{out.as_posix()}/{SOURCES}: not a map of file texts") from exc
    diags = Diagnostics()
    defs = load_files(files, BUILD_SOURCES_ROOT, diags)
    resolved = None if defs is None else analyze(defs, diags)
    if resolved is None:
        raise DefinitionsError(diags.sorted())
    return resolved


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
    diags = Diagnostics()
    resolved = _front(Path(definitions_dir), diags)
    if resolved is not None:
        tables = build_tables(resolved, diags)
        build_bundles(resolved, diags)
        run_checks(resolved, tables.data, diags)
    return diags.sorted(strict=strict)


def compile_files(definitions_dir: Path, *, package: str = DEFAULT_PACKAGE,
                  strict: bool = False, with_models: bool = True,
                  cache: BuildCache | None = None,
                  ) -> tuple[dict[str, str], list[Diagnostic], dict[str, int]]:
    """The build as a file map, plus diagnostics; raises DefinitionsError on errors.

    ``with_models=False`` leaves out ``models.py`` (the typed parameter models) and
    ``ACCESS.md`` (the review table): resolution never uses them, and the differential
    tests and ``toolc diff`` build thousands of runtimes. ``cache``: the incremental build
    cache (``toolc.pipeline.cache``); the file map is the same with or without it.
    """
    diags = Diagnostics()
    resolved = _front(definitions_dir, diags, cache)
    if resolved is None:
        raise DefinitionsError(diags.sorted(strict=strict))
    tables = build_tables(resolved, diags, cache)
    # the catalog's units read nothing inside the channels: cached on everything else
    bundles = outside_channels(cache, "bundles", resolved.defs,
                               lambda d: build_bundles(resolved, d), diags)
    run_checks(resolved, tables.data, diags, cache)
    if diags.has_errors(strict=strict):
        raise DefinitionsError(diags.sorted(strict=strict))
    models = (outside_channels(cache, "models", resolved.defs, lambda _: generate_models(
        {t.name: dict(t.parameters) for t in resolved.tools}), Diagnostics())
              if with_models else None)
    warnings = [d for d in diags.sorted() if d.severity == "warning"]
    access = access_markdown(tables.data) if with_models else None
    provenance = build_provenance(resolved, cache) if with_models else None
    files = render(resolved, tables, bundles, models, package=package, warnings=warnings,
                   access=access, provenance=provenance)
    return files, diags.sorted(), tables.counts


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
    h = hashlib.sha256(f"{__version__}\0{package}\0{strict}\0".encode())
    h.update(_toolc_digest())
    for path in discover(definitions_dir) if definitions_dir.is_dir() else []:
        h.update(path.relative_to(definitions_dir).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


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
        digest = inputs_digest(defs, package=package_name, strict=strict)
        if not force and matches_disk(out, digest):
            return BuildResult(out_dir=out, files=(), diagnostics=(), counts={},
                               up_to_date=True)
        unit_cache = (None if cache is False else BuildCache(
            default_cache_dir(defs) if cache is True else Path(cache), cache_salt()))
        files, diagnostics, counts = stamped_files(defs, package=package_name, strict=strict,
                                                   cache=unit_cache)
        publish({**files, **_kept_signature(out, files["manifest.json"])}, out)
    return BuildResult(out_dir=out, files=tuple(sorted(files)), diagnostics=tuple(diagnostics),
                       counts=counts, up_to_date=False)


def _kept_signature(out: Path, manifest: str) -> dict[str, bytes]:
    """The signature of ``out`` when the new build is byte for byte the one it signs (the
    same ``manifest.json``, which holds every file's sha256): ``build --force`` keeps it;
    any other rebuild drops it, since it would no longer verify."""
    try:
        if (out / "manifest.json").read_bytes() != manifest.encode("utf-8"):
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
    files, diagnostics, counts = compile_files(definitions_dir, package=package, strict=strict,
                                               cache=cache)
    manifest = json.loads(files["manifest.json"])
    manifest["inputs_sha256"] = inputs_digest(definitions_dir, package=package, strict=strict)
    return {**files, "manifest.json": dump_json(manifest)}, diagnostics, counts


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
