"""The release data read from OpenClaw's own code (``python -m conformance.extract``).

No Node here: these hold the committed files to their own internal consistency, to the byte
format the extractor writes, and to the facts issue 20 names about each release.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from toolc.schema import DIALECTS, clean_schema
from toolc.schema.checks import meta_problems, schema_problems

from conformance.extract import render
from conformance.releases import legacy_roster

DATA = Path(__file__).resolve().parent.parent / "compiler" / "targets" / "data"
LINES = ["2026.3", "2026.9"]


def load(line: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"openclaw-{line}.json").read_text("utf-8"))
    return data


@pytest.mark.parametrize("line", LINES)
def test_file_is_what_the_extractor_writes(line: str) -> None:
    text = (DATA / f"openclaw-{line}.json").read_text("utf-8")
    assert text == render(json.loads(text))


@pytest.mark.parametrize("line", LINES)
def test_section_groups_follow_the_catalog(line: str) -> None:
    data = load(line)
    for group, members in data["groups"].items():
        if group == "group:openclaw":
            expected = [t["name"] for t in data["tools"] if t["openclawGroup"]]
        else:
            expected = [t["name"] for t in data["tools"]
                        if f"group:{t['section']}" == group]
        assert members == expected, group


def test_profiles_follow_the_catalog_2026_9() -> None:
    data = load("2026.9")
    for name in ("minimal", "coding", "messaging"):
        listed = [t["name"] for t in data["tools"] if name in t["profiles"]]
        extra = [] if name == "minimal" else ["bundle-mcp"]
        assert data["profiles"][name] == {"allow": listed + extra, "deny": None}
    assert data["profiles"]["full"] == {"allow": ["*"], "deny": None}


def test_2026_9_facts_of_issue_20() -> None:
    data = load("2026.9")
    names = {t["name"] for t in data["tools"]}
    assert {"ls", "automations", "view_image", "progress_card", "conversations_send"} <= names
    assert not {"cron", "image"} & names
    assert {"nodes", "plugins", "conversations_list"} <= set(data["ownerOnly"])
    assert "whatsapp_login" not in data["ownerOnly"]
    assert "message" in data["subagentDeny"]["always"]
    assert "subagents" in data["subagentDeny"]["leaf"]
    assert not {"memory_search", "memory_get"} & set(data["subagentDeny"]["always"])
    assert data["maxSpawnDepth"] == 5
    assert data["plugins"]["browser"]["tools"] == ["browser"]
    assert data["plugins"]["canvas"]["tools"] == ["canvas"]
    assert {"memory_search", "memory_get"} <= set(data["plugins"]["memory-core"]["tools"])
    assert data["memorySlotDefault"] == "memory-core"
    assert data["groupResolvers"] == ["telegram"]
    # catalog tools built by bundled plugins are not core-built
    assert not {"browser", "canvas", "memory_get"} & set(data["coreBuilt"])


def test_2026_3_facts() -> None:
    data = load("2026.3")
    assert data["ownerOnly"] == ["cron", "gateway", "whatsapp_login"]
    assert data["maxSpawnDepth"] == 1
    assert data["profiles"]["full"] == {"allow": None, "deny": None}
    assert data["messageProviderDeny"] == {"voice": ["tts"]}
    assert data["plugins"]["memory-core"]["tools"] == ["memory_search", "memory_get"]


def test_legacy_roster_turns_entries_into_a_list() -> None:
    cfg = {"agents": {"entries": {"a1": {"default": True}, "a2": {"tools": {"deny": ["x"]}}},
                      "defaults": {}}}
    assert legacy_roster(cfg)["agents"] == {
        "defaults": {}, "list": [{"id": "a1", "default": True},
                                 {"id": "a2", "tools": {"deny": ["x"]}}]}
    assert "entries" in cfg["agents"]  # the input is left alone


def test_2026_9_every_tool_has_the_releases_schema_or_says_why() -> None:
    data = load("2026.9")
    plugin_tools = {t for p in data["plugins"].values() for t in p["tools"]}
    every = {t["name"] for t in data["tools"]} | set(data["outsideCatalog"]) | plugin_tools
    assert set(data["parameters"]) | set(data["parametersNotBuilt"]) == every
    assert not set(data["parameters"]) & set(data["parametersNotBuilt"])
    # only bundled-plugin tools that need outside state (a CLI lease, a 1Password broker)
    assert set(data["parametersNotBuilt"]) <= plugin_tools - {t["name"] for t in data["tools"]}
    assert all(s.get("type") == "object" for s in data["parameters"].values())
    # TypeBox's `~optional` markers are listed and removed, never left in a schema
    assert data["parametersOptionalMarkers"]
    assert "~optional" not in json.dumps(data["parameters"])
    # the tools issue 20 names as new in 2026.9 have real schemas, not an open object
    for name in ("ls", "automations", "view_image", "progress_card", "sessions_search",
                 "conversations_send"):
        assert data["parameters"][name].get("properties"), name


def test_2026_9_schemas_keep_the_releases_property_order() -> None:
    # render sorts every key except inside the schemas: a schema's properties are shown to the
    # model in the order the release wrote them
    props = list(load("2026.9")["parameters"]["read"]["properties"])
    assert props[:3] == ["path", "offset", "limit"]


def test_2026_9_schemas_pass_the_compilers_checks_for_every_dialect() -> None:
    problems = []
    for name, schema in load("2026.9")["parameters"].items():
        problems += [f"{name}: {p}" for p in meta_problems(schema)]
        for dialect in DIALECTS:
            cleaned = clean_schema(schema, dialect)
            problems += [f"{name} {dialect}: {n.message}" for n in cleaned.errors]
            problems += [f"{name} {dialect}: {p}"
                         for p in schema_problems(dialect, cleaned.schema, strict=cleaned.strict)]
    assert problems == []
