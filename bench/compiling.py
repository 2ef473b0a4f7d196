"""Compile time and peak memory (``toolc.build`` in a fresh worker), the no-op rebuild (``toolc
build`` again into the same directory), and the size of the build directory and its input."""

from __future__ import annotations

import hashlib
import importlib
import json
import shutil
import time
from pathlib import Path
from typing import Any

from bench.harness import last_json_line, run_measured, tail, toolc_cli, worker


def compile_once(defs: Path, out: Path) -> dict[str, Any]:
    """Compile via ``toolc.build`` in a fresh subprocess: API time, process time, peak RSS."""
    if out.exists():
        shutil.rmtree(out)
    proc = run_measured(worker("compile", str(defs), str(out)))
    result: dict[str, Any] = {
        "process_s": round(proc.wall_s, 4),
        "peak_rss_bytes": proc.peak_rss_bytes,
    }
    try:
        result.update(last_json_line(proc.stdout))
    except ValueError:
        result["error"] = f"worker exited {proc.returncode}: {tail(proc.stderr)}"
    if proc.returncode != 0 and "error" not in result:
        result["error"] = f"worker exited {proc.returncode}: {tail(proc.stderr)}"
    return result

def compile_best(defs: Path, out: Path, repeat: int) -> dict[str, Any]:
    """The fastest of ``repeat`` compiles (memory: the largest peak)."""
    runs = [compile_once(defs, out) for _ in range(max(1, repeat))]
    failed = [r for r in runs if "error" in r]
    if failed:
        return failed[0]
    best = min(runs, key=lambda r: float(r["api_s"]))
    best["peak_rss_bytes"] = max(int(r["peak_rss_bytes"]) for r in runs)
    best["runs_api_s"] = [r["api_s"] for r in runs]
    return best

def snapshot(root: Path) -> dict[str, tuple[int, str]]:
    """relative path -> (mtime_ns, sha256) of every file below ``root``."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            out[path.relative_to(root).as_posix()] = (path.stat().st_mtime_ns, digest)
    return out

def noop_rebuild(defs: Path, out: Path) -> dict[str, Any]:
    """``toolc build`` again into the same directory (what ``make build`` does twice)."""
    before = snapshot(out)
    proc = run_measured([*toolc_cli(), "build", str(defs), "-o", str(out)])
    after = snapshot(out)
    result: dict[str, Any] = {
        "process_s": round(proc.wall_s, 4),
        "peak_rss_bytes": proc.peak_rss_bytes,
        "files_rewritten": sum(1 for k, v in after.items() if before.get(k, (None,))[0] != v[0]),
        "output_changed": {k: v[1] for k, v in before.items()}
        != {k: v[1] for k, v in after.items()},
    }
    if proc.returncode != 0:
        result["error"] = f"toolc build exited {proc.returncode}: {tail(proc.stderr)}"
    return result

def artifact_size(out: Path) -> dict[str, int]:
    files = [p for p in out.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return {
        "bytes": sum(p.stat().st_size for p in files),
        "disk_bytes": sum(p.stat().st_blocks * 512 for p in files),
        "files": len(files),
    }

def definitions_size(defs: Path) -> dict[str, int]:
    files = [p for p in defs.rglob("*") if p.suffix in (".yaml", ".yml")]
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files)}

def compile_worker(defs: Path, out: Path) -> None:
    t0 = time.perf_counter()
    toolc = importlib.import_module("toolc")
    import_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    try:
        toolc.build(defs, out)
    except toolc.DefinitionsError as exc:
        print(json.dumps({"error": f"DefinitionsError: {tail(str(exc), 10)}"}))
        return
    api_s = time.perf_counter() - t1
    print(json.dumps({"api_s": round(api_s, 4), "toolc_import_s": round(import_s, 4)}))
