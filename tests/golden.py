"""Golden case directories: ``tests/cases/<name>/`` holds ``input/`` (definitions), optional
``args`` (extra ``toolc build`` flags), and the expected ``stderr``, ``exit_code`` and, for
cases that build, ``expected/``: the whole output directory except the runtime's static
modules, which are the same in every build and are checked by hash instead (the expected
``manifest.json`` and ``__init__.py`` record the sha256 of each; the loader's body that
``__init__.py`` embeds is stored as one line with its sha256).

Regenerate after an intended change:  ``make golden``  (= ``python -m tests.golden --update``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner
from toolc.cli import main
from toolc.pipeline.render import bootstrap_body
from toolc.runtime import MODULES

CASES = Path(__file__).resolve().parent / "cases"
UPDATE_COMMAND = "make golden"


@dataclass(frozen=True, slots=True)
class Outcome:
    stderr: str
    exit_code: int
    files: dict[str, bytes]  # static modules left out
    static: dict[str, bytes]  # the runtime's static modules (not stored in expected/)


def static_paths(files: dict[str, bytes]) -> set[str]:
    """Paths of the runtime's static modules in a build's file map."""
    if "manifest.json" not in files:
        return set()
    package = json.loads(files["manifest.json"])["package"]
    return {f"{package}/{name}.py" for name in MODULES}


def run_case(case: Path) -> Outcome:
    """Build ``case/input`` from inside the case directory, so paths print as ``input/...``."""
    args = (case / "args").read_text().split() if (case / "args").exists() else []
    old = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(case)
        try:
            # a clean build (no incremental cache beside the case's input)
            result = CliRunner().invoke(main, ["build", "input", "-o", f"{tmp}/out", "--no-cache",
                                               *args])
        finally:
            os.chdir(old)
        out = Path(tmp) / "out"
        files = {p.relative_to(out).as_posix(): p.read_bytes()
                 for p in sorted(out.rglob("*")) if p.is_file()} if out.exists() else {}
    stderr = result.stderr.replace(tmp, "<tmp>")
    static = static_paths(files)
    # the package's own __init__.py (not integrations/__init__.py) embeds the loader
    files = {k: _fold_bootstrap(v) if k.count("/") == 1 and k.endswith("/__init__.py") else v
             for k, v in files.items()}
    return Outcome(stderr=stderr, exit_code=result.exit_code,
                   files={k: v for k, v in files.items() if k not in static},
                   static={k: v for k, v in files.items() if k in static})


def _fold_bootstrap(init: bytes) -> bytes:
    """The generated ``__init__.py`` with the loader's body (static source, the same in every
    build: ``toolc/runtime/bootstrap.py``) replaced by one line naming its sha256, so cases
    keep only what is generated."""
    body = bootstrap_body().encode()
    digest = hashlib.sha256(body).hexdigest()
    assert init.count(body) == 1, "the generated __init__.py embeds the bootstrap body once"
    return init.replace(body, f"# <toolc/runtime/bootstrap.py body, sha256 {digest}>".encode())


def expected(case: Path) -> Outcome:
    exp = case / "expected"
    files = {p.relative_to(exp).as_posix(): p.read_bytes()
             for p in sorted(exp.rglob("*")) if p.is_file()} if exp.exists() else {}
    return Outcome(stderr=(case / "stderr").read_text("utf-8"),
                   exit_code=int((case / "exit_code").read_text()), files=files, static={})


def update(case: Path) -> None:
    outcome = run_case(case)
    (case / "stderr").write_text(outcome.stderr, "utf-8")
    (case / "exit_code").write_text(f"{outcome.exit_code}\n")
    shutil.rmtree(case / "expected", ignore_errors=True)
    for rel, data in outcome.files.items():
        target = case / "expected" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def all_cases() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if (p / "input").is_dir())


if __name__ == "__main__":
    if "--update" not in sys.argv:
        sys.exit(f"usage: python -m tests.golden --update   (regenerates {CASES})")
    for case in all_cases():
        update(case)
        print(f"updated {case.relative_to(CASES.parent.parent)}")
