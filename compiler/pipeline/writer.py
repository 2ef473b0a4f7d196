"""Stage 6, write: publish a rendered file map into the output directory in one step.

The output path holds a complete build at every instant, old or new: the new build is written
into a hidden sibling directory, then swapped with the old one by one atomic directory exchange
(Linux ``renameat2(RENAME_EXCHANGE)``, macOS ``renamex_np(RENAME_SWAP)``); a first build is one
atomic rename. Leftovers of a killed build (hidden siblings with toolc's prefix) are removed by
the next build. Files and directories are created with the process umask, like any other file.

Every writer of an output holds its lock (``output_lock``, the one ``toolc.locks`` lock every
writer of ``build/`` shares) from its no-op check to the end of its swap, so a second build
into the same output waits instead of deleting the first one's live temporary directory. The
temporary directory is created once with ``os.mkdir`` and never re-created: if it vanishes
while being written, the build fails instead of swapping in a partial tree.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import secrets
import shutil
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from functools import cache
from pathlib import Path

from ..locks import LockTimeoutError, lock_path, locked

# Tests set this to inject a failure, a SIGKILL or another build at a named step, in order:
# "lock-busy" (only when another writer holds the lock; then it waits), "locked",
# "leftovers-removed", "tmp-created", "writing" (the first file is written, not the rest),
# "written", "swapped", "done", "unlocked" (the lock is released).
FAULT_HOOK: Callable[[str], None] | None = None
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # Linux renameat2 flag
_RENAME_SWAP = 2  # macOS renamex_np flag
_SYS_RENAMEAT2 = {"x86_64": 316, "aarch64": 276}


# The signature of a build (``toolc sign``), in the shape of OPA's bundle ``.signatures.json``:
# a file of the build directory that the manifest does not list (it signs the manifest), so
# the no-op check and ``build --check`` pass over it, and ``build`` carries it over when it
# republishes the very same build (``--force``). A changed build drops it: it no longer holds.
SIGNATURES = ".signatures.json"


class OutputDirError(ValueError):
    """The output path is not something toolc may replace (nothing was touched)."""


def check_output_dir(out: Path, definitions_dir: Path | None) -> None:
    """Refuse an output path whose replacement would delete something toolc does not own.

    Refused: a file; the definitions directory or a directory containing it; the current
    directory or one containing it; a non-empty directory without a toolc ``manifest.json``.
    ``--force`` does not change this. ``toolc pull`` has no definitions directory (None).
    """
    target = out.resolve()
    shown = out.as_posix()
    if target.exists() and not target.is_dir():
        raise OutputDirError(f"output {shown} is a file, not a build directory")
    if definitions_dir is not None:
        defs = definitions_dir.resolve()
        if defs == target or defs.is_relative_to(target):
            raise OutputDirError(f"output {shown} is or contains the definitions directory "
                                 f"{definitions_dir.as_posix()}")
    cwd = Path.cwd().resolve()
    if cwd == target or cwd.is_relative_to(target):
        raise OutputDirError(f"output {shown} is or contains the current directory")
    if target.is_dir() and any(target.iterdir()) and not is_toolc_build(target):
        raise OutputDirError(f"output {shown} is a non-empty directory that is not a toolc "
                             "build (no manifest.json written by toolc); refusing to replace it")


def is_toolc_build(path: Path) -> bool:
    """A directory holding a ``manifest.json`` that toolc wrote."""
    try:
        manifest = json.loads((path / "manifest.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(manifest, dict) and isinstance(manifest.get("files"), dict)
            and isinstance(manifest.get("toolc"), str) and "package" in manifest)


def _fault(step: str) -> None:
    if FAULT_HOOK is not None:
        FAULT_HOOK(step)


def _prefix(out: Path) -> str:
    return f".{out.name}.toolc-"


# Output locks this thread holds (resolved paths), so that ``publish`` inside a caller's
# ``output_lock`` does not wait for itself: flock conflicts between two descriptors even
# in one process, which is also what makes two threads' builds exclude each other.
_HELD = threading.local()


def _held() -> set[Path]:
    held: set[Path] | None = getattr(_HELD, "paths", None)
    if held is None:
        held = _HELD.paths = set()
    return held


@contextmanager
def output_lock(out: Path, *, timeout: float | None = None,
                on_wait: Callable[[Path], None] | None = None) -> Iterator[None]:
    """Hold the lock every writer of ``out`` shares (``toolc.locks``) for the block.

    Another holder makes this wait (``timeout=None``) or raise ``LockTimeoutError`` after
    ``timeout`` seconds; ``on_wait(lock_file)`` is called once before waiting. Re-entrant
    within one thread.
    """
    out = out.resolve()  # one lock per real directory, whatever path names it
    held = _held()
    if out in held:
        yield
        return
    with ExitStack() as stack:
        try:
            stack.enter_context(locked(out, timeout=0))
        except LockTimeoutError:
            _fault("lock-busy")
            if on_wait is not None:
                on_wait(lock_path(out))
            if timeout != 0:
                stack.enter_context(locked(out, timeout=timeout))
            else:
                raise
        held.add(out)
        try:
            _fault("locked")
            yield
        finally:
            held.discard(out)
    _fault("unlocked")


def remove_leftovers(out: Path) -> None:
    """Remove hidden siblings left by a killed build (toolc's exact prefix only); only
    called under the output lock, so no live build's directory is among them."""
    prefix = _prefix(out)
    for sibling in out.parent.glob(f"{prefix}*"):
        rest = sibling.name[len(prefix):]
        if sibling.is_dir() and not sibling.is_symlink() and rest.startswith(("new-", "old-")):
            shutil.rmtree(sibling, ignore_errors=True)


class PublishError(OSError):
    """The build's temporary directory was removed or replaced while it was written."""


FileMap = Mapping[str, str] | Mapping[str, bytes] | Mapping[str, str | bytes]


def publish(files: FileMap, out: Path, *, check: Callable[[Path], None] | None = None) -> None:
    """Write everything (text as UTF-8, bytes as they are) into a hidden sibling, then swap
    it with ``out`` atomically, under the output lock (waiting for another writer of ``out``).

    ``check(tmp)`` runs on the complete written directory just before the swap (``toolc
    pull`` verifies digests and the signature there): whatever it raises stops the publish,
    so what is checked is exactly what is swapped in. A failure before the swap leaves
    ``out`` untouched, so there is never a half-written build.
    """
    publish_with(lambda staging: staging.write_all(files), out, check=check)


def publish_with(fill: Callable[[Staging], None], out: Path, *,
                 check: Callable[[Path], None] | None = None) -> None:
    """``publish`` of whatever ``fill`` writes into the staging directory (``toolc build``
    writes files as they are compiled, so that no file map of a whole build is ever held);
    whatever ``fill`` raises leaves ``out`` untouched."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(out):
        _publish_locked(fill, out, check)


def _publish_locked(fill: Callable[[Staging], None], out: Path,
                    check: Callable[[Path], None] | None = None) -> None:
    remove_leftovers(out)
    _fault("leftovers-removed")
    tmp = out.parent / f"{_prefix(out)}new-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(tmp)  # mode 0o777 minus the umask, like any directory
    try:
        identity = _identity(tmp)
        _fault("tmp-created")
        try:
            fill(Staging(tmp, previous=out if out.is_dir() else None))
        except FileNotFoundError as exc:
            raise _vanished(tmp) from exc
        _fault("written")
        if check is not None:
            check(tmp)
        if _identity(tmp) != identity:
            raise _vanished(tmp)
        if out.exists():
            _swap(tmp, out)  # tmp now holds the old build
        else:
            os.rename(tmp, out)
        _fault("swapped")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _fault("done")


def _vanished(tmp: Path) -> PublishError:
    return PublishError(errno.ENOENT, "the build's temporary directory was removed or "
                        "replaced while it was written; nothing was published", str(tmp))


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


class Staging:
    """The hidden directory a build is written into before the swap. Directories are made
    one level at a time with ``os.mkdir`` (never ``parents=True``, which would quietly
    re-create a removed directory) and files are created exclusively, so nothing is written
    anywhere else.

    A file given with its sha256 that the build being replaced (``previous``) holds with
    the same bytes is linked to it instead of written (the swap then removes only a name):
    an incremental build rewrites just what changed. The old file is hashed through the new
    link, so a file edited in the old build is never carried over."""

    def __init__(self, tmp: Path, previous: Path | None = None) -> None:
        self.tmp = tmp
        self.previous = previous
        self._made: set[str] = set()
        self._written = 0

    def write(self, rel: str, data: str | bytes, digest: str | None = None) -> None:
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            sub = "/".join(parts[:depth])
            if sub not in self._made:
                os.mkdir(self.tmp / sub)
                self._made.add(sub)
        raw = data if isinstance(data, bytes) else data.encode("utf-8")
        if digest is None or not self._linked(rel, len(raw), digest):
            with open(self.tmp / rel, "xb") as file:
                file.write(raw)
        self._written += 1
        if self._written == 1:
            _fault("writing")

    def _linked(self, rel: str, size: int, digest: str) -> bool:
        """Link ``rel`` to the previous build's file when it holds exactly these bytes."""
        if self.previous is None:
            return False
        old, new = self.previous / rel, self.tmp / rel
        try:
            st = os.lstat(old)
            if not stat.S_ISREG(st.st_mode) or st.st_size != size:
                return False
            os.link(old, new)
        except OSError:
            return False
        with open(new, "rb") as file:
            if hashlib.file_digest(file, "sha256").hexdigest() == digest:
                return True
        new.unlink()
        return False

    def write_all(self, files: FileMap) -> None:
        for rel, data in sorted(files.items()):
            self.write(rel, data)

    def read(self, rel: str) -> bytes:
        return (self.tmp / rel).read_bytes()

    def files(self) -> list[str]:
        """The files written so far (relative paths)."""
        return sorted(p.relative_to(self.tmp).as_posix() for p in self.tmp.rglob("*")
                      if p.is_file())

    def clear(self) -> None:
        """Remove everything written (the directory itself stays)."""
        for child in list(self.tmp.iterdir()):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        self._made.clear()


def _swap(new: Path, out: Path) -> None:
    """Exchange two directories atomically where the platform can; else two renames."""
    exchange = _exchange_function()
    if exchange is not None:
        err = exchange(os.fsencode(new), os.fsencode(out))
        if err == 0:
            return
        if err not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), str(out))
    # No atomic exchange (other platforms, some file systems): out is missing between the
    # two renames, and a kill there leaves the old build under the hidden old- name.
    old = out.parent / f"{_prefix(out)}old-{os.getpid()}-{secrets.token_hex(4)}"
    os.rename(out, old)
    os.rename(new, out)
    os.rename(old, new)


@cache
def _exchange_function() -> Callable[[bytes, bytes], int] | None:
    """``f(a, b) -> errno`` swapping two paths atomically, or None on this platform."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return None
    libc = ctypes.CDLL(libc_name, use_errno=True)
    if sys.platform.startswith("linux"):
        renameat2 = getattr(libc, "renameat2", None)
        if renameat2 is not None:
            def call(a: bytes, b: bytes) -> int:
                rc = renameat2(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
                return 0 if rc == 0 else ctypes.get_errno()
            return call
        number = _SYS_RENAMEAT2.get(os.uname().machine)
        if number is None:
            return None

        def syscall(a: bytes, b: bytes) -> int:
            rc = libc.syscall(number, _AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
            return 0 if rc == 0 else ctypes.get_errno()
        return syscall
    renamex = getattr(libc, "renamex_np", None) if sys.platform == "darwin" else None
    if renamex is None:
        return None

    def swap(a: bytes, b: bytes) -> int:
        return 0 if renamex(a, b, _RENAME_SWAP) == 0 else ctypes.get_errno()
    return swap


def matches_disk(out: Path, inputs_digest: str) -> bool:
    """True when ``out`` was built from the same inputs and no output file was touched."""
    try:
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
        if manifest.get("inputs_sha256") != inputs_digest:
            return False
        for rel, digest in manifest["files"].items():
            if hashlib.sha256((out / rel).read_bytes()).hexdigest() != digest:
                return False
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    expected = set(manifest["files"]) | {"manifest.json"}
    return _on_disk(out) == expected


def _on_disk(out: Path) -> set[str]:
    """The build's files on disk, less what is not part of its content: bytecode caches
    and the signature (which signs the manifest, and so cannot be listed in it)."""
    return {p.relative_to(out).as_posix() for p in out.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts} - {SIGNATURES}


def diff_disk(files: Mapping[str, str], out: Path) -> list[str]:
    """Paths that differ between the rendered map and ``out`` (for ``toolc build --check``)."""
    actual = _on_disk(out) if out.is_dir() else set()
    changed = sorted(set(files) ^ actual)
    for rel in sorted(set(files) & actual):
        if (out / rel).read_bytes() != files[rel].encode("utf-8"):
            changed.append(rel)
    return sorted(changed)
