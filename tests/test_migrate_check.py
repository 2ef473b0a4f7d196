"""The pure parts of ``conformance.migrate_check`` (expressing definitions as an OpenClaw config);
the run itself needs both releases (``make conformance``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from toolc.api.project import Why

from conformance.migrate_check import (
    _access_row,
    _group_ignored,
    express,
    official_channel_plugins,
    oracle_context,
    shipped_2026_3,
)
from tests.test_oracle9 import PACKAGE


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shipped_2026_3(tmp_path_factory.mktemp("shipped") / "d")


def test_named_groups_are_expanded_and_said(shipped: Path) -> None:
    side = express(shipped, {"memory-core"})
    researcher = next(a for a in side.config["agents"]["list"] if a["id"] == "researcher")
    # group:research is toolc's (groups.yaml): its members, OpenClaw's own groups, stay groups
    assert researcher["tools"]["allow"][:2] == ["group:web", "group:memory"]
    assert any("named groups expanded" in n and "group:research" in n for n in side.notes)


def test_toolc_only_keys_are_left_out_and_said(shipped: Path) -> None:
    side = express(shipped, {"memory-core"})
    coder = next(a for a in side.config["agents"]["list"] if a["id"] == "coder")
    assert "allowlist" not in coder["tools"]["exec"] and coder["tools"]["exec"]["host"] == "gateway"
    assert any("agents.list[coder].tools.exec.allowlist" in n for n in side.notes)
    assert "assertions" not in side.config and "groups" not in side.config


def test_plugins_the_release_does_not_bundle_get_stand_ins(shipped: Path) -> None:
    side = express(shipped, {"memory-core"})
    assert side.plugins == [{"id": "code_search", "tools": [
        {"name": "grep", "optional": False}, {"name": "glob_files", "optional": False},
        {"name": "code_index_rebuild", "optional": True}]}]


def test_channel_tools_become_the_official_plugins_tools(shipped: Path) -> None:
    side = express(shipped, {"memory-core"}, {"whatsapp": ["whatsapp_call", "whatsapp_login"]})
    assert {"id": "whatsapp", "tools": [{"name": "whatsapp_login", "optional": False},
                                        {"name": "whatsapp_call", "optional": False}]} \
        in side.plugins


def test_spawn_depth_becomes_a_subagent_session_key() -> None:
    assert oracle_context({"agent_id": "coder", "spawn_depth": 2}) == {
        "agent_id": "coder", "session_key": "agent:coder:subagent:x:subagent:x"}
    assert oracle_context({"spawn_depth": 0}) == {}


def test_a_group_request_without_its_session_key_is_ignored_by_2026_9() -> None:
    assert _group_ignored({"group_id": "-100123"})
    assert not _group_ignored({"group_id": "-100123",
                               "session_key": "agent:main:telegram:group:-100123"})
    assert not _group_ignored({})


@pytest.mark.skipif(not PACKAGE.exists(), reason="openclaw@2026.9.6 is not installed "
                    "(make conformance-setup)")
def test_the_official_whatsapp_plugin_declares_whatsapp_login() -> None:
    assert "whatsapp_login" in official_channel_plugins(PACKAGE)["whatsapp"]


def _why(sign: str) -> Why:
    return Why(tool="cron", sign=sign, where="agent main", context={"agent_id": "main"},
               before="cron visible", after="cron is not in the catalog", rule="renamed")


def test_a_line_is_confirmed_only_by_both_releases_and_its_classes() -> None:
    ctxs = [{"agent_id": "main"}, {"agent_id": "main", "sender_is_owner": False}]
    seen, gone = {"tools": ["cron"]}, {"tools": ["read"]}
    # lost: visible in 2026.3.2, absent in 2026.9.6; the other request absent on both sides
    assert _access_row(_why("-"), ctxs, [seen, gone], [gone, gone], "").confirmed
    # 2026.9.6 still has it: not confirmed
    assert not _access_row(_why("-"), ctxs, [seen, gone], [seen, gone], "").confirmed
    # a request of the line's classes where the tool is gained instead
    row = _access_row(_why("-"), ctxs, [seen, gone], [gone, seen], "")
    assert not row.confirmed and "1 of 1 requests" in row.why
    # a refusal is "absent"
    refused = {"error_kind": "AgentSelectionRequired"}
    assert _access_row(_why("-"), ctxs, [seen, refused], [gone, refused], "").confirmed
