"""2026.9 starters and ``import-openclaw`` of 2026.9 configs: the generated starter matches
the release's data, ``init``/``import-openclaw`` choose and write the target, every 2026.9 key
is carried over or listed, and configs 2026.9's loader refuses for a reason that touches tool
access are refused (checked against the release's own loader when the oracle is installed)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from toolc.api import resolve_definitions, validate
from toolc.cli import main
from toolc.importers.openclaw import (
    ConfigError,
    ImportRefused,
    choose_target,
    import_openclaw,
    parse_config,
)
from toolc.importers.starter import starter_files
from toolc.targets import target
from toolc.targets.starter import STARTER_FILES, generate_2026_9, starter_text
from toolc.targets.starter import main as starter_main

from conformance.roundtrip import docs_examples
from tests.helpers import ROOT


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _catalog(files: dict[str, str]) -> list[dict[str, Any]]:
    return [t for rel, text in sorted(files.items()) if rel.endswith(".yaml")
            for t in (yaml.safe_load(text) or {}).get("catalog", [])]


# -- the starters ------------------------------------------------------------------------------
def test_the_2026_9_starter_is_generated_and_current(tmp_path: Path) -> None:
    assert starter_main(["--check"]) == 0
    assert starter_main(["--out", str(tmp_path)]) == 0
    assert starter_main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "profiles.yaml").write_text("version: 1\n")
    assert starter_main(["--out", str(tmp_path), "--check"]) == 1


def test_the_2026_9_starter_has_the_releases_catalog() -> None:
    data = target("2026.9").data
    tools = {t["name"]: t for t in _catalog(generate_2026_9())}
    assert [n for n in tools if "plugin" not in tools[n]] \
        == data["coreBuilt"] + data["outsideCatalog"]
    for plugin in ("browser", "canvas", "memory-core", "xai"):
        assert [n for n, t in tools.items() if t.get("plugin") == plugin] \
            == data["plugins"][plugin]["tools"]
    groups: dict[str, list[str]] = {}
    for name, tool in tools.items():
        for group in tool.get("groups", []):
            groups.setdefault(f"group:{group}", []).append(name)
    assert {g: sorted(m) for g, m in groups.items()} \
        == {g: sorted(m) for g, m in data["groups"].items()}
    assert sorted(n for n, t in tools.items() if t.get("ownerOnly")) == data["ownerOnly"]
    assert "cron" not in tools and "image" not in tools
    # every tool carries the release's own parameter schema (no open `{type: object}`)
    assert {n: t["parameters"] for n, t in tools.items()} \
        == {n: data["parameters"][n] for n in tools}
    profiles = yaml.safe_load(generate_2026_9()["profiles.yaml"])["profiles"]
    assert profiles["full"] == {"allow": ["*"]}
    assert profiles["coding"]["allow"] == [e for e in data["profiles"]["coding"]["allow"]
                                           if e != "bundle-mcp"]


def test_the_2026_9_starter_keeps_the_aliases_the_releases_schemas_still_have() -> None:
    # 2026.9's edit takes `edits: [{oldText, newText}]`: 2026.3's top-level old_string and
    # new_string aliases have no parameter to stand for, and the generated header names them
    files = generate_2026_9()
    tools = {t["name"]: t for t in _catalog(files)}
    assert tools["read"]["paramAliases"] == {"file_path": "path"}
    assert tools["edit"]["paramAliases"] == {"file_path": "path"}
    assert "edit.old_string -> oldText" in " ".join(files["catalog/10-core.yaml"].split())


def test_the_2026_9_starter_keeps_which_tools_return_outside_content() -> None:
    # 2026.9.6 wraps web_fetch's text (wrapWebContent) and the browser's
    # (wrapBrowserExternalText) as 2026.3.2 did; the release's data does not say so
    tools = {t["name"]: t for t in _catalog(generate_2026_9())}
    assert sorted(n for n, t in tools.items() if t.get("externalContent")) \
        == ["browser", "web_fetch"]


def test_the_shipped_definitions_are_a_starter() -> None:
    # definitions/ hold the starter files of the release they name, as they are (`toolc
    # migrate` rewrote them to 2026.9; an earlier release's file the policies still need, such
    # as the 2026.3 channel catalog, may stay beside them)
    key = resolve_definitions(ROOT / "definitions").target.key
    differ = [rel for rel in STARTER_FILES[key]
              if not (ROOT / "definitions" / rel).is_file()
              or (ROOT / "definitions" / rel).read_text("utf-8") != starter_text(key, rel)]
    assert differ == [], f"definitions/ do not hold OpenClaw {key}'s starter files as they are"


@pytest.mark.parametrize("key", ["2026.9", "2026.3"])
def test_init_writes_the_target_and_builds_clean(tmp_path: Path, key: str) -> None:
    args = ("init", str(tmp_path / "d")) + (("--openclaw", key) if key != "2026.9" else ())
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert f'openclaw: "{key}"' in (tmp_path / "d/policy.yaml").read_text()
    assert validate(tmp_path / "d", strict=True) == []
    assert resolve_definitions(tmp_path / "d").target.key == key
    for rel in STARTER_FILES[key]:
        assert (tmp_path / "d" / rel).read_text().endswith(starter_text(key, rel))


def test_init_refuses_an_unknown_target(tmp_path: Path) -> None:
    result = run("init", str(tmp_path / "d"), "--openclaw", "2026.6")
    assert result.exit_code == 2 and not (tmp_path / "d").exists()


# -- choosing the target -------------------------------------------------------------------
@pytest.mark.parametrize("meta, requested, key", [
    (None, None, "2026.9"), ({"lastTouchedVersion": "2026.9.6"}, None, "2026.9"),
    ({"lastTouchedVersion": "2026.10.1"}, None, "2026.9"),
    ({"lastTouchedVersion": "2026.3.2"}, None, "2026.3"),
    ({"lastTouchedVersion": "2025.12.1"}, None, "2026.3"),
    ({"lastTouchedVersion": "nightly"}, None, "2026.9"),
    ({"lastTouchedVersion": "2026.9.6"}, "2026.3", "2026.3"),
])
def test_choose_target(meta: dict[str, Any] | None, requested: str | None, key: str) -> None:
    config = {} if meta is None else {"meta": meta}
    assert choose_target(config, requested)[0] == key


def test_unknown_requested_target_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"--openclaw 2026\.6"):
        choose_target({}, "2026.6")


# -- importing 2026.9 configs -------------------------------------------------------------------
CONFIG_9: dict[str, Any] = {
    "meta": {"lastTouchedVersion": "2026.9.6"},
    "tools": {
        "profile": "coding",
        "toolsBySender": {"channel:discord:123": {"alsoAllow": ["nodes"]},
                          "*": {"deny": ["exec"]}},
        "sandbox": {"tools": {"alsoAllow": ["browser"], "deny": ["canvas"]}},
        "exec": {"mode": "ask", "host": "auto", "applyPatch": {"enabled": False,
                                                               "workspaceOnly": True}},
        "codeMode": {"enabled": False},
    },
    "agents": {
        "defaults": {"experimental": {"localModelLean": True}, "model": {"primary": "x/y"}},
        "entries": {
            "main": {"default": True, "name": "Main"},
            "ops": {"experimental": {"localModelLean": False},
                    "tools": {"toolsBySender": {"id:7": {"deny": ["read"]}},
                              "sandbox": {"tools": {"alsoAllow": ["exec"]}},
                              "exec": {"mode": "deny"}}},
        },
    },
}


def _policy(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(result.files["openclaw/policy.yaml"])
    return data


def test_a_2026_9_config_imports_every_key(tmp_path: Path) -> None:
    result = import_openclaw(CONFIG_9, "openclaw.json", allow_partial=True)
    assert result.openclaw == "2026.9" and "2026.9.6" in result.openclaw_reason
    policy = _policy(result)
    assert policy["openclaw"] == "2026.9"
    assert policy["tools"]["toolsBySender"] == CONFIG_9["tools"]["toolsBySender"]
    assert policy["tools"]["sandbox"] == CONFIG_9["tools"]["sandbox"]
    assert policy["tools"]["exec"] == {"mode": "ask", "host": "auto",
                                       "applyPatch": {"enabled": False}}
    assert policy["agents"]["defaults"] == {"experimental": {"localModelLean": True}}
    assert policy["agents"]["entries"]["ops"] == CONFIG_9["agents"]["entries"]["ops"]
    assert policy["agents"]["entries"]["main"] == {"default": True}
    assert any(p.startswith("tools.codeMode") for p in result.partial + result.left_out)
    assert "tools.exec.applyPatch.workspaceOnly" in " ".join(result.left_out + result.partial)
    assert "agents.entries.main.name" in " ".join(result.left_out)
    assert set(starter_files("2026.9")) <= set(result.files)
    out = tmp_path / "d"
    out.mkdir()
    for rel, text in result.files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    assert [d for d in validate(out) if d.severity == "error"] == []
    assert resolve_definitions(out).target.key == "2026.9"


def test_the_same_keys_need_2026_9(tmp_path: Path) -> None:
    # imported for 2026.3 the 2026.9-only keys are left out, and access-relevant ones refused
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(CONFIG_9, "c.json", openclaw="2026.3")
    text = "\n".join(refused.value.messages)
    assert "tools.toolsBySender" in text and "agents.entries" in text


def test_cli_reports_the_target(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"meta": {"lastTouchedVersion": "2026.3.2"},
                                  "tools": {"deny": ["exec"]}}))
    result = run("import-openclaw", str(config), "-o", str(tmp_path / "o"))
    assert result.exit_code == 0, result.output
    assert "OpenClaw 2026.3 semantics (meta.lastTouchedVersion 2026.3.2" in result.output
    result = run("import-openclaw", str(config), "-o", str(tmp_path / "p"), "--openclaw",
                 "2026.9")
    assert "OpenClaw 2026.9 semantics (--openclaw 2026.9" in result.output
    assert 'openclaw: "2026.9"' in (tmp_path / "p/openclaw/policy.yaml").read_text()


REFUSED: list[tuple[dict[str, Any], str]] = [
    # zod-schema (AgentDefaultsSchema): subagents.maxSpawnDepth number().int().min(1).max(5)
    ({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 6}}}}, "from 1 to 5"),
    ({"agents": {"defaults": {"subagents": {"maxSpawnDepth": 0}}}}, "from 1 to 5"),
    ({"agents": {"entries": {"a": {}, "b": {}}}}, "several agents needs"),
    ({"agents": {"list": [{"id": "a"}, {"id": "b"}]}}, "several agents needs"),
    ({"agents": {"entries": {"a": {"default": True}, "b": {"default": True}}}},
     "at most one"),
    ({"agents": {"ownership": "explicit", "entries": {"a": {"default": True}}}},
     "cannot be combined"),
    ({"agents": {"entries": {"main": {}}, "defaults": {"tools": {"deny": ["exec"]}}}},
     "agents.defaults.tools"),
    ({"tools": {"exec": {"mode": "ask", "security": "full"}}}, "mode cannot be combined"),
    ({"agents": {"entries": {"a": {"tools": {"exec": {"mode": "ask", "ask": "off"}}}}}},
     "agents.entries.a.tools.exec.mode"),
    ({"tools": {"allow": ["read"], "alsoAllow": ["exec"]}}, "both allow and alsoAllow"),
    ({"tools": {"byProvider": {"openai": {"allow": ["read"], "alsoAllow": ["exec"]}}}},
     "tools.byProvider.openai"),
    ({"tools": {"profile": "codng"}}, "unknown profile"),
    # OpenClawSchema's superRefine: a binding (route or acp) to an agent the roster lacks
    # (normalized; only the literal "main" is excepted)
    ({"agents": {"entries": {"work": {"default": True}}},
      "bindings": [{"agentId": "nobody", "match": {"channel": "telegram"}}]},
     "unknown agent id 'nobody'"),
    ({"agents": {"entries": {"work": {"default": True}}},
      "bindings": [{"agentId": "Main", "match": {"channel": "telegram"}}]},
     "unknown agent id 'Main'"),
    # (with no roster, the loader's own `main` entry is the roster)
    ({"bindings": [{"agentId": "work", "match": {"channel": "telegram"}}]},
     "unknown agent id 'work'"),
    ({"agents": {"entries": {"work": {"default": True}}},
      "bindings": [{"type": "acp", "agentId": "nobody", "match": {
          "channel": "discord", "peer": {"kind": "channel", "id": "1"}}}]},
     "unknown agent id 'nobody'"),
    # RouteBindingSchema / AcpBindingSchema / BindingMatchSchema (strict) and SessionSchema
    ({"bindings": [{"agentId": "main", "match": {"channel": "telegram",
                                                 "peer": {"kind": "dm", "id": "1"}}}]},
     'the retired peer kind "dm"'),
    ({"bindings": [{"agentId": "main", "match": {"channel": "telegram", "provider": "x"}}]},
     "unknown key 'provider'"),
    ({"bindings": [{"agentId": "main", "match": {"channel": "telegram"}, "acp": {}}]},
     "unknown key 'acp'"),
    ({"bindings": [{"type": "acp", "agentId": "main", "match": {"channel": "discord"}}]},
     "ACP bindings require match.peer.id"),
    ({"bindings": [{"type": "broadcast", "agentId": "main", "match": {"channel": "x"}}]},
     'neither "route" nor "acp"'),
    ({"bindings": [{"agentId": "main", "match": {"channel": "x"},
                    "session": {"groupScope": "per-thread"}}]}, "'per-thread' is not one of"),
    ({"bindings": [{"agentId": "main", "match": {"channel": "x", "guildId": 123}}]},
     "expected a string"),
    ({"bindings": {"agentId": "main"}}, "a list of bindings"),
    ({"session": {"dmScope": "per-thread"}}, "'per-thread' is not one of"),
    ({"session": {"identityLinks": {"alice": "telegram:1"}}}, "lists of ids"),
]
ACCEPTED: list[dict[str, Any]] = [
    {"agents": {"entries": {"a": {}, "b": {"default": True}}}},
    {"agents": {"ownership": "explicit", "entries": {"a": {}, "b": {}}}},
    {"agents": {"list": [{"id": "solo"}]}},
    {"agents": {"entries": {}}},  # the loader fills in the default `main` agent
    {"agents": {"defaults": {"subagents": {"maxSpawnDepth": 5}}}},
    {"tools": {"exec": {"mode": "full"}, "allow": ["read"], "alsoAllow": []}},
    # bindings: "main" always routes; agent ids compare normalized (an empty roster is
    # `main` alone); a peer without an id or a binding without a channel are ignored, not
    # refused
    {"agents": {"entries": {"work": {"default": True}}},
     "bindings": [{"agentId": "main", "match": {"channel": "telegram"}},
                  {"agentId": "WORK", "match": {"channel": "slack", "accountId": "*"}}]},
    {"bindings": [{"agentId": "Main", "match": {"channel": "telegram"}}]},
    {"bindings": [{"agentId": "main", "match": {"channel": " ", "peer": {"kind": "group",
                                                                         "id": ""}}}]},
    {"bindings": [{"type": "acp", "agentId": "main", "comment": "x",
                   "match": {"channel": "discord", "peer": {"kind": "channel", "id": "1"}},
                   "acp": {"mode": "persistent"}}]},
    {"session": {"dmScope": "per-account-channel-peer", "groupScope": "main",
                 "identityLinks": {"alice": ["telegram:1"], "bob": []}, "mainKey": "work"}},
]


@pytest.mark.parametrize("config, reason", REFUSED)
def test_configs_the_2026_9_loader_refuses(config: dict[str, Any], reason: str) -> None:
    with pytest.raises(ImportRefused) as refused:
        import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.9")
    assert any(reason in m and "OpenClaw 2026.9 refuses the config" in m
               for m in refused.value.messages), refused.value.messages


@pytest.mark.parametrize("config", ACCEPTED)
def test_configs_the_2026_9_loader_accepts(config: dict[str, Any]) -> None:
    import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.9")


def test_agents_list_is_noted_as_moved() -> None:
    result = import_openclaw({"agents": {"list": [{"id": "solo"}]}}, "c.json",
                             openclaw="2026.9")
    assert any("moves it to the keyed agents.entries" in n for n in result.notes)


def test_a_missing_include_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({"$include": "./missing.json", "tools": {"deny": ["exec"]}}))
    result = run("import-openclaw", str(config), "-o", str(tmp_path / "o"))
    assert result.exit_code == 1 and "missing.json" in result.output
    assert not (tmp_path / "o").exists()


def _release_package() -> Path | None:
    for candidate in (Path("/work/oc-src/openclaw-2026.9.6/package"),
                      *_cache().glob("openclaw-2026.9.*/node_modules/openclaw")):
        if (candidate / "docs").is_dir():
            return candidate
    return None


def _cache() -> Path:
    return Path(os.environ.get("TOOLC_CONFORMANCE_CACHE",
                               Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                               / "toolc"))


@pytest.mark.skipif(_release_package() is None, reason="no openclaw@2026.9 package (run "
                    "make conformance-setup)")
def test_the_2026_9_docs_examples_import_or_are_refused_for_a_loader_reason() -> None:
    package = _release_package()
    assert package is not None
    examples = docs_examples(package)
    assert examples
    imported = 0
    for example in examples:
        try:
            config = parse_config(example.text.encode(), example.name)
        except ConfigError:
            continue  # a fragment, not a whole config
        try:
            import_openclaw(config, "openclaw.json5", allow_partial=True, openclaw="2026.9")
            imported += 1
        except ImportRefused as exc:
            assert all("OpenClaw 2026.9 refuses the config" in m for m in exc.messages), (
                example.name, exc.messages)
    assert imported > len(examples) // 2


# -- against the release's own loader (the oracle's loadconfig op) --------------------------------
def _oracle() -> list[str] | None:
    script = ROOT / "conformance" / "oracle9.mjs"
    node = next(iter(sorted(_cache().glob("node-24/node_modules/*/bin/node"))), None)
    package = next(iter(sorted(_cache().glob("openclaw-2026.9.*/node_modules/openclaw"))), None)
    if not script.is_file() or node is None or package is None or shutil.which("sh") is None:
        return None
    return [str(node), str(script), str(package)]


@pytest.mark.skipif(_oracle() is None, reason="no 2026.9 oracle (conformance/oracle9.mjs, "
                    "make conformance-setup)")
def test_refusals_agree_with_the_releases_loader() -> None:
    command = _oracle()
    assert command is not None
    configs = [c for c, _ in REFUSED] + ACCEPTED
    requests = "".join(json.dumps({"op": "loadconfig", "config": c}) + "\n" for c in configs)
    proc = subprocess.run(command, input=requests, capture_output=True, text=True,
                          timeout=300, check=True)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(answers) == len(configs)
    for config, answer in zip(configs, answers, strict=True):
        try:
            import_openclaw(config, "c.json", allow_partial=True, openclaw="2026.9")
            toolc_refuses = False
        except ImportRefused:
            toolc_refuses = True
        assert toolc_refuses == (answer.get("error_kind") == "InvalidConfig"), (config, answer)


# -- plugin enablement (found by `python -m conformance --openclaw 2026.9`) ---------------------
@pytest.mark.parametrize(("plugins", "disabled"), [
    # resolvePluginActivationDecisionShared: the selected memory slot (memory-core by default)
    # is enabled before the allowlist is read; every other plugin the allowlist does not list
    # is disabled, the starter's bundled ones too (xai's file keeps it disabled itself)
    ({"allow": ["canvas"]}, {"browser"}),
    ({"allow": ["canvas"], "slots": {"memory": "memory-core"}}, {"browser"}),
    # resolveMemorySlotDecisionShared: a memory slot naming another plugin, or none, disables
    # memory-core (kind memory) whatever its entry says
    ({"slots": {"memory": "none"}}, {"memory-core"}),
    ({"slots": {"memory": "none"}, "entries": {"memory-core": {"enabled": True}}},
     {"memory-core"}),
    ({"allow": ["browser"], "slots": {"memory": "none"}}, {"canvas", "memory-core"}),
    # resolveSlotSelection: "None" is none in any case; a blank or non-string slot is the
    # default; a plugin id keeps its case (ids compare exactly), so "Memory-Core" is not it
    ({"slots": {"memory": " NONE "}}, {"memory-core"}),
    ({"allow": ["canvas"], "slots": {"memory": " "}}, {"browser"}),
    ({"allow": ["canvas"], "slots": {"memory": 7}}, {"browser"}),
    ({"slots": {"memory": "Memory-Core"}}, {"memory-core"}),
])
def test_2026_9_plugin_allowlist_and_memory_slot(plugins: dict[str, Any],
                                                  disabled: set[str]) -> None:
    files = import_openclaw({"plugins": plugins}, "openclaw.json", openclaw="2026.9").files
    policy = yaml.safe_load(files["openclaw/policy.yaml"]) or {}
    entries = (policy.get("plugins") or {}).get("entries") or {}
    assert {p for p, e in entries.items() if e.get("enabled") is False} == disabled


def test_2026_9_plugin_allowlist_builds(tmp_path: Path) -> None:
    files = import_openclaw({"plugins": {"allow": ["canvas"], "slots": {"memory": "none"}}},
                            "openclaw.json", openclaw="2026.9").files
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, "utf-8")
    resolve_definitions(tmp_path)


@pytest.mark.parametrize(("key", "name", "disabled"), [
    # 2026.9.6 bundles no `lobster`: a user-installed plugin (origin global) is enabled
    # (resolvePluginActivationDecisionShared: decision("default")); 2026.3.2 bundled it,
    # disabled by default
    ("2026.9", "lobster", set()),
    ("2026.3", "lobster", {"lobster"}),
    # bundled in 2026.9.6 without enabledByDefault: "bundled-disabled-by-default"
    ("2026.9", "llm-task", {"llm-task"}),
])
def test_stub_plugins_follow_the_targets_bundled_set(key: str, name: str,
                                                     disabled: set[str]) -> None:
    files = import_openclaw({"tools": {"deny": [name]}}, "openclaw.json", openclaw=key).files
    policy = yaml.safe_load(files["openclaw/policy.yaml"]) or {}
    entries = (policy.get("plugins") or {}).get("entries") or {}
    assert {p for p, e in entries.items() if e.get("enabled") is False} == disabled
