"""``python -m conformance.releases``: openclaw@2026.9.6 against openclaw@2026.3.2, and the 2026.9
oracle against the release's own ``createOpenClawCodingTools``.

Random 2026.9-shaped configs and contexts (``strategies9``) go to both releases' oracles (the
2026.3.2 one gets the roster as ``agents.list``, the shape it reads; every other key as it is).
Counted per context:

- *identical*: the same tool set from both releases;
- *identical on common tools*: the same set once both answers are cut to the tools both
  catalogs know (2026.3's ``cron`` and ``image`` read as 2026.9's ``automations`` and
  ``view_image``), i.e. what changed in policy rather than in the catalog;
- 2026.9.6 refusals (``AgentSelectionRequired``, ``InvalidConfig`` from its config loader), which
  count as disagreements: 2026.3.2 never refuses.

Then the self-check: the real ``createOpenClawCodingTools`` beside oracle9's chaining on
plugin-free contexts (``--selfcheck N`` non-sandboxed contexts, default 400), tools built only from
runtime state left out (the list the oracle names). Results go to
``<cache>/results/releases-seed<S>.json``; the run exits 1 when the self-check disagrees.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from conformance.__main__ import RELEASES, Oracle, fetch
from conformance.strategies9 import aimed_contexts, config, plugin_tools

RENAMED_IN_2026_9 = {"cron": "automations", "image": "view_image"}


def legacy_roster(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The config as 2026.3.2 reads it: ``agents.entries`` becomes ``agents.list``."""
    out = json.loads(json.dumps(cfg))
    agents = out.get("agents") or {}
    if "entries" in agents:
        agents["list"] = [{"id": aid, **block} for aid, block in agents.pop("entries").items()]
    return out


class Comparison:
    def __init__(self, new: Oracle, old: Oracle, common: set[str], targets: Mapping[str, int]
                 ) -> None:
        self.new, self.old, self.common = new, old, common
        self.counts: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.examples: dict[str, Any] = {}
        # self-check kind ("plugin-free", "bundled plugins") -> contexts to check
        self.targets = dict(targets)
        self.selfcheck: dict[str, Counter[str]] = {k: Counter() for k in targets}
        self.selfcheck_failures: list[Any] = []
        self.selfcheck_assumed: list[str] = []
        self.refused: Counter[str] = Counter()  # loader issue path -> refused configs

    def deployment(self, cfg: dict[str, Any], plugins: list[dict[str, Any]],
                   ctxs: list[dict[str, Any]]) -> None:
        new = self.new.ask({"op": "resolve", "config": cfg, "plugins": plugins,
                            "contexts": ctxs})["results"]
        old = self.old.ask({"op": "resolve", "config": legacy_roster(cfg), "plugins": plugins,
                            "contexts": ctxs})["results"]
        self.counts["configs"] += 1
        if new and new[0].get("error_kind") == "InvalidConfig":
            self.counts["configs 2026.9.6 refuses"] += 1
            for issue in {i["path"] for i in new[0].get("issues", [])}:
                self.refused[issue] += 1
            self.examples.setdefault("InvalidConfig: " + new[0]["issues"][0]["path"]
                                     if new[0].get("issues") else "InvalidConfig",
                                     {"config": cfg, "answer": new[0]})
        for ctx, theirs9, theirs3 in zip(ctxs, new, old, strict=True):
            self.context(cfg, plugins, ctx, theirs9, theirs3)
        for kind in self.targets:
            if self.selfcheck[kind]["checked"] < self.targets[kind]:
                self.check_self(kind, cfg, ctxs)

    def context(self, cfg: dict[str, Any], plugins: Any, ctx: dict[str, Any],
                new: Mapping[str, Any], old: Mapping[str, Any]) -> None:
        self.counts["contexts"] += 1
        if "error_kind" in new:
            self.counts[f"2026.9.6 refuses: {new['error_kind']}"] += 1
            if new["error_kind"] != "InvalidConfig":
                self.examples.setdefault(f"refusal: {new['error_kind']}", {
                    "config": cfg, "context": ctx, "answer": new})
            return
        tools9, tools3 = set(new["tools"]), {RENAMED_IN_2026_9.get(t, t) for t in old["tools"]}
        if tools9 == set(old["tools"]):
            self.counts["identical"] += 1
        if tools9 & self.common == tools3 & self.common:
            self.counts["identical on common tools"] += 1
            return
        gained = sorted((tools9 - tools3) & self.common)
        lost = sorted((tools3 - tools9) & self.common)
        kind = f"2026.9 adds: {','.join(gained) or '-'} | 2026.9 drops: {','.join(lost) or '-'}"
        self.kinds[kind] += 1
        self.examples.setdefault(kind, {"config": cfg, "plugins": plugins, "context": ctx,
                                        "2026.9.6": sorted(tools9),
                                        "2026.3.2": sorted(old["tools"])})

    def check_self(self, kind: str, cfg: dict[str, Any], ctxs: list[dict[str, Any]]) -> None:
        answer = self.new.ask({"op": "selfcheck", "config": cfg, "contexts": ctxs,
                               "plugins": kind == "bundled plugins"})
        counts = self.selfcheck[kind]
        for ctx, r in zip(ctxs, answer["results"], strict=True):
            if r.get("skipped"):
                counts[f"skipped: {r['skipped']}"] += 1
                continue
            if counts["checked"] >= self.targets[kind]:
                continue
            counts["checked"] += 1
            counts["agree" if r["agree"] else "differ"] += 1
            if not r["agree"] and len(self.selfcheck_failures) < 20:
                self.selfcheck_failures.append({"kind": kind, "config": cfg, "context": ctx,
                                                **r})
        self.selfcheck_assumed = answer["assumed"]


def common_tools(new_catalog: Mapping[str, Any], old_catalog: Mapping[str, Any]) -> set[str]:
    new = {t["name"] for t in new_catalog["tools"]}
    new |= {t["name"] for p in new_catalog["plugins"] for t in p["tools"]}
    old = {RENAMED_IN_2026_9.get(t["name"], t["name"]) for t in old_catalog["definitions"]}
    old |= {"memory_search", "memory_get"}
    return new & old


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.releases", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=120, help="random configs")
    parser.add_argument("--contexts", type=int, default=20, help="contexts per config")
    parser.add_argument("--selfcheck", type=int, default=400,
                        help="plugin-free contexts to check against createOpenClawCodingTools")
    parser.add_argument("--selfcheck-plugins", type=int, default=200,
                        help="contexts to check with the bundled plugins loaded for real")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    node9, package9 = fetch("2026.9")
    node3, package3 = fetch("2026.3")
    new = Oracle(package9, node=node9, script=RELEASES["2026.9"][1])
    old = Oracle(package3, node=node3, script=RELEASES["2026.3"][1])
    try:
        new_catalog, old_catalog = new.ask({"op": "catalog"}), old.ask({"op": "catalog"})
        run = Comparison(new, old, common_tools(new_catalog, old_catalog),
                         {"plugin-free": args.selfcheck,
                          "bundled plugins": args.selfcheck_plugins})

        @seed(args.seed)
        @settings(max_examples=args.examples, deadline=None, database=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(cfg=config(), plugins=plugin_tools(), data=st.data())
        def compare(cfg: dict[str, Any], plugins: list[dict[str, Any]],
                    data: st.DataObject) -> None:
            run.deployment(cfg, plugins, data.draw(aimed_contexts(cfg, args.contexts)))

        compare()
    finally:
        new.close()
        old.close()
    cache = Path(package9).parent.parent.parent
    return report(run, args, cache, time.monotonic() - started,
                  {"2026.9": new_catalog["harness"], "2026.3": old_catalog["release"]})


def report(run: Comparison, args: argparse.Namespace, cache: Path, seconds: float,
           harness: Mapping[str, Any]) -> int:
    c, total = run.counts, run.counts["contexts"]

    def pct(n: int, d: int = total) -> str:
        return f"{n:>6} ({100 * n / d:.2f}%)" if d else f"{n:>6}"

    refusals = {k: v for k, v in c.items() if k.startswith("2026.9.6 refuses")}
    print(f"openclaw@2026.9.6 vs openclaw@2026.3.2: {c['configs']} configs, {total} contexts "
          f"(seed {args.seed}, {seconds:.0f} s)")
    print(f"  identical tool sets:            {pct(c['identical'])}")
    print(f"  identical on common tools:      {pct(c['identical on common tools'])}")
    for name, count in sorted(refusals.items()):
        print(f"  {name + ':':<32}{pct(count)}")
    print(f"  configs 2026.9.6 refuses:       {pct(c['configs 2026.9.6 refuses'], c['configs'])}"
          f" ({', '.join(f'{p}: {n}' for p, n in sorted(run.refused.items()))})")
    for kind, count in run.kinds.most_common(12):
        print(f"    x{count}: {kind}")
    print("  oracle9 self-check against createOpenClawCodingTools (non-sandboxed contexts; "
          f"runtime-state tools left out: {', '.join(run.selfcheck_assumed)}):")
    for kind, s in run.selfcheck.items():
        skipped = sum(v for k, v in s.items() if k.startswith("skipped"))
        print(f"    {kind + ':':<17} {s['agree']}/{s['checked']} agree ({skipped} contexts "
              "skipped: sandboxed, refused config or sandbox status)")
    out = cache / "results" / f"releases-seed{args.seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "seed": args.seed, "counts": dict(c), "kinds": dict(run.kinds),
        "refusedConfigs": dict(run.refused),
        "selfcheck": {k: dict(v) for k, v in run.selfcheck.items()},
        "selfcheckFailures": run.selfcheck_failures,
        "harness": harness, "examples": run.examples}, indent=2, sort_keys=True) + "\n")
    print(f"  details: {out}")
    return 1 if any(s["differ"] for s in run.selfcheck.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
