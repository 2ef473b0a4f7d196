"""toolc installed the way a user installs it: the wheel built from this checkout, in a fresh
virtual environment in a temporary directory outside the checkout, then used there (init,
build, resolve, diff between two git revisions) and tried as a pre-commit hook repository.
A module or data file left out of the wheel (pyproject's packages and package-data) fails
here. One wheel and one venv for the module; pip's cache keeps the installs short."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import ROOT, commit_all, git

# What the wheel must carry besides the code: the runtime a build copies, the templates, the
# editor schema and the starter definitions.
WHEEL_DATA = ("toolc/runtime/bootstrap.py", "toolc/templates/__init__.py.jinja",
              "toolc/definitions.schema.json", "toolc/targets/data/openclaw-2026.9.json",
              "toolc/targets/starter-2026.9/catalog/10-core.yaml",
              "toolc/targets/starter-2026.9/plugins/browser.yaml",
              "toolc/targets/starter-2026.9/profiles.yaml",
              "toolc/targets/starter-2026.3/catalog/10-core.yaml",
              "toolc/targets/starter-2026.3/catalog/20-channels.yaml",
              "toolc/targets/starter-2026.3/plugins/memory-core.yaml", "toolc/py.typed")


@dataclass(frozen=True)
class Installed:
    wheel: Path
    bin: Path
    outside: Path  # a working directory outside the checkout

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
               "NO_COLOR": "1", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        for name in ("PYTHONPATH", "VIRTUAL_ENV", "FORCE_COLOR", "PYTHONHOME"):
            env.pop(name, None)
        return env

    def toolc(self, *args: str, cwd: Path, code: int = 0, stderr: bool = True) -> str:
        proc = subprocess.run([str(self.bin / "toolc"), *args], cwd=cwd, env=self.env(),
                              capture_output=True, text=True, check=False)
        assert proc.returncode == code, f"toolc {' '.join(args)}: {proc.stdout}{proc.stderr}"
        return proc.stdout + (proc.stderr if stderr else "")


def _run(*cmd: str, cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}:\n{proc.stdout}{proc.stderr}"


@pytest.fixture(scope="module")
def installed(checkout_repo: tuple[Path, str],
              tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("outside")
    # Build from a copy of the working tree (as committed into checkout_repo): a build in the
    # checkout would reuse its setuptools build directory, which may keep removed modules.
    source = root / "source"
    shutil.copytree(checkout_repo[0], source, ignore=shutil.ignore_patterns(".git"))
    _run(sys.executable, "-m", "build", "--wheel", "--outdir", str(root / "dist"), str(source))
    (wheel,) = (root / "dist").glob("toolc-*.whl")
    # A venv without its own pip (ensurepip is slow): this environment's pip installs into it.
    venv.create(root / "venv", with_pip=False)
    bin_dir = root / "venv" / "bin"
    _run(sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q",
         "--no-compile", "--disable-pip-version-check", str(wheel))
    shutil.rmtree(source)
    (root / "work").mkdir()
    return Installed(wheel=wheel, bin=bin_dir, outside=root / "work")


def test_the_wheel_carries_the_runtime_templates_schema_and_starter(
        installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert set(WHEEL_DATA) <= names, set(WHEEL_DATA) - names
    assert not [n for n in names if n.startswith(("tests/", "bench/", "docs/"))]


def _project(installed: Installed) -> Path:
    project = installed.outside / "project"
    project.mkdir()
    installed.toolc("init", cwd=project)
    installed.toolc("build", cwd=project)
    git(project, "init", "-q")
    commit_all(project, "policy: starter")
    return project


def test_init_build_resolve_diff_and_pre_commit_outside_the_checkout(
        installed: Installed, checkout_repo: tuple[Path, str]) -> None:
    cwd = installed.outside
    version = installed.toolc("--version", cwd=cwd)
    assert "toolc, version" in version
    where = subprocess.run([str(installed.bin / "python"), "-c",
                            "import toolc; print(toolc.__file__)"], cwd=cwd, env=installed.env(),
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(installed.bin.parent)) and not where.startswith(str(ROOT))
    assert installed.toolc("schema-path", cwd=cwd).strip().startswith(str(installed.bin.parent))

    project = _project(installed)
    # pre-commit runs the hooks of this checkout (as committed in checkout_repo) on a clone
    # of the project, beside the rest of this test: each try-repo installs toolc afresh.
    hooked = installed.outside / "hooked"
    git(installed.outside, "clone", "-q", str(project), str(hooked))
    repo, commit = checkout_repo
    # PIP_NO_COMPILE: the hook environment's install skips writing bytecode (much faster)
    env = {**installed.env(), "PRE_COMMIT_HOME": str(installed.outside / "pre-commit-home"),
           "PIP_NO_COMPILE": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    precommit = subprocess.Popen(
        [sys.executable, "-m", "pre_commit", "try-repo", str(repo), "--ref", commit,
         "--all-files", "--color", "never"], cwd=hooked, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        # stdout only: stderr names the source ("source: build build/ ...")
        assert installed.toolc("resolve", "--agent", "viewer", cwd=project,
                               stderr=False).split() == [
            "read", "web_fetch", "sessions_list", "session_status"]
        policy = project / "definitions" / "policy.yaml"
        policy.write_text(policy.read_text("utf-8").replace(
            "allow: [read, web_fetch", "allow: [read, exec, web_fetch"), "utf-8")
        out = installed.toolc("diff", "--base-rev", "HEAD", cwd=project, code=2)
        assert "+ exec: gained by agent viewer" in out, out
        installed.toolc("diff", "--base-rev", "HEAD", "--fail-on", "widen", cwd=project, code=3)
    finally:
        hook_out, _ = precommit.communicate(timeout=600)
    assert precommit.returncode == 0, hook_out
    assert hook_out.count("Passed") == 2, hook_out
