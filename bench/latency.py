"""Resolve latency of the generated runtime against the reference interpreter (and
``tool_definitions`` when the runtime has it), compared on every context; runs in a worker
subprocess so every size imports its own ``toolc_runtime``."""

from __future__ import annotations

import functools
import gc
import importlib
import inspect
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.contexts import CONTEXT_KEYS
from bench.harness import RUNTIME_PACKAGE


def _stats_ns(per_context: list[float]) -> dict[str, float]:
    ordered = sorted(per_context) or [float("nan")]
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "median_ns": round(statistics.median(ordered), 1),
        "p99_ns": round(p99, 1),
        "mean_ns": round(statistics.fmean(ordered), 1),
        "max_ns": round(ordered[-1], 1),
    }


def _time_each(fn: Callable[..., Any], contexts: list[dict[str, Any]], reps: int) -> list[float]:
    """Per context: time ``reps`` back-to-back calls with perf_counter_ns, divided by ``reps``."""
    clock = time.perf_counter_ns
    out = []
    for kw in contexts:
        t0 = clock()
        for _ in range(reps):
            fn(**kw)
        out.append((clock() - t0) / reps)
    return out


def _call(fn: Callable[..., Any], kw: dict[str, Any]) -> tuple[str, Any]:
    try:
        return "ok", fn(**kw)
    except Exception as exc:  # a raise is a result too; both engines must agree on it
        return "raise", type(exc).__name__


def _tool_definitions_calls(rt: Any, contexts: list[dict[str, Any]]) -> list[Callable[[], Any]]:
    """One bound ``toolc_runtime.tool_definitions`` call per context ([] if it does not exist).

    Its signature is matched by name: parameters named like resolve()'s keywords get the
    context's values (``**kwargs`` gets all of them), and a first required positional parameter
    that is not a context keyword gets the resolved ToolSet (computed outside the timing).
    """
    fn = getattr(rt, "tool_definitions", None)
    if fn is None:
        return []
    params = inspect.signature(fn).parameters
    calls: list[Callable[[], Any]] = []
    for kw in contexts:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for p in params.values():
            if p.name in kw:
                kwargs[p.name] = kw[p.name]
            elif p.kind is p.VAR_KEYWORD:
                kwargs.update({k: v for k, v in kw.items() if k not in params})
            elif (
                p.default is p.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.name not in CONTEXT_KEYS
                and not args
            ):
                args.append(rt.resolve(**kw))
        calls.append(functools.partial(fn, *args, **kwargs))
    return calls


def _time_calls(calls: list[Callable[[], Any]], reps: int) -> list[float]:
    clock = time.perf_counter_ns
    out = []
    for call in calls:
        t0 = clock()
        for _ in range(reps):
            call()
        out.append((clock() - t0) / reps)
    return out

def load_contexts(path: Path) -> list[dict[str, Any]]:
    """The contexts as keyword sets a caller's source would pass: keyword names interned (as
    names written in code are), since CPython matches an argument name by identity first and
    compares the strings of a JSON-loaded name with every parameter's (about 7,000 extra
    instructions per call of resolve's 20 parameters, on both engines alike)."""
    raw: list[dict[str, Any]] = json.loads(path.read_text())
    return [{sys.intern(k): v for k, v in kw.items()} for kw in raw]


def latency_worker(defs: Path, out: Path, contexts_file: Path, rt_reps: int, ref_reps: int) -> None:
    contexts = load_contexts(contexts_file)
    sys.path.insert(0, str(out))
    rt = importlib.import_module(RUNTIME_PACKAGE)
    toolc = importlib.import_module("toolc")
    t0 = time.perf_counter()
    interp = toolc.load_reference(defs)
    reference_load_s = time.perf_counter() - t0

    # Pass 1: compare the two engines on every context. The reference call is timed here too,
    # as the first of its ``ref_reps`` calls (the reference is slow; this saves one pass).
    clock = time.perf_counter_ns
    mismatches, raises = 0, 0
    examples: list[dict[str, Any]] = []
    ok_contexts, first_ref_ns = [], []
    for kw in contexts:
        a = _call(rt.resolve, kw)
        t0_ns = clock()
        b = _call(interp.resolve, kw)
        ref_ns = clock() - t0_ns
        got = tuple(a[1].names) if a[0] == "ok" else ("raise", a[1])
        want = tuple(b[1].names) if b[0] == "ok" else ("raise", b[1])
        if a[0] == "raise":
            raises += 1
        elif b[0] == "ok":
            ok_contexts.append(kw)
            first_ref_ns.append(ref_ns)
        if got != want:
            mismatches += 1
            if len(examples) < 5:
                only_rt = sorted(set(got) - set(want))
                only_ref = sorted(set(want) - set(got))
                examples.append(
                    {"context": kw, "runtime_only": only_rt, "reference_only": only_ref}
                )

    # Pass 2: timing loops.
    gc.collect()
    runtime = _stats_ns(_time_each(rt.resolve, ok_contexts, rt_reps))
    ref_per_context = [float(ns) for ns in first_ref_ns]
    if ref_reps > 1:
        more = _time_each(interp.resolve, ok_contexts, ref_reps - 1)
        ref_per_context = [
            (first + extra * (ref_reps - 1)) / ref_reps
            for first, extra in zip(first_ref_ns, more, strict=True)
        ]
    reference = _stats_ns(ref_per_context)
    result: dict[str, Any] = {
        "contexts": len(contexts),
        "timed_contexts": len(ok_contexts),
        "runtime_reps": rt_reps,
        "reference_reps": ref_reps,
        "runtime": runtime,
        "reference": reference,
        "ratio_median": round(reference["median_ns"] / max(runtime["median_ns"], 1e-9), 1),
        "ratio_p99": round(reference["p99_ns"] / max(runtime["p99_ns"], 1e-9), 1),
        "mismatches": mismatches,
        "mismatch_examples": examples,
        "raised": raises,
        "reference_load_s": round(reference_load_s, 4),
        "mean_tools": round(statistics.fmean(len(rt.resolve(**kw).names) for kw in ok_contexts), 1)
        if ok_contexts
        else 0,
    }
    if hasattr(rt, "resolve_uncached"):
        # The same tables without the per-request memo: what a context costs the first time.
        uncached = _stats_ns(_time_each(rt.resolve_uncached, ok_contexts, rt_reps))
        result["runtime_uncached"] = uncached
        result["ratio_uncached_median"] = round(
            reference["median_ns"] / max(uncached["median_ns"], 1e-9), 1)
    if hasattr(rt, "tool_definitions"):
        try:
            calls = _tool_definitions_calls(rt, ok_contexts)
            result["tool_definitions"] = _stats_ns(_time_calls(calls, rt_reps))
        except Exception as exc:  # report it; do not lose the resolve figures
            result["tool_definitions"] = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result, sort_keys=True))


def runtime_latency_worker(out: Path, contexts_file: Path, reps: int) -> None:
    """``resolve`` (cached) and ``resolve_uncached`` alone, for the sizes whose definitions the
    reference interpreter cannot load in this budget (bench-huge): the contexts that resolve
    (a raise is counted, not timed), then the same timing loops as ``latency_worker``; every
    context is resolved once first, so the shards it reaches are read before the timing."""
    contexts = load_contexts(contexts_file)
    sys.path.insert(0, str(out))
    rt = importlib.import_module(RUNTIME_PACKAGE)
    ok_contexts = [kw for kw in contexts if _call(rt.resolve, kw)[0] == "ok"]
    gc.collect()
    result: dict[str, Any] = {
        "contexts": len(contexts),
        "timed_contexts": len(ok_contexts),
        "raised": len(contexts) - len(ok_contexts),
        "runtime_reps": reps,
        "runtime": _stats_ns(_time_each(rt.resolve, ok_contexts, reps)),
        "runtime_uncached": _stats_ns(_time_each(rt.resolve_uncached, ok_contexts, reps)),
        "mean_tools": round(statistics.fmean(len(rt.resolve(**kw).names) for kw in ok_contexts), 1)
        if ok_contexts
        else 0,
    }
    print(json.dumps(result, sort_keys=True))
