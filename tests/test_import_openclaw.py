"""``toolc import-openclaw``, ``toolc init`` and ``toolc schema-path``: outputs that build, the
report, secrets, stubs, JSON5, errors, refusing to overwrite. No network (the round trip
against OpenClaw's own code is ``make conformance``)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from toolc.api import resolve_definitions, validate
from toolc.cli import main
from toolc.importers.openclaw import ConfigError, parse_config
from toolc.importers.openclaw import import_openclaw as _import_openclaw
from toolc.importers.starter import SCHEMA_COPY
from toolc.semantics.reference import ReferenceInterpreter

from conformance.roundtrip import docs_examples
from tests.helpers import ROOT

# A config as the docs write them: JSON5 comments, unquoted keys, single quotes, trailing
# commas, a duplicate key (the last wins), secrets everywhere, keys toolc has no use for.
SECRETS = ["SECRET-bot-token-0001", "SECRET-app-token-0002", "SECRET-gateway-0003",
           "SECRET-api-key-0004", "SECRET-password-0005", "SECRET-plugin-key-0006",
           "SECRET-discord-0007", "SECRET-env-0008", "SECRET-hook-0009"]
CONFIG = """\
// my OpenClaw config
{
  env: { OPENROUTER_API_KEY: "SECRET-env-0008" },
  gateway: { auth: { mode: 'token', token: "SECRET-gateway-0003" }, port: 0x4965 },
  hooks: { token: "SECRET-hook-0009" },
  models: { providers: { proxy: { apiKey: "SECRET-api-key-0004", baseUrl: "http://x" } } },
  tools: { web: { search: { apiKey: "SECRET-api-key-0004" } } },
  tools: {
    profile: "coding",
    alsoAllow: ["lobster", 'web_fetch'],
    deny: ["browser",],
    byProvider: { "openai/gpt-5": { profile: "minimal" } },
    sandbox: { tools: { allow: ["group:fs"], deny: ["exec"] } },
    subagents: { tools: { deny: ["message"] }, model: "x" },
    exec: { host: "gateway", security: "allowlist", ask: "on-miss", timeoutSec: 30,
            applyPatch: { enabled: true, allowModels: ["gpt-5"] } },
    elevated: { enabled: true },
    loopDetection: { enabled: true },
  },
  agents: {
    defaults: { model: { primary: "anthropic/claude" }, subagents: { maxSpawnDepth: 2 } },
    list: [
      { id: "main", default: true, name: "Main" },
      { id: "family", name: "Family", workspace: "~/w",
        tools: { profile: "messaging", deny: ["exec"], elevated: { enabled: false } } },
      { id: "typo", tools: { profile: "codng" } },
    ],
  },
  bindings: [{ agentId: "family", match: { channel: "whatsapp" } }],
  channels: {
    telegram: {
      botToken: "SECRET-bot-token-0001",
      dmPolicy: "pairing", groupPolicy: "allowlist", groupAllowFrom: ["1"],
      groups: {
        "*": { requireMention: true },
        "-100123": {
          requireMention: false,
          tools: { deny: ["exec"] },
          toolsBySender: { "id:42": { alsoAllow: ["exec"] } },
        },
      },
      accounts: { work: { botToken: "SECRET-bot-token-0001" } },
    },
    whatsapp: { dmPolicy: "pairing", allowFrom: ["+15555550123"] },
    slack: {
      botToken: "SECRET-bot-token-0001", appToken: "SECRET-app-token-0002",
      channels: { "#general": { requireMention: true, tools: { deny: ["exec"] } },
                  C123: { allow: true } },
    },
    discord: {
      token: "SECRET-discord-0007",
      guilds: { "123": { slug: "friends", requireMention: false,
                         tools: { deny: ["browser"] },
                         channels: { general: { allow: true,
                                                toolsBySender: { "*": { deny: ["exec"] } } } } } },
    },
    irc: { password: "SECRET-password-0005", groups: { "#dev": { requireMention: true } } },
  },
  plugins: {
    entries: { lobster: { enabled: true, config: { apiKey: "SECRET-plugin-key-0006" } },
               voice: { enabled: false } },
  },
}
"""

import_openclaw = functools.partial(_import_openclaw, openclaw="2026.3")


def run(*args: str) -> Result:
    # these tests hold the 2026.3 import (tests/test_openclaw9_import.py: 2026.9's)
    if args[:1] in (("init",), ("import-openclaw",)) and "--openclaw" not in args:
        args = (*args, "--openclaw", "2026.3")
    return CliRunner().invoke(main, list(args))


def read_tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text("utf-8")
            for p in sorted(root.rglob("*")) if p.is_file()}


def policy_of(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((out / "openclaw/policy.yaml").read_text())
    return data


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    tmp = tmp_path_factory.mktemp("import")
    (tmp / "openclaw.json5").write_text(CONFIG)
    # --allow-partial: tools.elevated (enabled) could change tool access; toolc leaves it out
    return tmp / "defs", run("import-openclaw", str(tmp / "openclaw.json5"), "-o",
                             str(tmp / "defs"), "--allow-partial")


def test_secrets_never_reach_the_output_or_the_report(imported: tuple[Path, Result]) -> None:
    out, result = imported
    written = "\n".join(read_tree(out).values())
    for secret in SECRETS:
        assert secret not in written
        assert secret not in result.output
    assert "channels.telegram.botToken" in result.output  # the path, never the value


def test_a_secret_in_a_policy_place_is_refused_without_printing_it(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    token = "xoxb-1234567890-abcdefghij"
    config.write_text(json.dumps({"channels": {"telegram": {"groups": {
        token: {"tools": {"deny": ["exec"]}}}}}}))
    result = run("import-openclaw", str(config), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    assert token not in result.output
    assert "holds a credential (Slack token)" in result.output
    assert "channels.telegram.groups.xoxb-***" in result.output
    assert not (tmp_path / "out").exists()


def test_report_lists_left_out_keys_by_json_path(imported: tuple[Path, Result]) -> None:
    _, result = imported
    # (exit 1 until toolc compiles Slack's and Discord's maps: the check after writing)
    assert "check: " in result.output, result.output
    lines = {line.strip() for line in result.output.splitlines()}
    for path in ["env", "gateway", "hooks", "models", "tools.loopDetection",
                 "tools.exec.timeoutSec", "tools.subagents.model",
                 "agents.defaults.model", "agents.list[0].name",
                 "agents.list[1].workspace", "agents.list[1].tools.elevated",
                 "channels.telegram.dmPolicy", "channels.telegram.groupPolicy",
                 "channels.telegram.groupAllowFrom",
                 'channels.telegram.groups."*".requireMention',
                 "channels.telegram.accounts.work.botToken", "channels.whatsapp.allowFrom",
                 "channels.slack.appToken", 'channels.slack.channels."#general".requireMention',
                 "channels.irc.groups (no tool policy)", "plugins.entries.lobster.config"]:
        assert path in lines, path
    assert "tools: duplicate key, the last one is used (as OpenClaw does)" in lines
    # an access-relevant key left out (allowed by --allow-partial) has its own section
    assert "left out, could change tool access (--allow-partial): the import is WIDER than " \
        "the gateway here: 1" in lines
    assert any(line.startswith("tools.elevated (elevated exec") for line in lines)
    assert any("unknown profile 'codng'" in line and 'did you mean "coding"' in line
               for line in lines)


def test_the_import_builds_with_the_policy_in_openclaws_shape(
        imported: tuple[Path, Result]) -> None:
    out, _ = imported
    policy = policy_of(out)
    assert policy["tools"] == {
        "profile": "coding", "alsoAllow": ["lobster", "web_fetch"], "deny": ["browser"],
        "byProvider": {"openai/gpt-5": {"profile": "minimal"}},
        "sandbox": {"tools": {"allow": ["group:fs"], "deny": ["exec"]}},
        "subagents": {"tools": {"deny": ["message"]}},
        "exec": {"host": "gateway", "security": "allowlist", "ask": "on-miss",
                 "applyPatch": {"enabled": True, "allowModels": ["gpt-5"]}}}
    assert policy["agents"]["defaults"] == {"subagents": {"maxSpawnDepth": 2}}
    assert [a["id"] for a in policy["agents"]["list"]] == ["main", "family", "typo"]
    # `default` is kept: it names the agent of session keys without one (sandbox modes)
    assert policy["agents"]["list"][0] == {"id": "main", "default": True}
    assert policy["agents"]["list"][2] == {"id": "typo", "tools": {"profile": "full"}}
    telegram = policy["channels"]["telegram"]
    assert telegram == {"groups": {"*": {}, "-100123": {
        "tools": {"deny": ["exec"]}, "toolsBySender": {"id:42": {"alsoAllow": ["exec"]}}}},
        "accounts": {"work": {}}}
    assert policy["channels"]["whatsapp"] == {} and policy["channels"]["irc"] == {}
    assert policy["plugins"] == {"entries": {"lobster": {"enabled": True},
                                             "voice": {"enabled": False}}}
    # route bindings decide which agent (and so which policy) a chat gets: kept as written
    assert policy["bindings"] == [{"agentId": "family", "match": {"channel": "whatsapp"}}]


def test_slack_and_discord_keep_their_own_maps(imported: tuple[Path, Result]) -> None:
    # OpenClaw's Slack resolver reads channels.<id|#name>, Discord's guilds.<id>.channels
    # (and a guild's slug); entries without policy stay, emptied (a matched entry stops the
    # search). How they resolve: test_what_main_compiles_resolves_as_openclaw_does.
    out, _ = imported
    channels = policy_of(out)["channels"]
    assert channels["slack"] == {"channels": {"#general": {"tools": {"deny": ["exec"]}},
                                              "C123": {}}}
    assert channels["discord"] == {"guilds": {"123": {
        "slug": "friends", "tools": {"deny": ["browser"]},
        "channels": {"general": {"toolsBySender": {"*": {"deny": ["exec"]}}}}}}}


def test_what_main_compiles_resolves_as_openclaw_does(tmp_path: Path) -> None:
    # The whole config, Slack and Discord maps included: it compiles as is, warnings only.
    config = json.loads(json.dumps(parse_config(CONFIG.encode(), "c")))
    (tmp_path / "c.json").write_text(json.dumps(config))
    result = run("import-openclaw", str(tmp_path / "c.json"), "-o", str(tmp_path / "d"),
                 "--allow-partial")
    assert result.exit_code == 0, result.output
    assert "check: 0 error(s)" in result.output
    diagnostics = validate(tmp_path / "d")
    assert all(d.severity == "warning" for d in diagnostics)
    ref = ReferenceInterpreter(resolve_definitions(tmp_path / "d"))
    owner = ref.resolve(agent_id="main", sender_is_owner=True).names
    # OpenClaw's own coding profile (cron included), the global alsoAllow
    assert {"cron", "web_fetch", "lobster"} <= set(owner)
    assert "browser" not in owner
    family = ref.resolve(agent_id="family").names
    assert "exec" not in family and "message" in family
    group = ref.resolve(agent_id="main", message_provider="telegram", group_id="-100123")
    assert "exec" not in group.names
    sender = ref.resolve(agent_id="main", message_provider="telegram", group_id="-100123",
                         sender_id="42")
    assert "exec" in sender.names
    typo = ref.resolve(agent_id="typo").names  # the unknown profile: no profile at all
    assert "exec" in typo and "message" in typo
    slack = ref.resolve(agent_id="main", message_provider="slack", group_id="C999",
                        group_channel="general", sender_is_owner=True).names
    assert "exec" not in slack and "read" in slack
    discord = ref.resolve(agent_id="main", message_provider="discord", group_space="123",
                          group_channel="general", group_id="555", sender_is_owner=True).names
    assert "exec" not in discord and "browser" not in discord and "read" in discord


def test_plugin_channel_maps_toolc_does_not_model_are_left_out_and_noted(
        tmp_path: Path) -> None:
    config = {"tools": {"profile": "coding"}, "channels": {
        "msteams": {"teams": {"T1": {"channels": {"C1": {"tools": {"deny": ["exec"]}}}}},
                    "groups": {"g": {"tools": {"deny": ["read"]}}}},
        "matrix": {"rooms": {"!r:x": {"tools": {"deny": ["exec"]}}}}}}
    (tmp_path / "c.json").write_text(json.dumps(config))
    # their tool policies could change tool access: refused, unless --allow-partial
    result = run("import-openclaw", str(tmp_path / "c.json"), "-o", str(tmp_path / "d"))
    assert result.exit_code == 1, result.output
    assert "channels.msteams.teams: left out, but it could change tool access" \
        in result.output
    assert not (tmp_path / "d").exists()
    result = run("import-openclaw", str(tmp_path / "c.json"), "-o", str(tmp_path / "d"),
                 "--allow-partial")
    assert result.exit_code == 0, result.output
    assert "check: 0 error(s)" in result.output
    assert "channels.msteams.teams (holds tool-access settings)" in result.output
    assert "channels.matrix.rooms: its tool policies are not imported" in result.output
    channels = policy_of(tmp_path / "d")["channels"]
    assert channels["msteams"] == {"groups": {"g": {"tools": {"deny": ["read"]}}}}
    assert channels["matrix"] == {}


def test_stubs_for_unknown_names(tmp_path: Path) -> None:
    config = {"plugins": {"entries": {"llm-task": {"enabled": True}}},
              "tools": {"alsoAllow": ["llm-task", "workflow_tool"], "deny": ["voice_call",
                                                                              "exce"]}}
    (tmp_path / "c.json").write_text(json.dumps(config))
    result = run("import-openclaw", str(tmp_path / "c.json"), "-o", str(tmp_path / "d"))
    assert result.exit_code == 0, result.output
    stubs = yaml.safe_load((tmp_path / "d/openclaw/stubs.yaml").read_text())["catalog"]
    assert [(s["name"], s["plugin"], s.get("optional", False)) for s in stubs] == [
        ("llm_task", "llm-task", True), ("workflow_tool", "workflow_tool", True),
        ("voice_call", "voice-call", False)]  # OpenClaw's real plugin id, not a guess
    assert "llm_task (plugin llm-task, tools of OpenClaw's plugin, optional)" in result.output
    assert "unknown name 'exce' (did you mean \"exec\"?)" in result.output  # a typo: no stub
    codes = {d.code for d in validate(tmp_path / "d")}
    assert codes == {"TC130"}  # only the typo; the stubs make the other names known


def test_input_errors_are_positioned_and_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json5"
    bad.write_text('{\n  tools: { allow: ["read", }\n}\n')
    result = run("import-openclaw", str(bad), "-o", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert result.output.startswith(f"error: {bad.as_posix()}:2:")
    assert "Traceback" not in result.output
    cases = {"[1, 2]": "an OpenClaw config is a JSON object",
             '{tools: {allow: "exec"}}': "tools.allow: expected a list of strings",
             '{agents: {list: {id: "a"}}}': "agents.list: expected a list",
             '{channels: {telegram: {groups: []}}}': "channels.telegram.groups: expected an "
                                                    "object, got an array",
             "{tools: null}": "tools: expected an object, got null"}
    for text, message in cases.items():
        bad.write_text(text)
        result = run("import-openclaw", str(bad), "-o", str(tmp_path / "o"))
        assert result.exit_code == 1 and message in result.output, (text, result.output)
    bad.write_bytes(b'{"a": "\xff"}')
    assert "not valid UTF-8" in run("import-openclaw", str(bad), "-o",
                                    str(tmp_path / "o")).output
    assert not (tmp_path / "o").exists()


def test_json5_features(tmp_path: Path) -> None:
    text = "{tools: {deny: ['exec',], /* c */ profile: 'minimal', }, // x\n agents: {}}"
    assert parse_config(text.encode(), "c") == {
        "tools": {"deny": ["exec"], "profile": "minimal"}, "agents": {}}
    with pytest.raises(ConfigError, match=r"^c:1:7: JSON5 syntax error"):
        parse_config(b"{a: 1 b: 2}", "c")


def test_output_directory_is_never_overwritten_without_force(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text('{"tools": {"deny": ["exec"]}}')
    out = tmp_path / "defs"
    out.mkdir()
    (out / "mine.yaml").write_text("version: 1\n")
    result = run("import-openclaw", str(config), "-o", str(out))
    assert result.exit_code == 1 and "not empty" in result.output
    assert "Traceback" not in result.output
    assert [p.name for p in out.iterdir()] == ["mine.yaml"]
    result = run("import-openclaw", str(config), "-o", str(out), "--force")
    assert result.exit_code == 0, result.output
    assert (out / "mine.yaml").read_text() == "version: 1\n"  # --force deletes nothing
    assert policy_of(out)["tools"] == {"deny": ["exec"]}
    result = run("import-openclaw", str(config), "-o", str(config))
    assert result.exit_code == 1 and "is a file" in result.output


def test_init_writes_a_project_that_builds_and_refuses_to_overwrite(tmp_path: Path) -> None:
    defs = tmp_path / "definitions"
    result = run("init", str(defs))
    assert result.exit_code == 0, result.output
    files = read_tree(defs)
    assert set(files) == {"catalog/10-core.yaml", "catalog/20-channels.yaml",
                          "plugins/memory-core.yaml", "profiles.yaml", "providers.yaml",
                          "policy.yaml", SCHEMA_COPY}
    assert files["catalog/10-core.yaml"].startswith(
        "# yaml-language-server: $schema=../.schema/definitions.schema.json\n")
    assert files["policy.yaml"].startswith(
        "# yaml-language-server: $schema=.schema/definitions.schema.json\n")
    assert json.loads(files[SCHEMA_COPY]) == json.loads(
        (ROOT / "compiler/definitions.schema.json").read_text())
    assert validate(defs) == []
    (defs / "policy.yaml").write_text("version: 1\n")
    result = run("init", str(defs))
    assert result.exit_code == 1 and "refusing to overwrite" in result.output
    assert (defs / "policy.yaml").read_text() == "version: 1\n"


def test_schema_path_names_the_installed_schema() -> None:
    result = run("schema-path")
    assert result.exit_code == 0
    path = Path(result.output.strip())
    assert path.is_absolute() and path.name == "definitions.schema.json"
    assert json.loads(path.read_text())["title"].startswith("toolc definitions file")


def test_import_is_deterministic() -> None:
    a = import_openclaw(parse_config(CONFIG.encode(), "c"), "openclaw.json5",
                        allow_partial=True)
    b = import_openclaw(parse_config(CONFIG.encode(), "c"), "openclaw.json5",
                        allow_partial=True)
    assert a.files == b.files and a.left_out == b.left_out
    assert all(text.endswith("\n") and "\r" not in text for text in a.files.values())


def _openclaw_packages() -> list[Path]:
    """Unpacked OpenClaw npm packages to read docs examples from: $OPENCLAW_PACKAGES
    (os.pathsep-separated), else the conformance cache (conformance/fetch.sh)."""
    listed = os.environ.get("OPENCLAW_PACKAGES")
    if listed:
        return [Path(p) for p in listed.split(os.pathsep) if (Path(p) / "docs").is_dir()]
    cache = Path(os.environ.get("TOOLC_CONFORMANCE_CACHE",
                                Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                                / "toolc"))
    return [p for p in cache.glob("openclaw-*/node_modules/openclaw") if (p / "docs").is_dir()]


@pytest.mark.skipif(not _openclaw_packages(), reason="no OpenClaw package (set "
                    "OPENCLAW_PACKAGES or run conformance/fetch.sh)")
def test_the_docs_examples_import() -> None:
    # Every policy-carrying config example of OpenClaw's docs (the round trip's set) imports
    # with --allow-partial, as the round trip imports them.
    for package in _openclaw_packages():
        examples = docs_examples(package)
        assert examples
        for example in examples:
            try:
                config = parse_config(example.text.encode(), example.name)
            except ConfigError:
                continue  # a fragment, not a whole config
            import_openclaw(config, "openclaw.json5", allow_partial=True)
