"""``make conformance``: toolc's runtime (and reference interpreter) against OpenClaw's own code.

Fetches the pinned release (``fetch.sh``, cached outside the repository), starts the Node
oracle once, then for random configs from ``strategies`` builds toolc definitions
(``mapping``), compiles and imports the runtime, and compares every context with OpenClaw.
Every disagreement must be explained by a documented decision (``decisions``); exit 1 if one is
not. Results (counts and one example per kind of difference) go to a JSON file in the cache.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from toolc.api import compile_files, resolve_definitions
from toolc.diagnostics import DefinitionsError
from toolc.pipeline.writer import publish
from toolc.rules.context import Context, group_context, parse_session_key
from toolc.rules.names import normalize_channel
from toolc.semantics.reference import ReferenceInterpreter

from conformance.decisions import DECISIONS, explain
from conformance.mapping import definitions_from
from conformance.run9 import main9, main_routing9
from conformance.strategies import config, contexts, plugin_tools
from tests.helpers import import_runtime

HERE = Path(__file__).resolve().parent


# Release line -> (pinned npm version, oracle script). 2026.3.2 runs on the system Node (20),
# 2026.9.x needs Node >= 24 (conformance/node.sh installs it from the npm registry).
RELEASES = {"2026.3": ("2026.3.2", "oracle.mjs"), "2026.9": ("2026.9.6", "oracle9.mjs")}


def fetch(line: str) -> tuple[str, str]:
    """Install (once, cached) the release of ``line`` and the Node it needs: (node, package)."""
    version, _ = RELEASES[line]
    env = {**os.environ, "OPENCLAW_VERSION": version}
    fetched = subprocess.run(["bash", str(HERE / "fetch.sh")], stdout=subprocess.PIPE,
                             text=True, check=True, env=env)
    node = "node"
    if line != "2026.3":
        node = subprocess.run(["bash", str(HERE / "node.sh")], stdout=subprocess.PIPE,
                              text=True, check=True).stdout.strip().splitlines()[-1]
    return node, fetched.stdout.strip().splitlines()[-1]


class Oracle:
    """The Node harness over OpenClaw's compiled code, one process for the whole run."""

    def __init__(self, package: str, *, node: str = "node", script: str = "oracle.mjs") -> None:
        self.proc = subprocess.Popen([node, str(HERE / script), package],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)

    def ask(self, request: Mapping[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"oracle: {answer['error']}")
        return answer

    def resolve(self, cfg: Mapping[str, Any], plugins: Any, ctxs: list[dict[str, Any]]
                ) -> list[list[str]]:
        answer = self.ask({"op": "resolve", "config": cfg, "plugins": plugins,
                           "contexts": ctxs})
        return [sorted(r["tools"]) for r in answer["results"]]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Run:
    def __init__(self, oracle: Oracle, catalog: Mapping[str, Any], work: Path) -> None:
        self.oracle, self.catalog, self.work = oracle, catalog, work
        self.counts: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.examples: dict[str, Any] = {}
        self.explained: Counter[str] = Counter()
        self.ids = itertools.count()
        # per group-layer channel: contexts, identical, explained, with a group policy (toolc)
        self.by_channel: dict[str, Counter[str]] = {}

    def deployment(self, cfg: dict[str, Any], plugins: list[dict[str, Any]],
                   ctxs: list[dict[str, Any]]) -> None:
        n = next(self.ids)
        defs = self.work / f"d{n}" / "defs"
        defs.mkdir(parents=True)
        data = {"version": 1, **definitions_from(cfg, plugins, self.catalog)}
        (defs / "d.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
        try:
            files, _, _ = compile_files(defs, package=f"oc_rt_{n}", with_models=False)
        except DefinitionsError as exc:
            self.counts["configs toolc refuses"] += 1
            self.examples.setdefault("refused: " + exc.diagnostics[0].code, {
                "config": cfg, "diagnostic": exc.diagnostics[0].render()})
            return
        publish(files, self.work / f"d{n}" / "out")
        runtime = import_runtime(self.work / f"d{n}" / "out", f"oc_rt_{n}")
        reference = ReferenceInterpreter(resolve_definitions(defs))
        answers = self.oracle.resolve(cfg, plugins, ctxs)
        self.counts["deployments"] += 1
        for ctx, theirs in zip(ctxs, answers, strict=True):
            ours = sorted(runtime.resolve(**ctx).names)
            self.counts["contexts"] += 1
            resolution = reference.resolve(**ctx)
            if ours != sorted(resolution.names):
                self.counts["runtime != reference"] += 1
            per = self.by_channel.setdefault(_group_channel(ctx), Counter())
            per["contexts"] += 1
            per["group"] += any(s.layer == "group" and s.active for s in resolution.steps)
            if ctx.get("sandboxed") is not True and reference.sandboxed(Context.of(**ctx)):
                self.counts["sandboxed by mode"] += 1
            if ours == theirs:
                self.counts["agree"] += 1
                per["agree"] += 1
                continue
            decision = explain(self.oracle, cfg, plugins, ctx, ours, theirs)
            if decision is not None:
                self.explained[decision] += 1
                per["explained"] += 1
                continue
            self.record(cfg, plugins, ctx, ours, theirs)

    def record(self, cfg: dict[str, Any], plugins: Any, ctx: dict[str, Any], ours: list[str],
               theirs: list[str]) -> None:
        only_toolc, only_openclaw = sorted(set(ours) - set(theirs)), sorted(set(theirs) -
                                                                            set(ours))
        kind = (f"toolc only: {','.join(only_toolc) or '-'} | openclaw only: "
                f"{','.join(only_openclaw) or '-'} | keys: {','.join(sorted(ctx))}")
        self.kinds[kind] += 1
        self.counts["unexplained"] += 1
        self.examples.setdefault(kind, {"config": cfg, "plugins": plugins, "context": ctx,
                                        "toolc": ours, "openclaw": theirs})


def _aim(ctx: dict[str, Any], cfg: Mapping[str, Any], data: st.DataObject
         ) -> dict[str, Any]:
    """Half of the contexts go to a channel the config declares (often with one of its
    declared group ids and guilds), so that every channel's group rule is exercised, not
    only reached by luck."""
    declared = sorted(cfg.get("channels", {}))
    if not declared or not data.draw(st.booleans()):
        return ctx
    name = data.draw(st.sampled_from(declared))
    channel = cfg["channels"][name]
    maps = [channel.get(k) or {} for k in ("groups", "channels")]
    maps += [a.get(k) or {} for a in channel.get("accounts", {}).values()
             for k in ("groups", "channels")]
    guilds = channel.get("guilds", {})
    maps += [g.get("channels") or {} for g in guilds.values()]
    keys = sorted({k for m in maps for k in m})
    out = {**ctx, "message_provider": name}
    if keys and data.draw(st.booleans()):
        out["group_id"] = data.draw(st.sampled_from(keys))
    if guilds and data.draw(st.booleans()):
        out["group_space"] = data.draw(st.sampled_from(sorted(guilds)))
    return out


def _group_channel(ctx: Mapping[str, Any]) -> str:
    """The channel whose group rule a context reaches (as both engines pick it)."""
    session = parse_session_key(ctx.get("session_key"))
    spawned, _ = group_context(ctx.get("spawned_by"))
    given = ctx.get("message_provider")
    given = given if given is not None and given.strip() else None
    return normalize_channel(given if given is not None else session.channel or spawned) \
        or "(none)"


def _catalog_report(catalog: Mapping[str, Any]) -> list[str]:
    """How the 2026.3 starter (what `toolc init --openclaw 2026.3` writes; the shipped
    definitions/ follow 2026.9 and its starter is generated from 2026.9.6's own data) differs
    from 2026.3.2's catalog, groups and profiles."""
    shipped = resolve_definitions(HERE.parent / "compiler" / "targets" / "starter-2026.3")
    lines = []
    for group, members in sorted(catalog["groups"].items()):
        ours = [m for m in shipped.groups.get(group, ()) if m in
                {t.name for t in shipped.tools if not t.plugin or t.plugin == "memory-core"}]
        if sorted(ours) != sorted(members):
            lines.append(f"{group}: toolc {sorted(ours)} vs OpenClaw {sorted(members)}")
    # the catalog as written (a channel tool such as whatsapp_login is built only for a
    # declared channel, and the starter declares none)
    owner = sorted(t.name for t in shipped.defs.tools if t.owner_only)
    if owner != sorted(catalog["ownerOnly"]):
        lines.append(f"owner-only: toolc {owner} vs OpenClaw {catalog['ownerOnly']}")
    for name, policy in sorted(catalog["profiles"].items()):
        profile = shipped.defs.profiles.get(name)
        expanded = sorted({m for e in (profile.allow.items if profile and profile.allow else ())
                           for m in shipped.groups.get(e.name, (e.name,))})
        if expanded != sorted(policy.get("allow", [])):
            lines.append(f"profile {name} (D4): toolc {expanded} vs OpenClaw "
                         f"{sorted(policy.get('allow', []))}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__)
    parser.add_argument("--examples", type=int, default=300, help="random configs")
    parser.add_argument("--contexts", type=int, default=20, help="contexts per config")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--openclaw", choices=sorted(RELEASES), default="2026.3",
                        help="the OpenClaw release line to compare with (default 2026.3)")
    parser.add_argument("--routing", action="store_true",
                        help="messages in: compare the route (resolveAgentRoute) and the routed "
                        "run's tools; --contexts is the messages per config (2026.9)")
    args = parser.parse_args()
    if args.routing:
        return main_routing9(args, fetch, Oracle, RELEASES)
    if args.openclaw == "2026.9":
        return main9(args, fetch, Oracle, RELEASES)
    started = time.monotonic()
    node, package = fetch(args.openclaw)
    cache = Path(package).parent.parent
    oracle = Oracle(package, node=node)
    try:
        catalog = oracle.ask({"op": "catalog"})
        with tempfile.TemporaryDirectory(prefix="toolc-conformance-") as tmp:
            run = Run(oracle, catalog, Path(tmp))

            @seed(args.seed)
            @settings(max_examples=args.examples, deadline=None, database=None,
                      phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(cfg=config(), plugins=plugin_tools(),
                   ctxs=st.lists(contexts, min_size=args.contexts, max_size=args.contexts),
                   data=st.data())
            def compare(cfg: dict[str, Any], plugins: list[dict[str, Any]],
                        ctxs: list[dict[str, Any]], data: st.DataObject) -> None:
                run.deployment(cfg, plugins, [_aim(ctx, cfg, data) for ctx in ctxs])

            compare()
        selfcheck = oracle.ask({"op": "selfcheck", "config": {"tools": {"profile": "coding"}},
                                "contexts": [{}, {"sender_is_owner": True},
                                             {"message_provider": "voice"}]})
    finally:
        oracle.close()
    return report(run, catalog, selfcheck, cache, args, time.monotonic() - started)


def report(run: Run, catalog: Mapping[str, Any], selfcheck: Any, cache: Path,
           args: argparse.Namespace, seconds: float) -> int:
    c = run.counts
    total = c["contexts"]
    explained = sum(run.explained.values())
    print(f"toolc vs openclaw@2026.3.2: {c['deployments']} configs, {total} contexts "
          f"(seed {args.seed}, {seconds:.0f} s)")
    if total:
        print(f"  identical tool sets:        {c['agree']:>6} ({100 * c['agree'] / total:.2f}%)")
        print(f"  explained by a decision:    {explained:>6} "
              f"({100 * explained / total:.2f}%)")
        print(f"  unexplained:                {c['unexplained']:>6}")
        print(f"  runtime != reference:       {c['runtime != reference']:>6}")
    print(f"  configs toolc refuses:      {c['configs toolc refuses']:>6}")
    print(f"  sandboxed by a sandbox mode (no sandboxed=True): {c['sandboxed by mode']}")
    print("  per group-layer channel (contexts: identical + explained / all; with a toolc "
          "group policy):")
    for name, per in sorted(run.by_channel.items()):
        print(f"    {name:<14} {per['agree'] + per['explained']:>5} / {per['contexts']:<5} "
              f"({per['group']} with a group policy)")
    for name, count in run.explained.most_common():
        print(f"    decision {name}: {count}")
    for kind, count in run.kinds.most_common(20):
        print(f"    UNEXPLAINED x{count}: {kind}")
    assumed = {"image", "pdf", "memory_search", "memory_get", "web_search", "web_fetch"}
    mismatched = [r for r in selfcheck["results"]
                  if sorted(set(r["mine"]) - assumed) != sorted(set(r["real"]) - assumed)]
    print(f"  harness self-check against createOpenClawCodingTools: "
          f"{len(selfcheck['results']) - len(mismatched)}/{len(selfcheck['results'])} agree "
          f"(tools built from runtime state excluded: {', '.join(sorted(assumed))})")
    for line in _catalog_report(catalog):
        print(f"  2026.3 starter vs 2026.3.2: {line}")
    out = cache / "results" / f"conformance-seed{args.seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"counts": dict(c), "explained": dict(run.explained),
                               "unexplained": dict(run.kinds), "examples": run.examples,
                               "decisions": [d.name for d in DECISIONS]}, indent=2) + "\n")
    print(f"  details: {out}")
    return 1 if c["unexplained"] or c["runtime != reference"] or mismatched else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
