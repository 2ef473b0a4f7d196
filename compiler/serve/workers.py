"""``toolc serve-mcp --http ... --workers N``: N worker processes serving one port.

The supervisor binds the port (so a port in use is one error, before any worker starts),
makes the workers' shared session database (``mcp_sessions.SharedStore``) in a private
directory, and forks the workers (the standard library's ``multiprocessing``, fork start
method: each worker inherits the listening socket and the parsed options, and loads the build
itself). The kernel hands each new connection to one of the workers; since every worker
finds every session in the shared database, no sticky routing is needed. A worker that dies
is replaced (its counts of requests in flight are dropped); SIGTERM or SIGINT stops them all
(each as a single process stops; a second SIGINT is passed on, to stop without waiting) and
removes the directory.

Each worker polls the build directory and the identities file itself, as a single process
does; ``--watch`` already elects one poller among processes sharing ``--build``.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from .mcp_sessions import SharedStore

LOG: Final = logging.getLogger("toolc.mcp")
RESTART_PAUSE: Final = 1.0  # seconds between two restarts of a worker that keeps dying


def _state_dir() -> Path:
    """A private directory for the shared database, on tmpfs when the host has one."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="toolc-serve-mcp-", dir=base))


@contextlib.contextmanager
def stop_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """SIGTERM and SIGINT call ``handler`` while the block runs (in the main thread; elsewhere
    signals are the main thread's business), the previous handlers back afterwards.

    For uvicorn's ``Server.handle_exit``: uvicorn installs it itself only while it serves,
    and once it has stopped it raises the signal it handled again for the handler it found,
    which would be SIGTERM's default action (the process killed mid-shutdown) or a
    KeyboardInterrupt thrown into the event loop (a traceback)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _worker(run: Callable[..., None], options: Any, host: str, port: int, sock: Any) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor stops us with SIGTERM
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with contextlib.suppress(KeyboardInterrupt):
        run(options, host, port, sock)


def supervise(options: Any, host: str, port: int, bind: Callable[[str, int], socket.socket],
              run: Callable[..., None]) -> None:
    """Run ``options.workers`` HTTP workers on host:port until SIGTERM or SIGINT: ``bind``
    makes the listening socket, ``run(options, host, port, sock)`` is one worker's life."""
    sock = bind(host, port)
    state = _state_dir()
    SharedStore.create(state)
    options.state_dir = state
    context = multiprocessing.get_context("fork")
    workers: dict[int, Any] = {}
    stopping = False

    def stop(signum: int, frame: Any) -> None:
        nonlocal stopping
        if stopping and signum == signal.SIGINT:  # a second Ctrl-C: the workers hurry too
            for proc in workers.values():
                if proc.pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid, signal.SIGINT)
        stopping = True

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}

    def start(slot: int) -> None:
        proc = context.Process(target=_worker, args=(run, options, host, port, sock),
                               name=f"toolc-serve-mcp-worker-{slot}", daemon=False)
        proc.start()
        workers[slot] = proc

    bound = sock.getsockname()
    LOG.info("supervisor %d: %d workers on %s:%d (sessions shared in %s)", os.getpid(),
             options.workers, bound[0], bound[1], state)
    try:
        for slot in range(options.workers):
            start(slot)
        while not stopping:
            time.sleep(0.2)
            for slot, proc in list(workers.items()):
                if proc.is_alive() or stopping:
                    continue
                LOG.error("worker %d exited (%s); starting another", proc.pid, proc.exitcode)
                SharedStore.forget_worker(state, proc.pid)
                time.sleep(RESTART_PAUSE)
                start(slot)
    finally:
        for proc in workers.values():
            if proc.is_alive():
                proc.terminate()
        for proc in workers.values():
            proc.join(15)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
        shutil.rmtree(state, ignore_errors=True)
