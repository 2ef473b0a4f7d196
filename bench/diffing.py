"""``toolc diff`` between two builds of one size, the head with one agent's and one group's
policy changed, as a pull request would."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from bench.compiling import compile_once
from bench.harness import Proc, run_measured, tail, toolc_cli


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
