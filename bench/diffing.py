"""``toolc diff`` between two builds of one size, as a pull request would change them: one
agent's and one group's policy (every group must be read: the agent meets them all), and one
group's alone (only the changed channel's shards are parsed)."""

from __future__ import annotations

import json
import resource
import shutil
from pathlib import Path
from typing import Any

import yaml
from toolc.pipeline.shards import channel_shards
from toolc.review.diff import side_from_build, unread_channels

from bench.compiling import compile_once
from bench.harness import Proc, run_measured, tail, toolc_cli

# scenario -> whether it changes an agent's policy too
SCENARIOS = {"agent_and_group": True, "group_only": False}


def policy_change(defs: Path, head: Path, *, agent: bool = True) -> dict[str, str]:
    """A copy of ``defs`` with one group's sender rules changed (the first channel's first
    group: one more sender rule) and, with ``agent``, one agent's policy (the eighth agent,
    or the last, to the messaging profile), as a pull request would; returns what changed."""
    shutil.copytree(defs, head)
    changed = {"group": _group_change(head)}
    if agent:
        changed["agent"] = _agent_change(head)
    return changed


def _agent_change(head: Path) -> str:
    agents_file = next(p for p in sorted(head.rglob("*.yaml"))
                       if "agents" in (yaml.safe_load(p.read_text()) or {}))
    doc = yaml.safe_load(agents_file.read_text())
    agent = doc["agents"]["list"][min(7, len(doc["agents"]["list"]) - 1)]
    agent.setdefault("tools", {})["profile"] = "messaging"
    agents_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(agent["id"])


def _group_change(head: Path) -> str:
    channels_file = next(p for p in sorted(head.rglob("*.yaml"))
                         if "channels" in (yaml.safe_load(p.read_text()) or {}))
    doc = yaml.safe_load(channels_file.read_text())
    name, channel = next(iter(doc["channels"].items()))
    gid, group = next(iter(channel["groups"].items()))
    group.setdefault("toolsBySender", {})["id:424242"] = {"deny": ["exec"]}
    channels_file.write_text(yaml.safe_dump(doc, sort_keys=False))
    return f"channels.{name}.groups.{gid}"


def shards_read(base: Path, head: Path) -> dict[str, Any]:
    """Which shards ``toolc diff BASE HEAD`` parses: those of every channel it cannot leave
    unparsed (``toolc.review.diff.unread_channels``), each content once (every shard is
    hashed)."""
    sides = [side_from_build(base), side_from_build(head)]
    unread = unread_channels(sides)
    read = sorted({n for name, ch in sides[0].index["channels"].items() if name not in unread
                   for n in channel_shards(ch)})
    every = {n for ch in sides[0].index["channels"].values() for n in channel_shards(ch)}
    return {"read": len(read), "of": len(every), "files": read if len(read) <= 10 else None}


def measure_diff(size: str, defs: Path, out: Path, work: Path) -> dict[str, Any]:
    """``toolc diff BASE HEAD --format json`` between two builds, as a reviewer runs it (a
    fresh process: import, loading both builds, the exact delta, the JSON), per scenario:
    the first scenario's figures at the top level (what the reports read), every
    scenario's under ``scenarios``."""
    scenarios: dict[str, Any] = {}
    for scenario, agent in SCENARIOS.items():
        head_defs = work / f"defs-{size}-{scenario}"
        head_out = work / f"build-{size}-{scenario}"
        changed = policy_change(defs, head_defs, agent=agent)
        built = compile_once(head_defs, head_out)
        if "error" in built:
            scenarios[scenario] = {"error": f"head build: {built['error']}"}
            continue
        scenarios[scenario] = {**_run_diff(out, head_out), "changed": changed,
                               "shards": shards_read(out, head_out)}
    return {**scenarios[next(iter(SCENARIOS))], "scenarios": scenarios}


def _run_diff(base: Path, head: Path) -> dict[str, Any]:
    best: tuple[Proc, float] | None = None
    for _ in range(2):  # the first run may pay for .pyc files
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = run_measured([*toolc_cli(), "diff", str(base), str(head), "--format", "json"])
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if proc.returncode != 2:
            return {"error": f"toolc diff exited {proc.returncode}: {tail(proc.stderr)}"}
        if best is None or proc.wall_s < best[0].wall_s:
            best = (proc, cpu)
    assert best is not None
    proc, cpu = best
    data = json.loads(proc.stdout)
    return {"wall_s": round(proc.wall_s, 3), "cpu_s": round(cpu, 3),
            "peak_rss_bytes": proc.peak_rss_bytes, "classes": data["classes"],
            "tools_changed": len(data["access"])}
