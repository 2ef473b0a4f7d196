"""Messages in (issue 32): what route bindings cost, beside the size's own figures in the same
run. A variant of the size gets ``BINDINGS[size]`` route bindings of mixed tiers
(``bench.generate.write_bindings``: 10,000 at large); it is compiled and imported
interleaved with the project without them, and a worker times ``route`` and
``resolve_message`` of cached messages on its build against a cached ``resolve`` of the same
runs, after holding the runtime's routes to the reference router's."""

from __future__ import annotations

import collections
import gc
import importlib
import json
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.compiling import compile_once
from bench.generate import (
    BINDING_ACCOUNTS,
    BINDING_GUILDS,
    BINDING_ROLES,
    BINDING_TEAMS,
    BINDINGS,
    SENDER_POOL,
    provider_key_names,
    sender,
    write_bindings,
)
from bench.harness import RUNTIME_PACKAGE, Mode, last_json_line, log, run_measured, tail, worker
from bench.importing import _IMPORT_SNIPPET
from bench.latency import _stats_ns, _time_each

ROUTE_KEYWORDS = ("account_id", "peer", "parent_peer", "guild_id", "team_id",
                  "member_role_ids", "default_agent_id", "dm_scope", "group_scope")
# messages whose resolve_message the worker also holds to the reference's (the reference
# takes tens of milliseconds a request at large); every message's route is compared
CHECKED_TOOLS = 200
# fresh interpreters per build for the import figure (alternating; the median counts)
IMPORT_RUNS = 11
# compiles per build for the compile figure (alternating; the fastest counts): the target
# is 10% and a large compile on a shared machine varies by more than that from run to run
COMPILE_PAIRS = 4


def draw_messages(bindings: list[dict[str, Any]], channels: list[str], count: int,
                  seed: str) -> list[dict[str, Any]]:
    """``count`` messages: three in four aimed at a binding (its channel, account, peer, a
    wildcard's kind with any id, guild, team, one of its roles; the peer sometimes as the
    thread's parent), the rest on a random channel, account and chat; each with a sender,
    an owner flag and a model."""
    rng = random.Random(seed)
    providers = provider_key_names(4)
    out = []
    for i in range(count):
        if bindings and rng.random() < 0.75:
            msg = _aimed(rng, bindings[rng.randrange(len(bindings))]["match"])
        else:
            msg = {"channel": channels[rng.randrange(len(channels))]}
            if rng.random() < 0.5:
                msg["account_id"] = BINDING_ACCOUNTS[rng.randrange(len(BINDING_ACCOUNTS))]
            if rng.random() < 0.7:
                msg["peer"] = ["group", f"-100{rng.randrange(10**9):09d}"]
        who = sender(rng.randrange(SENDER_POOL))
        msg["sender_id"] = who["id"]
        if rng.random() < 0.3:
            msg["sender_username"] = who["username"]
        msg["sender_is_owner"] = rng.random() < 0.1
        if rng.random() < 0.6:
            msg["model_provider"] = providers[i % len(providers)]
        out.append(msg)
    return out


def _aimed(rng: random.Random, match: dict[str, Any]) -> dict[str, Any]:
    msg: dict[str, Any] = {"channel": match["channel"]}
    account = match.get("accountId")
    if account not in (None, "*"):
        msg["account_id"] = account
    elif rng.random() < 0.3:
        msg["account_id"] = BINDING_ACCOUNTS[rng.randrange(len(BINDING_ACCOUNTS))]
    peer = match.get("peer")
    if peer is not None:
        pid = f"-100{rng.randrange(10**9):09d}" if peer["id"] == "*" else peer["id"]
        if rng.random() < 0.15:  # a thread of the bound chat
            msg["parent_peer"] = [peer["kind"], pid]
            msg["peer"] = [peer["kind"], f"{pid}:thread"]
        else:
            msg["peer"] = [peer["kind"], pid]
    if "guildId" in match:
        msg["guild_id"] = match["guildId"] if rng.random() < 0.9 else f"{BINDING_GUILDS + 1:06d}"
    if "teamId" in match:
        msg["team_id"] = match["teamId"] if rng.random() < 0.9 else f"team-{BINDING_TEAMS + 1}"
    if match.get("roles"):
        mine = match["roles"][0] if rng.random() < 0.8 else f"role{BINDING_ROLES + 1}"
        msg["member_role_ids"] = [mine]
    return msg


def measure_routing(size: str, defs: Path, work: Path, *, mode: Mode, seed: int,
                    openclaw: str | None, dims: dict[str, int]) -> dict[str, Any] | None:
    """The size with and without ``BINDINGS[size]`` bindings: compile (alternating, the
    fastest of ``COMPILE_PAIRS`` or ``mode.compile_repeat`` each), runtime import (fresh
    interpreters, alternating, each median), and the cached route / resolve_message latency
    of the bound build."""
    count = BINDINGS.get(size)
    if not count:
        return None
    variant = work / f"defs-{size}-bindings"
    shutil.rmtree(variant, ignore_errors=True)
    shutil.copytree(defs, variant)
    bindings = write_bindings(variant, seed=seed, count=count, agents=dims["agents"],
                              channels=dims["channels"], openclaw=openclaw)
    bound, again = work / f"build-{size}-bindings", work / f"build-{size}-again"
    result: dict[str, Any] = {"bindings": count}
    runs: dict[Path, list[tuple[float, float]]] = {defs: [], variant: []}  # (wall, CPU)
    log(f"[{size}] routing: compile with and without {count:,} bindings (interleaved)")
    for _ in range(max(COMPILE_PAIRS, mode.compile_repeat)):
        for src, dst in ((defs, again), (variant, bound)):
            compiled = compile_once(src, dst)
            if "error" in compiled:
                return {**result, "error": compiled["error"]}
            runs[src].append((float(compiled["api_s"]), float(compiled["cpu_s"])))
    plain, routed = runs[defs], runs[variant]
    result["compile"] = {
        "without_s": min(w for w, _ in plain), "with_s": min(w for w, _ in routed),
        "without_runs_s": [w for w, _ in plain], "with_runs_s": [w for w, _ in routed],
        "ratio": round(min(w for w, _ in routed) / min(w for w, _ in plain), 3),
        # CPU time (the compile and its workers) hardly depends on what else runs
        "without_cpu_s": min(c for _, c in plain), "with_cpu_s": min(c for _, c in routed),
        "cpu_ratio": round(min(c for _, c in routed) / min(c for _, c in plain), 3),
    }
    log(f"[{size}] routing: runtime import with and without the bindings (interleaved)")
    imports = import_pair(again, bound, IMPORT_RUNS)
    if "error" in imports:
        return {**result, "error": imports["error"]}
    result["import"] = imports
    log(f"[{size}] routing: route and resolve_message latency ({mode.contexts} messages)")
    channels = sorted({b["match"]["channel"] for b in bindings})
    messages = draw_messages(bindings, channels, mode.contexts, f"{seed}:messages:{size}")
    messages_file = work / f"messages-{size}.json"
    messages_file.write_text(json.dumps(messages))
    proc = run_measured(worker("route-latency", str(variant), str(bound), str(messages_file),
                               str(mode.runtime_reps)))
    try:
        result["latency"] = last_json_line(proc.stdout)
    except ValueError:
        result["latency"] = {
            "error": f"route-latency worker exited {proc.returncode}: {tail(proc.stderr)}"}
    shutil.rmtree(again, ignore_errors=True)
    return result


def import_pair(without: Path, bound: Path, runs: int) -> dict[str, Any]:
    """``import toolc_runtime`` of the two builds in fresh interpreters, alternating (one
    cold run each first, which writes the .pyc files): each one's median, and the ratio. The
    machine's load drifts; alternating puts both builds under the same drift."""
    samples: dict[Path, list[float]] = {without: [], bound: []}
    for i in range(runs + 1):
        for out in (without, bound):
            code = _IMPORT_SNIPPET.format(out=str(out), package=RUNTIME_PACKAGE)
            proc = run_measured([sys.executable, "-c", code], timeout=120)
            if proc.returncode != 0:
                return {"error": f"import failed: {tail(proc.stderr)}"}
            if i:  # the first run of each is cold
                samples[out].append(last_json_line(proc.stdout)["import_ns"] / 1e6)
    plain, routed = statistics.median(samples[without]), statistics.median(samples[bound])
    return {"without_ms": round(plain, 3), "with_ms": round(routed, 3),
            "without_runs_ms": [round(x, 3) for x in samples[without]],
            "with_runs_ms": [round(x, 3) for x in samples[bound]],
            "ratio": round(routed / plain, 3)}


# -- the worker ---------------------------------------------------------------------------------
def _message(raw: dict[str, Any]) -> dict[str, Any]:
    """A JSON-loaded message as a caller's code passes it: keyword names interned, chats
    as ``(kind, id)`` tuples, roles a tuple."""
    msg = {sys.intern(k): v for k, v in raw.items()}
    for key in ("peer", "parent_peer", "member_role_ids"):
        if key in msg:
            msg[key] = tuple(msg[key])
    return msg


def _time_pairs(route: Callable[..., Any], resolve: Callable[..., Any],
                pairs: list[tuple[dict[str, Any], dict[str, Any]]], reps: int) -> list[float]:
    """Per message: ``reps`` rounds of ``route`` then ``resolve_message``, in ns a round."""
    clock = time.perf_counter_ns
    out = []
    for routing, msg in pairs:
        t0 = clock()
        for _ in range(reps):
            route(**routing)
            resolve(**msg)
        out.append((clock() - t0) / reps)
    return out


def _fields(r: Any) -> tuple[Any, ...]:
    return (r.agent_id, r.session_key, r.main_session_key, r.matched_by, r.channel,
            r.account_id, r.binding)


def route_latency_worker(defs: Path, out: Path, messages_file: Path, reps: int) -> None:
    """Compare the runtime's routes with the reference's (and the tools of the first
    ``CHECKED_TOOLS`` messages), then time cached ``route``, ``resolve_message``, both in a
    row (what a gateway that routes, then resolves, pays), and ``resolve`` of the same runs."""
    messages = [_message(m) for m in json.loads(messages_file.read_text())]
    sys.path.insert(0, str(out))
    rt = importlib.import_module(RUNTIME_PACKAGE)
    toolc = importlib.import_module("toolc")
    t0 = time.perf_counter()
    interp = toolc.load_reference(defs)
    interp.routing  # noqa: B018 - the loaded bindings, outside the comparison's time
    reference_load_s = time.perf_counter() - t0
    mismatches, examples, raised = 0, [], 0
    matched: collections.Counter[str] = collections.Counter()
    ok: list[dict[str, Any]] = []
    for i, msg in enumerate(messages):
        routing = {k: v for k, v in msg.items() if k in ROUTE_KEYWORDS or k == "channel"}
        try:
            got: tuple[Any, ...] = _fields(rt.route(**routing))
        except ValueError as exc:
            got = ("raise", type(exc).__name__)
        try:
            want: tuple[Any, ...] = _fields(interp.route(**routing))
        except ValueError as exc:
            want = ("raise", type(exc).__name__)
        if got[0] == "raise":
            raised += 1
        else:
            matched[got[3]] += 1
            ok.append(msg)
        if got == want and got[0] != "raise" and i < CHECKED_TOOLS:
            got = (*got, tuple(rt.resolve_message(**msg)[1].names))
            want = (*want, tuple(interp.resolve_message(**msg)[1].names))
        if got != want:
            mismatches += 1
            if len(examples) < 5:
                examples.append({"message": msg, "runtime": got, "reference": want})
    routings = [{k: v for k, v in m.items() if k in ROUTE_KEYWORDS or k == "channel"}
                for m in ok]
    contexts = [{**rt.Request(**m).context(), "strict": False} for m in ok]
    for routing, msg, context in zip(routings, ok, contexts, strict=True):  # every memo warm
        rt.route(**routing)
        rt.resolve_message(**msg)
        rt.resolve(**context)
    gc.collect()
    figures = {
        "route": _stats_ns(_time_each(rt.route, routings, reps)),
        "resolve_message": _stats_ns(_time_each(rt.resolve_message, ok, reps)),
        "route_and_resolve_message": _stats_ns(
            _time_pairs(rt.route, rt.resolve_message, list(zip(routings, ok, strict=True)),
                        reps)),
        "resolve": _stats_ns(_time_each(rt.resolve, contexts, reps)),
    }
    pair, base = figures["route_and_resolve_message"], figures["resolve"]
    print(json.dumps({
        "messages": len(messages), "timed": len(ok), "raised": raised, "reps": reps,
        **figures,
        "ratio_to_resolve": round(pair["median_ns"] / max(base["median_ns"], 1e-9), 2),
        "matched_by": dict(sorted(matched.items())),
        "mismatches": mismatches, "mismatch_examples": examples,
        "checked_tools": min(CHECKED_TOOLS, len(messages)),
        "reference_load_s": round(reference_load_s, 3),
        "mean_tools": round(statistics.fmean(len(rt.resolve_message(**m)[1].names)
                                             for m in ok), 1) if ok else 0,
    }, sort_keys=True, default=str))
