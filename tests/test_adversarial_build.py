"""Adversarial tests of build/: concurrent builds into one output, tampered builds, and the
incremental build cache (a secret or a cache directory that is not the user's own, entries
that would run code).

Concurrency is tested by model checking, not by timing: two builds run in threads whose
every publishing step (``writer.FAULT_HOOK``) pauses until a scheduler lets that build take
its next step. The scheduler enumerates every feasible order of the two builds' steps (a
build waiting for the output lock cannot take a step until the other releases it) and
checks build/ after each step: complete, every file as the manifest lists it, and the old
build or one of the two new ones, never a mix.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from toolc.api import build
from toolc.builds import BuildError, verify_build
from toolc.builds.cache import BuildCache
from toolc.cli import main
from toolc.pipeline import writer

from tests.helpers import write_definitions

# Safety net against a hung scheduler only: no decision below depends on time.
HANG = 120.0


def _defs(tmp: Path, tool: str) -> Path:
    return write_definitions(tmp / f"defs-{tool}", {"d.yaml": {"catalog": [
        {"name": tool, "description": "A tool.", "parameters": {"type": "object"}}]}})


def _state(out: Path) -> str:
    """The build at ``out`` (the sha256 of its manifest) after checking it is complete: every
    listed file has the listed sha256 and no other file is there."""
    manifest_raw = (out / "manifest.json").read_bytes()
    manifest = json.loads(manifest_raw)
    for rel, digest in manifest["files"].items():
        assert hashlib.sha256((out / rel).read_bytes()).hexdigest() == digest, rel
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert on_disk == {*manifest["files"], "manifest.json"}
    return hashlib.sha256(manifest_raw).hexdigest()


# -- a deterministic scheduler of two builds ----------------------------------------------------
@dataclass
class Worker:
    name: str
    run: Callable[[], Any]
    reports: queue.Queue[tuple[str, Any]] = field(default_factory=queue.Queue)
    go: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(0))
    step: str = ""  # the step it is paused at ("" when running or blocked)
    blocked: bool = False  # waiting for the output lock
    holds: bool = False  # between its "locked" and "unlocked" steps
    ended: bool = False
    result: Any = None
    error: BaseException | None = None
    steps: list[str] = field(default_factory=list)


_CURRENT = threading.local()


def _hook(step: str) -> None:
    worker: Worker | None = getattr(_CURRENT, "worker", None)
    if worker is None:
        return
    worker.reports.put(("step", step))
    worker.go.acquire()


def _body(worker: Worker) -> None:
    _CURRENT.worker = worker
    try:
        _hook("start")
        worker.reports.put(("end", worker.run()))
    except BaseException as exc:  # reported to the scheduler, which fails the test
        worker.reports.put(("error", exc))


class Run:
    """One execution of two workers in the order ``choices`` gives, then the first runnable
    worker at every later point. Records, per point, which workers could have moved."""

    def __init__(self, workers: list[Worker], check: Callable[[], None]) -> None:
        self.workers = workers
        self.check = check
        self.trace: list[tuple[str, str]] = []
        self.runnable_sets: list[list[str]] = []
        self.problems: list[str] = []

    def _receive(self, w: Worker) -> None:
        kind, value = w.reports.get(timeout=HANG)
        w.blocked = False
        if kind == "step":
            w.step = value
            w.steps.append(value)
            if value == "locked":
                w.holds = True
            elif value == "unlocked":
                w.holds = False
        else:
            w.ended, w.holds, w.step = True, False, ""
            if kind == "end":
                w.result = value
            else:
                w.error = value
        self.trace.append((w.name, w.step or kind))

    def _runnable(self) -> list[Worker]:
        out = []
        for w in self.workers:
            others_hold = any(o.holds for o in self.workers if o is not w)
            if w.ended or (w.blocked and others_hold):
                continue
            out.append(w)
        return out

    def _advance(self, w: Worker) -> None:
        if not w.blocked:
            w.step = ""
            w.go.release()
        self._receive(w)
        # Steps with nothing observable between them are taken as one: finding the lock busy
        # and starting to wait for it; releasing the lock and returning.
        if w.step == "lock-busy":
            w.step = ""
            w.go.release()
            if any(o.holds for o in self.workers if o is not w):
                w.blocked = True  # in flock until the holder releases
                return
            self._receive(w)
        if w.step == "unlocked":
            w.step = ""
            w.go.release()
            self._receive(w)

    def execute(self, choices: list[str]) -> list[str]:
        threads = [threading.Thread(target=_body, args=(w,), daemon=True) for w in self.workers]
        for t in threads:
            t.start()
        for w in self.workers:
            self._receive(w)  # each pauses at "start"
        taken: list[str] = []
        while True:
            runnable = self._runnable()
            if not runnable:
                break
            names = [w.name for w in runnable]
            pick = choices[len(taken)] if len(taken) < len(choices) else names[0]
            assert pick in names, (pick, names, self.trace)
            self.runnable_sets.append(names)
            taken.append(pick)
            self._advance(next(w for w in runnable if w.name == pick))
            if sum(w.holds for w in self.workers) > 1:
                self.problems.append("both builds hold the output lock")
            try:
                self.check()
            except (AssertionError, OSError, ValueError, KeyError) as exc:
                self.problems.append(f"after {self.trace[-1]}: build/ is broken ({exc!r})")
        for t in threads:
            t.join(HANG)
        assert all(w.ended for w in self.workers), self.trace  # no deadlock
        return taken


def explore(make: Callable[[], tuple[list[Worker], Callable[[], None]]],
            on_leaf: Callable[[list[Worker], Run], None]) -> int:
    """Run every feasible interleaving once (stateless model checking); returns how many."""
    pending: list[list[str]] = [[]]
    leaves = 0
    previous = writer.FAULT_HOOK
    writer.FAULT_HOOK = _hook
    try:
        while pending:
            prefix = pending.pop()
            workers, check = make()
            run = Run(workers, check)
            taken = run.execute(prefix)
            for i in range(len(prefix), len(taken)):
                pending += [[*taken[:i], alt] for alt in run.runnable_sets[i] if alt != taken[i]]
            on_leaf(workers, run)
            leaves += 1
    finally:
        writer.FAULT_HOOK = previous
    return leaves


# -- two builds into one output: every interleaving ---------------------------------------------
@dataclass
class Tally:
    leaves: int = 0
    broken: int = 0
    waited: int = 0


TALLY: dict[str, Tally] = {}


@pytest.mark.parametrize("same", [False, True], ids=["different-definitions", "same-definitions"])
def test_every_interleaving_of_two_builds_leaves_a_complete_build(tmp_path: Path,
                                                                  same: bool) -> None:
    """build/ is the old build or one of the new ones after every step of every order; the
    second build waits for the first, then publishes (or finds build/ up to date)."""
    defs_a = _defs(tmp_path, "write")
    defs_b = defs_a if same else _defs(tmp_path, "edit")
    defs_old = _defs(tmp_path, "read")
    expected = {}  # each build's identity, built alone
    for key, defs in (("old", defs_old), ("A", defs_a), ("B", defs_b)):
        alone = tmp_path / f"alone-{key}" / "build"
        build(defs, alone)
        expected[key] = _state(alone)
    outs: list[Path] = []

    def make() -> tuple[list[Worker], Callable[[], None]]:
        out = tmp_path / f"run{len(outs)}" / "build"
        outs.append(out)
        shutil.copytree(tmp_path / "alone-old" / "build", out)
        workers = [Worker("A", lambda: build(defs_a, out)),
                   Worker("B", lambda: build(defs_b, out))]

        def check() -> None:
            assert _state(out) in expected.values()

        return workers, check

    tally = TALLY.setdefault(f"same={same}", Tally())

    def on_leaf(workers: list[Worker], run: Run) -> None:
        tally.leaves += 1
        problems = list(run.problems)
        problems += [f"build {w.name} failed: {w.error!r}" for w in workers if w.error]
        published = [name for name, step in run.trace if step == "swapped"]
        if not problems and published:
            if _state(outs[-1]) != expected[published[-1]]:
                problems.append("build/ is not the build published last")
            if same and len(published) != 1:
                problems.append("the second build rebuilt what the first had just built")
        if any("lock-busy" in w.steps for w in workers):
            tally.waited += 1
        if problems:
            tally.broken += 1
            failures.append(f"order {run.trace}: {problems}")

    failures: list[str] = []
    leaves = explore(make, on_leaf)
    print(f"\ninterleavings ({'same' if same else 'different'} definitions): {leaves}, "
          f"second build waited in {tally.waited}, broken builds: {tally.broken}")
    assert tally.broken == 0, "\n".join(failures[:5])
    assert leaves == 16  # B tries the lock before A, or at each of A's 7 locked steps; and
    # the same with A and B swapped
    assert tally.waited == 14


# -- the temporary directory is never re-created -------------------------------------------------
def test_a_removed_temporary_directory_fails_the_build_instead_of_publishing_part(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a second build's leftover removal did to a live build before the lock: the
    tree half written is gone; the rest must not be written into a re-created directory
    and swapped in."""
    out = tmp_path / "build"
    build(_defs(tmp_path, "read"), out)
    old = _state(out)

    def remove_tmp(step: str) -> None:
        if step == "writing":
            for tmp in tmp_path.glob(".build.toolc-new-*"):
                shutil.rmtree(tmp)

    monkeypatch.setattr(writer, "FAULT_HOOK", remove_tmp)
    with pytest.raises(writer.PublishError, match="removed or replaced"):
        build(_defs(tmp_path, "write"), out)
    assert _state(out) == old
    assert not list(tmp_path.glob(".build.toolc-new-*"))


# -- real processes ------------------------------------------------------------------------------
def _toolc(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "toolc.cli", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_second_toolc_build_process_waits_or_fails_clearly(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """While this process is inside its build (paused at "written", holding the lock), a
    `toolc build --lock-timeout 0` exits 1 naming the lock, and a plain `toolc build` waits
    (it says so), then finds build/ up to date; nothing is ever half there."""
    defs = _defs(tmp_path, "write")
    out = tmp_path / "build"
    build(_defs(tmp_path, "read"), out)
    seen: dict[str, Any] = {}

    def during(step: str) -> None:
        if step != "written":
            return
        refused = _toolc("build", str(defs), "-o", str(out), "--lock-timeout", "0",
                         cwd=tmp_path)
        seen["refused"] = (refused.wait(HANG), refused.communicate()[1])
        waiting = _toolc("build", str(defs), "-o", str(out), cwd=tmp_path)
        assert waiting.stderr is not None
        seen["waiting_line"] = waiting.stderr.readline()  # blocks until it waits
        seen["waiting"] = waiting

    monkeypatch.setattr(writer, "FAULT_HOOK", during)
    build(defs, out)
    monkeypatch.setattr(writer, "FAULT_HOOK", None)
    code, err = seen["refused"]
    assert code == 1 and "error: another toolc process holds" in err and "Traceback" not in err
    assert "waiting for another toolc process writing" in seen["waiting_line"]
    waiting = seen["waiting"]
    assert waiting.wait(HANG) == 0
    assert "is up to date" in waiting.communicate()[1]
    assert _state(out) == _state(_published(tmp_path, defs))


def _published(tmp: Path, defs: Path) -> Path:
    alone = tmp / "alone" / "build"
    build(defs, alone)
    return alone


# -- tampered builds: refused by diff exactly where the runtime refuses them ---------------------
def _edit_tables(out: Path) -> None:
    tables = out / "toolc_runtime" / "tables.json"
    tables.write_text(tables.read_text().replace('"read"', '"reed"'))


def _fix_manifest(out: Path, rel: str) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"][rel] = hashlib.sha256((out / rel).read_bytes()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest))


def _tables_and_manifest(out: Path) -> None:
    _edit_tables(out)
    _fix_manifest(out, "toolc_runtime/tables.json")


def _extra_module(out: Path) -> None:
    (out / "toolc_runtime" / "_policy_fast.py").write_text("import os\n")


def _extra_pth(out: Path) -> None:
    (out / "toolc_runtime" / "__pycache__").mkdir(exist_ok=True)
    (out / "toolc_runtime" / "__pycache__" / "evil.cpython-312.pyc").write_bytes(b"\0")


def _missing_file(out: Path) -> None:
    (out / "toolc_runtime" / "catalog.json").unlink()


def _manifest_escapes(out: Path) -> None:
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"]["../outside.yaml"] = manifest["files"].pop("sources/d.yaml")
    (out / "manifest.json").write_text(json.dumps(manifest))


def _sources_only(out: Path) -> None:
    (out / "sources" / "d.yaml").write_text("version: 1\n")


# name -> (tamper, what diff says, does the runtime refuse it too)
TAMPERS: dict[str, tuple[Callable[[Path], None], str, bool]] = {
    "tables-edited": (_edit_tables, "tables.json does not match the sha256 in", True),
    "tables-and-manifest-edited": (_tables_and_manifest,
                                   "toolc_runtime/__init__.py and", True),
    "extra-module": (_extra_module, "_policy_fast.py: an executable file that is not part", True),
    "extra-pycache-entry": (_extra_pth, "evil.cpython-312.pyc: an executable file", True),
    "missing-file": (_missing_file, "toolc_runtime/catalog.json: missing", True),
    "manifest-names-a-file-outside": (_manifest_escapes, "not written by toolc", False),
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("pristine")
    out = tmp / "build"
    build(write_definitions(tmp / "defs", {"d.yaml": {"catalog": [
        {"name": "read", "description": "Read.", "parameters": {"type": "object"}},
        {"name": "write", "description": "Write.", "parameters": {"type": "object"}}],
        "agents": {"list": [{"id": "viewer", "tools": {"deny": ["write"]}}]}}}), out)
    return out


def test_diff_reads_only_what_it_compares(tmp_path: Path, pristine: Path) -> None:
    """An edited file under ``sources/`` (which neither diff nor the runtime reads) is no reason to
    refuse a comparison; a reader of it (``toolc.builds.verify_build``, ``explain --build``)
    still refuses it."""
    out = tmp_path / "build"
    shutil.copytree(pristine, out)
    _sources_only(out)
    for args in ([str(pristine), str(out)], [str(out), str(pristine)]):
        result = CliRunner().invoke(main, ["diff", *args])
        assert result.exit_code == 0, result.output
    with pytest.raises(BuildError, match=r"sources/d\.yaml does not match the sha256 in"):
        verify_build(out)


RUNTIME_CHECK = """
import sys
sys.path.insert(0, sys.argv[1])
import toolc_runtime
print(toolc_runtime.resolve(agent_id="viewer").names)
"""


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_tampered_build_is_refused_by_diff(tmp_path: Path, pristine: Path, name: str) -> None:
    tamper, message, runtime_refuses = TAMPERS[name]
    out = tmp_path / "build"
    shutil.copytree(pristine, out)
    ok = CliRunner().invoke(main, ["diff", str(pristine), str(out)])
    assert ok.exit_code == 0, ok.output
    tamper(out)
    for args in ([str(pristine), str(out)], [str(out), str(pristine)]):
        result = CliRunner().invoke(main, ["diff", *args])
        assert result.exit_code == 1, result.output
        assert "refusing to compare this build" in result.stderr
        assert message in result.stderr and "Traceback" not in result.output
    # the runtime refuses the same builds (the one check is shared); a file only the
    # manifest covers is diff's concern alone
    proc = subprocess.run([sys.executable, "-c", RUNTIME_CHECK, str(out)], capture_output=True,
                          text=True, check=False)
    assert (proc.returncode != 0) == runtime_refuses, proc.stderr
    if runtime_refuses:
        assert "DataMismatchError" in proc.stderr, proc.stderr


# -- bytecode planted beside a signed build --------------------------------------------------------
# Python's import system runs ``__pycache__/__init__.<tag>.pyc`` instead of the package's source
# when it is an unchecked-hash file, or a timestamp file whose header names the source's mtime
# and size (which whoever writes the build can set). Every toolc reader accepts such a file only
# when it is exactly what compiling the checked source gives; the loaders never run ``__init__``
# through the import system.
PLANTED = "import pathlib\npathlib.Path({marker!r}).write_text('planted code ran')\n"
TAG = sys.implementation.cache_tag


def _plant_unchecked(init: Path, evil: str) -> None:
    import py_compile  # noqa: PLC0415

    original = init.read_bytes()
    init.write_text(evil)
    py_compile.compile(str(init), cfile=str(init.parent / "__pycache__" / f"__init__.{TAG}.pyc"),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
                       doraise=True)
    init.write_bytes(original)


def _plant_timestamp(init: Path, evil: str) -> None:
    # a timestamp .pyc whose header names the real source's mtime and size: the import system
    # takes it as up to date and runs it
    from importlib import _bootstrap_external  # noqa: PLC0415

    st = init.stat()
    code = compile(evil, str(init), "exec", dont_inherit=True)
    data = _bootstrap_external._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)
    (init.parent / "__pycache__").mkdir(exist_ok=True)
    (init.parent / "__pycache__" / f"__init__.{TAG}.pyc").write_bytes(bytes(data))


PLANTS = {"unchecked-hash": _plant_unchecked, "timestamp": _plant_timestamp}
IMPORT_BY_NAME = "import sys; sys.path.insert(0, sys.argv[1]); import toolc_runtime"


@pytest.fixture(scope="module")
def signed_pristine(tmp_path_factory: pytest.TempPathFactory, pristine: Path
                    ) -> tuple[Path, Path]:
    from toolc.ship import signing  # noqa: PLC0415

    tmp = tmp_path_factory.mktemp("signed")
    out = tmp / "build"
    shutil.copytree(pristine, out)
    keys = signing.keygen(tmp / "keys")
    signing.sign(out, keys.private, revision="r1")
    return out, keys.public


def _import_by_name(out: Path) -> subprocess.CompletedProcess[str]:
    """``import toolc_runtime`` in a new interpreter that writes bytecode, as a gateway does."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.run([sys.executable, "-c", IMPORT_BY_NAME, str(out)], env=env,
                          capture_output=True, text=True, check=False)


def _loaders(out: Path, public: Path) -> dict[str, Callable[[], object]]:
    """Every way toolc loads or vouches for a build, each raising or exiting non-zero when it
    refuses the build."""
    from toolc.api import load_runtime  # noqa: PLC0415
    from toolc.serve.mcp_build import load_runtime_copy  # noqa: PLC0415

    def cli(*args: str) -> Callable[[], object]:
        def run() -> object:
            result = CliRunner().invoke(main, list(args))
            if result.exit_code != 0:
                raise BuildError(result.output)
            return result
        return run

    return {
        "toolc verify --key": cli("verify", str(out), "--key", str(public)),
        "toolc resolve --build": cli("resolve", "--build", str(out), "--agent", "viewer"),
        "toolc diff": cli("diff", str(out), str(out)),
        "toolc.api.load_runtime": lambda: load_runtime(out),
        "serve-mcp's loader": lambda: load_runtime_copy(out),
        "toolc.builds.verify_build": lambda: verify_build(out),
    }


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_planted_bytecode_for_the_runtime_init_never_runs(
        tmp_path: Path, signed_pristine: tuple[Path, Path], plant: str) -> None:
    pristine_signed, public = signed_pristine
    out = tmp_path / "build"
    shutil.copytree(pristine_signed, out)
    marker = tmp_path / "ran"
    PLANTS[plant](out / "toolc_runtime" / "__init__.py", PLANTED.format(marker=str(marker)))
    for name, load in _loaders(out, public).items():
        with pytest.raises(BuildError, match=r"__init__\.[^ ]*\.pyc: bytecode that is not "
                                             r"what this Python compiles"):
            load()
        assert not marker.exists(), f"{name} ran the planted code"
    # the threat, for the record: the import system itself runs it (which `toolc verify`,
    # run before a gateway imports the build, refuses above)
    assert _import_by_name(out).returncode == 0
    assert marker.exists()


def test_a_build_imported_once_still_verifies(tmp_path: Path,
                                              signed_pristine: tuple[Path, Path]) -> None:
    pristine_signed, public = signed_pristine
    out = tmp_path / "build"
    shutil.copytree(pristine_signed, out)
    for _ in range(2):  # the first import writes the .pyc, the second runs it
        proc = _import_by_name(out)
        assert proc.returncode == 0, proc.stderr
    assert (out / "toolc_runtime" / "__pycache__" / f"__init__.{TAG}.pyc").is_file()
    for name, load in _loaders(out, public).items():
        load()  # accepted: the bytecode is exactly the checked source, compiled
        assert name


def test_bytecode_of_a_module_compiled_elsewhere_is_refused(tmp_path: Path,
                                                            pristine: Path) -> None:
    # compileall's output for the build where it lies is accepted; the same file after the
    # source changed under it, or compiled from another path, is not what would run here
    import compileall  # noqa: PLC0415

    out = tmp_path / "build"
    shutil.copytree(pristine, out)
    assert compileall.compile_dir(str(out / "toolc_runtime"), quiet=1)
    verify_build(out)
    moved = tmp_path / "moved"
    shutil.copytree(out, moved)  # every .pyc names the old path
    with pytest.raises(BuildError, match=r"__init__\.[^ ]*\.pyc: bytecode that is not"):
        verify_build(moved)


# -- the incremental build cache: whose secret, whose directory, what an entry may run ----------
# Entries are signed with the user's cache secret; whoever can write that secret can sign
# entries. A planted entry here is a pickle whose loading writes a marker file: it must never
# load, whatever signs it.
class _Planted:
    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        return exec, (f"import pathlib; pathlib.Path({self.marker!r}).write_text('ran')",)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own cache home (XDG_CACHE_HOME): the cache secret is made in it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "toolc"


def _warm(tmp: Path) -> tuple[Path, Path]:
    """(definitions, their cache after one build through it)."""
    defs, cache = _defs(tmp, "read"), tmp / "cache"
    build(defs, tmp / "first", cache=cache)
    return defs, cache


def _plant(cache: Path, secret: bytes, marker: Path) -> dict[str, bytes]:
    """Every entry of ``cache`` replaced by a planted one signed with ``secret`` (through the
    cache's own writer); the entries' bytes by path."""
    signer = BuildCache(cache, b"", secret=secret)
    for entry in [p for p in cache.rglob("*") if p.is_file()]:
        signer.put(entry.name, _Planted(marker))
    return _files(cache)


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _build_cli(defs: Path, out: Path, cache: Path, marker: Path) -> Result:
    result = CliRunner().invoke(main, ["build", str(defs), "-o", str(out), "--cache-dir",
                                       str(cache)])
    assert not marker.exists(), "a planted entry ran"
    assert result.exit_code == 0, result.output  # a cache that is off costs speed, not a build
    assert "Traceback" not in result.output
    return result


def _chown_away(path: Path) -> None:
    os.chown(path, NOBODY, NOBODY, follow_symlinks=False)


def _link_to_a_copy(path: Path) -> None:
    kept = path.with_name(f"{path.name}.kept")
    path.rename(kept)
    path.symlink_to(kept)


NOBODY = 65534
# problem -> (what is done to the user's cache secret, what the warning says)
SECRET_PROBLEMS: dict[str, tuple[Callable[[Path], None], str]] = {
    "another-owner": (_chown_away, "another user's file"),
    "readable-by-others": (lambda p: p.chmod(0o644), "other accounts can read or write it"),
    "a-link": (_link_to_a_copy, "a link"),
}


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's takes root")
@pytest.mark.parametrize("problem", sorted(SECRET_PROBLEMS))
def test_a_cache_secret_that_is_not_the_users_own_is_never_used(
        tmp_path: Path, cache_home: Path, problem: str) -> None:
    """Entries signed with a secret another account wrote, can read or points to are never
    read (the planted code never runs) and none is written: one warning says why."""
    defs, cache = _warm(tmp_path)
    secret = cache_home / "cache-secret"
    marker = tmp_path / "planted-code-ran"
    planted = _plant(cache, secret.read_bytes(), marker)
    spoil, why = SECRET_PROBLEMS[problem]
    spoil(secret)
    result = _build_cli(defs, tmp_path / "out", cache, marker)
    assert f"warning: incremental cache not used: {secret}: {why}" in result.stderr
    assert _files(cache) == planted  # nothing read, nothing written
    assert _state(tmp_path / "out") == _state(tmp_path / "first")


# problem -> (what is done to the cache's directory, what the warning says)
FOLDER_PROBLEMS: dict[str, tuple[Callable[[Path], None], str]] = {
    "another-owner": (_chown_away, "another user's directory"),
    "a-link": (_link_to_a_copy, "a link"),
}


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user's takes root")
@pytest.mark.parametrize("problem", sorted(FOLDER_PROBLEMS))
def test_a_cache_directory_that_is_not_the_users_own_is_never_used(
        tmp_path: Path, cache_home: Path, problem: str) -> None:
    """A --cache-dir that is a link or another user's directory is neither read nor written,
    even when its entries verify under the user's own secret."""
    defs, cache = _warm(tmp_path)
    marker = tmp_path / "planted-code-ran"
    planted = _plant(cache, (cache_home / "cache-secret").read_bytes(), marker)
    spoil, why = FOLDER_PROBLEMS[problem]
    spoil(cache)
    result = _build_cli(defs, tmp_path / "out", cache, marker)
    assert f"warning: incremental cache not used: {cache}: {why}" in result.stderr
    assert _files(cache) == planted
    assert _state(tmp_path / "out") == _state(tmp_path / "first")


def test_an_entry_signed_with_the_users_secret_runs_no_code(tmp_path: Path,
                                                            cache_home: Path) -> None:
    """Entries load only the build's own value classes: one that names anything else (here
    ``exec``) is a miss, recomputed and rewritten, even with a valid signature."""
    defs, cache = _warm(tmp_path)
    marker = tmp_path / "planted-code-ran"
    planted = _plant(cache, (cache_home / "cache-secret").read_bytes(), marker)
    result = _build_cli(defs, tmp_path / "out", cache, marker)
    assert "incremental cache" not in result.stderr
    assert _state(tmp_path / "out") == _state(tmp_path / "first")
    assert set(_files(cache)) == set(planted) and _files(cache) != planted  # rewritten


@pytest.mark.parametrize("kind", ["link", "fifo", "another-owner"])
def test_an_entry_that_is_not_a_file_of_the_users_is_a_miss(
        tmp_path: Path, cache_home: Path, kind: str) -> None:
    """An entry is read only from a regular file of the user's: a link to an entry that
    verifies, a FIFO (which would block the build) or another user's file is a miss."""
    if kind == "another-owner" and os.geteuid() != 0:
        pytest.skip("making a file another user's takes root")
    cache = BuildCache(tmp_path / "cache", b"salt")
    key = cache.key("file", ["x"])
    cache.put(key, "stored")
    entry = next(p for p in (tmp_path / "cache").rglob(key))
    if kind == "link":
        _link_to_a_copy(entry)
    elif kind == "another-owner":
        _chown_away(entry)
    else:
        entry.unlink()
        os.mkfifo(entry)
    got: list[tuple[bool, Any]] = []
    reader = threading.Thread(target=lambda: got.append(cache.get(key)), daemon=True)
    reader.start()
    reader.join(10)
    blocked = reader.is_alive()
    if blocked:  # opening the FIFO: let it go, then fail
        os.close(os.open(entry, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    assert not blocked
    assert got == [(False, None)]
