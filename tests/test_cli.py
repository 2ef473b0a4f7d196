"""The reviewer's command line: explain (from definitions and from a build), the warnings of
resolve and explain, schema --provider, help pages and colour. Small inline definitions, one
build per module."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from toolc.api import load_runtime
from toolc.cli import main
from toolc.runtime._dialects import DialectRegistry

from tests.helpers import write_definitions

CATALOG = """\
version: 1
catalog:
  - {name: read, description: Read a file., parameters: {type: object}, groups: [fs]}
  - {name: exec, description: Run a command., parameters: {type: object}, groups: [runtime]}
  - {name: message, description: Send a message., parameters: {type: object}}
  - {name: memo, description: A plugin tool., parameters: {type: object}, plugin: memos}
"""
POLICY = """\
version: 1
profiles:
  coding: {allow: ["group:fs", "group:runtime"]}
  messaging: {allow: [message]}
plugins:
  entries: {memos: {enabled: false}}
providers:
  default: openai
  entries:
    google: {dialect: gemini}
    "openai/gpt-5-strict": {dialect: openai-strict}
tools:
  profile: coding
  alsoAllow: [message]
  deny: [memo]
agents:
  list:
    - id: viewer
      tools:
        allow: [read, message]
        deny: [exec]
    - id: support
      tools:
        profile: messaging
channels:
  telegram:
    groups:
      "-100123":
        tools: {deny: [exec]}
        toolsBySender:
          "id:42": {alsoAllow: [exec]}
          "username:@alice": {allow: [read]}
      "*":
        tools: {deny: [message]}
    accounts:
      work:
        groups:
          "-7": {tools: {deny: [read]}}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding definitions/ and a current build/ (explain's default)."""
    root = tmp_path_factory.mktemp("project")
    write_definitions(root / "definitions", {"catalog.yaml": CATALOG, "policy.yaml": POLICY})
    result = CliRunner().invoke(main, ["build", str(root / "definitions"), "-o",
                                       str(root / "build")])
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def here(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(project)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    yield project


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def explain_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = run("explain", "--json", *args)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def layer(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(x for x in data["layers"] if x["layer"] == name)


def text_at(root: Path, pos: str) -> str:
    """The definitions text at ``file:line:col``, to that line's end."""
    file, line, col = pos.rsplit(":", 2)
    lines = (root / file).read_text("utf-8").splitlines()
    return lines[int(line) - 1][int(col) - 1:]


# -- explain: labels and positions -----------------------------------------------------------
def test_deny_is_labelled_as_the_deny_list_with_its_position(here: Path) -> None:
    code, data = explain_json("--agent", "viewer", "exec")
    assert code == 1 and data["visible"] is False and data["decided_by"] == "agent"
    agent = layer(data, "agent")
    assert agent["result"] == "removed"
    assert agent["rule"] == 'denied by "exec" in agents.viewer.tools.deny'
    assert text_at(here, agent["pos"]).startswith("exec]")


def test_not_in_the_allow_list_points_at_the_list(here: Path) -> None:
    code, data = explain_json("--agent", "support", "read")
    assert code == 1
    profile = layer(data, "profile messaging")
    # the global alsoAllow joins the agent's profile (the agent has none of its own)
    assert profile["rule"] == "not in profiles.messaging.allow nor tools.alsoAllow"
    assert text_at(here, profile["pos"]).startswith("[message]")
    assert [(d["text"], text_at(here, d["pos"])[:9]) for d in profile["details"][1:]] == [
        ("not in profiles.messaging.allow", "[message]"), ("not in tools.alsoAllow", "[message]")]
    source = profile["details"][0]
    assert source["text"] == 'profile "messaging" from agents.support.tools.profile'
    assert text_at(here, source["pos"]).startswith("messaging")


def test_global_profile_and_also_allow_are_named(here: Path) -> None:
    code, data = explain_json("message")
    assert code == 0 and data["visible"] is True and data["decided_by"] is None
    profile = layer(data, "profile coding")
    assert profile["details"][0]["text"] == 'profile "coding" from tools.profile'
    assert profile["rule"] == 'allowed by "message" in tools.alsoAllow'
    glob = layer(data, "global")
    assert glob["rule"] == "tools.alsoAllow without an allow list keeps every tool"
    assert [d["text"] for d in glob["details"]][1:] == ["not in tools.deny"]
    assert text_at(here, glob["details"][1]["pos"]).startswith("[memo]")


def test_group_sender_rule_is_named(here: Path) -> None:
    args = ("--channel", "telegram", "--group", "-100123")
    code, data = explain_json(*args, "--sender-username", "@alice", "exec")
    group = layer(data, "group")
    assert code == 1 and group["result"] == "removed"
    rule = 'channels.telegram.groups."-100123".toolsBySender."username:@alice"'
    assert group["rule"] == f"not in {rule}.allow"
    texts = [d["text"] for d in group["details"]]
    assert texts[:2] == ['channels.telegram.groups."-100123" is group -100123',
                         f"{rule} matches this sender"]
    assert text_at(here, group["details"][1]["pos"]).startswith('"username:@alice"')
    code, data = explain_json(*args, "exec")  # no sender rule: the group's tools
    assert code == 1
    assert layer(data, "group")["rule"] == \
        'denied by "exec" in channels.telegram.groups."-100123".tools.deny'
    code, data = explain_json(*args, "--sender-id", "42", "exec")
    assert code == 0
    assert layer(data, "group")["rule"] == ('channels.telegram.groups."-100123".toolsBySender.'
                                            '"id:42".alsoAllow without an allow list keeps '
                                            "every tool")


def test_wildcard_group_and_account_map(here: Path) -> None:
    code, data = explain_json("--channel", "telegram", "--group", "-5", "message")
    group = layer(data, "group")
    assert code == 1 and group["rule"] == \
        'denied by "message" in channels.telegram.groups."*".tools.deny'
    assert group["details"][0]["text"] == ('channels.telegram.groups."*" applies: group -5 is '
                                           "not declared in channels.telegram.groups")
    code, data = explain_json("--channel", "telegram", "--account", "work", "--group", "-7",
                              "read")
    group = layer(data, "group")
    assert code == 1 and group["rule"] == \
        'denied by "read" in channels.telegram.accounts.work.groups."-7".tools.deny'
    assert group["details"][0]["text"] == \
        "account work has its own groups: channels.telegram.accounts.work.groups"


def test_tool_names_are_read_as_policies_read_them(here: Path) -> None:
    for spelling in ("Exec", " bash ", "EXEC"):
        result = run("explain", "--agent", "viewer", spelling)
        assert result.exit_code == 1 and result.stdout.startswith("exec: not visible")
    unknown = run("explain", "exce")
    assert unknown.exit_code == 2 and 'unknown tool "exce" (did you mean "exec"?)' in \
        unknown.stderr


def test_text_output_and_never_present_tools(here: Path) -> None:
    result = run("explain", "--agent", "viewer", "exec")
    assert result.exit_code == 1
    assert "  agent: removed\n    definitions/policy.yaml:" in result.stdout
    assert 'denied by "exec" in agents.viewer.tools.deny' in result.stdout
    assert "  sandbox: skipped (not sandboxed)" in result.stdout
    disabled = run("explain", "memo")
    assert disabled.exit_code == 1
    assert "never present: tool of plugin memos, which plugins.entries disables" in \
        disabled.stdout


# -- explain: where it reads from --------------------------------------------------------------
def test_default_source_is_a_current_build_else_definitions(project: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    shutil.copytree(project / "definitions", tmp_path / "definitions")
    shutil.copytree(project / "build", tmp_path / "build")
    monkeypatch.chdir(tmp_path)
    args = ("--channel", "telegram", "--group", "-100123", "--sender-id", "42", "exec")
    from_build = run("explain", "--json", *args)
    build_id = _build_id(tmp_path / "build")
    assert json.loads(from_build.stdout)["source"] == {"kind": "build", "path": "build",
                                                      "build": build_id, "current": True}
    from_defs = run("explain", "--json", "--definitions", "definitions", *args)
    # each names its source, and nothing else (the build is current: no warning)
    assert from_build.stderr == f"source: build build/ (build {build_id}, current with the " \
        "definitions)\n"
    assert from_defs.stderr == "source: definitions definitions/ (reference interpreter)\n"
    # a build explains itself: positions name definitions/, exactly as from the definitions
    assert json.loads(from_build.stdout)["layers"] == json.loads(from_defs.stdout)["layers"]
    policy = tmp_path / "definitions" / "policy.yaml"
    policy.write_text(policy.read_text().replace("deny: [memo]", "deny: [memo, read]"))
    stale = run("explain", "--json", *args)
    assert json.loads(stale.stdout)["source"]["kind"] == "definitions"
    assert "warning: build/ is stale relative to definitions/ (run `toolc build`): " \
        "explaining from definitions/" in stale.stderr
    assert "is stale" in run("explain", "--build", "build", *args).stderr
    shutil.rmtree(tmp_path / "definitions")  # a deployment ships only build/
    only_build = run("explain", "--json", *args)
    assert only_build.exit_code == 0
    assert only_build.stderr == f"source: build build/ (build {build_id}, no definitions to " \
        "compare with)\n"
    assert json.loads(only_build.stdout)["source"]["kind"] == "build"
    assert run("explain", "--build", "build", "--definitions", "x", "exec").exit_code == 2


def _build_id(out: Path) -> str:
    return hashlib.sha256((out / "manifest.json").read_bytes()).hexdigest()[:12]


def _tamper(out: Path, text: str, *, fix_manifest: bool) -> None:
    (out / "sources" / "policy.yaml").write_text(text)
    if fix_manifest:
        manifest = json.loads((out / "manifest.json").read_text())
        manifest["files"]["sources/policy.yaml"] = hashlib.sha256(text.encode()).hexdigest()
        (out / "manifest.json").write_text(json.dumps(manifest))


def test_explain_checks_the_build(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "build"
    shutil.copytree(project / "build", out)
    text = (out / "sources" / "policy.yaml").read_text()
    text = text.replace("deny: [memo]", "deny: [memo, read]")
    _tamper(out, text, fix_manifest=False)
    result = run("explain", "--build", str(out), "read")
    assert result.exit_code == 1
    assert "sources/policy.yaml does not match the sha256" in result.stderr
    # edited together with the manifest: the reference and the runtime now disagree (exit 4)
    _tamper(out, text, fix_manifest=True)
    result = run("explain", "--build", str(out), "read")
    assert result.exit_code == 4 and "internal error" in result.stderr
    assert "read is not visible in the reference and visible in the runtime" in result.stderr
    (out / "sources" / "policy.yaml").unlink()
    missing = run("explain", "--build", str(out), "read")
    assert missing.exit_code == 1 and "sources/policy.yaml" in missing.stderr
    assert run("explain", "--build", str(tmp_path / "nowhere"), "read").exit_code == 1


# -- warnings: undeclared names, stale builds --------------------------------------------------
@pytest.mark.parametrize(("args", "warning"), [
    (["--agent", "veiwer"], 'agent "veiwer" is not declared (did you mean "viewer"?): only the '
     "global policy applies"),
    (["--channel", "telegrm", "--group", "-100123"], 'channel "telegrm" is not declared (did '
     'you mean "telegram"?): no group policy applies'),
    (["--channel", "telegram", "--group", "-100124"], 'group "-100124" is not declared in '
     'channels.telegram (did you mean "-100123"?): the "*" group applies'),
    (["--channel", "telegram", "--account", "work", "--group", "-77"], 'group "-77" is not '
     'declared in channels.telegram.accounts.work (did you mean "-7"?): no group policy '
     "applies"),
    (["--channel", "telegram", "--account", "wrok"], 'account "wrok" is not declared in '
     'channels.telegram (did you mean "work"?): the channel\'s groups apply'),
    (["--group", "-100123"], 'group "-100123" is given without a channel (--channel or a group '
     "session key): no group policy applies"),
])
def test_undeclared_names_warn_with_the_fallback(here: Path, args: list[str],
                                                 warning: str) -> None:
    for command in (["resolve"], ["resolve", "--definitions", "definitions"], ["explain"]):
        result = run(*command, *args, *(["read"] if command == ["explain"] else []))
        assert f"warning: {warning}\n" in result.stderr, (command, result.stderr)


def test_declared_names_do_not_warn(here: Path) -> None:
    for args in (["--agent", "Viewer"], ["--channel", "Telegram", "--group", "-100123:topic:4"],
                 ["--channel", "telegram", "--account", "WORK", "--group", "-7"]):
        result = run("resolve", *args)
        assert result.exit_code == 0 and "warning" not in result.stderr, (args, result.stderr)


def test_resolve_warns_on_a_stale_build(project: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(project / "definitions", tmp_path / "definitions")
    shutil.copytree(project / "build", tmp_path / "build")
    monkeypatch.chdir(tmp_path)
    build_id = _build_id(tmp_path / "build")
    assert run("resolve").stderr == f"source: build build/ (build {build_id}, current with " \
        "the definitions)\n"
    policy = tmp_path / "definitions" / "policy.yaml"
    policy.write_text(policy.read_text() + "\n# a comment is a change too\n")
    result = run("resolve")
    assert result.exit_code == 0
    assert result.stderr == ("warning: build/ is stale relative to definitions/ (run `toolc "
                             "build`): answering from it as built\n"
                             f"source: build build/ (build {build_id}, stale)\n")


# -- schema --provider -------------------------------------------------------------------------
def test_schema_dialect_follows_the_runtime(here: Path) -> None:
    runtime = load_runtime(here / "build")
    pairs = [("openai", None), ("openai", "gpt-5-strict"), ("OpenAI ", "GPT-5-Strict"),
             ("google", None), ("google-vertex", None), ("anthropic", None), ("acme", None)]
    bundles = json.loads((here / "build" / "toolc_runtime" / "bundles.json").read_text())
    registry = DialectRegistry.from_json(bundles["providers"])
    for provider, model in pairs:
        expected = runtime.dialect_for(provider, model)
        assert registry.dialect_for(provider, model)[0] == expected
        args = ["--provider", provider, *(["--model", model] if model else [])]
        for source in (["--build", "build"], ["--definitions", "definitions"]):
            result = run("schema", "read", *args, *source, "--json")
            assert result.exit_code == 0, result.output
            assert result.stderr.startswith(f"dialect: {expected} ("), result.stderr
            direct = run("schema", "read", "--dialect", expected, *source, "--json")
            assert json.loads(result.stdout) == json.loads(direct.stdout)
    assert 'providers.entries."openai/gpt-5-strict"' in run(
        "schema", "read", "--provider", "openai", "--model", "gpt-5-strict").stderr


def test_schema_needs_exactly_one_of_dialect_and_provider(here: Path) -> None:
    assert run("schema", "read").exit_code == 2
    both = run("schema", "read", "--dialect", "openai", "--provider", "openai")
    assert both.exit_code == 2 and "exactly one of --dialect and --provider" in both.stderr
    assert run("schema", "read", "--dialect", "openai", "--model", "x").exit_code == 2
    assert run("schema", "raed", "--dialect", "openai").exit_code == 2
    assert run("schema", " READ ", "--dialect", "openai").exit_code == 0


# -- help and colour ---------------------------------------------------------------------------
def test_every_option_has_help_and_every_command_an_example() -> None:
    assert isinstance(main, click.Group)
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"toolc {name} {param.opts[0]} has no help text"
        page = run(name, "--help").stdout
        assert "Examples:" in page, name
    assert "[default: build]" in run("build", "--help").stdout


def test_diagnostics_are_coloured_only_when_asked(tmp_path: Path) -> None:
    defs = write_definitions(tmp_path / "defs", {"a.yaml": {"tools": {"profile": "codng"}}})
    plain = run("validate", str(defs))
    assert plain.exit_code == 1 and "\x1b[" not in plain.stderr
    assert re.search(r"defs/a.yaml:\d+:\d+: error\[TC104\]: unknown profile", plain.stderr)
    forced = run("validate", str(defs), env={"FORCE_COLOR": "1"})
    assert "\x1b[31m\x1b[1merror[TC104]\x1b[0m" in forced.stderr  # red, bold
    assert re.search(r"\x1b\[1m\S*defs/a.yaml:\d+:\d+\x1b\[0m: ", forced.stderr)  # bold
    off = run("validate", str(defs), env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in off.stderr and off.stderr == plain.stderr


def test_warnings_are_yellow(here: Path) -> None:
    result = run("resolve", "--agent", "nobody", env={"FORCE_COLOR": "1"})
    assert "\x1b[33m\x1b[1mwarning\x1b[0m: agent " in result.stderr


# -- a closed output pipe (`toolc explain ... | head`) --------------------------------------------
@pytest.mark.parametrize(("args", "closed"), [
    (["explain", "--agent", "main", "exec"], "stdout"),
    (["explain", "--agent", "main", "exec"], "stdout-and-stderr"),
    (["explain", "--json", "read"], "stdout"),
    (["resolve", "--definitions", "definitions"], "stdout"),
    (["schema", "read", "--dialect", "gemini"], "stdout"),
    (["diff", "definitions", "definitions", "--format", "json"], "stdout"),
    (["schema-path"], "stdout"),
], ids=lambda a: "-".join(a[:2]) if isinstance(a, list) else a)
def test_a_closed_output_pipe_exits_quietly(project: Path, args: list[str], closed: str) -> None:
    """The reader is gone before toolc writes (deterministically: the pipe's read end is
    closed first): exit 141, as a shell reports SIGPIPE, and not a word on stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        stderr: int = write_end if closed == "stdout-and-stderr" else subprocess.PIPE
        proc = subprocess.run([sys.executable, "-m", "toolc.cli", *args], cwd=project,
                              stdout=write_end, stderr=stderr, check=False)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    if proc.stderr is not None:
        assert b"Traceback" not in proc.stderr and b"error" not in proc.stderr, proc.stderr


# -- init --force: overwrite init's own files, nothing else ---------------------------------------
def test_init_force_overwrites_only_the_files_init_writes(tmp_path: Path) -> None:
    defs = tmp_path / "definitions"
    assert run("init", str(defs)).exit_code == 0
    (defs / "policy.yaml").write_text("version: 1\n")
    (defs / "deployment").mkdir()
    (defs / "deployment" / "mine.yaml").write_text("version: 1\n")
    refused = run("init", str(defs))
    assert refused.exit_code == 1 and "pass --force" in refused.stderr
    assert (defs / "policy.yaml").read_text() == "version: 1\n"
    forced = run("init", str(defs), "--force")
    assert forced.exit_code == 0, forced.output
    assert "overwrote 9 of init's files" in forced.stderr and "policy.yaml" in forced.stderr
    assert (defs / "policy.yaml").read_text().startswith("# yaml-language-server")
    assert (defs / "deployment" / "mine.yaml").read_text() == "version: 1\n"
    assert run("validate", str(defs)).exit_code == 0


# -- a missing optional dependency names the extra -------------------------------------------------
BLOCKED = """
import sys
sys.modules[sys.argv[1]] = None  # `import <it>` now fails as if it were not installed
from toolc.cli import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize(("missing", "command"), [
    *((m, ["serve-mcp"]) for m in ("anyio", "mcp", "uvicorn", "mcp.server.stdio")),
    *((m, ["import-mcp", "files=python -m x"]) for m in ("anyio", "mcp")),
], ids=lambda x: x if isinstance(x, str) else x[0])
def test_a_missing_optional_dependency_names_the_extra(tmp_path: Path, missing: str,
                                                       command: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", BLOCKED, missing, *command], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "needs the optional extra toolc[mcp]" in proc.stderr
    assert f"module '{missing}" in proc.stderr and "is missing" in proc.stderr
    # the command adds the extra to this very install, never a bare index name
    assert "install it with pip install" in proc.stderr and "Traceback" not in proc.stderr
    assert "pip install 'toolc[mcp]'" not in proc.stderr, proc.stderr
    assert "[mcp]" in proc.stderr.split("install it with", 1)[1]


# -- resolve and explain say where their answer comes from ----------------------------------------
def test_resolve_and_explain_name_their_source_and_warn_on_a_stale_build(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(project / "definitions", tmp_path / "definitions")
    shutil.copytree(project / "build", tmp_path / "build")
    monkeypatch.chdir(tmp_path)
    build_id = _build_id(tmp_path / "build")
    policy = tmp_path / "definitions" / "policy.yaml"
    policy.write_text(policy.read_text().replace("deny: [memo]", "deny: [memo, read]"))
    stale = "warning: build/ is stale relative to definitions/ (run `toolc build`): "
    from_build = f"source: build build/ (build {build_id}, stale)\n"
    from_defs = "source: definitions definitions/ (reference interpreter)\n"
    cases = [
        (["resolve"], "answering from it as built", from_build),
        (["resolve", "--definitions", "definitions"], "answering from definitions/ (without "
         "--definitions, resolve answers from build/)", from_defs),
        (["explain", "read"], "explaining from definitions/", from_defs),
        (["explain", "--build", "build", "read"], "explaining from it as built", from_build),
        (["explain", "--definitions", "definitions", "read"], "explaining from definitions/",
         from_defs),
    ]
    for args, consequence, source in cases:
        result = run(*args)
        assert result.stderr == f"{stale}{consequence}\n{source}", (args, result.stderr)
    # the answers differ, and each says why: read is denied only in the definitions
    assert "read" in run("resolve").stdout.split()
    assert "read" not in run("resolve", "--definitions", "definitions").stdout.split()
    data = json.loads(run("resolve", "--json").stdout)
    assert data["source"] == {"kind": "build", "path": "build", "build": build_id,
                              "current": False}
    data = json.loads(run("explain", "--json", "read").stdout)
    assert data["source"] == {"kind": "definitions", "path": "definitions",
                              "build": build_id, "current": False}
