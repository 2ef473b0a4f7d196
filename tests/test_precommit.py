"""The pre-commit hooks (.pre-commit-hooks.yaml), run by the real pre-commit: `pre-commit
try-repo` installs this checkout (as committed into a scratch repository) into its own
environment with pip, then runs the hooks in a small project with definitions/ and build/.
try-repo installs into a throwaway store each time, so each call costs one install (about
20 s): one call for a good project and one for a bad one, each running both hooks, side by
side."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from toolc.cli import main

from tests.helpers import commit_all, git, write_definitions

HOOKS = ("toolc-validate", "toolc-check")
DEFINITIONS = {
    "catalog.yaml": {"catalog": [
        {"name": "read", "description": "Read a file.", "parameters": {"type": "object"}},
        {"name": "exec", "description": "Run a command.", "parameters": {"type": "object"}}]},
    "policy.yaml": {"agents": {"list": [{"id": "viewer", "tools": {"deny": ["exec"]}}]}},
}


def try_repo(project: Path, hooks: tuple[Path, str], home: Path) -> subprocess.Popen[str]:
    """Start ``pre-commit try-repo`` with every hook of the manifest (one environment)."""
    repo, commit = hooks
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.Popen([sys.executable, "-m", "pre_commit", "try-repo", str(repo),
                             "--ref", commit, "--all-files", "--color", "never"],
                            cwd=project, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=600)
    return proc.returncode, out


def make_project(root: Path) -> Path:
    """A repository holding definitions/ and the build/ toolc makes of them."""
    write_definitions(root / "definitions", DEFINITIONS)
    result = CliRunner().invoke(main, ["build", str(root / "definitions"), "-o",
                                       str(root / "build")])
    assert result.exit_code == 0, result.output
    git(root, "init", "-q")
    commit_all(root)
    return root


def test_hooks_pass_on_a_good_project_and_fail_on_a_bad_one(
        checkout_repo: tuple[Path, str], tmp_path: Path) -> None:
    good = make_project(tmp_path / "good")
    bad = make_project(tmp_path / "bad")
    # a misspelt deny entry (only a warning without --strict) and a build/ left stale
    policy = bad / "definitions" / "policy.yaml"
    policy.write_text(policy.read_text().replace("- exec", "- exce"))
    git(bad, "add", "-A")  # pre-commit stashes unstaged changes: stage the edit
    # Each try-repo installs into its own throwaway store: run the two side by side.
    runs = [try_repo(p, checkout_repo, tmp_path / f"home-{p.name}") for p in (good, bad)]
    (code, out), (bad_code, bad_out) = (finish(r) for r in runs)
    assert code == 0, out
    assert "toolc validate --strict" in out and "toolc build --check" in out
    assert out.count("Passed") == len(HOOKS), out
    assert bad_code == 1, bad_out
    assert bad_out.count("Failed") == len(HOOKS), bad_out
    assert "- hook id: toolc-validate" in bad_out and "- hook id: toolc-check" in bad_out
    assert re.search(r'definitions/policy.yaml:\d+:\d+: error\[TC130\]: unknown tool "exce"',
                     bad_out)
    assert "build/manifest.json: error: stale" in bad_out
