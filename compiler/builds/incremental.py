"""What makes a build incremental, around the units of ``toolc.builds.stream``: the inputs
digest (the no-op check of ``toolc build``), the salt of every cache key, the last build of a
definitions directory (so a worker starts on its base before the definitions are read), and
the context each unit is compiled in, in this process or a forked worker."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from .._version import __version__
from ..audit.access_md import access_term
from ..audit.checks import lint_channel
from ..diagnostics import Diagnostics
from ..pipeline.analyze import channel_checks
from ..pipeline.provenance import ProvenanceBuilder
from ..pipeline.tables import TableBuilder
from ..pipeline.yamlsrc import discover
from . import stream
from .cache import DEFAULT_DIR as DEFAULT_CACHE_DIR
from .cache import BuildCache
from .read import BuildError, read_manifest
from .stream import (
    Base,
    ChannelContext,
    InputFile,
    NoBase,
    UnitContext,
    UnitRun,
    can_fork,
    load_base,
)


# -- the inputs and the compiler, digested -------------------------------------------------------
@cache
def toolc_digest() -> bytes:
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
    return f"toolc {__version__}\0".encode() + toolc_digest()


def inputs_digest(definitions_dir: Path, *, package: str, strict: bool) -> str:
    """Everything a build depends on: toolc itself, the options, and every input file."""
    return digest_inputs(definitions_dir, package=package, strict=strict)[0]


# The build that follows the inputs digest takes up to this many bytes of the files it read
# from it, instead of reading and hashing them again (the files of a million groups: not all).
KEEP_READ_BYTES = 64 << 20


def digest_inputs(definitions_dir: Path, *, package: str, strict: bool, keep: int = 0
                  ) -> tuple[str, dict[str, tuple[str, bytes]]]:
    """``inputs_digest``, and the files it read (sha256, bytes) by relative path, up to
    ``keep`` bytes of them."""
    h = hashlib.sha256(f"{__version__}\0{package}\0{strict}\0".encode())
    h.update(toolc_digest())
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


# -- the units' contexts, and a worker started ahead ---------------------------------------------
def unit_kind(with_models: bool) -> str:
    """The cache's name for a channel file compiled on its own (``stream.unit_key``)."""
    return "unit" if with_models else "unit-tables"


@dataclass(frozen=True, slots=True)
class LastBuild:
    """The last build of a definitions directory: its base (the cache key), the bytes of its
    channel files, and each file's (relative path, size, mtime): what ``start_ahead`` reads."""

    base: str
    size: int
    stats: tuple[tuple[str, int, int], ...]


def file_stats(root: Path) -> tuple[tuple[str, int, int], ...]:
    """Each definitions file's (relative path, size, mtime): a cheap guess at "unchanged"."""
    found = []
    for path in discover(root) if root.is_dir() else []:
        st = path.stat()
        found.append((path.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class UnitContexts:
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
        """The cache entry naming the last build of these definitions (``LastBuild``)."""
        return None if self.cache is None else self.cache.key("last-base", [self.display, kind])


Started = tuple[UnitRun | None, LastBuild | None]


def start_ahead(contexts: UnitContexts, kind: str, *, unless_unchanged: bool = False
                ) -> Started:
    """A worker started now on the base of the last build of these definitions, when that
    build had channel files to compile on their own (``UnitRun.ahead``), and that build.
    ``unless_unchanged``: not when every file has the size and mtime it had then (most
    likely a build with nothing to do: its no-op check decides)."""
    cache, key = contexts.cache, contexts.last_key(kind)
    if cache is None or key is None or not can_fork():
        return None, None
    hit, found = cache.get(key)
    last = found if hit and isinstance(found, LastBuild) else None
    if last is None or last.size < stream.OVERLAP_MIN_BYTES or (
            unless_unchanged and last.stats == file_stats(contexts.root)):
        return None, last
    return UnitRun.ahead(functools.partial(contexts.by_key, last.base), kind, cache,
                         last.base), last
