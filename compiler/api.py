"""The Python API: validate, build and resolve; every stage joined in order."""

from __future__ import annotations

import hashlib
import json
import keyword
import sys
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from . import __version__
from .analyze import Resolved, analyze
from .bundles import build_bundles
from .diagnostics import DefinitionsError, Diagnostic, Diagnostics
from .frontend import load_definitions
from .render import DEFAULT_PACKAGE, dump_json, render
from .schema.models import generate_models
from .tables import build_tables
from .writer import check_output_dir, matches_disk, publish
from .yamlsrc import discover


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult:
    out_dir: Path
    files: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    counts: dict[str, int]
    up_to_date: bool


def _front(definitions_dir: Path, diags: Diagnostics) -> Resolved | None:
    defs = load_definitions(definitions_dir, diags)
    return None if defs is None else analyze(defs, diags)


def resolve_definitions(definitions_dir: Path) -> Resolved:
    """Load and check definitions; raises DefinitionsError when there are errors."""
    diags = Diagnostics()
    resolved = _front(Path(definitions_dir), diags)
    if resolved is None:
        raise DefinitionsError(diags.sorted())
    return resolved


def validate(definitions_dir: str | Path, *, strict: bool = False) -> list[Diagnostic]:
    """Run the front end and the table compiler (for its warnings); write nothing."""
    diags = Diagnostics()
    resolved = _front(Path(definitions_dir), diags)
    if resolved is not None:
        build_tables(resolved, diags)
        build_bundles(resolved, diags)
    return diags.sorted(strict=strict)


def compile_files(definitions_dir: Path, *, package: str = DEFAULT_PACKAGE,
                  strict: bool = False, with_models: bool = True,
                  ) -> tuple[dict[str, str], list[Diagnostic], dict[str, int]]:
    """The build as a file map, plus diagnostics; raises DefinitionsError on errors.

    ``with_models=False`` leaves out ``models.py`` (the typed parameter models): resolution
    never uses them, and the differential tests build thousands of runtimes.
    """
    diags = Diagnostics()
    resolved = _front(definitions_dir, diags)
    if resolved is None:
        raise DefinitionsError(diags.sorted(strict=strict))
    tables = build_tables(resolved, diags)
    bundles = build_bundles(resolved, diags)
    if diags.has_errors(strict=strict):
        raise DefinitionsError(diags.sorted(strict=strict))
    models = (generate_models({t.name: dict(t.parameters) for t in resolved.tools})
              if with_models else None)
    warnings = [d for d in diags.sorted() if d.severity == "warning"]
    files = render(resolved, tables, bundles, models, package=package, warnings=warnings)
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
          force: bool = False) -> BuildResult:
    """Compile ``definitions_dir`` into ``out_dir`` atomically; skip when nothing changed."""
    defs, out = Path(definitions_dir), Path(out_dir)
    check_package_name(package_name)
    check_output_dir(out, defs)
    if not force and matches_disk(out, inputs_digest(defs, package=package_name, strict=strict)):
        return BuildResult(out_dir=out, files=(), diagnostics=(), counts={}, up_to_date=True)
    files, diagnostics, counts = stamped_files(defs, package=package_name, strict=strict)
    publish(files, out)
    return BuildResult(out_dir=out, files=tuple(sorted(files)), diagnostics=tuple(diagnostics),
                       counts=counts, up_to_date=False)


def check_package_name(name: str) -> None:
    """The generated package must import, and must not shadow the standard library."""
    if not (name.isascii() and name.isidentifier()):
        raise ValueError(f"package name {name!r} is not an ASCII Python identifier")
    if keyword.iskeyword(name):
        raise ValueError(f"package name {name!r} is a Python keyword")
    if name in sys.stdlib_module_names:
        raise ValueError(f"package name {name!r} would shadow the standard-library module "
                         f"of that name")


def stamped_files(definitions_dir: Path, *, package: str, strict: bool
                  ) -> tuple[dict[str, str], list[Diagnostic], dict[str, int]]:
    """``compile_files`` with the inputs digest recorded in the manifest: exactly what
    ``build`` writes (and what ``build --check`` compares). The digest is kept out of render
    because it is about the files on disk, not the definitions' meaning."""
    files, diagnostics, counts = compile_files(definitions_dir, package=package, strict=strict)
    manifest = json.loads(files["manifest.json"])
    manifest["inputs_sha256"] = inputs_digest(definitions_dir, package=package, strict=strict)
    return {**files, "manifest.json": dump_json(manifest)}, diagnostics, counts
