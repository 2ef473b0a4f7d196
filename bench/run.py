"""Benchmark harness: compile synthetic deployments of three sizes and measure toolc.

``python -m bench.run [--quick] [--out bench/results]``

Sizes: small = the shipped ``definitions/``; medium and large = ``bench.generate`` output (seeded).
Per size it measures compile wall time and peak memory (a subprocess calling ``toolc.build``), a
no-op rebuild (``toolc build`` into the same directory), the size of the build directory, the
generated runtime's import time (fresh interpreters), resolve latency of the generated runtime
and of the reference interpreter on a fixed set of seeded random contexts (in one subprocess per
size, so every size imports its own ``toolc_runtime``), ``tool_definitions`` latency when the
runtime has it, the wrapping overhead per tool call (``bench/wrapping.py``), the per-call
overhead of the framework integrations over ``wrap`` (small only, ``bench/integrations.py``),
how compile time and artifact size grow when one dimension doubles, and (medium, large) what
route bindings cost: compile and import with and without them, and the cached ``route`` and
``resolve_message`` latency beside a cached ``resolve`` (``bench/routing.py``).

Results are printed as a table and written to ``<out>/<size>.json`` and ``<out>/latest.json``.
``--quick`` runs small and medium only (scaling on medium) and finishes within a minute.

The ``--worker`` modes are internal: they are the subprocesses the harness starts.

One module per measured area (compiling, importing, latency over the contexts, wrapping,
diffing, scaling), report.py for targets and tables, harness.py for what they share.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import integrations, wrapping
from bench.compiling import (
    artifact_size,
    compile_best,
    compile_worker,
    definitions_size,
    incremental,
    noop_rebuild,
)
from bench.contexts import draw_contexts, universe
from bench.diffing import measure_diff
from bench.generate import SIZES, generate
from bench.harness import (
    DEFAULT_OUT,
    FULL,
    QUICK,
    SHIPPED_DEFINITIONS,
    Mode,
    last_json_line,
    log,
    mode_fields,
    run_measured,
    tail,
    worker,
)
from bench.importing import import_time
from bench.latency import latency_worker, runtime_latency_worker
from bench.report import machine, scaling_table, table, targets, targets_table, write_json
from bench.routing import measure_routing, route_latency_worker
from bench.scaling import measure_scaling


def measure_size(size: str, defs: Path, work: Path, *, mode: Mode, seed: int) -> dict[str, Any]:
    result: dict[str, Any] = {"size": size, "definitions": definitions_size(defs)}
    phases: dict[str, float] = {}
    result["phase_s"] = phases
    out = work / f"build-{size}"

    def phase(name: str, started: float) -> None:
        phases[name] = round(time.perf_counter() - started, 2)

    log(f"[{size}] compile")
    t0 = time.perf_counter()
    result["compile"] = compile_best(defs, out, mode.compile_repeat)
    phase("compile", t0)
    if "error" in result["compile"]:
        log(f"[{size}] compile failed: {result['compile']['error']}")
        return result
    result["artifact"] = artifact_size(out)
    log(f"[{size}] no-op rebuild")
    t0 = time.perf_counter()
    result["noop_rebuild"] = noop_rebuild(defs, out)
    phase("noop_rebuild", t0)
    log(f"[{size}] import time")
    t0 = time.perf_counter()
    result["import"] = import_time(out, mode.import_runs)
    phase("import", t0)
    log(f"[{size}] resolve latency ({mode.contexts} contexts)")
    t0 = time.perf_counter()
    contexts = draw_contexts(universe(defs), mode.contexts, f"{seed}:contexts:{size}")
    contexts_file = work / f"contexts-{size}.json"
    contexts_file.write_text(json.dumps(contexts))
    proc = run_measured(
        worker(
            "latency",
            str(defs),
            str(out),
            str(contexts_file),
            str(mode.runtime_reps),
            str(mode.reference_reps),
        )
    )
    try:
        latency = last_json_line(proc.stdout)
    except ValueError:
        latency = {"error": f"latency worker exited {proc.returncode}: {tail(proc.stderr)}"}
    phase("latency", t0)
    td = latency.pop("tool_definitions", None)
    result["resolve"] = latency
    result["tool_definitions"] = td
    log(f"[{size}] wrapping overhead")
    t0 = time.perf_counter()
    proc = run_measured(worker("wrapping", str(out), str(mode.wrap_calls), str(mode.wrap_samples)))
    try:
        result["wrapping"] = last_json_line(proc.stdout)
    except ValueError:
        result["wrapping"] = {
            "error": f"wrapping worker exited {proc.returncode}: {tail(proc.stderr)}"
        }
    phase("wrapping", t0)
    if size == "small":  # the integrations call tools of the shipped definitions
        log(f"[{size}] framework integrations")
        t0 = time.perf_counter()
        args = (str(out), str(mode.wrap_calls), str(mode.wrap_samples))
        proc = run_measured(worker("integrations", *args))
        try:
            result["integrations"] = last_json_line(proc.stdout)
        except ValueError:
            result["integrations"] = {
                "error": f"integrations worker exited {proc.returncode}: {tail(proc.stderr)}"
            }
        phase("integrations", t0)
    log(f"[{size}] toolc diff")
    t0 = time.perf_counter()
    result["diff"] = measure_diff(size, defs, out, work)
    phase("diff", t0)
    return result

@contextlib.contextmanager
def workdir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="toolc-bench-") as tmp:
        yield Path(tmp)

def run(mode: Mode, out_dir: Path, seed: int, keep: Path | None,
        openclaw: str | None = None) -> int:
    started = time.perf_counter()
    results: dict[str, dict[str, Any]] = {}
    with workdir(keep) as work:
        for size in mode.sizes:
            if size == "small":
                defs = SHIPPED_DEFINITIONS
                if not any(defs.rglob("*.yaml")):
                    results[size] = {"size": size, "skipped": "definitions/ has no YAML files"}
                    continue
                dims = None
            else:
                dims = SIZES[size]
                defs = work / f"defs-{size}"
                t0 = time.perf_counter()
                log(f"[{size}] generate {dims}")
                generate(defs, seed=seed, openclaw=openclaw, **dims)
                gen_s = time.perf_counter() - t0
            r = measure_size(size, defs, work, mode=mode, seed=seed)
            if dims is not None:
                r["dims"] = dims
                r["definitions"]["generate_s"] = round(gen_s, 3)
            if size == mode.scaling_size and dims is not None and "api_s" in r["compile"]:
                t0 = time.perf_counter()
                r["scaling"] = measure_scaling(r, dims, work, seed, mode.compile_repeat)
                r["phase_s"]["scaling"] = round(time.perf_counter() - t0, 2)
            if dims is not None and "api_s" in r["compile"]:
                t0 = time.perf_counter()
                routing = measure_routing(size, defs, work, mode=mode, seed=seed,
                                          openclaw=openclaw, dims=dims)
                if routing is not None:
                    r["routing"] = routing
                    r["phase_s"]["routing"] = round(time.perf_counter() - t0, 2)
            if size == mode.scaling_size and dims is not None and "api_s" in r["compile"]:
                log(f"[{size}] incremental rebuild (one group changed) and a clean build")
                t0 = time.perf_counter()
                r["incremental"] = incremental(defs, work)
                r["phase_s"]["incremental"] = round(time.perf_counter() - t0, 2)
            r["targets"] = targets(r)
            results[size] = r
    elapsed = time.perf_counter() - started

    meta = {"mode": mode.name, "seed": seed, "elapsed_s": round(elapsed, 2), "machine": machine(),
            "openclaw": openclaw or "2026.3"}
    for size, r in results.items():
        write_json(out_dir / f"{size}.json", {**meta, **r})
    write_json(out_dir / "latest.json", {**meta, "sizes": results})

    release = f", OpenClaw {openclaw}" if openclaw else ""
    print(f"toolc benchmark ({mode.name} mode, seed {seed}{release}, {elapsed:.1f} s)")
    print(table(results))
    for size, r in results.items():
        if "scaling" in r:
            print()
            print(scaling_table(r["scaling"], size))
    target_size = "large" if "large" in results else mode.scaling_size
    if target_size in results and "targets" in results[target_size]:
        print()
        print(targets_table(results[target_size]["targets"], target_size))
    print(f"\nresults: {out_dir / 'latest.json'}")

    failed = any("error" in (r.get("compile") or {}) for r in results.values())
    mismatched = any((r.get("resolve") or {}).get("mismatches")
                     or ((r.get("routing") or {}).get("latency") or {}).get("mismatches")
                     for r in results.values())
    return 1 if failed or mismatched else 0

def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        kind, *rest = argv[1:]
        if kind == "compile":
            compile_worker(Path(rest[0]), Path(rest[1]), Path(rest[2]) if rest[2:] else None)
        elif kind == "latency":
            latency_worker(Path(rest[0]), Path(rest[1]), Path(rest[2]), int(rest[3]), int(rest[4]))
        elif kind == "route-latency":
            route_latency_worker(Path(rest[0]), Path(rest[1]), Path(rest[2]), int(rest[3]))
        elif kind == "runtime-latency":
            runtime_latency_worker(Path(rest[0]), Path(rest[1]), int(rest[2]))
        elif kind == "wrapping":
            wrapping.worker(Path(rest[0]), int(rest[1]), int(rest[2]))
        elif kind == "integrations":
            integrations.worker(Path(rest[0]), int(rest[1]), int(rest[2]))
        else:
            raise SystemExit(f"unknown worker {kind!r}")
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m bench.run", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="small and medium only, < 1 minute")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results directory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", help="comma-separated subset of small,medium,large")
    parser.add_argument("--contexts", type=int, help="number of resolve contexts per size")
    parser.add_argument("--repeat", type=int, help="compiles per figure (the fastest counts)")
    parser.add_argument("--keep", type=Path, help="work in this directory and keep it")
    parser.add_argument(
        "--openclaw", choices=("2026.3", "2026.9"),
        help="the generated sizes name this release (bench.generate --openclaw); default: no "
        "openclaw key (2026.3). Results go to --out as usual: give another directory",
    )
    args = parser.parse_args(argv)
    mode = QUICK if args.quick else FULL
    if args.sizes:
        sizes = tuple(s.strip() for s in args.sizes.split(",") if s.strip())
        unknown = set(sizes) - {"small", *SIZES}
        if unknown:
            parser.error(f"unknown size(s): {', '.join(sorted(unknown))}")
        scaling = mode.scaling_size if mode.scaling_size in sizes else ""
        mode = Mode(**{**mode_fields(mode), "sizes": sizes, "scaling_size": scaling})
    if args.contexts:
        mode = Mode(**{**mode_fields(mode), "contexts": args.contexts})
    if args.repeat:
        mode = Mode(**{**mode_fields(mode), "compile_repeat": args.repeat})
    return run(mode, args.out, args.seed, args.keep, args.openclaw)

if __name__ == "__main__":
    raise SystemExit(main())
