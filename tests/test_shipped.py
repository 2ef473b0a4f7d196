"""The shipped definitions and the committed build/: fresh, deterministic, clean, importable."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from toolc.cli import main

from tests.helpers import ROOT, import_runtime

DEFS = ROOT / "definitions"
BUILD = ROOT / "build"
VENV_BIN = Path(sys.executable).parent


def test_committed_build_is_fresh() -> None:
    result = CliRunner().invoke(main, ["build", str(DEFS), "-o", str(BUILD), "--check"])
    assert result.exit_code == 0, result.stderr + "\nbuild/ is stale: run `make build`"


def test_shipped_definitions_validate_strictly() -> None:
    result = CliRunner().invoke(main, ["validate", str(DEFS), "--strict"])
    assert result.exit_code == 0, result.stderr


def _build(defs: Path, out: Path, seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    subprocess.run([str(VENV_BIN / "toolc"), "build", str(defs), "-o", str(out)], env=env,
                   check=True, capture_output=True)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_determinism_across_hash_seeds_and_file_order(tmp_path: Path) -> None:
    _build(DEFS, tmp_path / "a", "1")
    # the same files, created in a different order (directory listing order changes)
    copy = tmp_path / "defs"
    files = sorted(DEFS.rglob("*.yaml"))
    random.Random(7).shuffle(files)
    for f in files:
        target = copy / f.relative_to(DEFS)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)
    _build(copy, tmp_path / "b", "12345")
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") == _tree(BUILD)


def test_generated_runtime_passes_ruff_and_mypy_strict(tmp_path: Path) -> None:
    package = BUILD / "toolc_runtime"
    ruff = VENV_BIN / "ruff"
    for args in (["check", "--select", "E,F,I,UP,B,PL,RUF", "--ignore", "PLR2004,PLR0912",
                  "--line-length", "100"], ["format", "--check", "--line-length", "100"]):
        proc = subprocess.run([str(ruff), *args, "--no-cache", str(package)],
                              capture_output=True, text=True, cwd=tmp_path, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([str(VENV_BIN / "mypy"), "--strict", "--no-incremental",
                           "--cache-dir", str(tmp_path / "cache"), str(package)],
                          capture_output=True, text=True, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_runtime_refuses_mismatched_data(tmp_path: Path) -> None:
    out = tmp_path / "build"
    shutil.copytree(BUILD, out)
    tables = out / "toolc_runtime" / "tables.json"
    tables.write_text(tables.read_text() + " ")  # same JSON, other bytes
    with pytest.raises(RuntimeError, match=r"does not match this runtime"):
        import_runtime(out, "toolc_runtime")


def test_runtime_imports_fast_and_answers() -> None:
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); t = time.perf_counter();"
            "import toolc_runtime as r; print(time.perf_counter() - t);"
            "print(r.resolve(agent_id='viewer').names)")
    proc = subprocess.run([sys.executable, "-c", code, str(BUILD)], capture_output=True,
                          text=True, check=True)
    seconds, names = proc.stdout.splitlines()
    assert float(seconds) < 1.0  # generous: this is a smoke test, `make bench` measures
    assert "read" in names and "exec" not in names


def test_shipped_example_answers() -> None:
    # OpenClaw 2026.9: a caller's group id counts only when the session key names the group
    # (resolveTrustedGroupIdFromContexts), unknown owner keeps owner-only tools, and a request
    # without an agent gets the default agent (main)
    rt = import_runtime(BUILD, "toolc_runtime")
    group = "agent:main:telegram:group:-100123"
    telegram = rt.resolve(agent_id="main", model_provider="openai", model_id="gpt-5",
                          session_key=group, sender_id="42")
    assert "exec" in telegram.names and "apply_patch" in telegram.names
    alice = rt.resolve(session_key=group, sender_username="alice")
    assert alice.names == ("read", "message")
    # a gateway passes the message: the ops group's binding routes it to the coder, and the
    # session key it builds names the group (its sender rules apply)
    ops = "agent:coder:telegram:group:-100123"
    routed, tools = rt.resolve_message("telegram", peer=("group", "-100123"),
                                       sender_username="alice")
    assert (routed.agent_id, routed.session_key, routed.matched_by) == (
        "coder", ops, "binding.peer")
    assert tools == rt.resolve(agent_id="coder", session_key=ops, message_provider="telegram",
                               sender_username="alice") and tools.names == ("read",)
    # another group of the channel: the channel-wide binding OpenClaw's loader adds
    other, _ = rt.resolve_message("telegram", peer=("group", "-100999"))
    assert (other.agent_id, other.matched_by) == ("main", "binding.channel")
    # a group id without the session key that names it: OpenClaw drops it (no group layer,
    # exec stays); toolc refuses it unless asked for the release's silent answer
    with pytest.raises(rt.UntrustedGroupError, match="group_id='-100123' would be ignored"):
        rt.resolve(message_provider="telegram", group_id="-100123", sender_username="alice")
    assert "exec" in rt.resolve(message_provider="telegram", group_id="-100123",
                                sender_username="alice", strict=False).names
    # the group's "*" sender rule, not its `tools` block, applies to other senders
    assert "browser" not in rt.resolve(session_key=group).names
    assert "exec" not in rt.resolve(session_key=group).names
    assert telegram["read"].parameters["type"] == "object"
    assert "cron" not in telegram  # 2026.9 calls it automations
    assert "automations" in rt.resolve(agent_id="main", sender_is_owner=True).names
    assert "automations" in rt.resolve(agent_id="main").names  # owner unknown keeps it
    assert "automations" not in rt.resolve(agent_id="main", sender_is_owner=False).names
    assert rt.resolve().names == rt.resolve(agent_id="main").names  # the default agent
    researcher = rt.resolve(agent_id="researcher").names
    assert "code_index_rebuild" in researcher  # the optional plugin tool it names


def test_cli_resolve_json_and_explain() -> None:
    runner = CliRunner()
    args = ["--agent", "viewer", "--provider", "openai", "--json"]
    compiled = runner.invoke(main, ["resolve", "--build", str(BUILD), *args])
    reference = runner.invoke(main, ["resolve", "--definitions", str(DEFS), *args])
    assert compiled.exit_code == 0 and reference.exit_code == 0
    tools = json.loads(compiled.stdout)["tools"]
    assert tools == json.loads(reference.stdout)["tools"] and tools[0] == "read"
    # each says where its answer comes from
    assert json.loads(compiled.stdout)["source"]["kind"] == "build"
    assert json.loads(reference.stdout)["source"]["kind"] == "definitions"
    explained = runner.invoke(main, ["explain", "--definitions", str(DEFS), "--agent",
                                     "viewer", "exec"])
    assert explained.exit_code == 1  # not visible
    assert "not visible" in explained.stdout and "deployment/agents.yaml" in explained.stdout


def test_cli_usage_error_exits_2() -> None:
    result = CliRunner().invoke(main, ["resolve", "--spawn-depth", "minus"])
    assert result.exit_code == 2


def test_noop_rebuild_is_detected(tmp_path: Path) -> None:
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(main, ["build", str(DEFS), "-o", str(out)]).exit_code == 0
    start = time.perf_counter()
    second = runner.invoke(main, ["build", str(DEFS), "-o", str(out)])
    assert "up to date" in second.stderr and time.perf_counter() - start < 5


def test_non_editable_install_finds_templates(tmp_path: Path) -> None:
    # From a copy: building in the checkout would reuse its setuptools build directory, which
    # keeps modules the source tree no longer has.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.cfg", "README.md"):
        shutil.copyfile(ROOT / name, source / name)
    for name in ("compiler", "templates", "definitions"):
        shutil.copytree(ROOT / name, source / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--target", str(target), str(source)],
                   check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": str(target)}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([sys.executable, "-c", "import toolc, sys; print(toolc.__file__);"
                           "toolc.build(sys.argv[1], sys.argv[2])", str(DEFS),
                           str(tmp_path / "out")], cwd=elsewhere, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert str(target) in proc.stdout
    assert _tree(tmp_path / "out") == _tree(BUILD)
    # The core catalog and the editor schema ship in the wheel: init, import-openclaw and
    # schema-path work from any directory, without the repository.
    shutil.rmtree(source)
    cli = [sys.executable, "-c", "from toolc.cli import main; main()"]

    def toolc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, *args], cwd=elsewhere, env=env, capture_output=True,
                              text=True, check=False)

    schema = toolc("schema-path")
    assert schema.returncode == 0 and schema.stdout.strip().startswith(str(target))
    assert toolc("init").returncode == 0
    built = toolc("build")
    assert built.returncode == 0, built.stderr
    assert "warning" not in built.stderr
    (elsewhere / "openclaw.json5").write_text(
        "{tools: {profile: 'coding', alsoAllow: ['lobster']}, // docs style\n"
        " channels: {whatsapp: {dmPolicy: 'pairing'}}}\n")
    imported = toolc("import-openclaw", "openclaw.json5", "-o", "imported")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert "lobster (plugin lobster" in imported.stdout
    assert toolc("build", "imported", "-o", "imported-build").returncode == 0
