"""The example GitHub Actions workflow (examples/ci/toolc.yml), run step by step on this
repository's own definitions: a clone of this checkout whose `origin/main` is the checkout
and whose pull request widens one agent's tools. Every `run:` step executes with bash as the
runner would (its `env:` and `if:` evaluated for a pull request), except the one that posts
the comment, whose input file is checked instead."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import ROOT, commit_all, git

WORKFLOW = ROOT / "examples" / "ci" / "toolc.yml"
VENV_BIN = Path(sys.executable).parent
# The ${{ }} expressions the workflow may use in `env:`, as a pull request against main sees
# them; any other expression fails the test (extend this map when the workflow grows).
EXPRESSIONS = {"github.base_ref": "main", "github.token": "unused-in-tests",
               "github.event.pull_request.number": "1"}
SKIPPED = {"comment"}  # posts to GitHub


@dataclass
class Run:
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)


def _expand(value: Any) -> str:
    def sub(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        assert expr in EXPRESSIONS, f"the test does not know ${{{{ {expr} }}}}"
        return EXPRESSIONS[expr]
    return re.sub(r"\$\{\{(.*?)\}\}", sub, str(value))


def _condition(expr: str | None, run: Run) -> bool:
    """The `if:` forms the workflow uses, evaluated for a pull request."""
    if expr is None:
        return not run.failed
    expr = expr.strip()
    if expr == "github.event_name == 'pull_request'":
        return not run.failed
    match = re.fullmatch(r"steps\.(\w+)\.outputs\.(\w+) == '([^']*)'", expr)
    assert match, f"the test cannot evaluate `if: {expr}`"
    step, name, value = match.groups()
    return not run.failed and run.outputs.get(step, {}).get(name) == value


def run_workflow(repo: Path, tmp: Path, only: str = "", **overrides: str) -> Run:
    """Run the job's `run:` steps in ``repo`` (``only``: a comma-separated subset of ids)."""
    doc = yaml.safe_load(WORKFLOW.read_text("utf-8"))
    (job,) = doc["jobs"].values()
    env = {**os.environ, **{k: _expand(v) for k, v in doc.get("env", {}).items()},
           # the test's own toolc is installed already: pip finds it satisfied
           "TOOLC_SPEC": "toolc", "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
           "NO_COLOR": "1", **overrides}
    env.pop("FORCE_COLOR", None)
    result = Run()
    for i, step in enumerate(job["steps"]):
        if "run" not in step:
            continue  # actions/checkout, setup-python: the clone and the venv stand in
        sid = step.get("id", f"step{i}")
        if only and sid not in only.split(","):
            continue
        if not _condition(step.get("if"), result) or sid in SKIPPED:
            result.skipped.append(sid)
            continue
        output = tmp / f"output-{sid}"
        output.write_text("")
        step_env = {**env, **{k: _expand(v) for k, v in step.get("env", {}).items()},
                    "GITHUB_OUTPUT": str(output)}
        proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=step_env,
                              capture_output=True, text=True, timeout=300, check=False)
        result.ran.append(sid)
        result.outputs[sid] = dict(line.split("=", 1) for line in
                                   output.read_text().splitlines() if "=" in line)
        if proc.returncode != 0 and not step.get("continue-on-error"):
            result.failed[sid] = proc.stdout + proc.stderr
    return result


@pytest.fixture
def pull_request(checkout_repo: tuple[Path, str], tmp_path: Path) -> Path:
    """A clone whose branch widens the support agent by web_search, rebuilt and committed."""
    src, _ = checkout_repo
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(src), str(repo))
    git(repo, "switch", "-q", "-c", "widen-support")
    agents = repo / "definitions" / "deployment" / "agents.yaml"
    agents.write_text(agents.read_text().replace("alsoAllow: [web_fetch]",
                                                 "alsoAllow: [web_fetch, web_search]"))
    subprocess.run([str(VENV_BIN / "toolc"), "build", "definitions", "-o", "build"], cwd=repo,
                   check=True, capture_output=True)
    commit_all(repo, "support: web_search")
    return repo


def test_workflow_steps_on_a_pull_request(pull_request: Path, tmp_path: Path) -> None:
    run = run_workflow(pull_request, tmp_path)
    assert not run.failed, run.failed
    assert run.ran == ["step2", "step3", "step4", "diff"]
    assert run.skipped == ["comment", "step7"]
    assert run.outputs["diff"] == {"status": "2"}  # access changed, and the job still passes
    comment = (pull_request / "toolc-diff.md").read_text("utf-8")
    assert comment.startswith("### toolc diff: `origin/main:definitions` → `definitions`")
    assert "| `web_search` |" in comment and "agent support" in comment
    # with --fail-on widen the comment is still written, then the last step fails the job
    (pull_request / "toolc-diff.md").unlink()
    strict = run_workflow(pull_request, tmp_path, TOOLC_DIFF_FLAGS="--fail-on widen",
                          only="diff,comment,step7")
    assert strict.outputs["diff"] == {"status": "3"}
    assert (pull_request / "toolc-diff.md").read_text("utf-8") == comment
    assert list(strict.failed) == ["step7"] and "widens tool access" in strict.failed["step7"]
