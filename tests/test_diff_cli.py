"""``toolc diff`` on the command line: formats, exit codes, sides (builds, definitions, git
revisions) and a revision's worktree leaving nothing behind."""

from __future__ import annotations

import copy
import json
import math
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from toolc.cli import main
from toolc.review import diff as diff_module

from tests.helpers import ROOT, commit_all, git, write_definitions
from tests.test_access_md import HOSTILE, HOSTILE_DEFS, assert_inert

DEFS = ROOT / "definitions"
VIEWER = "    - id: viewer\n      tools:\n"


def _changed(tmp: Path, *, widen: bool) -> Path:
    """The shipped definitions with the viewer on the messaging profile (it loses read,
    memory_search and memory_get) and, with ``widen``, agent support allowed exec."""
    out = tmp / "head"
    shutil.copytree(DEFS, out)
    agents = out / "deployment" / "agents.yaml"
    text = agents.read_text()
    assert VIEWER in text
    text = text.replace(VIEWER, VIEWER + "        profile: messaging\n")
    if widen:
        text = text.replace("alsoAllow: [web_fetch]", "alsoAllow: [web_fetch, exec]")
    agents.write_text(text)
    return out


def _diff(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["diff", *args])
    return result.exit_code, result.output


def test_formats_and_exit_code_for_a_narrowing(tmp_path: Path) -> None:
    head = _changed(tmp_path, widen=False)
    code, text = _diff(str(DEFS), str(head))
    assert code == 2
    assert "- read: lost by agent viewer (3,942 classes)" in text
    assert "+ " not in "".join(line[:2] for line in text.splitlines()[1:] if "warning" not in line)
    code, md = _diff(str(DEFS), str(head), "--format", "markdown")
    assert code == 2 and md.startswith("### toolc diff:")
    assert "| `read` | 0 | 3,942 |" in md and "<details>" in md
    code, raw = _diff(str(DEFS), str(head), "--format", "json")
    data = json.loads(raw)
    assert code == 2 and data["format"] == 2 and data["access_changed"]
    assert data["classes"] == math.prod(data["dimensions"].values())
    assert not data["widened"]
    lost = {a["tool"]: a["lost"]["count"] for a in data["access"]}
    assert lost == {"read": 3942, "memory_search": 3402, "memory_get": 3402}
    read = next(a for a in data["access"] if a["tool"] == "read")
    assert read["lost"]["classes"][0]["agent"] == ["agent viewer"]
    assert read["lost"]["classes"][0]["provider"] is None
    assert {w["code"] for w in data["warnings"]["added"]} == {"TC312"}
    # narrowing never trips --fail-on widen
    assert _diff(str(DEFS), str(head), "--fail-on", "widen")[0] == 2


def test_widening_exits_3_only_when_asked(tmp_path: Path) -> None:
    head = _changed(tmp_path, widen=True)
    code, text = _diff(str(DEFS), str(head))
    assert code == 2 and "+ exec: gained by agent support" in text
    code, _ = _diff(str(DEFS), str(head), "--fail-on", "widen")
    assert code == 3


def test_no_change_exits_0_and_builds_compare_like_definitions(tmp_path: Path) -> None:
    code, text = _diff(str(DEFS), str(DEFS))
    assert code == 0 and "access: no tool is gained or lost in any class" in text
    head = _changed(tmp_path, widen=True)
    for name, defs in (("a", DEFS), ("b", head)):
        result = CliRunner().invoke(main, ["build", str(defs), "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    from_builds = json.loads(_diff(str(tmp_path / "a"), str(tmp_path / "b"),
                                   "--format", "json")[1])
    from_defs = json.loads(_diff(str(DEFS), str(head), "--format", "json")[1])
    assert from_builds["access"] == from_defs["access"]


@pytest.mark.parametrize("args", [["a", "b", "c"], [str(DEFS), str(DEFS), "--format", "nope"],
                                  ["--nope"], ["--base-rev", "HEAD", "x", "y"]])
def test_usage_errors_exit_1_not_2(args: list[str]) -> None:
    code, out = _diff(*args)
    assert code == 1, out
    assert "Usage:" in out


def test_unreadable_side_exits_1(tmp_path: Path) -> None:
    code, out = _diff(str(DEFS), str(tmp_path / "missing"))
    assert code == 1 and "not a directory, and not a git revision" in out
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.yaml").write_text("version: 1\ntools: {deny: 3}\n")
    code, out = _diff(str(DEFS), str(bad))
    assert code == 1 and "error[TC111]" in out


def test_base_rev_uses_a_temporary_worktree_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(DEFS, repo / "definitions")
    git(repo, "init", "-q")
    commit_all(repo)
    changed = _changed(tmp_path, widen=True)
    shutil.rmtree(repo / "definitions")
    shutil.copytree(changed, repo / "definitions")
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.chdir(repo)
    code, text = _diff("--base-rev", "HEAD")
    assert code == 2, text
    assert text.startswith("toolc diff HEAD:definitions -> definitions")
    assert "+ exec: gained by agent support" in text
    assert list(temp.iterdir()) == []
    worktrees = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True,
                               text=True, check=True).stdout.splitlines()
    assert len(worktrees) == 1
    code, out = _diff("--base-rev", "no-such-rev")
    assert code == 1 and "no-such-rev" in out
    assert list(temp.iterdir()) == []


def test_hostile_names_are_inert_in_the_pr_comment(tmp_path: Path) -> None:
    base = write_definitions(tmp_path / "base", HOSTILE_DEFS)
    head_data = copy.deepcopy(HOSTILE_DEFS)
    channel = head_data["d.yaml"]["channels"][HOSTILE["channel"]]
    senders = channel["groups"][HOSTILE["group"]]["toolsBySender"]
    senders[HOSTILE["sender"]] = {"deny": ["exec"]}  # read comes back, exec goes; warning gone
    head = write_definitions(tmp_path / "head", head_data)
    code, md = _diff(str(base), str(head), "--format", "markdown")
    assert code == 2, md
    assert "<details><summary>Warnings</summary>" in md and "- gone: `TC" in md
    assert_inert(md, [HOSTILE["group"], HOSTILE["sender"], HOSTILE["denied"]])


def _repo(tmp: Path) -> Path:
    """A repository whose committed definitions are the shipped ones; the working tree has
    agent support allowed exec (a widening)."""
    repo = tmp / "repo"
    shutil.copytree(DEFS, repo / "definitions")
    git(repo, "init", "-q")
    commit_all(repo)
    changed = _changed(tmp, widen=True)
    shutil.rmtree(repo / "definitions")
    shutil.copytree(changed, repo / "definitions")
    return repo


def _worktrees(repo: Path) -> list[str]:
    return git(repo, "worktree", "list").splitlines()


def test_definitions_outside_the_repository_is_a_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    outside = tmp_path / "elsewhere"
    shutil.copytree(DEFS, outside)
    monkeypatch.chdir(repo)
    for defs, message in ((tmp_path / "missing", "is outside the git repository"),
                          (outside, "is not inside a git repository")):
        for args in (["--base-rev", "HEAD"], ["HEAD", "definitions"]):
            code, out = _diff(*args, "--definitions", str(defs))
            assert code == 1, out
            assert message in out and "Traceback" not in out, out


KILLED = """
import os, signal, sys
from toolc.review import diff
from toolc.cli import main
def kill(step):
    if step == "worktree-added":
        os.kill(os.getpid(), signal.SIGKILL)
diff.FAULT_HOOK = kill
main(["diff", "--base-rev", "HEAD"])
"""


def test_a_killed_base_rev_run_leaves_a_worktree_the_next_run_removes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    proc = subprocess.run([sys.executable, "-c", KILLED], cwd=repo, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert len(_worktrees(repo)) == 2  # SIGKILL: no finally ran
    monkeypatch.chdir(repo)
    code, text = _diff("--base-rev", "HEAD")
    assert code == 2 and "+ exec: gained by agent support" in text
    assert len(_worktrees(repo)) == 1
    assert list((repo / ".git" / "toolc-diff").iterdir()) == []


def test_a_live_runs_worktree_is_left_alone(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A second run while the first is inside its worktree (in this process: the first run's
    hook starts it) removes nothing of the first's; both answer."""
    repo = _repo(tmp_path)
    monkeypatch.chdir(repo)
    inner: list[tuple[int, str, int]] = []

    def second_run(step: str) -> None:
        if step == "worktree-added" and not inner:
            inner.append((0, "", 0))
            code, text = _diff("--base-rev", "HEAD")
            inner[0] = (code, text, len(_worktrees(repo)))

    monkeypatch.setattr(diff_module, "FAULT_HOOK", second_run)
    code, text = _diff("--base-rev", "HEAD")
    assert code == 2 and "+ exec: gained by agent support" in text
    inner_code, inner_text, during = inner[0]
    assert inner_code == 2 and "+ exec: gained by agent support" in inner_text
    assert during == 2  # the first run's worktree was still there after the second's cleanup
    assert len(_worktrees(repo)) == 1
