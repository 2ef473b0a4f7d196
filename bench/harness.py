"""What every measurement shares: repository paths, the run modes (full, quick) and the
measured subprocess (wall time, the peak RSS of its largest process, and the peak memory of
it and its workers together; workers are ``python -m bench.run --worker KIND ...``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHIPPED_DEFINITIONS = REPO / "definitions"
DEFAULT_OUT = REPO / "bench" / "results"
RUNTIME_PACKAGE = "toolc_runtime"
GIB = 1024**3

@dataclass(frozen=True, slots=True, kw_only=True)
class Mode:
    """How much work one run does."""

    name: str
    sizes: tuple[str, ...]
    scaling_size: str
    contexts: int
    runtime_reps: int
    reference_reps: int
    import_runs: int
    compile_repeat: int  # compiles per figure; the fastest counts (the first pays for .pyc files)
    wrap_calls: int  # back-to-back wrapped calls per timing loop
    wrap_samples: int  # timing loops per variant (the median counts)


FULL = Mode(
    name="full",
    sizes=("small", "medium", "large"),
    scaling_size="large",
    contexts=1000,
    runtime_reps=20,
    reference_reps=3,
    import_runs=5,
    compile_repeat=2,
    wrap_calls=2000,
    wrap_samples=15,
)
QUICK = Mode(
    name="quick",
    sizes=("small", "medium"),
    scaling_size="medium",
    contexts=1000,
    runtime_reps=10,
    reference_reps=1,
    import_runs=5,
    compile_repeat=2,
    wrap_calls=1000,
    wrap_samples=7,
)

def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)

@dataclass(frozen=True, slots=True, kw_only=True)
class Proc:
    returncode: int
    wall_s: float
    peak_rss_bytes: int  # the largest single process of the tree (wait4's ru_maxrss)
    peak_tree_bytes: int  # every process of the tree together (sampled PSS; 0: unknown)
    cpu_s: float  # user + system time of the child and the workers it waited for
    stdout: str
    stderr: str


PSS_INTERVAL_S = 0.25


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return found


def _pss(pid: int) -> int:
    """A process's proportional set size in bytes (pages shared after a fork count once
    over the processes sharing them, so the sum over a tree is its memory); 0 once gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def tree_pss(root: int) -> int:
    """The PSS of ``root`` and all its descendants now."""
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _pss(pid)
        todo += _children(pid)
    return total


class TreeSampler:
    """The peak of ``tree_pss`` over a process's life, sampled every ``PSS_INTERVAL_S`` on
    a thread (Linux's ``/proc``; elsewhere the peak stays 0, unknown)."""

    def __init__(self, pid: int) -> None:
        self.peak = 0
        self._pid = pid
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(PSS_INTERVAL_S):
            self.peak = max(self.peak, tree_pss(self._pid))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak

def run_measured(cmd: Sequence[str], *, timeout: float = 900.0) -> Proc:
    """Run ``cmd``; wall time, the peak RSS of its largest process (``wait4``: the child
    or a worker it waited for) and the sampled peak PSS of all its processes together."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(REPO)  # so workers can import bench; toolc comes from the venv
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        sampler = TreeSampler(proc.pid)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
            tree = sampler.stop()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Proc(
            returncode=proc.returncode,
            wall_s=wall,
            peak_rss_bytes=usage.ru_maxrss * 1024,  # KiB on Linux
            peak_tree_bytes=tree,
            cpu_s=usage.ru_utime + usage.ru_stime,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )

def toolc_cli() -> list[str]:
    exe = Path(sys.executable).parent / "toolc"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("toolc")
    if found:
        return [found]
    raise SystemExit("toolc is not installed (make build installs it into .venv)")

def worker(*args: str) -> list[str]:
    return [sys.executable, "-m", "bench.run", "--worker", *args]

def last_json_line(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            parsed: dict[str, Any] = json.loads(line)
            return parsed
    raise ValueError("worker printed no JSON result")

def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])

def mode_fields(mode: Mode) -> dict[str, Any]:
    return {f: getattr(mode, f) for f in Mode.__dataclass_fields__}
