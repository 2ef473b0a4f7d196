"""What every measurement shares: repository paths, the run modes (full, quick) and the
measured subprocess (wall time and peak RSS of exactly that child; workers are
``python -m bench.run --worker KIND ...``)."""

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
    peak_rss_bytes: int
    stdout: str
    stderr: str

def run_measured(cmd: Sequence[str], *, timeout: float = 900.0) -> Proc:
    """Run ``cmd``; wall time and the peak RSS of exactly this child (``wait4``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(REPO)  # so workers can import bench; toolc comes from the venv
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Proc(
            returncode=proc.returncode,
            wall_s=wall,
            peak_rss_bytes=usage.ru_maxrss * 1024,  # KiB on Linux
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
