"""Shared test helpers: write definitions, build them, import the generated runtime."""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from toolc.api import compile_files, resolve_definitions
from toolc.pipeline.writer import publish
from toolc.runtime._errors import AgentSelectionRequiredError, UntrustedGroupError
from toolc.semantics.reference import ReferenceInterpreter

ROOT = Path(__file__).resolve().parent.parent
_counter = itertools.count()


def write_definitions(root: Path, files: dict[str, Any]) -> Path:
    """Write ``{relative path: data}`` as YAML files (data gets ``version: 1`` prepended)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = data if isinstance(data, str) else yaml.safe_dump(
            {"version": 1, **data}, sort_keys=False, allow_unicode=True)
        path.write_text(text, encoding="utf-8")
    return root


def import_runtime(out: Path, package: str) -> ModuleType:
    init = out / package / "__init__.py"
    spec = importlib.util.spec_from_file_location(package, init,
                                                  submodule_search_locations=[str(init.parent)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module  # kept: the runtime imports its own submodules lazily
    for name in [m for m in sys.modules if m.startswith(f"{package}.")]:
        del sys.modules[name]  # a re-import must not see the previous build's submodules
    spec.loader.exec_module(module)
    return module


def build_runtime(defs: Path, out: Path) -> ModuleType:
    """Compile ``defs`` into ``out`` under a fresh package name and import it."""
    package = f"toolc_rt_{next(_counter)}"
    files, _, _ = compile_files(defs, package=package, with_models=False)
    publish(files, out)
    return import_runtime(out, package)


def refused(exc: Exception) -> tuple[str, ...]:
    """A request an engine refused (AgentSelectionRequiredError, UntrustedGroupError), as a
    comparable answer."""
    return (f"!{type(exc).__name__}", str(exc), str(getattr(exc, "code", "")))


class Engines:
    """The generated runtime and the reference interpreter over the same definitions; a
    request both refuse (AgentSelectionRequiredError, UntrustedGroupError: 2026.9) answers as
    :func:`refused`. ``strict=False`` asks both for OpenClaw's silent answer."""

    def __init__(self, defs: Path, out: Path) -> None:
        self.runtime = build_runtime(defs, out)
        self.reference = ReferenceInterpreter(resolve_definitions(defs))

    def compiled(self, **ctx: Any) -> tuple[str, ...]:
        try:
            return tuple(self.runtime.resolve(**ctx).names)
        except (self.runtime.AgentSelectionRequiredError,
                self.runtime.UntrustedGroupError) as exc:
            return refused(exc)

    def oracle(self, **ctx: Any) -> tuple[str, ...]:
        try:
            return self.reference.resolve(**ctx).names
        except (AgentSelectionRequiredError, UntrustedGroupError) as exc:
            return refused(exc)

    def both(self, **ctx: Any) -> tuple[str, ...]:
        """The answer of both engines, which must agree; a group both refuse as one the
        target would ignore, they must also agree on ignoring it (``strict=False``)."""
        compiled, oracle = self.compiled(**ctx), self.oracle(**ctx)
        assert compiled == oracle, f"context {ctx}: runtime {compiled} != reference {oracle}"
        if compiled[:1] == ("!UntrustedGroupError",):
            self.both(**{**ctx, "strict": False})
        return compiled


def engines_for(tmp: Path, files: dict[str, Any]) -> Engines:
    defs = write_definitions(tmp / "defs", files)
    return Engines(defs, tmp / "out")


# -- git repositories for the pre-commit and CI tests ----------------------------------------
GIT_IDENTITY = ("-c", "user.name=toolc tests", "-c", "user.email=tests@toolc.invalid",
                "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")


def git(cwd: Path, *args: str) -> str:
    """Run git with a fixed identity (the developer's git config may sign or hook)."""
    proc = subprocess.run(["git", *GIT_IDENTITY, *args], cwd=cwd, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stdout}{proc.stderr}"
    return proc.stdout.strip()


def commit_all(repo: Path, message: str = "snapshot") -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def snapshot_checkout(dst: Path) -> str:
    """A git repository at ``dst`` holding this checkout's working tree as one commit on
    ``main`` (tracked and untracked files, minus ignored ones), so that tests see the code
    under test even before it is committed. Returns the commit."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the working tree is left out
            target = dst / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    git(dst, "init", "-q")
    return commit_all(dst)
