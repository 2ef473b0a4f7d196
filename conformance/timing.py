"""``python -m conformance.timing`` (part of ``make conformance``): what one request's tool
policy costs in OpenClaw's own code and in toolc's runtime, on the same deployment.

One synthetic OpenClaw config (seeded: agents with profiles, lists and byProvider entries,
Telegram and WhatsApp groups with tools and toolsBySender rules) is imported for each release
(``toolc import-openclaw``'s code, ``openclaw=`` the release line), compiled and loaded; the
contexts are drawn from what the config names (``roundtrip.contexts_for``). Per release:

- OpenClaw: the oracle's ``time`` op (``timing.mjs``): the release's policy chain per context,
  timed inside Node after one warm-up run, the process started and the config loaded (by the
  release's own loader for 2026.9) before any timing;
- toolc: ``resolve`` (the per-request memo hit a gateway sees for a repeated context) and
  ``resolve_uncached`` (the first request of a context), per context the mean of back-to-back
  calls with ``time.perf_counter_ns``.

Only contexts toolc answers (not AgentSelectionRequiredError) are timed, on both sides. The
figures are medians over contexts, in microseconds per request; the ratios are OpenClaw's
median over toolc's. Timing only: ``python -m conformance`` checks that the answers agree.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolc.api import compile_files
from toolc.importers.openclaw import import_openclaw
from toolc.pipeline.writer import publish

from conformance.__main__ import RELEASES, Oracle, fetch
from conformance.roundtrip import contexts_for
from tests.helpers import import_runtime

TOOLS = ("read", "write", "edit", "exec", "process", "message", "web_search", "web_fetch",
         "browser", "canvas", "cron", "sessions_list", "sessions_send", "image")
PROFILES = ("minimal", "coding", "messaging", "full")
PROVIDERS = ("openai", "anthropic", "google", "openai/gpt-5", "anthropic/claude-sonnet-4-5")


def _some(rng: random.Random, k: int) -> list[str]:
    return sorted({TOOLS[int(rng.random() * len(TOOLS))] for _ in range(k)})


def _groups(rng: random.Random, prefix: str, count: int, senders: int) -> dict[str, Any]:
    groups: dict[str, Any] = {}
    for i in range(count):
        entry: dict[str, Any] = {}
        if rng.random() < 0.7:
            entry["tools"] = {"deny": _some(rng, 2)}
        rules = {f"id:{1000 + int(rng.random() * 500)}": {"alsoAllow": _some(rng, 1)}
                 for _ in range(int(rng.random() * (senders + 1)))}
        if rules:
            rules["*"] = {"deny": _some(rng, 1)}
            entry["toolsBySender"] = rules
        groups[f"{prefix}{i}"] = entry
    groups["*"] = {"tools": {"allow": ["message", "sessions_list", "read"]}}
    return groups


def deployment(seed: int, agents: int, groups: int, senders: int = 4) -> dict[str, Any]:
    """The OpenClaw config both releases are timed on (same seed, same config)."""
    rng = random.Random(f"{seed}:timing")
    roster: list[dict[str, Any]] = [{"id": "main", "default": True, "tools": {"profile": "coding"}}]
    for i in range(agents - 1):
        tools: dict[str, Any] = {"profile": PROFILES[int(rng.random() * len(PROFILES))]}
        if rng.random() < 0.5:
            tools["alsoAllow"] = _some(rng, 2)
        if rng.random() < 0.5:
            tools["deny"] = _some(rng, 2)
        if rng.random() < 0.4:
            key = PROVIDERS[int(rng.random() * len(PROVIDERS))]
            tools["byProvider"] = {key: {"deny": _some(rng, 1)}}
        roster.append({"id": f"agent{i + 1:03d}", "tools": tools})
    half = max(1, groups // 2)
    return {
        "agents": {"defaults": {"subagents": {"maxSpawnDepth": 2}}, "list": roster},
        "tools": {
            "profile": "coding",
            "alsoAllow": ["message", "web_search"],
            "deny": ["canvas"],
            "byProvider": {"openai/gpt-5": {"alsoAllow": ["apply_patch"]},
                           "google": {"profile": "minimal"}},
            "exec": {"applyPatch": {"enabled": True, "allowModels": ["gpt-5"]}},
        },
        "channels": {
            "telegram": {"groups": {"-1001": {"tools": {"deny": ["exec"]}},
                                    **_groups(rng, "-100", half, senders)}},
            "whatsapp": {"groups": _groups(rng, "1203", groups - half, senders)},
        },
    }


def _per_context(fn: Callable[..., Any], contexts: list[dict[str, Any]], reps: int) -> list[float]:
    clock = time.perf_counter_ns
    out = []
    for kw in contexts:
        fn(**kw)
        t0 = clock()
        for _ in range(reps):
            fn(**kw)
        out.append((clock() - t0) / reps)
    return out


def _us(ns: list[float]) -> float:
    return round(statistics.median(ns) / 1000, 2) if ns else float("nan")


def measure(line: str, config: dict[str, Any], work: Path, args: argparse.Namespace
            ) -> dict[str, Any]:
    """One release: import, compile and load the config, then time both sides."""
    version, script = RELEASES[line]
    imported = import_openclaw(json.loads(json.dumps(config)), "timing.json",
                               allow_partial=True, openclaw=line)
    defs = work / line / "defs"
    for rel, text in imported.files.items():
        (defs / rel).parent.mkdir(parents=True, exist_ok=True)
        (defs / rel).write_text(text, "utf-8")
    package = f"timing_rt_{line.replace('.', '_')}"
    files, _, _ = compile_files(defs, package=package, with_models=False)
    publish(files, work / line / "out")
    runtime = import_runtime(work / line / "out", package)
    # the release's own answer: a group the session key does not name is ignored, as OpenClaw
    # 2026.9 ignores it, not refused (strict=False)
    resolve = functools.partial(runtime.resolve, strict=False)
    resolve_uncached = functools.partial(runtime.resolve_uncached, strict=False)
    contexts = []  # the first --contexts drawn contexts toolc answers
    for ctx in contexts_for(json.loads(json.dumps(config)), 20 * args.contexts, seed=args.seed):
        try:
            resolve_uncached(**ctx)
        except Exception:  # a context toolc refuses is not timed
            continue
        contexts.append(ctx)
        if len(contexts) == args.contexts:
            break
    node, pkg = fetch(line)
    oracle = Oracle(pkg, node=node, script=script)
    try:
        answer = oracle.ask({"op": "time", "config": config, "plugins": [],
                             "contexts": contexts, "iterations": args.iterations})
    finally:
        oracle.close()
    openclaw = _us(answer["ns"])
    cached = _us(_per_context(resolve, contexts, args.reps))
    uncached = _us(_per_context(resolve_uncached, contexts, args.reps))
    return {"release": version, "contexts": len(contexts), "openclaw_us": openclaw,
            "toolc_cached_us": cached, "toolc_uncached_us": uncached,
            "ratio_cached": round(openclaw / cached, 1) if cached else None,
            "ratio_uncached": round(openclaw / uncached, 1) if uncached else None,
            "oracle_iterations": answer["iterations"], "toolc_reps": args.reps}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("release", "contexts", "OpenClaw us/req", "toolc cached", "toolc uncached",
            "x cached", "x uncached")
    lines = [" | ".join(head)]
    for r in rows:
        lines.append(" | ".join(str(v) for v in (
            r["release"], r["contexts"], r["openclaw_us"], r["toolc_cached_us"],
            r["toolc_uncached_us"], r["ratio_cached"], r["ratio_uncached"])))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.timing",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--openclaw", default="2026.3,2026.9",
                        help="release lines, comma-separated (default: both)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--groups", type=int, default=100, help="groups over both channels")
    parser.add_argument("--contexts", type=int, default=100)
    parser.add_argument("--iterations", type=int, default=20,
                        help="timed OpenClaw runs per context")
    parser.add_argument("--reps", type=int, default=200, help="timed toolc calls per context")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    lines = [x.strip() for x in args.openclaw.split(",") if x.strip()]
    unknown = set(lines) - set(RELEASES)
    if unknown:
        parser.error(f"unknown release line(s): {', '.join(sorted(unknown))}")
    config = deployment(args.seed, args.agents, args.groups)
    rows = []
    with tempfile.TemporaryDirectory(prefix="toolc-timing-") as tmp:
        for line in lines:
            print(f"timing OpenClaw {RELEASES[line][0]} and toolc ...", file=sys.stderr)
            rows.append(measure(line, config, Path(tmp), args))
    print(f"per-request tool policy, median over contexts (us; {args.agents} agents, "
          f"{args.groups} groups, seed {args.seed})")
    print(table(rows))
    if args.out is not None:
        args.out.write_text(json.dumps({"rows": rows, "agents": args.agents,
                                        "groups": args.groups, "seed": args.seed},
                                       sort_keys=True, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
