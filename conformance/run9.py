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
import re
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
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

from conformance.decisions import (
    DECISIONS_9,
    DECISIONS_ROUTE_3,
    DECISIONS_ROUTE_9,
    RouteDecision,
    explain9,
    explain_route,
)
from conformance.mapping import definitions_from
from conformance.strategies9 import aimed_contexts, config, messages, plugin_tools, routing_config
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
        self.bundled: list[dict[str, Any]] = []
        if "harness" in catalog:  # oracle9's catalog (2026.3's has neither)
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
                data = _load_yaml(text)
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
        if keep_routing(files, cfg):
            self.counts["configs whose routing the harness added"] += 1
        if off:
            policy = _load_yaml(files[POLICY_FILE])
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

    def build(self, cfg: dict[str, Any], plugins: list[dict[str, Any]], n: int) -> Built:
        """Import ``cfg``, build it and load the runtime and the reference interpreter (or
        say why toolc refuses the config)."""
        defs = self.work / f"d{n}" / "defs"
        defs.mkdir(parents=True)
        self.counts["configs"] += 1
        refusal = self.definitions(cfg, plugins, defs)
        built = Built(refusal=refusal)
        if refusal is None:
            try:
                files, _, _ = compile_files(defs, package=f"oc9_rt_{n}", with_models=False)
                publish(files, self.work / f"d{n}" / "out")
                built.runtime = import_runtime(self.work / f"d{n}" / "out", f"oc9_rt_{n}")
                built.reference = ReferenceInterpreter(resolve_definitions(defs))
                built.defs = defs
            except DefinitionsError as exc:
                built.refusal = "build: " + _first_error(exc).code
        if built.refusal is not None:
            self.counts["configs toolc refuses"] += 1
            self.examples.setdefault("toolc refuses: " + built.refusal.split(":")[0], {
                "config": cfg, "refusal": built.refusal})
        return built

    def deployment(self, cfg: dict[str, Any], plugins: list[dict[str, Any]],
                   ctxs: list[dict[str, Any]]) -> None:
        n = next(self.ids)
        answers = [_oracle_answer(r) for r in self.oracle.ask(
            {"op": "resolve", "config": cfg, "plugins": plugins, "contexts": ctxs})["results"]]
        built = self.build(cfg, plugins, n)
        runtime, reference, refusal = built.runtime, built.reference, built.refusal
        for ctx, theirs in zip(ctxs, answers, strict=True):
            self.counts["contexts"] += 1
            if runtime is None or reference is None:
                ours: Any = {"error_kind": REFUSED, "why": refusal}
                ref: Any = ours
            else:
                # OpenClaw's exact answer is the point: a group the session key does not
                # name is ignored, as the release does, not refused (strict=False)
                ours = _answer(lambda ctx=ctx: runtime.resolve(**ctx, strict=False))
                ref = _answer(lambda ctx=ctx: reference.resolve(**ctx, strict=False))
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


@dataclass(slots=True)
class Built:
    """One config as toolc has it: the loaded runtime and reference interpreter, the
    definitions directory, or the refusal of the import or the build."""

    refusal: str | None
    runtime: Any = None
    reference: Any = None
    defs: Path | None = None


def keep_routing(files: dict[str, str], cfg: Mapping[str, Any], target: str = POLICY_FILE
                 ) -> bool:
    """Carry the config's route ``bindings`` and ``session`` routing settings (``dmScope``,
    ``groupScope``, ``identityLinks``) into the imported definitions, in OpenClaw's shape,
    where the import left them out (an importer that drops them: the routing mode compares
    routes either way). True when something was added."""
    # only files that may hold them (the catalog files are large and hold neither)
    yamls = {n: _load_yaml(t) for n, t in files.items() if (n.endswith(".yaml")
             and re.search(r"^(bindings|session):", t, re.MULTILINE)) or n == target}
    routes = [b for b in cfg.get("bindings") or () if isinstance(b, dict)
              and b.get("type", "route") == "route"]
    session = {k: v for k, v in _object(cfg.get("session")).items()
               if k in ("dmScope", "groupScope", "identityLinks")}
    has_bindings = any("bindings" in d for d in yamls.values())
    has_session = any(set(_object(d.get("session"))) & set(session) for d in yamls.values())
    add_bindings = bool(routes) and not has_bindings
    add_session = bool(session) and not has_session
    if not (add_bindings or add_session):
        return False
    holder = next((n for n, d in yamls.items() if "session" in d), target)
    policy = yamls[holder]
    if add_bindings and holder == target:
        policy["bindings"] = routes
    elif add_bindings:
        yamls[target]["bindings"] = routes
        files[target] = yaml.safe_dump(yamls[target], sort_keys=False)
    if add_session:
        policy["session"] = {**_object(policy.get("session")), **session}
    files[holder] = yaml.safe_dump(policy, sort_keys=False)
    return True


def _first_error(exc: DefinitionsError) -> Any:
    """The refusal's first error (notes and warnings may come before it)."""
    return next((d for d in exc.diagnostics if d.severity == "error"), exc.diagnostics[0])


def _load_yaml(text: str) -> Any:
    """A definitions file's data (libyaml's parser where PyYAML has it: the imported catalog
    files are large, and the pure-Python parser took most of a run's time)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


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


# -- messages in: the routing mode (--routing) ------------------------------------------------
# What a route is compared on: OpenClaw's resolveAgentRoute result fields (the runtime also
# on the account id the route normalized; the CLI prints the first four).
ROUTE_FIELDS = ("agent_id", "session_key", "main_session_key", "matched_by")
RUNTIME_ROUTE_FIELDS = (*ROUTE_FIELDS, "account_id")
ROUTING_KEYS = ("channel", "account_id", "peer", "parent_peer", "guild_id", "team_id",
                "member_role_ids", "default_agent_id", "dm_scope", "group_scope")
# route()'s inputs beyond the channel, account and peers, as options of `toolc route`
CLI_ROUTING = {"guild_id": "--guild", "team_id": "--team", "default_agent_id": "--default-agent",
               "dm_scope": "--dm-scope", "group_scope": "--group-scope"}
CLI_SENDER = {"sender_id": "--sender-id", "sender_e164": "--sender-e164",
              "sender_username": "--sender-username", "sender_name": "--sender-name",
              "model_provider": "--provider", "model_id": "--model"}


def route_keywords(msg: Mapping[str, Any]) -> dict[str, Any]:
    """``route``'s keywords for a drawn message (peers as ``(kind, id)`` tuples)."""
    out: dict[str, Any] = {}
    for key in ROUTING_KEYS:
        if key not in msg:
            continue
        value = msg[key]
        out[key] = (tuple(value) if key in ("peer", "parent_peer", "member_role_ids")
                    else value)
    return out


def message_keywords(msg: Mapping[str, Any]) -> dict[str, Any]:
    """``resolve_message``'s keywords: the routing ones and the sender, owner, model and
    sandbox fields."""
    return {**route_keywords(msg), **{k: v for k, v in msg.items() if k not in ROUTING_KEYS}}


def _refusal(exc: BaseException) -> dict[str, Any]:
    return {"error_kind": type(exc).__name__.removesuffix("Error")}


def toolc_message(runtime: Any, msg: Mapping[str, Any]) -> dict[str, Any]:
    """toolc's answer through the runtime: ``route`` (its fields) and the tools of
    ``resolve_message`` (a refusal of either is the answer's kind)."""
    try:
        found = runtime.route(**route_keywords(msg))
    except Exception as exc:  # the kind is the answer
        return _refusal(exc)
    answer: dict[str, Any] = {"route": {f: getattr(found, f) for f in RUNTIME_ROUTE_FIELDS}}
    try:
        routed, tools = runtime.resolve_message(**message_keywords(msg))
        answer["tools"] = sorted(set(tools.names) - RUN_MODE_ONLY)
        if routed != found:
            answer["resolve_message route"] = {f: getattr(routed, f)
                                               for f in RUNTIME_ROUTE_FIELDS}
    except Exception as exc:
        answer["tools"] = _refusal(exc)
    return answer


def oracle_message(result: Mapping[str, Any]) -> dict[str, Any]:
    """OpenClaw's answer in the same shape (tool names as the importer spells them)."""
    if "error_kind" in result:
        return {"error_kind": result["error_kind"]}
    tools = (_oracle_answer(result["tools_error"]) if "tools_error" in result
             else sorted({_stub_tool_name(t) for t in result["tools"]}))
    return {"route": dict(result["route"]), "tools": tools}


def compare_message(ours: Mapping[str, Any], theirs: Mapping[str, Any],
                    fields: tuple[str, ...] = RUNTIME_ROUTE_FIELDS) -> tuple[bool, bool]:
    """(the routes agree, the routed tools agree). A refusal of the whole message agrees
    with the same refusal (the import or build refusing a config OpenClaw's loader refuses
    counts as the same answer), and then both parts agree."""
    if "route" not in ours or "route" not in theirs:
        same = "route" not in ours and "route" not in theirs and _same(ours, theirs)
        return same, same
    route_ok = all(ours["route"].get(f) == theirs["route"].get(f) for f in fields)
    tools_ok = _same(ours.get("tools"), theirs.get("tools"))
    return route_ok, tools_ok


def route_difference(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    """A difference's kind, for the report's counts (values left out: one example each)."""
    if "route" not in ours or "route" not in theirs:
        return f"answer: toolc {_short(ours) if 'route' not in ours else 'route'} | " \
               f"openclaw {_short(theirs) if 'route' not in theirs else 'route'}"
    fields = [f for f in RUNTIME_ROUTE_FIELDS if ours["route"].get(f) != theirs["route"].get(f)]
    if fields:
        return (f"route {','.join(fields)}: toolc {ours['route']['matched_by']} | openclaw "
                f"{theirs['route']['matched_by']}")
    a, b = ours.get("tools"), theirs.get("tools")
    if isinstance(a, list) and isinstance(b, list):
        return (f"tools: toolc only {','.join(sorted(set(a) - set(b))) or '-'} | openclaw "
                f"only {','.join(sorted(set(b) - set(a))) or '-'}")
    return f"tools: toolc {_short(a) if not isinstance(a, list) else 'tools'} | openclaw " \
           f"{_short(b) if not isinstance(b, list) else 'tools'}"


def cli_commands() -> dict[str, frozenset[str]]:
    """The options of ``toolc route`` and ``toolc resolve`` in this toolc (no ``route`` key:
    no such command; the routing mode then compares the runtime only)."""
    from toolc.cli import main as cli  # noqa: PLC0415 - only the routing mode needs the CLI

    return {name: frozenset(o for p in command.params for o in
                            (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ())))
            for name, command in cli.commands.items() if name in ("route", "resolve")}


def cli_route_args(build: Path, msg: Mapping[str, Any]) -> list[str]:
    """``toolc route --build B --channel C [--account A] [--peer KIND:ID] [--parent-peer
    KIND:ID] [--guild G] [--team T] [--role R]... [--default-agent ID] [--dm-scope S]
    [--group-scope S] --json`` for a message."""
    args = ["route", "--build", str(build), "--channel", msg["channel"]]
    if "account_id" in msg:
        args += ["--account", msg["account_id"]]
    for key, flag in (("peer", "--peer"), ("parent_peer", "--parent-peer")):
        if key in msg:
            args += [flag, f"{msg[key][0]}:{msg[key][1]}"]
    for role in msg.get("member_role_ids") or ():
        args += ["--role", role]
    for key, flag in CLI_ROUTING.items():
        if key in msg:
            args += [flag, msg[key]]
    return [*args, "--json"]


def cli_resolve_args(build: Path, msg: Mapping[str, Any]) -> list[str]:
    """``toolc resolve`` with the same routing options (a message: it routes first) and the
    sender, owner, model and sandbox options."""
    args = ["resolve", *cli_route_args(build, msg)[1:-1]]
    for key, flag in CLI_SENDER.items():
        if key in msg:
            args += [flag, msg[key]]
    if msg.get("sender_is_owner") is not None:
        args.append("--owner" if msg["sender_is_owner"] else "--no-owner")
    if msg.get("sandboxed") is True:
        args.append("--sandboxed")
    return [*args, "--json"]


def _cli_can_say(args: list[str], options: frozenset[str]) -> bool:
    """Every option of ``args`` is one the command has."""
    return all(a in options for a in args if a.startswith("--"))


def cli_message(build: Path, msg: Mapping[str, Any], has: Mapping[str, frozenset[str]]
                ) -> dict[str, Any] | None:
    """toolc's answer through the CLI, in-process (the click commands' own parsing, build
    loading and output; a process per message would take most of the run), or None where
    ``toolc route`` has no option for one of the message's inputs. ``tools`` only for a
    message (a routing option beside the channel and account) that ``toolc resolve`` can
    take."""
    from click.testing import CliRunner  # noqa: PLC0415
    from toolc.cli import main as cli  # noqa: PLC0415

    route_args = cli_route_args(build, msg)
    if not _cli_can_say(route_args, has.get("route", frozenset())):
        return None
    runner = CliRunner()
    routed = runner.invoke(cli, route_args)
    if routed.exit_code != 0:
        return {"error_kind": "refused" if routed.exit_code == 1 else f"exit {routed.exit_code}",
                "why": routed.output.strip()[-300:]}
    answer: dict[str, Any] = {"route": _json_line(routed.stdout)}
    resolve_args = cli_resolve_args(build, msg)
    message = any(k in msg for k in ("peer", "parent_peer", "member_role_ids", *CLI_ROUTING))
    if message and _cli_can_say(resolve_args, has.get("resolve", frozenset())):
        resolved = runner.invoke(cli, resolve_args)
        if resolved.exit_code != 0:
            answer["tools"] = {"error_kind": f"exit {resolved.exit_code}",
                               "why": resolved.output.strip()[-300:]}
        else:
            data = _json_line(resolved.stdout)
            names = [t if isinstance(t, str) else t["name"] for t in data["tools"]]
            answer["tools"] = sorted(set(names) - RUN_MODE_ONLY)
            answer["resolve route"] = data.get("route")
    return answer


def _json_line(text: str) -> Any:
    """The JSON document of a command's stdout (warnings go to stderr)."""
    return json.loads(text.strip().splitlines()[-1])


class RouteRun9(Run9):
    """The routing mode: per config, OpenClaw's resolveAgentRoute and the routed run's tools
    for every message (oracle9's ``route`` op) beside toolc's ``route`` and
    ``resolve_message`` (runtime) and ``toolc route`` / ``toolc resolve --peer`` (CLI)."""

    release = "2026.9.6"
    decisions: tuple[RouteDecision, ...] = DECISIONS_ROUTE_9

    def __init__(self, oracle: Any, catalog: Mapping[str, Any], work: Path,
                 cli: Mapping[str, frozenset[str]]) -> None:
        super().__init__(oracle, catalog, work)
        self.cli = cli
        self.tiers: dict[str, Counter[str]] = {}
        self.cli_counts: Counter[str] = Counter()
        self.loader_issues: Counter[str] = Counter()

    def messages(self, cfg: dict[str, Any], plugins: list[dict[str, Any]],
                 msgs: list[dict[str, Any]]) -> None:
        n = next(self.ids)
        results = self.oracle.ask({"op": "route", "config": cfg, "plugins": plugins,
                                   "messages": msgs})["results"]
        for issue in (results[0].get("issues") or ()) if results else ():
            # what the loader refuses, by path shape (bindings[3].agentId -> bindings[].agentId)
            where = re.sub(r"\[\d+\]", "[]", issue["path"])
            self.loader_issues[f"{where}: {issue['message'][:70]}"] += 1
        answers = [oracle_message(r) for r in results]
        built = self.build(cfg, plugins, n)
        cli_build = (self.cli_build(built, n) if "route" in self.cli and built.runtime is not None
                     else None)
        for msg, theirs in zip(msgs, answers, strict=True):
            self.counts["messages"] += 1
            if built.runtime is None:
                ours: dict[str, Any] = {"error_kind": REFUSED, "why": built.refusal}
            else:
                ours = toolc_message(built.runtime, msg)
                self.check_reference(built, cfg, msg, ours)
            route_ok, tools_ok = compare_message(ours, theirs)
            tier = self.tiers.setdefault(
                theirs["route"]["matched_by"] if "route" in theirs else theirs["error_kind"],
                Counter())
            tier["messages"] += 1
            self.counts["route identical"] += route_ok
            self.counts["tools identical"] += tools_ok
            if route_ok and tools_ok:
                self.counts["agree"] += 1
                tier["agree"] += 1
            elif (decision := explain_route(self.decisions, cfg, msg, ours, theirs)) is not None:
                self.explained[decision] += 1
                tier["explained"] += 1
            else:
                self.record_message(cfg, plugins, msg, ours, theirs)
            if cli_build is not None:
                self.compare_cli(cli_build, cfg, msg, ours, theirs)

    def cli_build(self, built: Built, n: int) -> Path | None:
        """A build the CLI reads (the default package, what ``toolc build`` writes)."""
        assert built.defs is not None
        out = self.work / f"d{n}" / "build"
        try:
            files, _, _ = compile_files(built.defs)
        except DefinitionsError:  # built once already: cannot differ
            return None
        publish(files, out)
        return out

    def check_reference(self, built: Built, cfg: Any, msg: Mapping[str, Any],
                        ours: Mapping[str, Any]) -> None:
        """The reference interpreter on the routed run's context (the runtime's
        ``Request.context``) must list the runtime's tools."""
        if not isinstance(ours.get("tools"), list):
            return
        request = built.runtime.Request(**message_keywords(msg))
        context = request.context(request.route())
        resolution = built.reference.resolve(**context, strict=False)
        ref = sorted(set(resolution.names) - RUN_MODE_ONLY)
        for layer in ("group", "sender"):
            self.counts[f"routed runs with a {layer} policy"] += any(
                s.layer == layer and s.active for s in resolution.steps)
        # the routed context as a caller passes it to resolve (strict): never refused
        strict = _answer(lambda: built.runtime.resolve(**context))
        if ref != ours["tools"] or strict != ours["tools"] or "resolve_message route" in ours:
            self.counts["runtime != reference"] += 1
            self.examples.setdefault(f"runtime != reference #{len(self.examples)}", {
                "config": cfg, "message": msg, "context": context, "runtime": ours,
                "reference": ref, "resolve (strict)": strict})

    def record_message(self, cfg: Any, plugins: Any, msg: Mapping[str, Any],
                       ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> None:
        kind = route_difference(ours, theirs)
        self.kinds[kind] += 1
        self.counts["unexplained"] += 1
        self.examples.setdefault(kind, {"config": cfg, "plugins": plugins, "message": msg,
                                        "toolc": ours, "openclaw": theirs})

    def compare_cli(self, build: Path, cfg: Any, msg: Mapping[str, Any],
                    ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> None:
        """The CLI against OpenClaw, and against the runtime (they must never differ)."""
        answer = cli_message(build, msg, self.cli)
        c = self.cli_counts
        if answer is None:
            c["skipped"] += 1
            return
        c["messages"] += 1
        if "route" in answer:
            fields = tuple(f for f in RUNTIME_ROUTE_FIELDS if f in answer["route"])
            route_ok = compare_message(answer, theirs, fields)[0]
            runtime_ok = "route" in ours and all(answer["route"][f] == ours["route"][f]
                                                 for f in fields)
            resolved = answer.get("resolve route")
            if resolved is not None:
                runtime_ok = runtime_ok and all(resolved.get(f) == answer["route"][f]
                                                for f in fields)
        else:  # exit 1: a refusal with OpenClaw's reason, where the runtime refuses too
            runtime_ok = "route" not in ours and answer["error_kind"] == "refused"
            route_ok = runtime_ok and "route" not in theirs
        c["route identical"] += route_ok
        c["route == runtime's"] += runtime_ok
        tools_ok = True
        if "tools" in answer:
            c["with tools"] += 1
            tools_ok = _same(answer["tools"], theirs.get("tools"))
            c["tools identical"] += tools_ok
            c["tools == runtime's"] += answer["tools"] == ours.get("tools")
        if route_ok and runtime_ok and tools_ok:
            return
        c["unexplained"] += 1
        kind = "CLI " + (route_difference(answer, theirs) if route_ok or "route" not in answer
                         or "route" not in theirs else "route != runtime's")
        self.kinds[kind] += 1
        self.examples.setdefault(kind, {"config": cfg, "message": msg, "cli": answer,
                                        "runtime": ours, "openclaw": theirs})


class RouteRun3(RouteRun9):
    """The routing mode against openclaw@2026.3.2 (``--routing --openclaw 2026.3``): the
    config becomes definitions as the 2026.3 run makes them (``mapping.definitions_from``:
    its policy sections as they are) plus its ``bindings`` and ``session.dmScope`` /
    ``identityLinks``; the CLI is not compared (the 2026.9 run covers it)."""

    release = "2026.3.2"
    decisions = DECISIONS_ROUTE_3

    def build(self, cfg: dict[str, Any], plugins: list[dict[str, Any]], n: int) -> Built:
        defs = self.work / f"d{n}" / "defs"
        defs.mkdir(parents=True)
        self.counts["configs"] += 1
        data = {"version": 1, **definitions_from(cfg, plugins, self.catalog)}
        files = {"d.yaml": yaml.safe_dump(data, sort_keys=False)}
        keep_routing(files, cfg, target="d.yaml")
        (defs / "d.yaml").write_text(files["d.yaml"], "utf-8")
        built = Built(refusal=None, defs=defs)
        try:
            compiled, _, _ = compile_files(defs, package=f"oc3_rt_{n}", with_models=False)
            publish(compiled, self.work / f"d{n}" / "out")
            built.runtime = import_runtime(self.work / f"d{n}" / "out", f"oc3_rt_{n}")
            built.reference = ReferenceInterpreter(resolve_definitions(defs))
        except DefinitionsError as exc:
            first = _first_error(exc)
            built.refusal = "build: " + first.code
            self.counts["configs toolc refuses"] += 1
            self.examples.setdefault("toolc refuses: " + first.code, {
                "config": cfg, "refusal": first.render()})
        return built


def main_routing9(args: argparse.Namespace, fetch: Any, oracle_class: Any,
                  releases: Any) -> int:
    """``--routing``: ``--examples`` configs with route bindings, ``--contexts`` messages
    each, against the release of ``--openclaw``."""
    started = time.monotonic()
    line = args.openclaw
    node, package = fetch(line)
    cache = Path(package).parent.parent.parent
    oracle = oracle_class(package, node=node, script=releases[line][1])
    try:
        catalog = oracle.ask({"op": "catalog"})
        with tempfile.TemporaryDirectory(prefix="toolc-routing-") as tmp:
            run = (RouteRun9(oracle, catalog, Path(tmp), cli_commands()) if line == "2026.9"
                   else RouteRun3(oracle, catalog, Path(tmp), {}))

            @seed(args.seed)
            @settings(max_examples=args.examples, deadline=None, database=None,
                      phases=[Phase.generate], suppress_health_check=list(HealthCheck))
            @given(cfg=routing_config(line), plugins=plugin_tools(), data=st.data())
            def compare(cfg: dict[str, Any], plugins: list[dict[str, Any]],
                        data: st.DataObject) -> None:
                run.messages(cfg, plugins, data.draw(messages(cfg, args.contexts, line)))

            compare()
    finally:
        oracle.close()
    return report_routing9(run, cache, args, time.monotonic() - started)


def _pct(part: int, total: int) -> str:
    return f"{part:>6} ({100 * part / total:.2f}%)" if total else f"{part:>6}"


def report_routing9(run: RouteRun9, cache: Path, args: argparse.Namespace,
                    seconds: float) -> int:
    c = run.counts
    total = c["messages"]
    print(f"toolc vs openclaw@{run.release}, messages in (resolveAgentRoute, then the routed "
          f"run's tools): {c['configs']} configs, {total} messages (seed {args.seed}, "
          f"{seconds:.0f} s)")
    print("  runtime (route, resolve_message):")
    print(f"    identical route:            {_pct(c['route identical'], total)}")
    print(f"    identical routed tools:     {_pct(c['tools identical'], total)}")
    print(f"    both identical:             {_pct(c['agree'], total)}")
    explained = sum(run.explained.values())
    print(f"    explained by a decision:    {_pct(explained, total)}")
    for decision in run.decisions:
        print(f"      decision {decision.name}: {run.explained[decision.name]}")
    print(f"    unexplained:                {c['unexplained']:>6}")
    print(f"    runtime != reference:       {c['runtime != reference']:>6}")
    print(f"  routed runs with a group policy: {c['routed runs with a group policy']}, with a "
          f"sender policy: {c['routed runs with a sender policy']}")
    print(f"  configs toolc refuses:        {c['configs toolc refuses']:>6}")
    if c["configs whose routing the harness added"]:
        print(f"  configs whose bindings/session the importer left out (added by the harness): "
              f"{c['configs whose routing the harness added']}")
    for issue, count in run.loader_issues.most_common(8):
        print(f"    OpenClaw's loader refuses x{count}: {issue}")
    print("  per OpenClaw route (messages: both identical [+ explained] / all):")
    for name, per in sorted(run.tiers.items()):
        more = f" + {per['explained']}" if per["explained"] else ""
        print(f"    {name:<24} {per['agree']:>5}{more} / {per['messages']}")
    cli = run.cli_counts
    if "route" not in run.cli:
        print("  CLI: this toolc has no `toolc route`: not compared")
    else:
        n = cli["messages"]
        print(f"  CLI (toolc route, toolc resolve with the message; in-process): {n} messages "
              f"(those of the configs toolc builds), {cli['skipped']} skipped (an input the "
              "command has no option for)")
        print(f"    identical route:            {_pct(cli['route identical'], n)}")
        same_route, same_tools = cli["route == runtime's"], cli["tools == runtime's"]
        print(f"    route == runtime's:         {_pct(same_route, n)}")
        t = cli["with tools"]
        print(f"    identical routed tools:     {_pct(cli['tools identical'], t)} of {t} "
              "(resolve: messages with a routing option)")
        print(f"    tools == runtime's:         {_pct(same_tools, t)}")
        print(f"    unexplained:                {cli['unexplained']:>6}")
    for kind, count in run.kinds.most_common(25):
        print(f"    UNEXPLAINED x{count}: {kind}")
    out = cache / "results" / f"routing{run.release[5]}-seed{args.seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"counts": dict(c), "cli": dict(cli),
                               "explained": dict(run.explained),
                               "tiers": {k: dict(v) for k, v in run.tiers.items()},
                               "unexplained": dict(run.kinds), "examples": run.examples},
                              indent=2) + "\n")
    print(f"  details: {out}")
    return 1 if c["unexplained"] or c["runtime != reference"] or cli["unexplained"] else 0
