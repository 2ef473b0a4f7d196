"""The loader at the top of every generated runtime: verify, then execute.

Everything below the ``BODY`` marker is copied into the generated ``__init__.py`` after its
generated values (``PACKAGE_NAME``, ``TOOLC_VERSION``, ``FILE_SHA256``, ``_MODULES``,
``_LAZY``); the placeholders above the marker only give this file the same names, so that
ruff, mypy and the static modules' ``from . import read_verified`` see real code here too.

The generated ``__init__.py`` is the root of trust: it holds the sha256 of every other file the
runtime reads or executes. Static modules are executed from the very bytes that were checked,
never through the import system, so neither an edited file nor a stale ``__pycache__`` entry
can run in their place; the package's ``__path__`` is emptied so the import system cannot
find them on disk either. Imports by name (``import <package>.integrations.langchain``,
``from .._wrap import wrap`` in an integration module) go through this package's own finder,
which answers with the same verified modules and nothing else.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import types
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from typing import Any, Final

PACKAGE_NAME: Final = "toolc_runtime"
TOOLC_VERSION: Final = "0"
FILE_SHA256: Final[Mapping[str, str]] = {}
_MODULES: Final[tuple[str, ...]] = ()
_LAZY: Final[Mapping[str, str]] = {}

# -- BODY: copied into the generated __init__.py from here on ---------------------------------
_HERE: Final = os.path.dirname(os.path.abspath(__file__))
_LOADED: Final[dict[str, types.ModuleType]] = {}
_LOAD_LOCK: Final = threading.RLock()


class DataMismatchError(RuntimeError):
    """A file beside the runtime is not the one it was generated with (or is unreadable)."""


# The one check of a build's files, for every reader: this loader (against the digests above),
# and toolc's readers of a build directory (``toolc diff``, ``explain --build``, ``serve-mcp``:
# against manifest.json, through ``toolc.api``). Files Python can run: one that is not listed
# is refused wherever it is, since nothing of the build needs it.
EXECUTABLE_SUFFIXES: Final = (
    ".py",
    ".pyc",
    ".pyo",
    ".pyw",
    ".pyd",
    ".so",
    ".pth",
    ".dylib",
    ".dll",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Digests:
    """The sha256 of the files under ``root``, as one reader was given them."""

    root: str
    files: Mapping[str, str]  # "/"-separated name relative to root -> sha256
    shown: str  # how messages name root, separator included
    against: str  # what holds the digests: "this runtime", "the sha256 in .../manifest.json"
    advice: str  # what to do about a mismatch


def read_checked(digests: Digests, name: str) -> bytes:
    """The bytes of ``name`` after checking their sha256 against ``digests``;
    ``DataMismatchError`` when it is not listed, unreadable or different."""
    shown = f"{digests.shown}{name}"
    expected = digests.files.get(name)
    if expected is None:
        raise DataMismatchError(
            f"{shown}: not a file of this build ({digests.against} lists no {name}); "
            f"{digests.advice}"
        )
    try:
        with open(os.path.join(digests.root, name), "rb") as file:
            raw = file.read()
    except OSError as exc:
        raise DataMismatchError(f"{shown}: unreadable ({exc})") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != expected:
        raise DataMismatchError(
            f"{shown} does not match {digests.against} (sha256 {digest}, built with "
            f"{expected}); {digests.advice}"
        )
    return raw


def tree_problems(digests: Digests, also: tuple[str, ...] = ()) -> list[str]:
    """What is wrong with the files under ``root`` (``/``-separated relative names): a file
    of ``digests`` or ``also`` that is missing, and an executable file that is neither (a
    ``__pycache__`` entry of a listed module is not extra)."""
    root = digests.root
    listed = {*digests.files, *also}
    problems = [
        f"{name}: missing"
        for name in sorted(listed)
        if not os.path.isfile(os.path.join(root, name))
    ]
    modules = {name[:-3] for name in listed if name.endswith(".py")}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if rel == "." else f"{rel}/"
        for file in sorted(files):
            name = prefix + file
            if name in listed or not file.endswith(EXECUTABLE_SUFFIXES):
                continue
            parent, _, cache = rel.rpartition("/")
            module = (f"{parent}/" if parent else "") + file.split(".", 1)[0]
            if cache == "__pycache__" and file.endswith(".pyc") and module in modules:
                continue
            problems.append(f"{name}: an executable file that is not part of this build")
    return problems


_OWN: Final = Digests(
    root=_HERE,
    files=FILE_SHA256,
    shown=f"{PACKAGE_NAME}: {_HERE}{os.sep}",
    against="this runtime",
    advice="ship build/ as one unit or rebuild it with `toolc build`",
)


def read_verified(name: str) -> bytes:
    """The bytes of ``name`` (a file of this build), after checking their sha256 against the
    value this runtime was generated with: the only way the runtime reads its files."""
    return read_checked(_OWN, name)


def check_layout() -> None:
    """At import: every file the runtime reads is there, and no file Python could run is
    beside it that the build did not put there."""
    problems = tree_problems(_OWN, ("__init__.py", "py.typed"))
    if problems:
        raise DataMismatchError(f"{PACKAGE_NAME}: {_HERE}: {'; '.join(problems)}; {_OWN.advice}")


def _exec_static(name: str) -> types.ModuleType:
    """Run the static module ``name`` from its verified bytes, as ``<package>.<name>``."""
    path = os.path.join(_HERE, f"{name}.py")
    code = compile(read_verified(f"{name}.py"), path, "exec", dont_inherit=True)
    module = types.ModuleType(f"{__name__}.{name}")
    module.__file__ = path
    module.__package__ = __name__
    sys.modules[module.__name__] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        del sys.modules[module.__name__]
        raise
    return module


def _load_through(last: str) -> types.ModuleType:
    """Load the static modules in order up to ``last`` (each module imports only modules
    before it) and return ``last``. Thread-safe; every module runs once per import."""
    with _LOAD_LOCK:
        for name in _MODULES:
            module = _LOADED.get(name)
            if module is None:
                module = _LOADED[name] = _exec_static(name)
            if name == last:
                return module
    raise ImportError(f"{PACKAGE_NAME} has no module {last!r}")


class _VerifiedLoader:
    """Loads one module of this package from its verified bytes (the import system's loader
    protocol): a static module through ``_load_through``, any other listed file by
    executing it."""

    def __init__(self, static: str | None, file: str) -> None:
        self.static = static
        self.file = file

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        return _load_through(self.static) if self.static is not None else None

    def exec_module(self, module: types.ModuleType) -> None:
        if self.static is not None:
            return  # ran once in _load_through
        path = os.path.join(_HERE, *self.file.split("/"))
        code = compile(read_verified(self.file), path, "exec", dont_inherit=True)
        module.__file__ = path
        exec(code, module.__dict__)


class _Finder:
    """``sys.meta_path`` entry for this package's submodules: the static modules and the
    framework integrations (``integrations/``), each only as a file of this build."""

    def __init__(self, package: str) -> None:
        self.toolc_package = package

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> Any:
        prefix = f"{self.toolc_package}."
        if not fullname.startswith(prefix):
            return None
        rest = fullname[len(prefix) :]
        if rest in _MODULES:
            loader: Any = _VerifiedLoader(rest, f"{rest}.py")  # the protocol, not the ABC
            return ModuleSpec(fullname, loader)
        head, _, name = rest.partition(".")
        if head != "integrations" or "." in name:
            return None
        file = f"integrations/{name or '__init__'}.py"
        if file not in FILE_SHA256:
            return None
        loader = _VerifiedLoader(None, file)
        return ModuleSpec(fullname, loader, is_package=not name)


def install_finder() -> None:
    """Put this package's finder on ``sys.meta_path`` (replacing one an earlier import of
    the same package name left there)."""
    sys.meta_path[:] = [f for f in sys.meta_path if getattr(f, "toolc_package", None) != __name__]
    sys.meta_path.append(_Finder(__name__))


def __getattr__(name: str) -> Any:
    """Names of the modules that load on first use (bundles, validation, wrapping, ...)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_load_through(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
