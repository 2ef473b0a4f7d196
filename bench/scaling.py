"""How compile time and artifact size grow when one dimension of a generated size doubles."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from bench.compiling import artifact_size, compile_best, definitions_size
from bench.generate import SCALING_DIMENSIONS, double, generate
from bench.harness import log


def measure_scaling(
    base: dict[str, Any], dims: dict[str, int], work: Path, seed: int, repeat: int
) -> dict[str, Any]:
    """Compile time and artifact size when each dimension doubles on its own."""
    base_s = float(base["compile"]["api_s"])
    base_bytes = int(base["artifact"]["bytes"])
    out: dict[str, Any] = {
        "base": {
            "dims": dims,
            "compile_s": base_s,
            "artifact_bytes": base_bytes,
            "input_bytes": base["definitions"]["bytes"],
        }
    }
    for dim in SCALING_DIMENSIONS:
        doubled = double(dims, dim)
        defs = work / f"defs-x2-{dim}"
        log(f"[scaling] {dim} x2: generate + compile")
        generate(defs, seed=seed, **doubled)
        built = work / f"build-x2-{dim}"
        comp = compile_best(defs, built, repeat)
        entry: dict[str, Any] = {"dims": doubled, "input_bytes": definitions_size(defs)["bytes"]}
        if "error" in comp:
            entry["error"] = comp["error"]
        else:
            size = artifact_size(built)["bytes"]
            entry.update(
                compile_s=comp["api_s"],
                compile_ratio=round(float(comp["api_s"]) / base_s, 3),
                artifact_bytes=size,
                artifact_ratio=round(size / base_bytes, 3),
                peak_rss_bytes=comp["peak_rss_bytes"],
            )
        entry["input_ratio"] = round(entry["input_bytes"] / out["base"]["input_bytes"], 3)
        out[dim] = entry
        shutil.rmtree(defs, ignore_errors=True)
        shutil.rmtree(built, ignore_errors=True)
    return out
