"""The composite GitHub Action (action.yml) and the GitLab CI job (examples/ci/gitlab-ci.yml),
run locally in a throwaway repository whose pull request widens one agent's tools.

The action's `run:` steps execute with bash as the runner would (its `if:` and `${{ }}`
expressions evaluated for a pull request against `main`); the `uses:` step (setup-python) is
what this test's own environment stands in for, and `gh` is a script that records the
comment instead of posting it. The toolc spec is this environment's installed toolc."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from toolc.cli import main

from tests.helpers import ROOT, commit_all, git

ACTION = ROOT / "action.yml"
GITLAB = ROOT / "examples" / "ci" / "gitlab-ci.yml"
VENV_BIN = Path(sys.executable).parent
GITHUB = {"event_name": "pull_request", "base_ref": "main", "token": "unused-in-tests",
          "repository": "owner/policies", "event.pull_request.number": "7"}
GH = """#!/usr/bin/env bash
# stands in for the GitHub CLI: records the command line and the comment body
echo "$*" >> "$GH_LOG"
while [ $# -gt 0 ]; do
  if [ "$1" = --body-file ]; then cat "$2" > "$GH_LOG.body"; fi
  shift
done
"""


@dataclass
class Run:
    inputs: dict[str, str]
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: str | None = None
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)

    def value(self, expr: str) -> str:
        """A context value or a `'literal'`; `a || b` is the first non-empty one."""
        for part in (p.strip() for p in expr.split("||")):
            if part.startswith("'"):
                got = part.strip("'")
            elif part.startswith("inputs."):
                got = self.inputs[part.removeprefix("inputs.")]
            elif part.startswith("github."):
                got = GITHUB[part.removeprefix("github.")]
            else:
                found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", part)
                assert found, f"the test cannot evaluate {part!r}"
                got = self.outputs.get(found[1], {}).get(found[2], "")
            if got:
                return got
        return ""

    def condition(self, expr: str | None) -> bool:
        if self.failed:  # no `always()` in the action: a failure skips the rest
            return False
        for clause in (expr or "true").split("&&"):
            if clause.strip() == "true":
                continue
            found = re.fullmatch(r"\s*(.+?)\s*(==|!=)\s*('[^']*')\s*", clause)
            assert found, f"the test cannot evaluate `if: {expr}`"
            equal = self.value(found[1]) == self.value(found[3])
            if equal != (found[2] == "=="):
                return False
        return True

    def expand(self, value: Any) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.value(m[1].strip()), str(value))


def _env(tmp: Path) -> dict[str, str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gh").write_text(GH)
    (bin_dir / "gh").chmod(stat.S_IRWXU)
    env = {**os.environ, "PATH": os.pathsep.join([str(bin_dir), str(VENV_BIN),
                                                  os.environ["PATH"]]),
           "NO_COLOR": "1", "GH_LOG": str(tmp / "gh.log"), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull}
    env.pop("FORCE_COLOR", None)
    return env


def run_action(repo: Path, tmp: Path, only: tuple[str, ...] = (), **inputs: str) -> Run:
    """Run action.yml's steps in ``repo`` with ``inputs`` over the defaults (``only``: just
    the `run:` steps with these ids)."""
    doc = yaml.safe_load(ACTION.read_text("utf-8"))
    assert doc["runs"]["using"] == "composite"
    defaults = {k: str(v.get("default", "")) for k, v in doc["inputs"].items()}
    unknown = set(inputs) - set(defaults)
    assert not unknown, unknown
    run = Run(inputs={**defaults, **inputs})
    run.inputs = {k: run.expand(v) for k, v in run.inputs.items()}
    temp, summary = tmp / "runner-temp", tmp / "summary.md"
    temp.mkdir(exist_ok=True)
    for step in doc["runs"]["steps"]:
        sid = step["id"] if "id" in step else step["uses"]
        if not run.condition(step.get("if")) or "uses" in step or (only and sid not in only):
            assert "uses" not in step or step["uses"].startswith("actions/setup-python@")
            run.skipped.append(sid)
            continue
        assert step["shell"] == "bash" and "${{" not in step["run"], sid
        output = tmp / f"output-{sid}"
        output.write_text("")
        env = {**_env(tmp), **{k: run.expand(v) for k, v in step.get("env", {}).items()},
               "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
               "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(ROOT)}
        # GitHub runs `shell: bash` as `bash --noprofile --norc -eo pipefail {0}`
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                               step["run"]], cwd=repo, env=env, capture_output=True,
                              text=True, check=False)
        run.ran.append(sid)
        run.outputs[sid] = dict(line.split("=", 1) for line in output.read_text().splitlines())
        if proc.returncode:
            run.failed = f"{sid}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
    return run


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone on branch `pr` whose commit gives agent viewer `exec`; its origin has `main`,
    and the clone has no `origin/main` yet (as a shallow pull-request checkout)."""
    tmp = tmp_path_factory.mktemp("action")
    origin, runner = tmp / "origin", CliRunner()
    origin.mkdir()
    assert runner.invoke(main, ["init", str(origin / "definitions")]).exit_code == 0
    build = ["build", str(origin / "definitions"), "-o", str(origin / "build")]
    assert runner.invoke(main, build).exit_code == 0
    git(origin, "init", "-q", "-b", "main")
    commit_all(origin, "policy: starter")
    work = tmp / "work"
    git(tmp, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "pr")
    policy = work / "definitions" / "policy.yaml"
    policy.write_text(policy.read_text("utf-8").replace(
        "allow: [read, web_fetch", "allow: [read, exec, web_fetch"), "utf-8")
    build = ["build", str(work / "definitions"), "-o", str(work / "build")]
    assert runner.invoke(main, build).exit_code == 0
    commit_all(work, "policy: the viewer runs commands")
    git(work, "update-ref", "-d", "refs/remotes/origin/main")
    return work


def test_action_posts_the_diff_and_fails_a_widening_pull_request(
        pull_request: Path, tmp_path: Path) -> None:
    run = run_action(pull_request, tmp_path, **{"toolc-spec": "toolc",
                                                "fail-on-widen": "true"})
    assert run.ran == ["install", "validate", "check", "diff", "comment", "widen"], run.failed
    assert run.skipped == ["actions/setup-python@v5"]
    assert run.failed and run.failed.startswith("widen: exit 1"), run.failed
    assert run.outputs["diff"]["status"] == "3"
    comment = (tmp_path / "gh.log").read_text()
    assert comment.startswith(f"pr comment 7 --body-file {run.outputs['diff']['file']}")
    body = (tmp_path / "gh.log.body").read_text()
    assert "exec" in body and "viewer" in body and "<details>" in body, body
    assert body in (tmp_path / "summary.md").read_text()
    # the step fetched the base branch the checkout did not have
    assert git(pull_request, "rev-parse", "origin/main")


def test_action_passes_a_changed_pull_request_without_fail_on_widen(
        pull_request: Path, tmp_path: Path) -> None:
    # install, validate and check ran in the test above
    run = run_action(pull_request, tmp_path, ("diff", "comment", "widen"),
                     **{"comment": "false", "python-version": ""})
    assert run.failed is None, run.failed
    assert run.ran == ["diff"]
    assert run.skipped == ["actions/setup-python@v5", "install", "validate", "check",
                           "comment", "widen"]
    assert run.outputs["diff"]["status"] == "2"


def test_gitlab_job_writes_the_diff_and_fails_a_widening_merge_request(
        pull_request: Path, tmp_path: Path) -> None:
    (job,) = yaml.safe_load(GITLAB.read_text("utf-8")).values()
    env = {**_env(tmp_path), **{k: str(v) for k, v in job["variables"].items()},
           "TOOLC_SPEC": "toolc", "TOOLC_FAIL_ON_WIDEN": "true",
           "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main"}
    env.pop("TOOLC_NOTE_TOKEN", None)
    # GitLab runs the script's entries in one shell and stops at the first failure
    script = "set -eo pipefail\n" + "\n".join(job["script"])
    proc = subprocess.run(["bash", "-c", script], cwd=pull_request, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "widens tool access" in proc.stdout
    diff = (pull_request / "toolc-diff.md").read_text()
    assert "exec" in diff and "viewer" in diff
    assert job["artifacts"]["paths"] == ["toolc-diff.md"]
