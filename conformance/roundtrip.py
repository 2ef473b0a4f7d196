"""``python -m conformance.roundtrip`` (part of ``make conformance``): ``toolc import-openclaw``
against OpenClaw's own code.

For every config example in OpenClaw 2026.3.2's published docs (the ```json5 / ```json blocks
of the npm package's ``docs/``, English pages, that carry tool policy) and every config in
``conformance/configs/``: import it, compile the imported definitions, and compare the
generated runtime with OpenClaw's policy functions on the original config, over contexts
drawn from what the config names (its agents, providers, channels, groups, accounts,
senders). Plugin tools the policies name get the import's stubs on both sides (OpenClaw's
stand-ins are the same names). Prints one row per example; exit 1 on any unexplained
difference.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from toolc.api import compile_files
from toolc.diagnostics import DefinitionsError
from toolc.importers.openclaw import ConfigError, import_openclaw, parse_config
from toolc.importers.openclaw_plugins import BUNDLED_2026_3_2
from toolc.pipeline.writer import publish

from conformance.__main__ import HERE, Oracle
from conformance.decisions import explain
from tests.helpers import import_runtime

FENCE = re.compile(r"```(json5?|jsonc)\n(.*?)```", re.S)
POLICY_WORDS = re.compile(r"\b(toolsBySender|alsoAllow|byProvider|profile|deny|allow)\b")
SKIPPED_LANGUAGES = ("ja-JP/", "zh-CN/")


@dataclass(frozen=True, slots=True)
class Example:
    name: str  # docs/<page>.md:<line> or configs/<file>
    text: str


def docs_examples(package: Path) -> list[Example]:
    out = []
    docs = package / "docs"
    for page in sorted(docs.rglob("*.md")):
        rel = page.relative_to(docs).as_posix()
        if rel.startswith(SKIPPED_LANGUAGES):
            continue
        text = page.read_text("utf-8")
        for match in FENCE.finditer(text):
            body = match.group(2)
            if "tools" in body and POLICY_WORDS.search(body):
                line = text[: match.start()].count("\n") + 1
                out.append(Example(f"docs/{rel}:{line}", body))
    return out


def own_examples() -> list[Example]:
    return [Example(f"configs/{p.name}", p.read_text("utf-8"))
            for p in sorted((HERE / "configs").glob("*.json*"))]


def _keys(node: Any, name: str) -> list[str]:
    """Keys of every mapping called ``name`` below ``node``."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, child in node.items():
            if key == name and isinstance(child, dict):
                found.extend(child)
            found.extend(_keys(child, name))
    elif isinstance(node, list):
        for child in node:
            found.extend(_keys(child, name))
    return found


def contexts_for(config: dict[str, Any], count: int, seed: int) -> list[dict[str, Any]]:
    """Contexts over what the config names, plus a few it does not."""
    agents = [a.get("id") for a in config.get("agents", {}).get("list", [])
              if isinstance(a, dict) and isinstance(a.get("id"), str)]
    providers = _keys(config, "byProvider")
    channels = list(config.get("channels", {})) if isinstance(config.get("channels"),
                                                              dict) else []
    groups = _keys(config.get("channels", {}), "groups")
    # Slack channels and Discord guild channels are looked up by id or name
    keyed = _keys(config.get("channels", {}), "channels")
    guilds = _keys(config.get("channels", {}), "guilds")
    senders = _keys(config.get("channels", {}), "toolsBySender")
    values: dict[str, list[Any]] = {
        "agent_id": [None, "main", "nobody", *agents],
        "model_provider": [None, "openai", "anthropic",
                           *(p.split("/")[0] for p in providers)],
        "model_id": [None, "gpt-5", *(p.split("/", 1)[1] for p in providers if "/" in p)],
        "message_provider": [None, "voice", *channels, *channels],
        "group_id": [None, "zzz", *groups, *groups, *keyed, *keyed],
        "group_space": [None, "zzz", *guilds],
        "group_channel": [None, "zzz", *(k.lstrip("#") for k in keyed)],
        "account_id": [None, "default", *_keys(config.get("channels", {}), "accounts")],
        "sender_id": [None, "1", *(k.split(":", 1)[-1] for k in senders)],
        "sender_username": [None, *(k.split(":", 1)[-1].lstrip("@") for k in senders
                                    if k.startswith("username:"))],
        "sender_name": [None, *(k.split(":", 1)[-1] for k in senders
                                if k.startswith("name:"))],
        "sender_e164": [None, *(k.split(":", 1)[-1] for k in senders
                                if k.startswith("e164:"))],
        "sender_is_owner": [None, True, False],
        "sandboxed": [None, True],
        # main sessions and others: the sandbox modes decide between them
        "session_key": [None, None, "agent:main:subagent:x", "main", "agent:main:main",
                        "agent:main:telegram:group:1",
                        *(f"agent:{a}:main" for a in agents),
                        *(f"agent:{a}:telegram:group:1" for a in agents)],
    }
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        ctx = {k: rng.choice(v) for k, v in values.items()}
        out.append({k: v for k, v in ctx.items() if v is not None})
    return out


def stub_plugins(files: dict[str, str]) -> list[dict[str, Any]]:
    """OpenClaw stand-ins for the import's catalog stubs (same plugin ids and names; bundled
    plugins are disabled by default there, as in OpenClaw)."""
    stubs = yaml.safe_load(files.get("openclaw/stubs.yaml", "catalog: []"))["catalog"]
    plugins: dict[str, list[dict[str, Any]]] = {}
    for stub in stubs:
        plugins.setdefault(stub["plugin"], []).append(
            {"name": stub["name"], "optional": stub.get("optional", False)})
    return [{"id": pid, "tools": tools, "bundled": pid in BUNDLED_2026_3_2}
            for pid, tools in plugins.items()]


@dataclass(slots=True)
class Row:
    example: str
    status: str
    contexts: int = 0
    agree: int = 0
    explained: int = 0
    unexplained: int = 0


def check(oracle: Oracle, example: Example, index: int, work: Path, count: int,
          failures: list[dict[str, Any]]) -> Row:
    try:
        config = parse_config(example.text.encode("utf-8"), example.name)
        result = import_openclaw(config, "openclaw.json5", allow_partial=True,
                                 openclaw="2026.3")
    except ConfigError as exc:
        return Row(example.name, f"not imported: {exc}")
    defs = work / f"e{index}" / "defs"
    for rel, text in result.files.items():
        (defs / rel).parent.mkdir(parents=True, exist_ok=True)
        (defs / rel).write_text(text, "utf-8")
    try:
        files, _, _ = compile_files(defs, package=f"rt_rt_{index}", with_models=False)
    except DefinitionsError as exc:
        first = exc.diagnostics[0]
        return Row(example.name, f"does not compile: {first.code} {first.message}")
    publish(files, work / f"e{index}" / "out")
    runtime = import_runtime(work / f"e{index}" / "out", f"rt_rt_{index}")
    plugins = stub_plugins(result.files)
    ctxs = contexts_for(json.loads(json.dumps(config)), count, seed=index)
    theirs_all = oracle.resolve(config, plugins, ctxs)
    row = Row(example.name, "ok", contexts=len(ctxs))
    for ctx, theirs in zip(ctxs, theirs_all, strict=True):
        ours = sorted(runtime.resolve(**ctx).names)
        if ours == theirs:
            row.agree += 1
        elif explain(oracle, config, plugins, ctx, ours, theirs) is not None:
            row.explained += 1
        else:
            row.unexplained += 1
            failures.append({"example": example.name, "context": ctx, "toolc": ours,
                             "openclaw": theirs})
    if row.unexplained:
        row.status = "DIFFERS"
    return row


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.roundtrip", description=__doc__)
    parser.add_argument("--contexts", type=int, default=300, help="contexts per example")
    args = parser.parse_args()
    fetched = subprocess.run(["bash", str(HERE / "fetch.sh")], stdout=subprocess.PIPE,
                             text=True, check=True)
    package = Path(fetched.stdout.strip().splitlines()[-1])
    examples = [*docs_examples(package), *own_examples()]
    oracle = Oracle(str(package))
    failures: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="toolc-roundtrip-") as tmp:
            rows = [check(oracle, ex, i, Path(tmp), args.contexts, failures)
                    for i, ex in enumerate(examples)]
    finally:
        oracle.close()
    return report(rows, failures, package)


def report(rows: list[Row], failures: list[dict[str, Any]], package: Path) -> int:
    print("toolc import-openclaw round trip vs openclaw@2026.3.2 "
          f"({len(rows)} examples)")
    print(f"| {'example':<52} | contexts | identical | explained | unexplained | status |")
    print(f"|{'-' * 54}|----------|-----------|-----------|-------------|--------|")
    for r in rows:
        print(f"| {r.example:<52} | {r.contexts:>8} | {r.agree:>9} | {r.explained:>9} | "
              f"{r.unexplained:>11} | {r.status} |")
    compared = [r for r in rows if r.contexts]
    total = sum(r.contexts for r in compared)
    print(f"examples compared: {len(compared)}, contexts: {total}, identical: "
          f"{sum(r.agree for r in compared)}, explained by a decision: "
          f"{sum(r.explained for r in compared)}, unexplained: "
          f"{sum(r.unexplained for r in compared)}")
    out = package.parent.parent / "results" / "roundtrip.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": [vars_of(r) for r in rows],
                               "failures": failures[:50]}, indent=2) + "\n")
    print(f"details: {out}")
    return 1 if any(r.unexplained for r in rows) else 0


def vars_of(row: Row) -> dict[str, Any]:
    return {"example": row.example, "status": row.status, "contexts": row.contexts,
            "agree": row.agree, "explained": row.explained, "unexplained": row.unexplained}


if __name__ == "__main__":
    sys.exit(main())
