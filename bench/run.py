"""Benchmark harness: compile synthetic deployments of three sizes and measure toolc.

``python -m bench.run [--quick] [--out bench/results]``

Sizes: small = the shipped ``definitions/``; medium and large = ``bench.generate`` output (seeded).
Per size it measures compile wall time and peak memory (a subprocess calling ``toolc.build``), a
no-op rebuild (``toolc build`` into the same directory), the size of the build directory, the
generated runtime's import time (fresh interpreters), resolve latency of the generated runtime
and of the reference interpreter on a fixed set of seeded random contexts (in one subprocess per
size, so every size imports its own ``toolc_runtime``), ``tool_definitions`` latency when the
runtime has it, the wrapping overhead per tool call (``bench/wrapping.py``), and how compile
time and artifact size grow when one dimension doubles.

Results are printed as a table and written to ``<out>/<size>.json`` and ``<out>/latest.json``.
``--quick`` runs small and medium only (scaling on medium) and finishes within a minute.

The ``--worker`` modes are internal: they are the subprocesses the harness starts.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import hashlib
import inspect
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench import wrapping
from bench.generate import SCALING_DIMENSIONS, SIZES, double, generate

REPO = Path(__file__).resolve().parents[1]
SHIPPED_DEFINITIONS = REPO / "definitions"
DEFAULT_OUT = REPO / "bench" / "results"
RUNTIME_PACKAGE = "toolc_runtime"
GIB = 1024**3

# Targets from the issue; they apply to the large size (scaling: to the size that is doubled).
TARGETS = {
    "resolve_ratio_min": 300.0,
    "resolve_median_ns_max": 1000.0,
    "compile_s_max": 20.0,
    "peak_rss_bytes_max": 1.5 * GIB,
    "noop_rebuild_s_max": 1.0,
    "import_ms_max": 50.0,
    # issue 9: a wrapped call of a no-op sync tool, no hooks (validation on, as by default)
    "wrap_sync_ns_max": 10_000.0,
    # issue 8: `toolc diff` of two large deployments (one agent, one group's senders changed)
    "diff_s_max": 5.0,
    # "grows linearly when a dimension doubles": at most 2x, with 10% allowance for noise
    "scaling_ratio_max": 2.2,
}


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


# --------------------------------------------------------------------------------------------
# Subprocesses


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


# --------------------------------------------------------------------------------------------
# Measurements


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


_IMPORT_SNIPPET = """
import json, sys, time
sys.path.insert(0, {out!r})
t0 = time.perf_counter_ns()
import {package} as rt
t1 = time.perf_counter_ns()
rt.resolve()
t2 = time.perf_counter_ns()
print(json.dumps({{"import_ns": t1 - t0, "first_resolve_ns": t2 - t1}}))
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
    }


# --------------------------------------------------------------------------------------------
# Contexts


def _load_docs(defs: Path) -> dict[str, Any]:
    """The top-level keys of a definitions directory (only what contexts are drawn from)."""
    merged: dict[str, Any] = {}
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for path in sorted(p for p in defs.rglob("*") if p.suffix in (".yaml", ".yml")):
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        for key, value in doc.items():
            if key not in ("version", "catalog"):
                merged[key] = value
    return merged


@dataclass(frozen=True, slots=True, kw_only=True)
class Universe:
    agents: list[str]
    provider_keys: list[str]
    channels: dict[str, list[str]]  # channel -> group ids (channel-level map)
    accounts: dict[str, dict[str, list[str]]]  # channel -> account -> group ids
    senders: list[tuple[str, str]]  # (kind, value) from toolsBySender keys


def universe(defs: Path) -> Universe:
    docs = _load_docs(defs)
    agents_doc = docs.get("agents") or {}
    agents = sorted(str(a["id"]) for a in agents_doc.get("list") or [])
    keys: set[str] = set((docs.get("tools") or {}).get("byProvider") or {})
    for agent in agents_doc.get("list") or []:
        keys |= set(((agent.get("tools") or {}).get("byProvider")) or {})
    keys |= set((docs.get("providers") or {}).get("entries") or {})
    channels: dict[str, list[str]] = {}
    accounts: dict[str, dict[str, list[str]]] = {}
    senders: set[tuple[str, str]] = set()

    def collect(groups: dict[str, Any]) -> list[str]:
        for cfg in groups.values():
            for key in (cfg or {}).get("toolsBySender") or {}:
                kind, sep, value = str(key).partition(":")
                if sep and kind in ("id", "e164", "username", "name"):
                    senders.add((kind, value))
        return sorted(g for g in groups if g != "*")

    for name, cfg in sorted((docs.get("channels") or {}).items()):
        channels[name] = collect((cfg or {}).get("groups") or {})
        for acc, acc_cfg in sorted(((cfg or {}).get("accounts") or {}).items()):
            accounts.setdefault(name, {})[acc] = collect((acc_cfg or {}).get("groups") or {})
    return Universe(
        agents=agents,
        provider_keys=sorted(keys),
        channels=channels,
        accounts=accounts,
        senders=sorted(senders),
    )


CONTEXT_KEYS = (
    "agent_id",
    "session_key",
    "model_provider",
    "model_id",
    "message_provider",
    "account_id",
    "group_id",
    "sender_id",
    "sender_e164",
    "sender_username",
    "sender_name",
    "sender_is_owner",
    "sandboxed",
    "spawn_depth",
)
_MODELS = ("gpt-5", "gpt-5-codex", "gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-pro", "model-1")
_SENDER_FIELD = {
    "id": "sender_id",
    "e164": "sender_e164",
    "username": "sender_username",
    "name": "sender_name",
}


def _draw_provider(rng: random.Random, u: Universe, kw: dict[str, Any]) -> None:
    r = rng.random()
    if r < 0.1 or not u.provider_keys:
        return
    if r < 0.18:
        kw["model_provider"], kw["model_id"] = "acme-unknown", "model-x"
        return
    key = rng.choice(u.provider_keys)
    provider, _, model = key.partition("/")
    kw["model_provider"] = provider if rng.random() < 0.9 else provider.upper()
    if model:
        kw["model_id"] = model
    elif rng.random() < 0.7:
        kw["model_id"] = rng.choice(_MODELS)


def _draw_sender(rng: random.Random, u: Universe, kw: dict[str, Any]) -> None:
    r = rng.random()
    if r < 0.3:
        return
    if r < 0.45 or not u.senders:
        kw["sender_id"] = str(rng.randrange(10**6, 10**7))
        kw["sender_name"] = "Stranger"
        return
    kind, value = rng.choice(u.senders)
    if kind == "username" and rng.random() < 0.5:
        value = value.lstrip("@")
    kw[_SENDER_FIELD[kind]] = value if rng.random() < 0.9 else value.upper()
    if kind != "id" and rng.random() < 0.5:
        kw["sender_id"] = str(rng.randrange(10**6, 10**7))


def _draw_group(rng: random.Random, u: Universe, agent: str | None, kw: dict[str, Any]) -> None:
    r = rng.random()
    if r < 0.25 or not u.channels:
        return
    if r < 0.3:
        kw["message_provider"], kw["group_id"] = "nochannel", "-100777"
        return
    channel = rng.choice(sorted(u.channels))
    groups = u.channels[channel]
    accounts = u.accounts.get(channel, {})
    if accounts and rng.random() < 0.4:
        account = rng.choice(sorted(accounts))
        kw["account_id"] = account if rng.random() < 0.9 else "no-such-account"
        groups = accounts[account] or groups
    q = rng.random()
    group = rng.choice(groups) if groups and q < 0.8 else ("-100999999" if q < 0.9 else None)
    if group is not None and rng.random() < 0.35:
        # group context from the session key instead of explicit keywords
        topic = f":topic:{rng.randrange(100)}" if rng.random() < 0.2 else ""
        kw["session_key"] = f"agent:{agent or 'main'}:{channel}:group:{group}{topic}"
        return
    kw["message_provider"] = channel
    if group is not None:
        kw["group_id"] = group


def draw_contexts(u: Universe, n: int, seed: str) -> list[dict[str, Any]]:
    """``n`` resolve() keyword sets, the same for the same definitions and seed."""
    rng = random.Random(seed)
    contexts = []
    for _ in range(n):
        kw: dict[str, Any] = {}
        r = rng.random()
        agent = rng.choice(u.agents) if u.agents and r < 0.8 else ("ghost" if r < 0.85 else None)
        _draw_provider(rng, u, kw)
        _draw_group(rng, u, agent, kw)
        _draw_sender(rng, u, kw)
        if "session_key" not in kw and rng.random() < 0.12:
            depth = 2 if rng.random() < 0.3 else 1
            kw["session_key"] = f"agent:{agent or 'main'}" + ":subagent:x" * depth
            if rng.random() < 0.5:
                kw["spawn_depth"] = depth
        if agent is not None and ("session_key" not in kw or rng.random() < 0.5):
            kw["agent_id"] = agent
        q = rng.random()
        if q < 0.1:
            kw["sender_is_owner"] = True
        elif q < 0.2:
            kw["sender_is_owner"] = False
        if rng.random() < 0.15:
            kw["sandboxed"] = True
        contexts.append(dict(sorted(kw.items())))
    return contexts


# --------------------------------------------------------------------------------------------
# Latency (runs inside a worker subprocess)


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


def latency_worker(defs: Path, out: Path, contexts_file: Path, rt_reps: int, ref_reps: int) -> None:
    contexts: list[dict[str, Any]] = json.loads(contexts_file.read_text())
    sys.path.insert(0, str(out))
    import importlib  # noqa: PLC0415

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


def compile_worker(defs: Path, out: Path) -> None:
    import importlib  # noqa: PLC0415

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


def policy_change(defs: Path, head: Path) -> dict[str, str]:
    """A copy of ``defs`` with one agent's policy changed (the eighth agent, or the last, to
    the messaging profile) and one group's sender rules changed (the first channel's first
    group: one more sender rule), as a pull request would; returns what changed."""
    shutil.copytree(defs, head)
    agents_file = next(p for p in sorted(head.rglob("*.yaml"))
                       if "agents" in (yaml.safe_load(p.read_text()) or {}))
    doc = yaml.safe_load(agents_file.read_text())
    agent = doc["agents"]["list"][min(7, len(doc["agents"]["list"]) - 1)]
    agent.setdefault("tools", {})["profile"] = "messaging"
    agents_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    channels_file = next(p for p in sorted(head.rglob("*.yaml"))
                         if "channels" in (yaml.safe_load(p.read_text()) or {}))
    doc = yaml.safe_load(channels_file.read_text())
    name, channel = next(iter(doc["channels"].items()))
    gid, group = next(iter(channel["groups"].items()))
    group.setdefault("toolsBySender", {})["id:424242"] = {"deny": ["exec"]}
    channels_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    return {"agent": str(agent["id"]), "group": f"channels.{name}.groups.{gid}"}


def measure_diff(size: str, defs: Path, out: Path, work: Path) -> dict[str, Any]:
    """``toolc diff BASE HEAD --format json`` between two builds, as a reviewer runs it (a
    fresh process: import, loading both builds, the exact delta, the JSON)."""
    head_defs = work / f"defs-{size}-head"
    head_out = work / f"build-{size}-head"
    changed = policy_change(defs, head_defs)
    built = compile_once(head_defs, head_out)
    if "error" in built:
        return {"error": f"head build: {built['error']}"}
    best: Proc | None = None
    for _ in range(2):  # the first run may pay for .pyc files
        proc = run_measured([*toolc_cli(), "diff", str(out), str(head_out), "--format", "json"])
        if proc.returncode != 2:
            return {"error": f"toolc diff exited {proc.returncode}: {tail(proc.stderr)}"}
        if best is None or proc.wall_s < best.wall_s:
            best = proc
    assert best is not None
    data = json.loads(best.stdout)
    return {"wall_s": round(best.wall_s, 3), "peak_rss_bytes": best.peak_rss_bytes,
            "classes": data["classes"], "tools_changed": len(data["access"]),
            "changed": changed}


# --------------------------------------------------------------------------------------------
# One size


def definitions_size(defs: Path) -> dict[str, int]:
    files = [p for p in defs.rglob("*") if p.suffix in (".yaml", ".yml")]
    return {"files": len(files), "bytes": sum(p.stat().st_size for p in files)}


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
    log(f"[{size}] toolc diff")
    t0 = time.perf_counter()
    result["diff"] = measure_diff(size, defs, out, work)
    phase("diff", t0)
    return result


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


# --------------------------------------------------------------------------------------------
# Targets and reporting


def targets(result: dict[str, Any]) -> dict[str, Any]:
    """Each issue target with the measured value (None when it could not be measured)."""

    def get(*path: str) -> Any:
        node: Any = result
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node

    checks: dict[str, Any] = {}

    def check(name: str, value: Any, limit: float, *, at_least: bool = False) -> None:
        ok = None if value is None else (value >= limit if at_least else value <= limit)
        checks[name] = {"value": value, "limit": limit, "ok": ok}

    check(
        "resolve_ratio",
        get("resolve", "ratio_median"),
        TARGETS["resolve_ratio_min"],
        at_least=True,
    )
    check(
        "resolve_median_ns",
        get("resolve", "runtime", "median_ns"),
        TARGETS["resolve_median_ns_max"],
    )
    check("compile_s", get("compile", "api_s"), TARGETS["compile_s_max"])
    check("peak_rss_bytes", get("compile", "peak_rss_bytes"), TARGETS["peak_rss_bytes_max"])
    check("noop_rebuild_s", get("noop_rebuild", "process_s"), TARGETS["noop_rebuild_s_max"])
    check("import_ms", get("import", "median_ms"), TARGETS["import_ms_max"])
    check(
        "wrap_sync_ns",
        get("wrapping", "sync_validated_plain", "median_ns"),
        TARGETS["wrap_sync_ns_max"],
    )
    check("diff_s", get("diff", "wall_s"), TARGETS["diff_s_max"])
    scaling = result.get("scaling") or {}
    for dim in SCALING_DIMENSIONS:
        entry = scaling.get(dim) or {}
        for what in ("compile_ratio", "artifact_ratio"):
            if dim in scaling:
                check(f"scaling_{dim}_{what}", entry.get(what), TARGETS["scaling_ratio_max"])
    return checks


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    elif isinstance(value, int):
        text = f"{value:,}"
    else:
        text = str(value)
    return f"{text}{unit}"


def _mib(value: Any) -> Any:
    return None if value is None else value / 2**20


def _us(value: Any) -> Any:
    return None if value is None else value / 1000


def _row_values(r: dict[str, Any]) -> list[tuple[str, str]]:
    c, a, n = r.get("compile") or {}, r.get("artifact") or {}, r.get("noop_rebuild") or {}
    i, s = r.get("import") or {}, r.get("resolve") or {}
    rt, ref = s.get("runtime") or {}, s.get("reference") or {}
    td = r.get("tool_definitions") or {}
    d = r.get("definitions") or {}
    return [
        ("input YAML", _fmt(_mib(d.get("bytes")), " MiB")),
        ("compile (toolc.build)", _fmt(c.get("api_s"), " s")),
        ("compile process wall", _fmt(c.get("process_s"), " s")),
        ("compile peak RSS", _fmt(_mib(c.get("peak_rss_bytes")), " MiB")),
        ("no-op rebuild (CLI)", _fmt(n.get("process_s"), " s")),
        ("no-op rewrote files", _fmt(n.get("files_rewritten"))),
        ("build/ size", _fmt(_mib(a.get("bytes")), " MiB")),
        ("build/ files", _fmt(a.get("files"))),
        ("runtime import (median)", _fmt(i.get("median_ms"), " ms")),
        ("runtime import (cold)", _fmt(i.get("cold_ms"), " ms")),
        ("first resolve after import", _fmt(i.get("first_resolve_ms"), " ms")),
        ("resolve runtime median", _fmt(_us(rt.get("median_ns")), " us")),
        ("resolve runtime p99", _fmt(_us(rt.get("p99_ns")), " us")),
        ("resolve reference median", _fmt(_us(ref.get("median_ns")), " us")),
        ("resolve reference p99", _fmt(_us(ref.get("p99_ns")), " us")),
        ("resolve uncached median", _fmt(_us((s.get("runtime_uncached") or {}).get("median_ns")),
                                         " us")),
        ("resolve uncached p99", _fmt(_us((s.get("runtime_uncached") or {}).get("p99_ns")),
                                      " us")),
        ("speedup (median)", _fmt(s.get("ratio_median"), "x")),
        ("speedup uncached (median)", _fmt(s.get("ratio_uncached_median"), "x")),
        ("speedup (p99)", _fmt(s.get("ratio_p99"), "x")),
        ("runtime/reference mismatches", _fmt(s.get("mismatches"))),
        ("contexts", _fmt(s.get("contexts"))),
        ("mean tools per result", _fmt(s.get("mean_tools"))),
        ("tool_definitions median", _fmt(_us(td.get("median_ns")), " us") if td else "n/a"),
        ("tool_definitions p99", _fmt(_us(td.get("p99_ns")), " us") if td else "n/a"),
        *_wrap_rows(r.get("wrapping") or {}),
        ("toolc diff (one agent, one group)", _fmt((r.get("diff") or {}).get("wall_s"), " s")),
        ("diff classes", _fmt((r.get("diff") or {}).get("classes"))),
        ("diff peak memory", _fmt(_mib((r.get("diff") or {}).get("peak_rss_bytes")), " MiB")),
    ]


_WRAP_ROWS = (
    ("direct call sync / async", None),
    ("wrap sync, no hooks", "sync_validated_plain"),
    ("wrap sync, hooks", "sync_validated_hooks"),
    ("wrap async, no hooks", "async_validated_plain"),
    ("wrap async, hooks", "async_validated_hooks"),
    ("wrap sync, no validation", "sync_unvalidated_plain"),
    ("wrap async, no validation", "async_unvalidated_plain"),
)


def _wrap_rows(w: dict[str, Any]) -> list[tuple[str, str]]:
    """Median per call and its ratio to the direct call (wrapping.py)."""
    if not w or "error" in w:
        return [(name, "error" if w else "-") for name, _ in _WRAP_ROWS]
    rows = []
    for name, key in _WRAP_ROWS:
        if key is None:
            sync, asyn = w["direct_sync"]["median_ns"], w["direct_async"]["median_ns"]
            rows.append((name, f"{_fmt(_us(sync))} / {_fmt(_us(asyn))} us"))
        else:
            v = w.get(key) or {}
            rows.append((name, f"{_fmt(_us(v.get('median_ns')))} us ({_fmt(v.get('ratio'))}x)"))
    return rows


def table(results: dict[str, dict[str, Any]]) -> str:
    sizes = list(results)
    rows: dict[str, list[str]] = {name: [] for name, _ in _row_values({})}
    for size in sizes:
        r = results[size]
        if "skipped" in r:
            values = [(name, "skipped") for name in rows]
        elif "error" in (r.get("compile") or {}):
            values = [(name, "error") for name in rows]
        else:
            values = _row_values(r)
        for name, value in values:
            rows[name].append(value)
    width = max(len(n) for n in rows) + 2
    cols = [
        max(12, len(size) + 2, *(len(cells[i]) + 2 for cells in rows.values()))
        for i, size in enumerate(sizes)
    ]
    lines = ["".ljust(width) + "".join(s.rjust(w) for s, w in zip(sizes, cols, strict=True))]
    for name, cells in rows.items():
        lines.append(
            name.ljust(width) + "".join(v.rjust(w) for v, w in zip(cells, cols, strict=True))
        )
    return "\n".join(lines)


def scaling_table(scaling: dict[str, Any], size: str) -> str:
    base = scaling["base"]
    lines = [
        f"scaling on {size} (base: compile {base['compile_s']:.3g} s, "
        f"build/ {base['artifact_bytes'] / 2**20:.3g} MiB); one dimension doubled at a time",
        f"{'dimension':16}{'input x':>10}{'compile s':>12}{'compile x':>12}{'build/ x':>12}",
    ]
    for dim in SCALING_DIMENSIONS:
        e = scaling.get(dim) or {}
        if "error" in e:
            lines.append(f"{dim:16}  error: {e['error'].splitlines()[0]}")
            continue
        lines.append(
            f"{dim:16}{_fmt(e.get('input_ratio')):>10}{_fmt(e.get('compile_s')):>12}"
            f"{_fmt(e.get('compile_ratio')):>12}{_fmt(e.get('artifact_ratio')):>12}"
        )
    return "\n".join(lines)


def targets_table(checks: dict[str, Any], size: str) -> str:
    note = "" if size == "large" else " (the issue sets them for large)"
    lines = [f"targets at {size}{note}"]
    for name, c in checks.items():
        verdict = {True: "ok", False: "MISSED", None: "n/a"}[c["ok"]]
        lines.append(f"  {name:34}{_fmt(c['value']):>14}  limit {_fmt(c['limit']):>10}  {verdict}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Main


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


@contextlib.contextmanager
def workdir(keep: Path | None) -> Iterator[Path]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix="toolc-bench-") as tmp:
        yield Path(tmp)


def run(mode: Mode, out_dir: Path, seed: int, keep: Path | None) -> int:
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
                generate(defs, seed=seed, **dims)
                gen_s = time.perf_counter() - t0
            r = measure_size(size, defs, work, mode=mode, seed=seed)
            if dims is not None:
                r["dims"] = dims
                r["definitions"]["generate_s"] = round(gen_s, 3)
            if size == mode.scaling_size and dims is not None and "api_s" in r["compile"]:
                t0 = time.perf_counter()
                r["scaling"] = measure_scaling(r, dims, work, seed, mode.compile_repeat)
                r["phase_s"]["scaling"] = round(time.perf_counter() - t0, 2)
            r["targets"] = targets(r)
            results[size] = r
    elapsed = time.perf_counter() - started

    meta = {"mode": mode.name, "seed": seed, "elapsed_s": round(elapsed, 2), "machine": machine()}
    for size, r in results.items():
        write_json(out_dir / f"{size}.json", {**meta, **r})
    write_json(out_dir / "latest.json", {**meta, "sizes": results})

    print(f"toolc benchmark ({mode.name} mode, seed {seed}, {elapsed:.1f} s)")
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
    mismatched = any((r.get("resolve") or {}).get("mismatches") for r in results.values())
    return 1 if failed or mismatched else 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        kind, *rest = argv[1:]
        if kind == "compile":
            compile_worker(Path(rest[0]), Path(rest[1]))
        elif kind == "latency":
            latency_worker(Path(rest[0]), Path(rest[1]), Path(rest[2]), int(rest[3]), int(rest[4]))
        elif kind == "wrapping":
            wrapping.worker(Path(rest[0]), int(rest[1]), int(rest[2]))
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
    args = parser.parse_args(argv)
    mode = QUICK if args.quick else FULL
    if args.sizes:
        sizes = tuple(s.strip() for s in args.sizes.split(",") if s.strip())
        unknown = set(sizes) - {"small", *SIZES}
        if unknown:
            parser.error(f"unknown size(s): {', '.join(sorted(unknown))}")
        scaling = mode.scaling_size if mode.scaling_size in sizes else ""
        mode = Mode(**{**_fields(mode), "sizes": sizes, "scaling_size": scaling})
    if args.contexts:
        mode = Mode(**{**_fields(mode), "contexts": args.contexts})
    if args.repeat:
        mode = Mode(**{**_fields(mode), "compile_repeat": args.repeat})
    return run(mode, args.out, args.seed, args.keep)


def _fields(mode: Mode) -> dict[str, Any]:
    return {f: getattr(mode, f) for f in Mode.__dataclass_fields__}


if __name__ == "__main__":
    raise SystemExit(main())
