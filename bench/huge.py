"""``make bench-huge``: the million-group size, and the 100,000-group baselines in the same run.

Opt-in (not part of ``make bench``). Budget on the project's 2-core, 24 GiB machine: about
15 minutes of wall time when the machine is otherwise idle (11 min 34 s measured on
2026-11-28), and about 4.5 GiB of disk in a temporary directory (removed at the end;
``--keep DIR`` keeps it): the huge definitions (413 MB of YAML: 20 channel files and a few
others) and two builds of them (about 1.7 GB each). Per size:

* ``xlarge`` (the issue's 100,000-group baseline: the large size with 100,000 groups and
  2,000 agents): a clean compile (wall, peak RSS), runtime import, ``toolc diff`` of a
  one-agent, one-group change, and one changed group rebuilt through the incremental cache
  beside a clean build (ratio; the bytes must be the same).
* ``huge`` (``bench.generate.SIZES["huge"]``): two clean compiles, whose builds must be
  byte-identical (one digest over every file), peak RSS, runtime import.

Writes ``bench/results/huge.json`` and prints a table; exits 1 when a compile fails or two
builds that must be the same are not.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.compiling import compile_once, definitions_size, incremental, tree_digest
from bench.contexts import draw_contexts, universe_of_build
from bench.diffing import measure_diff
from bench.generate import SIZES, generate
from bench.harness import DEFAULT_OUT, GIB, last_json_line, log, run_measured, tail, worker
from bench.importing import import_time
from bench.report import machine, write_json

XLARGE = {**SIZES["large"], "groups": 100_000, "agents": 2000}
# The targets for these sizes (2-core machine).
HUGE_COMPILE_S_MAX = 300.0
HUGE_PEAK_RSS_MAX = 4 * GIB
INCREMENTAL_RATIO_MAX = 0.05
DIFF_XLARGE_S_MAX = 10.0
IMPORT_MS_MAX = 50.0
FIRST_SHARD_MS_MAX = 5.0
RESOLVE_P99_NS_MAX = 2000.0
# resolve contexts per size, and back-to-back calls per context (as bench.run's full mode)
CONTEXTS = 1000
REPS = 20


def _generate(name: str, dims: dict[str, int], work: Path, seed: int) -> tuple[Path, float]:
    defs = work / f"defs-{name}"
    log(f"[{name}] generate {dims}")
    t0 = time.perf_counter()
    generate(defs, seed=seed, **dims)
    return defs, round(time.perf_counter() - t0, 1)


def runtime_figures(name: str, out: Path, work: Path, seed: int) -> dict[str, Any]:
    """``resolve`` cached and uncached over contexts drawn from the build itself (the
    reference interpreter is not loaded at these sizes: its whole model is what the compiler
    no longer holds), in a fresh interpreter."""
    log(f"[{name}] resolve latency ({CONTEXTS} contexts drawn from the build)")
    contexts = draw_contexts(universe_of_build(out), CONTEXTS, f"{seed}:contexts:{name}")
    contexts_file = work / f"contexts-{name}.json"
    contexts_file.write_text(json.dumps(contexts))
    proc = run_measured(worker("runtime-latency", str(out), str(contexts_file), str(REPS)),
                        timeout=1800)
    try:
        return last_json_line(proc.stdout)
    except ValueError:
        return {"error": f"latency worker exited {proc.returncode}: {tail(proc.stderr)}"}


def measure_xlarge(work: Path, seed: int) -> dict[str, Any]:
    defs, gen_s = _generate("xlarge", XLARGE, work, seed)
    out = work / "build-xlarge"
    result: dict[str, Any] = {"dims": XLARGE, "generate_s": gen_s,
                              "definitions": definitions_size(defs)}
    log("[xlarge] compile (clean)")
    result["compile"] = compile_once(defs, out)
    if "error" in result["compile"]:
        return result
    log("[xlarge] runtime import")
    result["import"] = import_time(out, 3)
    result["resolve"] = runtime_figures("xlarge", out, work, seed)
    log("[xlarge] toolc diff")
    result["diff"] = measure_diff("xlarge", defs, out, work)
    log("[xlarge] incremental rebuild (one group changed) beside a clean build")
    result["incremental"] = incremental(defs, work)
    return result


def measure_huge(work: Path, seed: int) -> dict[str, Any]:
    defs, gen_s = _generate("huge", SIZES["huge"], work, seed)
    result: dict[str, Any] = {"dims": SIZES["huge"], "generate_s": gen_s,
                              "definitions": definitions_size(defs)}
    runs = []
    for i in (1, 2):
        out = work / f"build-huge-{i}"
        log(f"[huge] compile {i} of 2 (clean)")
        run = compile_once(defs, out, timeout=3600.0)
        if "error" in run:
            result["compile"] = run
            return result
        run["digest"] = tree_digest(out)
        runs.append(run)
    result["compile"] = min(runs, key=lambda r: float(r["api_s"]))
    result["compile"]["peak_rss_bytes"] = max(int(r["peak_rss_bytes"]) for r in runs)
    result["compile"]["peak_tree_bytes"] = max(int(r["peak_tree_bytes"]) for r in runs)
    result["compile"]["runs_api_s"] = [r["api_s"] for r in runs]
    result["identical"] = runs[0]["digest"] == runs[1]["digest"]
    log("[huge] runtime import")
    result["import"] = import_time(work / "build-huge-1", 3)
    result["resolve"] = runtime_figures("huge", work / "build-huge-1", work, seed)
    shutil.rmtree(work / "build-huge-2", ignore_errors=True)
    return result


def _row(label: str, value: Any, unit: str = "", limit: str = "") -> str:
    text = "-" if value is None else (f"{value:,.3g}" if isinstance(value, float) else str(value))
    return f"  {label:<40} {text + unit:>14}  {limit}"


def _runs(runs: list[float] | None) -> str:
    """The runs a best-of figure is the fastest of."""
    return "" if not runs else "best of " + " / ".join(f"{r:.3g}" for r in runs) + " s"


def _runtime_rows(size: dict[str, Any]) -> list[str]:
    imp, res = size.get("import") or {}, size.get("resolve") or {}
    cached, uncached = res.get("runtime") or {}, res.get("runtime_uncached") or {}

    def us(stats: dict[str, Any], key: str) -> Any:
        return None if key not in stats else stats[key] / 1000

    return [
        _row("runtime import (median)", imp.get("median_ms"), " ms",
             f"target <= {IMPORT_MS_MAX:g} ms"),
        _row("first resolve reaching a shard", imp.get("first_shard_resolve_ms"), " ms",
             f"target <= {FIRST_SHARD_MS_MAX:g} ms ({imp.get('shard_groups', '-')} groups, "
             f"{imp.get('shard_bytes', 0) / 2**20:.2f} MiB)"),
        _row("resolve cached median", us(cached, "median_ns"), " us"),
        _row("resolve cached p99", us(cached, "p99_ns"), " us",
             f"target <= {RESOLVE_P99_NS_MAX / 1000:g} us"),
        _row("resolve uncached median", us(uncached, "median_ns"), " us"),
        _row("resolve uncached p99", us(uncached, "p99_ns"), " us"),
    ]


def report(results: dict[str, Any]) -> str:
    lines = []
    x, h = results.get("xlarge") or {}, results.get("huge") or {}
    if x:
        c, inc = x.get("compile") or {}, x.get("incremental") or {}
        lines += [
            "xlarge (100,000 groups, 2,000 agents): the baselines",
            _row("compile (toolc.build, clean)", c.get("api_s"), " s"),
            _row("compile CPU (all processes)", c.get("cpu_s"), " s"),
            _row("compile peak RSS, largest process", (c.get("peak_rss_bytes") or 0) / 2**20,
                 " MiB"),
            _row("compile peak memory, all processes", (c.get("peak_tree_bytes") or 0) / 2**20,
                 " MiB", "sampled PSS"),
            *_runtime_rows(x),
            _row("toolc diff", (x.get("diff") or {}).get("wall_s"), " s",
                 f"target <= {DIFF_XLARGE_S_MAX:g} s"),
            _row("incremental (1 group changed)", inc.get("incremental_api_s"), " s",
                 _runs(inc.get("incremental_runs_api_s"))),
            _row("clean build, same run", inc.get("clean_api_s"), " s",
                 _runs(inc.get("clean_runs_api_s"))),
            _row("incremental / clean", inc.get("ratio"), "",
                 f"target <= {INCREMENTAL_RATIO_MAX:g}"),
            _row("incremental / clean, CPU", inc.get("cpu_ratio"), "", "all processes"),
            _row("incremental = clean bytes", inc.get("identical")),
        ]
    if h:
        c = h.get("compile") or {}
        lines += [
            "huge (1,000,000 groups over 100 channel accounts, 2,000 agents, 2,000 tools)",
            _row("input YAML", (h.get("definitions") or {}).get("bytes", 0) / 2**20, " MiB"),
            _row("compile (toolc.build, clean, best of 2)", c.get("api_s"), " s",
                 f"target <= {HUGE_COMPILE_S_MAX:g} s"),
            _row("compile CPU (all processes)", c.get("cpu_s"), " s"),
            _row("compile peak RSS, largest process", (c.get("peak_rss_bytes") or 0) / 2**30,
                 " GiB", f"target <= {HUGE_PEAK_RSS_MAX / GIB:g} GiB"),
            _row("compile peak memory, all processes", (c.get("peak_tree_bytes") or 0) / 2**30,
                 " GiB", f"sampled PSS; target <= {HUGE_PEAK_RSS_MAX / GIB:g} GiB"),
            _row("two builds byte-identical", h.get("identical")),
            *_runtime_rows(h),
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.huge", description=__doc__.split(
        "\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it")
    parser.add_argument("--sizes", default="xlarge,huge", help="comma-separated: xlarge,huge")
    args = parser.parse_args(argv)
    sizes = [s for s in args.sizes.split(",") if s]
    started = time.perf_counter()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="toolc-bench-huge-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if "xlarge" in sizes:
            results["xlarge"] = measure_xlarge(work, args.seed)
        if "huge" in sizes:
            results["huge"] = measure_huge(work, args.seed)
    elapsed = round(time.perf_counter() - started, 1)
    write_json(args.out / "huge.json", {"seed": args.seed, "elapsed_s": elapsed,
                                        "machine": machine(), "sizes": results})
    print(f"toolc bench-huge (seed {args.seed}, {elapsed} s)")
    print(report(results))
    failed = any("error" in (r.get("compile") or {}) for r in results.values())
    differ = results.get("huge", {}).get("identical") is False or (
        results.get("xlarge", {}).get("incremental") or {}).get("identical") is False
    return 1 if failed or differ else 0


if __name__ == "__main__":
    sys.exit(main())
