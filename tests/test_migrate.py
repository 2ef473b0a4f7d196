"""``toolc migrate --openclaw 2026.9``: the rewrite of a 2026.3 project (the shipped definitions
as they were for 2026.3), its access diff (exactly ``compute_diff`` of the two builds),
``--check`` exit codes, idempotence, edited catalogs, and that nothing is half-written.
Mechanics only: what 2026.9 answers is the engines' and the conformance suite's business."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from toolc import api
from toolc.cli import main
from toolc.diagnostics import Diagnostics
from toolc.importers.migrate import plan_migration
from toolc.pipeline.frontend import read_tree
from toolc.review.diff import compute_diff, side_from_build, to_json
from toolc.targets.starter import STARTER_FILES, starter_text

from tests.helpers import ROOT, build_runtime, write_definitions


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


# The shipped definitions as they were for 2026.3 (before `toolc migrate` moved definitions/):
# the 2026.3 starter files plus the project's own files, kept as a fixture.
FIXTURE = ROOT / "tests" / "fixtures" / "shipped-2026.3"


def shipped_2026_3(dst: Path) -> Path:
    for rel in STARTER_FILES["2026.3"]:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        (dst / rel).write_text(starter_text("2026.3", rel), "utf-8")
    shutil.copytree(FIXTURE, dst, dirs_exist_ok=True)
    return dst


def test_the_fixture_is_the_shipped_definitions_while_they_follow_2026_3(tmp_path: Path) -> None:
    shipped = _tree(ROOT / "definitions")
    if b'openclaw: "2026.9"' in b"".join(shipped.values()):
        pytest.skip("definitions/ follow 2026.9 now; the fixture keeps their 2026.3 form")
    assert _tree(shipped_2026_3(tmp_path / "d")) == shipped


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, api.MigrateResult]:
    """The shipped 2026.3 definitions copied, and that copy migrated."""
    tmp = tmp_path_factory.mktemp("migrate")
    before, after = shipped_2026_3(tmp / "before"), shipped_2026_3(tmp / "after")
    return before, after, api.migrate(after, openclaw="2026.9")


def test_the_shipped_definitions_migrate(migrated: tuple[Path, Path, api.MigrateResult]) -> None:
    before, after, result = migrated
    assert result.written and result.changed
    assert api.resolve_definitions(before).target.key == "2026.3"
    assert api.resolve_definitions(after).target.key == "2026.9"
    text = "\n".join(p.read_text() for p in after.rglob("*.yaml"))
    assert 'openclaw: "2026.9"' in text
    policy_text = "\n".join(p.read_text() for p in (after / "deployment").glob("*.yaml"))
    assert "cron" not in policy_text and "automations" in policy_text
    assert " image," not in policy_text and "view_image" in policy_text
    for rel in ("catalog/10-core.yaml", "profiles.yaml", "plugins/browser.yaml"):
        assert (after / rel).read_text() == starter_text("2026.9", rel)
    assert "ownership: explicit" in (after / "deployment/agents.yaml").read_text()
    # comments and layout of the user's files stay
    assert (after / "deployment/agents.yaml").read_text().count("#") \
        == (before / "deployment/agents.yaml").read_text().count("#")
    assert not list(after.parent.glob(".after.toolc-migrate-*"))


def test_the_access_diff_is_compute_diff_of_the_two_builds(
        migrated: tuple[Path, Path, api.MigrateResult]) -> None:
    before, after, result = migrated
    assert result.diff is not None
    built = []
    for defs in (before, after):
        out = defs.parent / f"{defs.name}-build"
        api.build(defs, out)
        built.append(side_from_build(out))
    expected = compute_diff(*built)
    got, want = to_json(result.diff), to_json(expected)
    for key in ("base", "head"):
        got.pop(key), want.pop(key)
    assert got == want
    assert result.diff.targets == ("2026.3", "2026.9")
    # every access change is explained, on one request of it, with a rule
    changes = {(c.tool, sign) for c in result.diff.changes
               for sign, cubes in (("+", c.gained), ("-", c.lost)) if cubes}
    assert {(w.tool, w.sign) for w in result.why} == changes
    assert all(w.rule and w.before and w.after for w in result.why)
    renamed = next(w for w in result.why if w.tool == "cron")
    assert "Target.renames" in renamed.rule
    assert result.diff_text().startswith("toolc diff ")


def test_migrating_again_changes_nothing(migrated: tuple[Path, Path, api.MigrateResult],
                                         tmp_path: Path) -> None:
    _, after, _ = migrated
    copy = tmp_path / "d"
    shutil.copytree(after, copy)
    files = _tree(copy)
    result = run("migrate", str(copy), "--check")
    assert result.exit_code == 0, result.output
    assert "already follows OpenClaw 2026.9" in result.output
    again = api.migrate(copy)
    assert not again.changed and again.diff is None and _tree(copy) == files


def test_check_prints_the_diff_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    defs = shipped_2026_3(tmp_path / "d")
    files = _tree(defs)
    result = run("migrate", str(defs), "--check")
    assert result.exit_code == 1, result.output
    assert "--- a/deployment/agents.yaml" in result.output
    assert "+openclaw: \"2026.9\"" in result.output
    assert "toolc diff " in result.output and "why (one request" in result.output
    assert _tree(defs) == files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_an_init_project_migrates_like_a_fresh_2026_9_init(tmp_path: Path) -> None:
    assert run("init", str(tmp_path / "old"), "--openclaw", "2026.3").exit_code == 0
    assert run("init", str(tmp_path / "new")).exit_code == 0
    result = run("migrate", str(tmp_path / "old"))
    assert result.exit_code == 0, result.output
    old, new = _tree(tmp_path / "old"), _tree(tmp_path / "new")
    starter = {*STARTER_FILES["2026.9"], ".schema/definitions.schema.json"}
    assert {rel: old[rel] for rel in starter} == {rel: new[rel] for rel in starter}
    assert "catalog/20-channels.yaml" not in old  # no policy names its tools
    assert b'openclaw: "2026.9"' in old["policy.yaml"]


def test_an_edited_catalog_is_kept_and_its_tools_renamed(tmp_path: Path) -> None:
    defs = write_definitions(tmp_path / "d", {
        "catalog.yaml": {"catalog": [
            {"name": "cron", "description": "my cron", "parameters": {"type": "object"}},
            {"name": "read", "description": "r", "parameters": {"type": "object"}}]},
        "profiles.yaml": {"profiles": {"mine": {"allow": ["cron", "read"]}}},
        "policy.yaml": "version: 1\n# keep me\ntools:\n  profile: mine\n"
                       "  deny: ['image', \"cr*\", cron]\n"
                       "assertions:\n  - never: {tool: cron}\n",
    })
    result = api.migrate(defs)
    assert result.written
    catalog = yaml.safe_load((defs / "catalog.yaml").read_text())
    assert [t["name"] for t in catalog["catalog"]] == ["automations", "read"]
    policy = (defs / "policy.yaml").read_text()
    assert policy.startswith('version: 1\nopenclaw: "2026.9"\n# keep me\n')
    assert "deny: ['view_image', \"cr*\", automations]" in policy
    assert "tool: automations" in policy
    assert "automations" in (defs / "profiles.yaml").read_text()
    assert any("pattern 'cr*' matched cron" in n for n in result.plan.notes)


def test_a_project_with_errors_is_refused_and_untouched(tmp_path: Path) -> None:
    defs = write_definitions(tmp_path / "d", {"policy.yaml": {"tools": {"profile": "nope"}}})
    files = _tree(defs)
    result = run("migrate", str(defs))
    assert result.exit_code == 1 and "TC104" in result.output
    assert _tree(defs) == files


def test_a_migration_that_would_not_build_writes_nothing(tmp_path: Path) -> None:
    # a tool named after the new name already exists: the rename would duplicate it
    defs = write_definitions(tmp_path / "d", {"catalog.yaml": {"catalog": [
        {"name": n, "description": n, "parameters": {"type": "object"}}
        for n in ("cron", "automations")]}})
    files = _tree(defs)
    with pytest.raises(api.MigrationError, match="TC120"):
        api.migrate(defs)
    assert _tree(defs) == files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


def test_plan_is_pure_and_deterministic(tmp_path: Path) -> None:
    files = read_tree(shipped_2026_3(tmp_path / "d"), Diagnostics())
    assert files is not None
    a = plan_migration(files, "definitions", "2026.9")
    b = plan_migration(dict(reversed(list(files.items()))), "definitions", "2026.9")
    assert a.files == b.files and a.deleted == b.deleted and a.done == b.done


def test_a_project_of_starter_files_only_gets_a_file_for_the_key(tmp_path: Path) -> None:
    defs = tmp_path / "d"
    for rel in STARTER_FILES["2026.3"]:
        (defs / rel).parent.mkdir(parents=True, exist_ok=True)
        (defs / rel).write_text(starter_text("2026.3", rel), "utf-8")
    result = api.migrate(defs)
    assert result.written
    assert (defs / "openclaw.yaml").read_text().endswith('openclaw: "2026.9"\n')
    for rel in STARTER_FILES["2026.9"]:
        assert (defs / rel).read_text() == starter_text("2026.9", rel)
    assert not (defs / "catalog/20-channels.yaml").exists()
    assert api.resolve_definitions(defs).target.key == "2026.9"


def test_the_migrated_project_validates_strict(
        migrated: tuple[Path, Path, api.MigrateResult]) -> None:
    """The allow lists whose groups name memory-core's tools get the plugin id beside the
    group (2026.9 loads plugin tools only for a list naming them or their plugin), so the
    migrated project has no TC142 and passes `validate --strict`; migrate says so."""
    _, after, result = migrated
    assert '"group:memory", memory-core,' in (after / "deployment/tools.yaml").read_text()
    assert '"group:research", memory-core,' in (after / "deployment/agents.yaml").read_text()
    beside = [d for d in result.plan.done if "added memory-core beside" in d]
    assert [d.split(":")[0] for d in beside] == ["deployment/agents.yaml",
                                                 "deployment/tools.yaml"]
    checked = run("validate", "--strict", str(after))
    assert checked.exit_code == 0, checked.output
    assert "TC142" not in checked.output


def test_a_block_list_group_gets_its_plugin_id_on_a_line_of_its_own(tmp_path: Path) -> None:
    defs = tmp_path / "d"
    for rel in STARTER_FILES["2026.3"]:
        (defs / rel).parent.mkdir(parents=True, exist_ok=True)
        (defs / rel).write_text(starter_text("2026.3", rel), "utf-8")
    (defs / "policy.yaml").write_text("version: 1\ntools:\n  alsoAllow: [exec]\n  sandbox:\n"
                                      "    tools:\n      allow:\n        - read\n"
                                      "        - 'group:memory'  # recall\n")
    api.migrate(defs)
    assert (defs / "policy.yaml").read_text().endswith(
        "      allow:\n        - read\n        - 'group:memory'  # recall\n"
        "        - memory-core\n")
    checked = run("validate", "--strict", str(defs))
    assert "TC142" not in checked.output, checked.output


def test_the_shipped_definitions_are_migrated() -> None:
    result = run("migrate", "--check", str(ROOT / "definitions"))
    assert result.exit_code == 0, result.output
    assert "already follows OpenClaw 2026.9" in result.output
    assert "access: nothing changes" in result.output


# -- routing (issue 32): bindings and session settings across releases -------------------------
ROUTED = """\
version: 1
openclaw: "2026.3"
agents:
  list:
    - id: main
      default: true
    - id: family
      tools: {profile: messaging}
    - id: ops
      tools: {deny: [exec]}
channels:
  telegram:
    groups:
      "-100123": {tools: {deny: [browser]}}
  discord: {}
  msteams: {}
  whatsapp: {}
  signal: {}
bindings:
  - agentId: family
    match: {channel: telegram, peer: {kind: direct, id: "42"}}
  - agentId: ops
    match: {channel: telegram, peer: {kind: group, id: "-100123"}}
  - agentId: ops
    match: {channel: discord, guildId: "900", roles: ["7"]}
  - agentId: family
    match: {channel: discord, guildId: "900"}
  - agentId: family
    match: {channel: msteams, teamId: "19:t@thread.tacv2"}
  - agentId: family
    match: {channel: telegram, accountId: personal}
  - agentId: ops
    match:
      channel: whatsapp
      accountId: "*"
      peer: {kind: group, id: "*"}
session:
  dmScope: per-channel-peer
  identityLinks:
    alice: ["telegram:42", "whatsapp:+15551234567"]
"""

# (route arguments, the same route under both releases?) of messages on every tier
MESSAGES: list[tuple[str, dict[str, Any], bool]] = [
    ("telegram", {"peer": ("direct", "42")}, True),  # binding.peer, alice's key
    ("telegram", {"peer": ("group", "-100123")}, True),
    ("discord", {"peer": ("channel", "1"), "guild_id": "900", "member_role_ids": ["7"]}, True),
    ("discord", {"peer": ("channel", "1"), "guild_id": "900"}, True),
    ("msteams", {"peer": ("channel", "19:c@thread"), "team_id": "19:t@thread.tacv2"}, True),
    ("telegram", {"account_id": "personal", "peer": ("direct", "5")}, True),
    ("whatsapp", {"peer": ("direct", "+15551234567")}, True),
    # the peer wildcard tier is 2026.9's: 2026.3 gave the group the default agent
    ("whatsapp", {"peer": ("group", "1203@g.us")}, False),
    # Signal group ids keep their case in 2026.9's key
    ("signal", {"peer": ("group", "AbCd=")}, False),
]


def _project(root: Path, policy: str) -> Path:
    """A 2026.3 starter project whose policy file is ``policy``."""
    for rel in STARTER_FILES["2026.3"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(starter_text("2026.3", rel), "utf-8")
    (root / "policy.yaml").write_text(policy, "utf-8")
    return root


def _routes(runtime: Any) -> list[tuple[str, str]]:
    return [(r.agent_id, r.session_key) for r in
            (runtime.route(channel, **kw) for channel, kw, _ in MESSAGES)]


@pytest.fixture(scope="module")
def routed(tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[Any, Any, api.MigrateResult, Path]:
    tmp = tmp_path_factory.mktemp("routed")
    before, after = _project(tmp / "before", ROUTED), _project(tmp / "after", ROUTED)
    result = api.migrate(after, openclaw="2026.9")
    return (build_runtime(before, tmp / "b"), build_runtime(after, tmp / "a"), result, after)


def test_bindings_and_session_settings_carry_over_and_route_the_same(
        routed: tuple[Any, Any, api.MigrateResult, Path]) -> None:
    old, new, result, after = routed
    assert result.written
    text = (after / "policy.yaml").read_text()
    assert ROUTED.split("bindings:\n", 1)[1] in text  # as written, comments and all
    assert (old.route("telegram", peer=("direct", "42")).session_key
            == new.route("telegram", peer=("direct", "42")).session_key
            == "agent:family:telegram:direct:alice")
    for (channel, kw, same), before, now in zip(MESSAGES, _routes(old), _routes(new),
                                                strict=True):
        assert (before == now) is same, (channel, kw, before, now)


def test_the_changes_in_routing_are_said_with_the_tools_they_move(
        routed: tuple[Any, Any, api.MigrateResult, Path]) -> None:
    old, new, result, _ = routed
    assert old.route("whatsapp", peer=("group", "1203@g.us")).agent_id == "main"
    moved = new.route("whatsapp", peer=("group", "1203@g.us"))
    assert (moved.agent_id, moved.matched_by) == ("ops", "binding.peer.wildcard")
    notes = "\n".join(result.plan.notes)
    # ops denies exec: every WhatsApp group that no binding names loses it
    wildcard = next(n for n in result.plan.notes if n.startswith("bindings[6] ("))
    assert wildcard.endswith('peer {kind: group, id: "*"} matched only a chat whose id is "*" '
                             "under OpenClaw 2026.3; under 2026.9 it matches every group chat "
                             "on whatsapp that no binding names by id (binding.peer.wildcard): "
                             "they move from agent main (default) to agent ops; their tools: "
                             "-exec"), wildcard
    assert "exec" in old.resolve_message("whatsapp", peer=("group", "1203@g.us"))[1].names
    assert "exec" not in new.resolve_message("whatsapp", peer=("group", "1203@g.us"))[1].names
    # the legacy default agent's channel-wide bindings, added by 2026.9's loader
    assert new.route("telegram", peer=("direct", "9")).matched_by == "binding.channel"
    assert old.route("telegram", peer=("direct", "9")).matched_by == "default"
    assert any(n.startswith("routing: OpenClaw 2026.9's loader adds a channel-wide binding to "
                            "the default agent main for discord, msteams, signal, telegram, "
                            "whatsapp:")
               for n in result.plan.notes), notes
    key = new.route("signal", peer=("group", "AbCd=")).session_key
    assert key == "agent:main:signal:group:AbCd="
    assert old.route("signal", peer=("group", "AbCd=")).session_key == key.lower()
    assert any(n.startswith("routing: session keys of signal group chats keep the case")
               for n in result.plan.notes)


def test_an_explicit_roster_keeps_2026_3s_route_of_unbound_messages(tmp_path: Path) -> None:
    # several agents, none default: migrate makes the roster explicit (as doctor does), and
    # 2026.9 would then refuse a message no binding routes; doctor's bindings keep the route
    text = ROUTED.replace("      default: true\n", "")
    before, after = _project(tmp_path / "before", text), _project(tmp_path / "after", text)
    result = api.migrate(after)
    added = [d for d in result.plan.done if "added a channel-wide binding to main" in d]
    assert added == ["policy.yaml: added a channel-wide binding to main for discord, msteams, "
                     "signal, telegram, whatsapp (as `openclaw doctor --fix` does: with the roster "
                     "explicit, OpenClaw 2026.9 would refuse a message there no binding routes; "
                     "2026.3 gave it the first agent, and so does the binding)"]
    written = yaml.safe_load((after / "policy.yaml").read_text())
    assert written["agents"]["ownership"] == "explicit"
    assert [b["match"] for b in written["bindings"][7:]] == [
        {"channel": c, "accountId": "*"}
        for c in ("discord", "msteams", "signal", "telegram", "whatsapp")]
    old, new = build_runtime(before, tmp_path / "b"), build_runtime(after, tmp_path / "a")
    for channel in ("telegram", "discord", "signal"):
        assert (old.route(channel, peer=("direct", "9")).agent_id
                == new.route(channel, peer=("direct", "9")).agent_id == "main")
    # a channel the definitions do not declare: 2026.9 refuses it (no default agent)
    with pytest.raises(new.AgentSelectionRequiredError):
        new.route("slack", peer=("direct", "9"))
    assert run("validate", "--strict", str(after)).exit_code == 0


def test_a_flow_list_of_bindings_gets_a_note_instead(tmp_path: Path) -> None:
    text = ("version: 1\nagents:\n  list:\n    - id: a\n    - id: b\nchannels:\n  telegram: {}\n"
            "bindings: [{agentId: b, match: {channel: slack}}]\n")
    result = api.migrate(_project(tmp_path / "d", text), check=True)
    assert any(n.startswith("add a channel-wide binding to a for telegram by hand")
               for n in result.plan.notes), result.plan.notes


