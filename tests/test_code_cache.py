"""The runtime's code cache (``bootstrap``): the static modules' code objects kept per user,
each entry signed with an HMAC under that user's secret. What is checked: a second import
runs cached code; the source is still read and checked first; a planted, tampered or foreign
entry, a secret that is not the user's own, a FIFO or a link never runs and never blocks;
a cache that cannot be written costs only the compile."""

from __future__ import annotations

import builtins
import hashlib
import hmac
import marshal
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from toolc.api import compile_files
from toolc.pipeline.writer import publish

from tests.helpers import ROOT, import_runtime

_count = [0]
PLANTED = "import builtins\nbuiltins.TOOLC_PLANTED = True\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("code-cache") / "build"
    files, _, _ = compile_files(ROOT / "definitions", package="toolc_cc")
    publish(files, out)
    return out / "toolc_cc"


@pytest.fixture(autouse=True)
def _no_planted_code_left() -> Iterator[None]:
    yield
    if hasattr(builtins, "TOOLC_PLANTED"):  # a failure must not leak into the next test
        del builtins.TOOLC_PLANTED


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache home of this test's own (XDG_CACHE_HOME)."""
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.delenv("TOOLC_CODE_CACHE", raising=False)
    return xdg / "toolc"


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The file names compile() is called with, from here on."""
    calls: list[str] = []
    real: Callable[..., Any] = builtins.compile

    def counting(source: Any, filename: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(os.path.basename(str(filename)))
        return real(source, filename, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", counting)
    yield calls


def _import(built: Path, tmp: Path) -> ModuleType:
    """A copy of the build under a package name of its own, imported."""
    _count[0] += 1
    package = f"toolc_cc_{_count[0]}"
    root = tmp / f"copy{_count[0]}"
    shutil.copytree(built, root / package)
    return import_runtime(root, package)


def _entry(home: Path, rt: ModuleType, name: str) -> Path:
    return home / "runtime-code" / rt._code_key(rt.FILE_SHA256[name])


def _sign(secret: bytes, key: str, payload: bytes) -> bytes:
    return hmac.digest(secret, key.encode() + b"\0" + payload, "sha256") + payload


def _planted_code() -> bytes:
    return marshal.dumps(compile(PLANTED, "_errors.py", "exec"))


def _static(calls: list[str]) -> list[str]:
    return sorted(c for c in calls if c in ("_errors.py", "_params.py", "_policy.py"))


def test_a_second_import_runs_cached_code(built: Path, tmp_path: Path, home: Path,
                                          compiled: list[str]) -> None:
    first = _import(built, tmp_path)
    assert _static(compiled) == ["_errors.py", "_params.py", "_policy.py"]
    assert (home / "runtime-secret").stat().st_mode & 0o777 == 0o600
    assert _entry(home, first, "_policy.py").is_file()
    compiled.clear()
    second = _import(built, tmp_path)
    assert _static(compiled) == []
    assert second.resolve(agent_id="main").names == first.resolve(agent_id="main").names
    # the code names the file that was checked, not the build that filled the cache
    code = second.resolve.__code__
    assert code.co_filename == os.path.join(os.path.dirname(second.__file__), "_policy.py")


def test_an_edited_module_is_refused_even_with_its_code_cached(built: Path, tmp_path: Path,
                                                               home: Path) -> None:
    _import(built, tmp_path)
    _count[0] += 1
    package = f"toolc_cc_{_count[0]}"
    root = tmp_path / "edited"
    shutil.copytree(built, root / package)
    policy = root / package / "_policy.py"
    policy.write_bytes(policy.read_bytes() + b"\n# edited\n")
    with pytest.raises(RuntimeError, match=r"_policy\.py does not match"):
        import_runtime(root, package)


@pytest.mark.parametrize("kind", ["unsigned", "another secret", "tampered", "truncated"])
def test_an_entry_that_does_not_verify_never_runs(built: Path, tmp_path: Path, home: Path,
                                                  compiled: list[str], kind: str) -> None:
    rt = _import(built, tmp_path)
    entry = _entry(home, rt, "_errors.py")
    key = entry.name
    if kind == "unsigned":
        entry.write_bytes(b"\0" * 32 + _planted_code())
    elif kind == "another secret":
        entry.write_bytes(_sign(b"x" * 32, key, _planted_code()))
    elif kind == "tampered":
        raw = bytearray(entry.read_bytes())
        raw[-1] ^= 1
        entry.write_bytes(bytes(raw))
    else:
        entry.write_bytes(entry.read_bytes()[:40])
    compiled.clear()
    again = _import(built, tmp_path)
    assert not hasattr(builtins, "TOOLC_PLANTED")
    assert "_errors.py" in compiled  # compiled from the checked source instead
    assert again.ToolError.__module__.endswith("._errors")
    secret = (home / "runtime-secret").read_bytes()
    payload = entry.read_bytes()[32:]
    assert entry.read_bytes() == _sign(secret, key, payload)  # rewritten, valid again


def test_an_entry_signed_with_the_users_secret_runs(built: Path, tmp_path: Path,
                                                    home: Path) -> None:
    """The check that refuses the others: the same planted code, signed, would run."""
    rt = _import(built, tmp_path)
    entry = _entry(home, rt, "_errors.py")
    secret = (home / "runtime-secret").read_bytes()
    entry.write_bytes(_sign(secret, entry.name, _planted_code()))
    with pytest.raises(ImportError):  # the planted module defines none of _errors' names
        _import(built, tmp_path)
    assert getattr(builtins, "TOOLC_PLANTED", False)


@pytest.mark.parametrize("problem", ["readable by others", "another owner", "a link",
                                     "short"])
def test_a_secret_that_is_not_the_users_own_turns_the_cache_off(
        built: Path, tmp_path: Path, home: Path, compiled: list[str],
        monkeypatch: pytest.MonkeyPatch, problem: str) -> None:
    rt = _import(built, tmp_path)
    secret_file = home / "runtime-secret"
    entry = _entry(home, rt, "_errors.py")
    secret = secret_file.read_bytes()
    entry.write_bytes(_sign(secret, entry.name, _planted_code()))  # runs if the secret is used
    if problem == "readable by others":
        secret_file.chmod(0o644)
    elif problem == "another owner":
        uid = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: uid + 1)
    elif problem == "a link":
        kept = tmp_path / "secret"
        secret_file.rename(kept)
        secret_file.symlink_to(kept)
    else:
        secret_file.write_bytes(secret[:16])
        secret_file.chmod(0o600)
    compiled.clear()
    _import(built, tmp_path)
    assert not hasattr(builtins, "TOOLC_PLANTED")
    assert _static(compiled) == ["_errors.py", "_params.py", "_policy.py"]


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_special_file_as_an_entry_is_refused_without_blocking(
        built: Path, tmp_path: Path, home: Path, compiled: list[str], kind: str) -> None:
    rt = _import(built, tmp_path)
    entry = _entry(home, rt, "_errors.py")
    secret = (home / "runtime-secret").read_bytes()
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)  # a blocking open would hang the import here
    else:
        target = tmp_path / "target"
        target.write_bytes(_sign(secret, entry.name, _planted_code()))
        entry.symlink_to(target)
    compiled.clear()
    _import(built, tmp_path)
    assert not hasattr(builtins, "TOOLC_PLANTED")
    assert "_errors.py" in compiled


def test_a_cache_that_cannot_be_written_costs_only_the_compile(
        built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        compiled: list[str]) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "xdg"))  # no directory can be made
    for _ in range(2):
        compiled.clear()
        rt = _import(built, tmp_path)
        assert _static(compiled) == ["_errors.py", "_params.py", "_policy.py"]
        assert rt.resolve(agent_id="main").names


def test_entries_that_cannot_be_written_leave_the_secret_unused(
        built: Path, tmp_path: Path, home: Path, compiled: list[str]) -> None:
    home.mkdir(parents=True)
    (home / "runtime-code").write_text("")  # a file where the entries' directory would be
    for _ in range(2):
        compiled.clear()
        _import(built, tmp_path)
        assert _static(compiled) == ["_errors.py", "_params.py", "_policy.py"]


def test_toolc_code_cache_off_writes_nothing(built: Path, tmp_path: Path, home: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             compiled: list[str]) -> None:
    monkeypatch.setenv("TOOLC_CODE_CACHE", "off")
    for _ in range(2):
        compiled.clear()
        _import(built, tmp_path)
        assert _static(compiled) == ["_errors.py", "_params.py", "_policy.py"]
    assert not home.exists()


def test_the_key_names_the_source_and_the_interpreter(built: Path, tmp_path: Path,
                                                      home: Path) -> None:
    rt = _import(built, tmp_path)
    digest = rt.FILE_SHA256["_policy.py"]
    assert rt._code_key(digest) != rt._code_key(hashlib.sha256(b"other").hexdigest())
    assert len({rt._code_key(d) for d in rt.FILE_SHA256.values()}) == len(rt.FILE_SHA256)
