"""Writing build/: never delete what toolc does not own, always a complete build on disk,
modes that follow the umask, and a package name that imports."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from toolc.api import build, check_package_name, compile_files
from toolc.cli import main
from toolc.pipeline import writer
from toolc.pipeline.writer import OutputDirError, publish

from tests.helpers import ROOT, write_definitions

DEFS = {"d.yaml": {"catalog": [{"name": "read", "description": "Read a file.",
                                "parameters": {"type": "object"}}]}}
STEPS = ("locked", "leftovers-removed", "tmp-created", "writing", "written", "swapped", "done",
         "unlocked")


def _complete(out: Path) -> str:
    """The build's identity (a file's sha256) after checking every listed file."""
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest, rel
    return str(manifest["files"]["toolc_runtime/tables.json"])


def _files(tmp: Path, tool: str = "read") -> dict[str, str]:
    data = {"d.yaml": {"catalog": [{"name": tool, "description": "A tool.",
                                    "parameters": {"type": "object"}}]}}
    defs = write_definitions(tmp / f"defs-{tool}", data)
    return compile_files(defs, with_models=False)[0]


def _leftovers(out: Path) -> list[str]:
    """Hidden siblings of ``out``, but its lock file (created once, never deleted)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")
                  and p.name != f".{out.name}.toolc-lock")


# -- 1: refuse outputs toolc does not own -------------------------------------------------------
@pytest.mark.parametrize("target", [".", "defs", "notes.txt", "..", "keep", "defs/.."])
def test_refuses_outputs_it_does_not_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         target: str) -> None:
    work = tmp_path / "work"
    write_definitions(work / "defs", DEFS)
    (work / "notes.txt").write_text("mine\n")
    (work / "keep").mkdir()
    (work / "keep" / "thesis.tex").write_text("years of work\n")
    monkeypatch.chdir(work)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for force in ([], ["--force"]):
        result = CliRunner().invoke(main, ["build", "defs", "-o", target, *force])
        assert result.exit_code == 1, result.output
        assert "error: output" in result.stderr and "Traceback" not in result.output
    with pytest.raises(OutputDirError):
        build("defs", target, force=True)
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert (work / "notes.txt").read_text() == "mine\n"


def test_replaces_a_previous_build_and_accepts_an_empty_dir(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    write_definitions(tmp_path / "defs", DEFS)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    assert CliRunner().invoke(main, ["build", "defs", "-o", "empty"]).exit_code == 0
    assert CliRunner().invoke(main, ["build", "defs", "-o", "empty", "--force"]).exit_code == 0
    assert CliRunner().invoke(main, ["build", "defs", "-o", "new/out"]).exit_code == 0
    _complete(tmp_path / "empty")
    _complete(tmp_path / "new" / "out")


# -- 2: a complete build at every instant ------------------------------------------------------
@pytest.mark.parametrize("step", STEPS)
def test_fault_at_each_publishing_step_leaves_a_complete_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    out = tmp_path / "build"
    old, new = _files(tmp_path, "read"), _files(tmp_path, "write")
    publish(old, out)
    old_id = _complete(out)

    def fail(at: str) -> None:
        if at == step:
            raise RuntimeError(f"injected at {at}")

    monkeypatch.setattr(writer, "FAULT_HOOK", fail)
    with pytest.raises(RuntimeError, match="injected"):
        publish(new, out)
    assert _complete(out) in (old_id, _complete_of(tmp_path, new))
    assert _leftovers(out) == []  # an exception cleans up after itself
    monkeypatch.setattr(writer, "FAULT_HOOK", None)
    publish(new, out)
    assert _complete(out) == _complete_of(tmp_path, new)


def _complete_of(tmp: Path, files: dict[str, str]) -> str:
    manifest = json.loads(files["manifest.json"])
    return str(manifest["files"]["toolc_runtime/tables.json"])


KILLER = """
import os, signal, sys
from toolc.pipeline import writer
from toolc.api import compile_files
from pathlib import Path
files = compile_files(Path(sys.argv[1]), with_models=False)[0]
def kill(at):
    if at == sys.argv[3]:
        os.kill(os.getpid(), signal.SIGKILL)
writer.FAULT_HOOK = kill
writer.publish(files, Path(sys.argv[2]))
"""


@pytest.mark.parametrize("step", STEPS)
def test_sigkill_at_each_step_then_the_next_build_cleans_up(tmp_path: Path, step: str) -> None:
    out = tmp_path / "build"
    publish(_files(tmp_path, "read"), out)
    old_id = _complete(out)
    defs = write_definitions(tmp_path / "defs-new", {"d.yaml": {"catalog": [
        {"name": "edit", "description": "Edit.", "parameters": {"type": "object"}}]}})
    new_id = _complete_of(tmp_path, compile_files(defs, with_models=False)[0])
    proc = subprocess.run([sys.executable, "-c", KILLER, str(defs), str(out), step],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    before_swap = ("locked", "leftovers-removed", "tmp-created", "writing", "written")
    assert _complete(out) == (old_id if step in before_swap else new_id)
    if step in ("tmp-created", "writing", "written", "swapped"):
        assert _leftovers(out)  # a killed build leaves its hidden sibling behind...
    publish(_files(tmp_path, "process"), out)
    assert _leftovers(out) == []  # ...which the next build removes


def test_a_reader_never_sees_the_build_missing(tmp_path: Path) -> None:
    out = tmp_path / "build"
    builds = [_files(tmp_path, name) for name in ("read", "write")]
    publish(builds[0], out)
    stop = threading.Event()
    missing: list[int] = [0]
    reads: list[int] = [0]

    def poll() -> None:
        while not stop.is_set():
            try:
                json.loads((out / "manifest.json").read_text("utf-8"))
            except (OSError, ValueError):
                missing[0] += 1
            reads[0] += 1

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for i in range(20):
            publish(builds[i % 2], out)
    finally:
        stop.set()
        reader.join()
    assert reads[0] > 0 and missing[0] == 0


def test_unrelated_hidden_siblings_survive(tmp_path: Path) -> None:
    out = tmp_path / "build"
    for name in (".build.backup", ".build.toolc-mine", ".other.toolc-new-1"):
        (tmp_path / name).mkdir()
    publish(_files(tmp_path), out)
    assert _leftovers(out) == [".build.backup", ".build.toolc-mine"]
    assert (tmp_path / ".other.toolc-new-1").is_dir()


# -- 3: modes follow the umask ------------------------------------------------------------------
@pytest.mark.parametrize(("umask", "dirs", "files"), [(0o022, 0o755, 0o644), (0o027, 0o750,
                                                                                 0o640)])
def test_modes_follow_the_umask(tmp_path: Path, umask: int, dirs: int, files: int) -> None:
    old = os.umask(umask)
    try:
        out = tmp_path / "build"
        publish(_files(tmp_path), out)
        publish(_files(tmp_path, "write"), out)  # a rebuild too
    finally:
        os.umask(old)
    for path in [out, *out.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (dirs if path.is_dir() else files), (path, oct(mode))


# -- 13: package names that import and do not shadow the standard library -----------------------
@pytest.mark.parametrize("name", ["class", "json", "os", "paquête", "1abc", "a-b", "None"])
def test_bad_package_names_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       name: str) -> None:
    write_definitions(tmp_path / "defs", DEFS)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["build", "defs", "-o", "out", "--package-name", name])
    assert result.exit_code == 2 and "--package-name" in result.output
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="package name"):
        check_package_name(name)


def test_a_good_package_name_builds_an_importable_package(tmp_path: Path) -> None:
    write_definitions(tmp_path / "defs", DEFS)
    build(tmp_path / "defs", tmp_path / "out", package_name="gateway_tools")
    proc = subprocess.run([sys.executable, "-c", "import gateway_tools as g; "
                           "print(g.resolve().names)"], cwd=tmp_path / "out",
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "read" in proc.stdout, proc.stderr


def test_shipped_build_dir_is_a_toolc_build() -> None:
    assert writer.is_toolc_build(ROOT / "build")
    assert not writer.is_toolc_build(ROOT / "definitions")


def test_a_failing_check_before_the_swap_leaves_the_old_build(tmp_path: Path) -> None:
    """``publish(check=...)`` (toolc pull's verification) sees the complete new directory
    and can stop the swap: the old build stays, no leftovers; bytes are written as given."""
    out = tmp_path / "out"
    old = _files(tmp_path, "read")
    publish(old, out)
    seen: list[set[str]] = []

    def refuse(tmp: Path) -> None:
        seen.append({p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()})
        raise ValueError("not signed")

    new = {**_files(tmp_path, "write"), "blob.bin": b"\xff\x00"}
    with pytest.raises(ValueError, match="not signed"):
        publish(new, out, check=refuse)
    assert seen == [set(new)]
    assert (out / "manifest.json").read_text() == old["manifest.json"]
    assert _leftovers(out) == []
    publish(new, out, check=lambda tmp: None)
    assert (out / "blob.bin").read_bytes() == b"\xff\x00"
