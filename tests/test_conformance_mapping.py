"""The conformance harness's pure-Python parts (no node, npm or network needed)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.decisions import explain
from conformance.mapping import catalog_from, definitions_from
from conformance.strategies import config, contexts, plugin_tools
from tests.helpers import engines_for

# What the oracle's {"op": "catalog"} answers for openclaw@2026.3.2 (abridged to the parts the
# mapping reads; the full dump has every section).
ORACLE = {
    "groups": {"group:openclaw": ["web_search", "memory_search", "memory_get", "cron", "tts"],
               "group:fs": ["read", "write", "edit", "apply_patch"],
               "group:runtime": ["exec", "process"], "group:web": ["web_search"],
               "group:memory": ["memory_search", "memory_get"],
               "group:automation": ["cron"], "group:media": ["tts"]},
    "profiles": {"minimal": {"allow": ["read"]}, "coding": {"allow": ["read", "exec"]},
                 "messaging": {"allow": ["tts"]}, "full": {}},
    "ownerOnly": ["cron", "gateway", "whatsapp_login"],
}


def test_catalog_mirrors_openclaw_sections_and_gates() -> None:
    tools = {t["name"]: t for t in catalog_from(ORACLE, [{"id": "lobster", "tools": [
        {"name": "lobster", "optional": True}]}])}
    assert tools["read"]["groups"] == ["fs"]
    assert tools["memory_search"]["plugin"] == "memory-core"
    assert tools["memory_search"]["groups"] == ["memory", "openclaw"]
    assert tools["apply_patch"]["availability"] == {"providers": ["openai", "openai-codex"]}
    assert tools["tts"]["availability"] == {"excludeChannels": ["voice"]}
    assert tools["pdf"].get("groups") is None and "plugin" not in tools["pdf"]
    assert tools["whatsapp_login"]["channel"] == "whatsapp" and tools["cron"]["ownerOnly"]
    assert tools["lobster"] == {"name": "lobster", "description": "The lobster tool.",
                                "parameters": {"type": "object"}, "plugin": "lobster",
                                "optional": True}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cfg=config(), plugins=plugin_tools(), ctxs=st.lists(contexts, min_size=1, max_size=4))
def test_generated_configs_are_valid_toolc_definitions(cfg: dict[str, Any],
                                                       plugins: list[dict[str, Any]],
                                                       ctxs: list[dict[str, Any]]) -> None:
    """Every config the harness draws compiles, and both engines agree on it."""
    with tempfile.TemporaryDirectory() as tmp:
        engines = engines_for(Path(tmp), {"d.yaml": definitions_from(cfg, plugins, ORACLE)})
        for ctx in ctxs:
            engines.both(**ctx)


class _Oracle:
    def __init__(self, answer: list[str]) -> None:
        self.answer = answer
        self.asked: list[dict[str, Any]] = []

    def resolve(self, cfg: Any, plugins: Any, ctxs: list[dict[str, Any]]) -> list[list[str]]:
        self.asked.extend(ctxs)
        return [self.answer]


def test_decisions_cover_only_what_they_say() -> None:
    oracle = _Oracle(["read"])
    # a difference no decision covers (D7's old depth rule is gone: toolc follows the
    # release's getSubagentDepth)
    assert explain(oracle, {}, [], {"session_key": "subagent:x"}, ["read"],
                   ["read", "sessions_spawn"]) is None
    # blank values: re-asked without them, covered only if OpenClaw then agrees
    assert explain(oracle, {}, [], {"group_id": "", "agent_id": "a"}, ["read"], []) == (
        "blank-values-are-absent")
    assert oracle.asked == [{"agent_id": "a"}]
    assert explain(oracle, {}, [], {"group_id": " "}, ["exec"], []) is None
