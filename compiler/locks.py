"""One lock mechanism for every file or directory toolc rewrites in place.

Writers of the same target (two ``toolc build`` runs into one ``build/``, two ``toolc identity
add`` on one identities file, later ``toolc pull`` and the incremental cache) take the same
advisory lock: an ``flock`` on a hidden sibling file ``.<name>.toolc-lock`` beside the target.
The lock file is created once and never deleted (deleting a lock file lets two processes hold
"the" lock on two different inodes); the kernel drops the lock when its holder exits, even on
SIGKILL, so a killed writer never leaves a stale lock behind.

Platforms without ``fcntl`` (Windows) fall back to ``msvcrt.locking`` on the same file.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

LOCK_SUFFIX: Final = ".toolc-lock"
# The registry poller's lock (``serve-mcp --watch oci://``): held for as long as one worker
# polls for all the workers sharing a build directory; a separate file, so that polling never
# holds up a writer of the build.
POLL_SUFFIX: Final = ".toolc-poll"
# How often a waiting writer retries a lock another process holds.
_POLL_SECONDS: Final = 0.05


class LockTimeoutError(RuntimeError):
    """Another toolc process held the lock for longer than the caller would wait."""


def lock_path(target: Path, suffix: str = LOCK_SUFFIX) -> Path:
    """The lock file that guards ``target`` (a hidden sibling, never inside the target)."""
    target = Path(os.path.abspath(target))
    return target.parent / f".{target.name}{suffix}"


@contextlib.contextmanager
def locked(target: Path, *, timeout: float | None = None,
           suffix: str = LOCK_SUFFIX) -> Iterator[Path]:
    """Hold the exclusive lock that guards ``target`` for the ``with`` block.

    ``timeout=None`` waits as long as it takes; ``timeout=0`` fails at once when another
    process holds it; otherwise wait at most ``timeout`` seconds. On timeout raises
    ``LockTimeoutError`` naming the lock file. Yields the lock file's path.
    """
    path = lock_path(target, suffix)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        _acquire(fd, path, timeout)
        try:
            yield path
        finally:
            _release(fd)
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path, timeout: float | None) -> None:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if _try_lock(fd, blocking=deadline is None):
            return
        if deadline is not None and time.monotonic() >= deadline:
            raise LockTimeoutError(
                f"another toolc process holds {path.as_posix()} (waited {timeout:g} s)")
        time.sleep(_POLL_SECONDS)


try:
    import fcntl

    def _try_lock(fd: int, *, blocking: bool) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    def _try_lock(fd: int, *, blocking: bool) -> bool:
        del blocking  # msvcrt has no unbounded wait; _acquire polls
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _release(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
