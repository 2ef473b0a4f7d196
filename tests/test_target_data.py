"""The release data read from OpenClaw's own code (``python -m conformance.extract``).

No Node here: these hold the committed files to their own internal consistency, to the byte
format the extractor writes, and to the facts issue 20 names about each release.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
