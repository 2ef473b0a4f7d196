"""Wrapping overhead: a call through ``toolc_runtime.wrap`` against calling the implementation
directly, for a no-op sync and a no-op async tool, hooks off and on, with and without the
argument validation (pydantic) that ``wrap`` does by default; and decision logs: a call with
logging off and with the file sink, and what logging off adds to a call (``decision_logs``).

Run as a worker of ``bench.run`` in its own interpreter: ``python -m bench.run --worker
wrapping OUT CALLS SAMPLES``. It prints one JSON line: per variant the median and best time
per call over ``SAMPLES`` loops of ``CALLS`` back-to-back calls, and the ratio of the median
to the direct call's median in the same process.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

TOOL = "read"  # a core tool in every benchmark size: one required string, an alias
ARGS: dict[str, Any] = {"path": "/workspace/notes.md"}


# No-op tools return a short text, as tools do: returning None would time building the
# {"status": "ok"} JSON result instead of the wrapping.
def _noop(args: dict[str, Any], call: Any) -> str:
    return "ok"


async def _anoop(args: dict[str, Any], call: Any) -> str:
    return "ok"


def _time_sync(fn: Callable[[], object], calls: int, samples: int) -> list[float]:
    out = []
    for _ in range(samples):
        start = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter_ns() - start) / calls)
    return out


def _time_async(fn: Callable[[], Awaitable[object]], calls: int, samples: int) -> list[float]:
    async def loop() -> list[float]:
        out = []
        for _ in range(samples):
            start = time.perf_counter_ns()
            for _ in range(calls):
                await fn()
            out.append((time.perf_counter_ns() - start) / calls)
        return out

    return asyncio.run(loop())


def _stats(per_call: list[float], base: float | None) -> dict[str, Any]:
    median = statistics.median(per_call)
    out: dict[str, Any] = {"median_ns": round(median, 1), "best_ns": round(min(per_call), 1)}
    if base:
        out["ratio"] = round(median / base, 1)
    return out


def _hooks(rt: Any) -> Any:
    hooks = rt.HookRunner()
    hooks.before_tool_call(lambda event, ctx: None)
    hooks.after_tool_call(lambda event, ctx: None)
    return hooks


def measure(rt: Any, calls: int, samples: int) -> dict[str, Any]:
    """Every variant, timed in this process."""
    names = rt.TOOL_NAMES
    toolset = rt.ToolSet(1 << names.index(TOOL), (TOOL,))
    ctx = rt.CallContext(agent_id="bench", run_id="r", sender_is_owner=False)
    call = rt.ToolCall(TOOL, "c", None, ctx)
    direct = statistics.median(_time_sync(lambda: _noop(ARGS, call), calls, samples))
    adirect = statistics.median(_time_async(lambda: _anoop(ARGS, call), calls, samples))
    out: dict[str, Any] = {"tool": TOOL, "calls": calls, "samples": samples,
                           "direct_sync": {"median_ns": round(direct, 1)},
                           "direct_async": {"median_ns": round(adirect, 1)}}
    for validate in (True, False):
        for hooked in (False, True):
            hooks = _hooks(rt) if hooked else None
            sync = rt.wrap(toolset, {TOOL: _noop}, context=ctx, hooks=hooks, validate=validate)
            asyn = rt.wrap(toolset, {TOOL: _anoop}, context=ctx, hooks=hooks, validate=validate)
            sync[TOOL].call(ARGS)  # first use: loads the models and warms the caches
            label = f"{'validated' if validate else 'unvalidated'}_{'hooks' if hooked else 'plain'}"
            gc.collect()
            out[f"sync_{label}"] = _stats(
                _time_sync(lambda t=sync[TOOL]: t.call(ARGS, tool_call_id="c"), calls, samples),
                direct)
            out[f"async_{label}"] = _stats(
                _time_async(lambda t=asyn[TOOL]: t.acall(ARGS, tool_call_id="c"), calls, samples),
                adirect)
            if hooks is not None:
                hooks.wait_idle(60)
                hooks.close()
    out.update(decision_logs(rt, toolset, ctx, calls, samples, direct))
    return out


def _guard_ns(tools: Any, calls: int, samples: int) -> float:
    """What logging off adds to a call: the statements the call path runs for it (a local
    set to None and one ``is None`` test of the wrapped set's ``decisions``), against the same
    loop without them, in this process."""
    def guarded() -> None:
        for _ in range(calls):
            failure = None
            if tools.decisions is not None:
                raise AssertionError(failure)

    def bare() -> None:
        for _ in range(calls):
            pass

    with_guard = statistics.median(_time_sync(guarded, 1, samples)) / calls
    without = statistics.median(_time_sync(bare, 1, samples)) / calls
    return max(0.0, with_guard - without)


def decision_logs(rt: Any, toolset: Any, ctx: Any, calls: int, samples: int,
                  direct: float) -> dict[str, Any]:
    """Decision logs: the unvalidated sync call with logging off, with the file sink (one
    JSON line per call, rotated; the default buffered sink, whose writer thread runs in this
    process meanwhile, and ``buffered=False``, one write per call in the caller's thread),
    and the differences. Off and file loops alternate within each sample, so a busy machine
    slows them alike; the added cost is the median of the per-sample differences."""
    with tempfile.TemporaryDirectory() as tmp:
        off = rt.wrap(toolset, {TOOL: _noop}, context=ctx, validate=False)
        timed_off: list[float] = []
        timed: dict[str, list[float]] = {"file": [], "file_sync": []}
        wrapped, sinks = {}, []
        for kind, buffered in (("file", True), ("file_sync", False)):
            try:
                sink = rt.FileSink(Path(tmp) / f"{kind}.jsonl", max_bytes=16 << 20, backups=1,
                                   buffered=buffered)
            except TypeError:  # a runtime from before buffered sinks: its one kind of sink
                if not buffered:
                    continue
                sink = rt.FileSink(Path(tmp) / f"{kind}.jsonl", max_bytes=16 << 20, backups=1)
            sinks.append(sink)
            log = rt.DecisionLog([sink], sender_key=b"bench-sender-key-0123456789")
            request = log.request(agent_id="bench", sender_id="42")
            wrapped[kind] = rt.wrap(toolset, {TOOL: _noop}, context=ctx, validate=False,
                                    decisions=request)
            wrapped[kind][TOOL].call(ARGS)
        gc.collect()
        for _ in range(samples):
            timed_off += _time_sync(lambda: off[TOOL].call(ARGS, tool_call_id="c"), calls, 1)
            for kind, tools in wrapped.items():
                timed[kind] += _time_sync(lambda t=tools: t[TOOL].call(ARGS, tool_call_id="c"),
                                          calls, 1)
        for sink in sinks:
            sink.close()
    out = {"sync_decisions_off": _stats(timed_off, direct),
           "decisions_off_added_ns": round(_guard_ns(off, calls * 10, samples), 1)}
    for kind in wrapped:
        added = statistics.median(b - a for a, b in zip(timed_off, timed[kind], strict=True))
        out[f"sync_decisions_{kind}"] = _stats(timed[kind], direct)
        out[f"decisions_{kind}_added_ns"] = round(added, 1)
    return out


def worker(out: Path, calls: int, samples: int) -> None:
    sys.path.insert(0, str(out))
    import importlib  # noqa: PLC0415 - imported from the build directory put on the path

    rt = importlib.import_module("toolc_runtime")
    print(json.dumps(measure(rt, calls, samples), sort_keys=True))
