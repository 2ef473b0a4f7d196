"""Read a build back, each file checked: its manifest, a file against the sha256 the manifest
lists, the runtime's own digest table, the tables joined from their shards, and the
definitions it was compiled from. One check of a build's files for every reader (the runtime
loader's rule, ``toolc diff``, serve-mcp, signing and registries)."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

from ..diagnostics import DefinitionsError, Diagnostics
from ..pipeline.analyze import Resolved, analyze
from ..pipeline.frontend import load_files
from ..pipeline.render import SOURCES, SOURCES_DIR
from ..pipeline.shards import join_tables
from ..runtime.bootstrap import DataMismatchError, Digests, read_checked, tree_problems


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
