"""The loader at the top of every generated runtime: verify, then execute.

Everything below the ``BODY`` marker is copied into the generated ``__init__.py`` after its
generated values (``PACKAGE_NAME``, ``TOOLC_VERSION``, ``FILE_SHA256``, ``_MODULES``,
``_LAZY``); the placeholders above the marker only give this file the same names, so that
ruff, mypy and the static modules' ``from . import read_verified`` see real code here too.

The generated ``__init__.py`` is the root of trust: it holds the sha256 of every other file the
runtime reads or executes. Static modules are executed from the very bytes that were checked,
never through the import system, so neither an edited file nor a stale ``__pycache__`` entry
can run in their place; the package's ``__path__`` is emptied so the import system cannot
find them on disk either.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
import types
from collections.abc import Mapping
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


def read_verified(name: str) -> bytes:
    """The bytes of ``name`` (a file of this build), after checking their sha256 against the
    value this runtime was generated with: the only way the runtime reads its files."""
    path = os.path.join(_HERE, name)
    expected = FILE_SHA256.get(name)
    if expected is None:
        raise DataMismatchError(f"{PACKAGE_NAME}: {name} is not a file of this build")
    try:
        with open(path, "rb") as file:
            raw = file.read()
    except OSError as exc:
        raise DataMismatchError(f"{PACKAGE_NAME}: cannot read {path}: {exc}") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != expected:
        raise DataMismatchError(
            f"{PACKAGE_NAME}: {path} does not match this runtime (sha256 {digest}, built with "
            f"{expected}); ship build/ as one unit or rebuild it with `toolc build`"
        )
    return raw


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
