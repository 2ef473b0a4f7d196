"""The generated runtime's import time, in fresh interpreters (the first also writes .pyc files)."""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from bench.harness import RUNTIME_PACKAGE, last_json_line, run_measured, tail

_IMPORT_SNIPPET = """
import json, sys, time
sys.path.insert(0, {out!r})
t0 = time.perf_counter_ns()
import {package} as rt
t1 = time.perf_counter_ns()
rt.resolve()
t2 = time.perf_counter_ns()
out = {{"import_ns": t1 - t0, "first_resolve_ns": t2 - t1}}
# the first request that reaches a group: reads and checks one table shard (sharded builds)
import pathlib
tables = json.loads((pathlib.Path({out!r}) / {package!r} / "tables.json").read_text())
for name, ch in sorted(tables["channels"].items()) if tables.get("sharded") else ():
    if ch.get("groups"):
        shard = pathlib.Path({out!r}) / {package!r} / ch["groups"]
        head, first = shard.read_text().split("\\n")[:2]
        group = json.loads(first.split("\\t")[0])
        t3 = time.perf_counter_ns()
        # the session key names the group: 2026.9 trusts a group id only then
        rt.resolve(message_provider=name, group_id=group, session_key=f"{{name}}:group:{{group}}")
        out["first_shard_resolve_ns"] = time.perf_counter_ns() - t3
        out["shard_groups"] = json.loads(head)["exact"]
        out["shard_bytes"] = shard.stat().st_size
        break
print(json.dumps(out))
"""

def import_time(out: Path, runs: int) -> dict[str, Any]:
    """Import the runtime in fresh interpreters; the first run also writes the .pyc files."""
    code = _IMPORT_SNIPPET.format(out=str(out), package=RUNTIME_PACKAGE)
    samples = []
    for _ in range(max(1, runs) + 1):
        proc = run_measured([sys.executable, "-c", code], timeout=120)
        if proc.returncode != 0:
            return {"error": f"import failed: {tail(proc.stderr)}"}
        samples.append(last_json_line(proc.stdout))
    cold, warm = samples[0], samples[1:]
    return {
        "cold_ms": round(cold["import_ns"] / 1e6, 3),
        "median_ms": round(statistics.median(s["import_ns"] for s in warm) / 1e6, 3),
        "runs_ms": [round(s["import_ns"] / 1e6, 3) for s in warm],
        "first_resolve_ms": round(statistics.median(s["first_resolve_ns"] for s in warm) / 1e6, 3),
        **_shard_figures(warm),
    }


def _shard_figures(warm: list[dict[str, Any]]) -> dict[str, Any]:
    """The first resolve that reaches a group (one table shard read and checked), median."""
    hits = [s for s in warm if "first_shard_resolve_ns" in s]
    if not hits:
        return {}
    return {
        "first_shard_resolve_ms": round(
            statistics.median(s["first_shard_resolve_ns"] for s in hits) / 1e6, 3
        ),
        "shard_groups": hits[0]["shard_groups"],
        "shard_bytes": hits[0]["shard_bytes"],
    }
