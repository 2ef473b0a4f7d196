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
import hmac
import marshal
import os
import stat
import sys
import threading
import types
from collections.abc import Mapping
from importlib.machinery import ModuleSpec
from typing import Any, Final, NamedTuple

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


class Digests(NamedTuple):
    """The sha256 of the files under ``root``, as one reader was given them (a NamedTuple:
    ``dataclasses`` would cost the import its own import of ``inspect``)."""

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
    of ``digests`` or ``also`` that is missing, and an executable file that is neither. A
    ``__pycache__`` entry of a listed module counts as part of the build only when it is
    exactly what this Python compiles from the module's checked source (``bytecode_problem``):
    the import system may run a ``.pyc`` without reading the source at all."""
    root = digests.root
    listed = {*digests.files, *also}
    problems = [
        f"{name}: missing"
        for name in sorted(listed)
        if not os.path.isfile(os.path.join(root, name))
    ]
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        prefix = "" if rel == "." else f"{rel}/"
        for file in sorted(files):
            name = prefix + file
            if name in listed or not file.endswith(EXECUTABLE_SUFFIXES):
                continue
            compiled = bytecode_source(name)
            if compiled is None or compiled[0] not in listed:
                problems.append(f"{name}: an executable file that is not part of this build")
                continue
            problem = bytecode_problem(digests, name, *compiled)
            if problem is not None:
                problems.append(problem)
    return problems


# -- bytecode beside the sources -------------------------------------------------------------
# Python writes ``__pycache__/__init__.<tag>.pyc`` the first time a gateway imports the
# runtime by name, and prefers a ``.pyc`` to the source: an unchecked-hash one without reading
# the source at all, a timestamp one whenever its header names the source's mtime and size
# (which whoever can write the build can set). So a ``.pyc`` is part of a build only when its
# code is byte for byte what this Python compiles from the checked source at its path;
# whatever its header says, the import system then runs that code or compiles the source.
# Comparing bytes needs a compile (3 ms for ``__init__.py``), so an accepted file is
# remembered in this user's code cache (an entry keyed by both digests, the path and the
# interpreter, which verifies under the cache's secret like every other entry).
_PYC_LAYOUT: Final = "toolc-runtime-pyc-1"
_PYC_OPTIMIZE: Final[Mapping[str, int]] = {"": 0, "opt-1": 1, "opt-2": 2}


def bytecode_source(name: str) -> tuple[str, int] | None:
    """The source ``name`` (``<dir>/__pycache__/<stem>.<tag>[.opt-N].pyc``) is compiled from
    by this Python, and its ``-O`` level; None for anything else, another interpreter's
    bytecode included (this Python cannot tell what that would run)."""
    folder, _, file = name.rpartition("/")
    parent, _, cache = folder.rpartition("/")
    stem, _, rest = file.partition(".")
    tag = f"{sys.implementation.cache_tag}."
    if cache != "__pycache__" or not rest.startswith(tag) or not rest.endswith(".pyc"):
        return None
    level = _PYC_OPTIMIZE.get(rest[len(tag) : -len(".pyc")])
    if level is None:
        return None
    return (f"{parent}/" if parent else "") + f"{stem}.py", level


def bytecode_problem(digests: Digests, name: str, source: str, optimize: int) -> str | None:
    """None when the bytecode file ``name`` holds exactly the code this Python compiles from
    ``source`` (read and checked against ``digests`` when they list it) at the path the
    import system gives it; else what is wrong."""
    refused = (
        f"{name}: bytecode that is not what this Python compiles from {source} (planted, "
        "or written by another Python or from another path): delete it"
    )
    raw = _read_plain(os.path.join(digests.root, name), _CODE_MAX_BYTES)
    try:
        text = read_checked(digests, source) if source in digests.files else None
    except DataMismatchError:
        return refused  # the source's own mismatch is reported where it is read
    path = os.path.abspath(os.path.join(digests.root, *source.split("/")))
    if text is None:
        text = _read_plain(path, _CODE_MAX_BYTES)
    if raw is None or text is None or raw[:4] != _magic():
        return refused
    payload = raw[16:]
    paths = dict.fromkeys((path, os.path.realpath(path)))
    return None if any(_same_code(text, p, optimize, payload) for p in paths) else refused


def _magic() -> bytes:
    from importlib.util import MAGIC_NUMBER  # noqa: PLC0415 - only when a .pyc is there

    return MAGIC_NUMBER


def _same_code(source: bytes, path: str, optimize: int, payload: bytes) -> bool:
    """Whether ``payload`` is the marshalled code of ``source`` compiled at ``path``."""
    cache = _code_cache()
    parts = (
        _PYC_LAYOUT,
        hashlib.sha256(source).hexdigest(),
        hashlib.sha256(payload).hexdigest(),
        path,
        str(optimize),
    )
    key = _code_key("\0".join(parts))
    if cache is not None and _load_entry(*cache, key) == b"":
        return True
    try:
        code = compile(source, path, "exec", dont_inherit=True, optimize=optimize)
    except (SyntaxError, ValueError):
        return False
    if marshal.dumps(code) != payload:
        return False
    if cache is not None:
        _store_entry(*cache, key, b"")
    return True


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


# -- the code cache ------------------------------------------------------------------------
# compile() of the static modules is most of an import (13 of 35 ms at the bench's large
# size), so their code objects are kept per user: $XDG_CACHE_HOME/toolc (else
# ~/.cache/toolc) holds ``runtime-code/<key>`` entries, each the HMAC-SHA256 of its key and
# payload under ``runtime-secret`` (32 random bytes, mode 0600, made on first use) followed
# by the payload, the marshalled code. The key is the sha256 of the verified source's digest,
# the interpreter (version, cache tag, marshal format) and its -O level. A code object runs
# only after its source was read and checked as before, and only when its entry verifies
# under this user's secret: a missing, planted, damaged or foreign entry, or a secret that
# is not this user's own (their file, no access for others), means compile() as before; a
# cache that cannot be written (a read-only home) only costs the compile.
# TOOLC_CODE_CACHE=off turns it off (PYTHONDONTWRITEBYTECODE, Python's switch for .pyc files
# beside modules, does not: it is often set in images whose home is the place for caches).
_CODE_LAYOUT: Final = "toolc-runtime-code-1"
_CODE_SECRET_BYTES: Final = 32
_CODE_MAX_BYTES: Final = 64 << 20  # larger is not an entry this cache wrote
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK: Final = getattr(os, "O_NONBLOCK", 0)  # a planted FIFO cannot block the import
_CODE_CACHE: Final[list[tuple[str, bytes] | None]] = []  # (entries' directory, secret)


def _code(file: str, path: str) -> types.CodeType:
    """The code of ``file`` (a file of this build, run as ``path``): its bytes read and
    checked, then compiled, or the code this user's cache holds for those very bytes."""
    source = read_verified(file)
    cache = _code_cache()
    if cache is None:
        return compile(source, path, "exec", dont_inherit=True)
    folder, secret = cache
    key = _code_key(FILE_SHA256[file])
    code = _load_code(folder, secret, key)
    if code is not None:
        return _at_path(code, path)
    code = compile(source, path, "exec", dont_inherit=True)
    _store_code(folder, secret, key, code)
    return code


def _code_key(digest: str) -> str:
    """What a code object depends on: the source and the interpreter that compiled it (its
    full version string names a development build's commit too; bytecode changes only
    from one to another)."""
    parts = (
        _CODE_LAYOUT,
        digest,
        sys.version,
        str(sys.implementation.cache_tag),
        str(marshal.version),
        str(sys.flags.optimize),
    )
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _code_tag(secret: bytes, key: str, payload: bytes) -> bytes:
    return hmac.digest(secret, key.encode() + b"\0" + payload, "sha256")


def _code_cache() -> tuple[str, bytes] | None:
    """This user's code cache (found once per import of the runtime), None when off."""
    if not _CODE_CACHE:
        _CODE_CACHE.append(_find_code_cache())
    return _CODE_CACHE[0]


def _find_code_cache() -> tuple[str, bytes] | None:
    if os.environ.get("TOOLC_CODE_CACHE", "").strip().lower() in ("0", "off", "no", "false"):
        return None
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = os.path.join(home, "toolc")
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
        if not _own(os.stat(root), 0):
            return None  # another user's directory (HOME left unchanged by sudo, say)
    except OSError:
        return None
    secret = _code_secret(os.path.join(root, "runtime-secret"))
    return (os.path.join(root, "runtime-code"), secret) if secret else None


def _own(st: os.stat_result, others: int) -> bool:
    """This user's own, and none of the ``others`` mode bits set (POSIX; elsewhere a user's
    profile directory is their own)."""
    euid = getattr(os, "geteuid", None)
    return euid is None or (st.st_uid == euid() and not st.st_mode & others)


def _code_secret(path: str) -> bytes:
    """The secret at ``path``, made once; empty when it is not this user's private file
    (another user's file, or one others can read, or a link) or cannot be read."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(os.urandom(_CODE_SECRET_BYTES))
    except OSError:
        pass  # there already (or a read-only home): read it
    secret = _read_own(path, 0o077, _CODE_SECRET_BYTES + 1)
    return secret if secret is not None and len(secret) == _CODE_SECRET_BYTES else b""


def _read_own(path: str, others: int, limit: int) -> bytes | None:
    """The bytes of a regular file of this user's (``others``: see _own), at most ``limit``
    of them; None for anything else. Links are not followed, a FIFO does not block."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            st = os.fstat(file.fileno())
            if not stat.S_ISREG(st.st_mode) or not _own(st, others) or st.st_size > limit:
                return None
            return file.read(limit)
    except OSError:
        return None


def _read_plain(path: str, limit: int) -> bytes | None:
    """The bytes of a regular file (at most ``limit``), whoever owns it; None for anything
    else. A FIFO does not block."""
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            st = os.fstat(file.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
                return None
            return file.read(limit)
    except OSError:
        return None


def _load_code(folder: str, secret: bytes, key: str) -> types.CodeType | None:
    """The entry's code if it verifies under ``secret``, else None."""
    payload = _load_entry(folder, secret, key)
    if payload is None:
        return None
    try:
        code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, types.CodeType) else None


def _load_entry(folder: str, secret: bytes, key: str) -> bytes | None:
    """The payload of the entry ``key`` if it verifies under ``secret``, else None."""
    raw = _read_own(os.path.join(folder, key), 0, _CODE_MAX_BYTES)
    if raw is None:
        return None
    tag, payload = raw[:32], raw[32:]
    return payload if hmac.compare_digest(tag, _code_tag(secret, key, payload)) else None


def _store_code(folder: str, secret: bytes, key: str, code: types.CodeType) -> None:
    _store_entry(folder, secret, key, marshal.dumps(code))


def _store_entry(folder: str, secret: bytes, key: str, payload: bytes) -> None:
    """Write an entry (a temporary file renamed into place); failing only costs speed."""
    tmp = os.path.join(folder, f".{key}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as file:
            file.write(_code_tag(secret, key, payload) + payload)
        os.replace(tmp, os.path.join(folder, key))
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _at_path(code: types.CodeType, path: str) -> types.CodeType:
    """``code`` as compiled at ``path`` (an entry may come from a build elsewhere)."""
    if code.co_filename == path:
        return code
    consts = tuple(
        _at_path(c, path) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(co_filename=path, co_consts=consts)


def _exec_static(name: str) -> types.ModuleType:
    """Run the static module ``name`` from its verified bytes, as ``<package>.<name>``."""
    path = os.path.join(_HERE, f"{name}.py")
    code = _code(f"{name}.py", path)
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
        code = _code(self.file, path)
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
