"""``python -m conformance --openclaw 2026.9``: toolc against openclaw@2026.9.6.

As the 2026.3 run, but every config goes the way a user's does: ``import-openclaw --openclaw
2026.9`` (the real importer, compiler/importers/openclaw.py) then ``build``. The deployment's
installed plugins are added to the imported definitions as catalog entries: the bundled plugins
the oracle always has (``harness.defaultPlugins``, the ones whose tools need no credentials) and
the random stand-ins of ``strategies9.plugin_tools`` (the importer's stubs are dropped: the
installation is known here), each tool with the optional flag its plugin
registers it with, under the name the importer gives it (``llm-task`` is ``llm_task`` in toolc:
OpenClaw's answers are read with the same spelling). Refusals count as answers:

- ``InvalidConfig`` from the release's loader must be a refusal by toolc's import or build;
- ``AgentSelectionRequired`` must be ``AgentSelectionRequiredError`` from the runtime and from
  the reference interpreter;
- a refusal on one side only is a difference like any other.

Tools OpenClaw builds only from runtime state are taken as present on both sides (oracle9's
ASSUMED: the oracle builds them, toolc's catalog has them), as the 2026.3 harness does.
"""

from __future__ import annotations

import argparse
import itertools
import json
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
from toolc.importers.openclaw import (
    ConfigError,
    ImportRefused,
    _stub_tool_name,
    import_openclaw,
    memory_slot,
)
from toolc.pipeline.writer import publish
from toolc.semantics.reference import ReferenceInterpreter

from conformance.decisions import DECISIONS_9, explain9
from conformance.strategies9 import aimed_contexts, config, plugin_tools
from tests.helpers import import_runtime

PLUGINS_FILE = "conformance/plugins.yaml"
POLICY_FILE = "openclaw/policy.yaml"
STUBS_FILE = "openclaw/stubs.yaml"
# Catalog tools OpenClaw builds only for a kind of run a toolc context does not describe
# (oracle9's RUN_MODE_ONLY: heartbeats, task suggestions, GitHub publication): the oracle never
# builds them, toolc offers them to every run its policy allows; compared without them.
RUN_MODE_ONLY = frozenset({"heartbeat_respond", "github_identity_status", "github_publish",
                           "suggest_task", "dismiss_task"})
REFUSED = "refused"  # toolc's answer when the import or the build refuses the config


def _answer(call: Any) -> Any:
    """A tool list, or the refusal's kind."""
    try:
        return sorted(set(call().names) - RUN_MODE_ONLY)
    except Exception as exc:  # the kind is the answer
        return {"error_kind": type(exc).__name__.removesuffix("Error")}


def _oracle_answer(result: Mapping[str, Any]) -> Any:
    if "error_kind" in result:
        return {"error_kind": result["error_kind"]}
    return sorted({_stub_tool_name(t) for t in result["tools"]})


class Run9:
    def __init__(self, oracle: Any, catalog: Mapping[str, Any], work: Path) -> None:
        self.oracle, self.catalog, self.work = oracle, catalog, work
        self.counts: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.explained: Counter[str] = Counter()
        self.examples: dict[str, Any] = {}
        self.ids = itertools.count()
        defaults = set(catalog["harness"]["defaultPlugins"])
        self.bundled = [p for p in catalog["plugins"] if p["id"] in defaults]
        assert RUN_MODE_ONLY == set(catalog["harness"]["runModeOnly"])

    def installed(self, cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The bundled plugins a gateway loads for ``cfg``: those enabled by default, and the
        others only where ``plugins.entries.<id>.enabled`` (or the memory slot) turns them on
        (the installation, not a policy: toolc's catalog lists what is loaded)."""
        plugins = _object(cfg.get("plugins"))
        entries = _object(plugins.get("entries"))
        slot = _object(plugins.get("slots")).get("memory")
        return [p for p in self.bundled if p["enabledByDefault"]
                or _object(entries.get(p["id"])).get("enabled") is True or slot == p["id"]]

    def definitions(self, cfg: dict[str, Any], plugins: list[dict[str, Any]], defs: Path
                    ) -> str | None:
        """Import ``cfg`` into ``defs`` (None) or the import's refusal."""
        try:
            result = import_openclaw(json.loads(json.dumps(cfg)), "openclaw.json",
                                     openclaw="2026.9")
        except (ImportRefused, ConfigError) as exc:
            return f"import: {str(exc).splitlines()[0][:120]}"
        files = dict(result.files)
        declared = set()
        for name, text in files.items():
            if name.endswith(".yaml") and name != STUBS_FILE:
                data = yaml.safe_load(text) or {}
                declared |= {t["name"] for t in data.get("catalog") or ()}
        installed = []
        off = []
        for plugin in [*self.installed(cfg), *plugins]:
            if not _allowed(cfg, plugin["id"]):
                off.append(plugin["id"])
            for tool in plugin["tools"]:
                name = _stub_tool_name(tool["name"])
                if name in declared:
                    continue
                declared.add(name)
                entry: dict[str, Any] = {"name": name, "plugin": plugin["id"],
                                         "description": f"The {tool['name']} tool.",
                                         "parameters": {"type": "object"}}
                if tool.get("optional"):
                    entry["optional"] = True
                installed.append(entry)
        # The importer's stubs guess which tools the policies' unknown names stand for; here
        # the installation is known (the catalog above), so a guessed tool is not installed.
        files.pop(STUBS_FILE, None)
        if off:
            policy = yaml.safe_load(files[POLICY_FILE])
            entries = policy.setdefault("plugins", {}).setdefault("entries", {})
            for pid in off:
                entries[pid] = {"enabled": False}
            files[POLICY_FILE] = yaml.safe_dump(policy, sort_keys=False)
        if installed:
            files[PLUGINS_FILE] = yaml.safe_dump({"version": 1, "catalog": installed},
                                                 sort_keys=False)
        for name, text in files.items():
            (defs / name).parent.mkdir(parents=True, exist_ok=True)
            (defs / name).write_text(text, "utf-8")
        return None

    def deployment(self, cfg: dict[str, Any], plugins: list[dict[str, Any]],
                   ctxs: list[dict[str, Any]]) -> None:
        n = next(self.ids)
        defs = self.work / f"d{n}" / "defs"
        defs.mkdir(parents=True)
        answers = [_oracle_answer(r) for r in self.oracle.ask(
            {"op": "resolve", "config": cfg, "plugins": plugins, "contexts": ctxs})["results"]]
        self.counts["configs"] += 1
        refusal = self.definitions(cfg, plugins, defs)
        runtime = reference = None
        if refusal is None:
            try:
                files, _, _ = compile_files(defs, package=f"oc9_rt_{n}", with_models=False)
                publish(files, self.work / f"d{n}" / "out")
                runtime = import_runtime(self.work / f"d{n}" / "out", f"oc9_rt_{n}")
                reference = ReferenceInterpreter(resolve_definitions(defs))
            except DefinitionsError as exc:
                refusal = "build: " + exc.diagnostics[0].code
        if refusal is not None:
            self.counts["configs toolc refuses"] += 1
            self.examples.setdefault("toolc refuses: " + refusal.split(":")[0], {
                "config": cfg, "refusal": refusal})
        for ctx, theirs in zip(ctxs, answers, strict=True):
            self.counts["contexts"] += 1
            if runtime is None or reference is None:
                ours: Any = {"error_kind": REFUSED, "why": refusal}
                ref: Any = ours
            else:
                ours = _answer(lambda ctx=ctx: runtime.resolve(**ctx))
                ref = _answer(lambda ctx=ctx: reference.resolve(**ctx))
            if ours != ref:
                self.counts["runtime != reference"] += 1
                self.examples.setdefault(f"runtime != reference #{len(self.examples)}", {
                    "config": cfg, "plugins": plugins, "context": ctx, "runtime": ours,
                    "reference": ref})
            if _same(ours, theirs):
                self.counts["agree"] += 1
                continue
            decision = explain9(self.oracle, cfg, plugins, ctx, ours, theirs)
            if decision is not None:
                self.explained[decision] += 1
                continue
            self.record(cfg, plugins, ctx, ours, theirs)

    def record(self, cfg: dict[str, Any], plugins: Any, ctx: dict[str, Any], ours: Any,
               theirs: Any) -> None:
        if isinstance(ours, list) and isinstance(theirs, list):
            kind = (f"toolc only: {','.join(sorted(set(ours) - set(theirs))) or '-'} | "
                    f"openclaw only: {','.join(sorted(set(theirs) - set(ours))) or '-'}")
        else:
            kind = f"toolc: {_short(ours)} | openclaw: {_short(theirs)}"
        self.kinds[kind] += 1
        self.counts["unexplained"] += 1
        self.examples.setdefault(kind, {"config": cfg, "plugins": plugins, "context": ctx,
                                        "toolc": ours, "openclaw": theirs})


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _allowed(cfg: Mapping[str, Any], pid: str) -> bool:
    """A non-empty ``plugins.allow`` that does not list the plugin disables it
    (resolveEffectivePluginActivationState); ``deny`` is the importer's (disabled entries)."""
    plugins = _object(cfg.get("plugins"))
    allow = plugins.get("allow")
    if memory_slot(plugins) == pid:
        return True  # the selected memory slot (memory-core by default) precedes the allowlist
    return not (isinstance(allow, list) and allow and pid not in allow)


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, list) or isinstance(theirs, list):
        return bool(ours == theirs)
    if theirs["error_kind"] == "InvalidConfig":
        return bool(ours["error_kind"] == REFUSED)
    return bool(ours["error_kind"] == theirs["error_kind"])


def _short(answer: Any) -> str:
    if isinstance(answer, list):
        return "tools"
    return str(answer.get("why") or answer["error_kind"]) if answer["error_kind"] == REFUSED \
        else str(answer["error_kind"])


def main9(args: argparse.Namespace, fetch: Any, oracle_class: Any, releases: Any) -> int:
    started = time.monotonic()
    node, package = fetch("2026.9")
    cache = Path(package).parent.parent.parent
    oracle = oracle_class(package, node=node, script=releases["2026.9"][1])
    try:
        catalog = oracle.ask({"op": "catalog"})
        with tempfile.TemporaryDirectory(prefix="toolc-conformance9-") as tmp:
            run = Run9(oracle, catalog, Path(tmp))

            @seed(args.seed)
            @settings(max_examples=args.examples, deadline=None, database=None,
                      phases=[Phase.generate], suppress_health_check=list(HealthCheck))
            @given(cfg=config(), plugins=plugin_tools(), data=st.data())
            def compare(cfg: dict[str, Any], plugins: list[dict[str, Any]],
                        data: st.DataObject) -> None:
                run.deployment(cfg, plugins, data.draw(aimed_contexts(cfg, args.contexts)))

            compare()
    finally:
        oracle.close()
    return report9(run, cache, args, time.monotonic() - started)


def report9(run: Run9, cache: Path, args: argparse.Namespace, seconds: float) -> int:
    c = run.counts
    total = c["contexts"]
    explained = sum(run.explained.values())
    print(f"toolc vs openclaw@2026.9.6: {c['configs']} configs, {total} contexts "
          f"(seed {args.seed}, {seconds:.0f} s)")
    if total:
        print(f"  identical answers:          {c['agree']:>6} ({100 * c['agree'] / total:.2f}%)")
        print(f"  explained by a decision:    {explained:>6} ({100 * explained / total:.2f}%)")
        print(f"  unexplained:                {c['unexplained']:>6}")
        print(f"  runtime != reference:       {c['runtime != reference']:>6}")
    print(f"  configs toolc refuses:      {c['configs toolc refuses']:>6}")
    for decision in DECISIONS_9:
        print(f"    decision {decision.name}: {run.explained[decision.name]}")
    for kind, count in run.kinds.most_common(25):
        print(f"    UNEXPLAINED x{count}: {kind}")
    out = cache / "results" / f"conformance9-seed{args.seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"counts": dict(c), "explained": dict(run.explained),
                               "unexplained": dict(run.kinds), "examples": run.examples,
                               "decisions": [d.name for d in DECISIONS_9]}, indent=2) + "\n")
    print(f"  details: {out}")
    return 1 if c["unexplained"] or c["runtime != reference"] else 0
