"""The runtime as real modules: copied verbatim, verified before they run, executed from the
checked bytes (never through the import system or a ``__pycache__``), loaded on first use."""

from __future__ import annotations

import ast
import compileall
import importlib
import py_compile
import shutil
import sys
import threading
from pathlib import Path
from types import ModuleType

import pytest
from toolc.runtime import EAGER_THROUGH, EXPORTS, MODULES

from tests.helpers import ROOT, import_runtime
from tests.test_shipped import BUILD

SOURCE = ROOT / "compiler" / "runtime"
_count = [0]


def _fresh_copy(tmp: Path) -> tuple[Path, str]:
    """A copy of the shipped build under a package name of its own."""
    _count[0] += 1
    package = f"toolc_layout_{_count[0]}"
    shutil.copytree(BUILD / "toolc_runtime", tmp / package)
    return tmp / package, package


def _import(tmp: Path, package: str) -> ModuleType:
    return import_runtime(tmp, package)


def test_static_modules_are_copied_verbatim() -> None:
    for name in MODULES:
        built = (BUILD / "toolc_runtime" / f"{name}.py").read_bytes()
        assert built == (SOURCE / f"{name}.py").read_bytes(), name


def test_modules_import_only_earlier_modules() -> None:
    for position, name in enumerate(MODULES):
        tree = ast.parse((SOURCE / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                assert node.module in MODULES[:position], f"{name} imports {node.module}"


def test_every_export_exists_in_its_module() -> None:
    rt = import_runtime(BUILD, "toolc_runtime")
    for names in EXPORTS.values():
        for name in names:
            assert getattr(rt, name) is not None
            assert name in rt.__all__ and name in dir(rt)


def test_tampered_eager_module_is_refused_at_import(tmp_path: Path) -> None:
    copy, package = _fresh_copy(tmp_path)
    policy = copy / "_policy.py"
    policy.write_text(policy.read_text().replace("_MEMO_LIMIT: Final = 65536", "_MEMO_LIMIT = 1"))
    with pytest.raises(RuntimeError, match=r"_policy\.py does not match this runtime"):
        _import(tmp_path, package)


def test_tampered_lazy_module_is_refused_on_first_use(tmp_path: Path) -> None:
    copy, package = _fresh_copy(tmp_path)
    rt = _import(tmp_path, package)
    (copy / "_bundles.py").write_text("raise SystemExit('replaced')\n")
    with pytest.raises(rt.DataMismatchError, match=r"_bundles\.py"):
        rt.tool_definitions(rt.resolve(), "openai")


def test_lazy_modules_load_on_first_use_only(tmp_path: Path) -> None:
    _, package = _fresh_copy(tmp_path)
    rt = _import(tmp_path, package)
    eager = MODULES[: MODULES.index(EAGER_THROUGH) + 1]
    loaded = {m.rpartition(".")[2] for m in sys.modules if m.startswith(f"{package}.")}
    assert loaded == set(eager)
    assert rt.dialect_for("anthropic") == "anthropic"
    assert f"{package}._bundles" in sys.modules


def test_a_stale_pycache_never_runs(tmp_path: Path) -> None:
    # An unchecked-hash .pyc is used by the import system without looking at the source:
    # here it holds code that would replace resolve(), then the source is put back. The
    # runtime never runs its modules through the import system, and it refuses bytecode
    # beside them that is not their checked source compiled.
    copy, package = _fresh_copy(tmp_path)
    policy = copy / "_policy.py"
    original = policy.read_bytes()
    policy.write_text("def resolve(**_: object) -> str:\n    return 'pwned'\n")
    unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
    assert compileall.compile_file(str(policy), quiet=1, invalidation_mode=unchecked)
    policy.write_bytes(original)
    assert list((copy / "__pycache__").glob("_policy.*.pyc"))
    with pytest.raises(RuntimeError, match=r"_policy\.[^ ]*\.pyc: bytecode that is not what"):
        _import(tmp_path, package)
    # the same kind of file compiled from the checked source is what would run anyway
    assert compileall.compile_file(str(policy), quiet=1, invalidation_mode=unchecked, force=True)
    rt = _import(tmp_path, package)
    assert rt.resolve().names  # the verified source ran
    assert importlib.import_module(f"{package}._policy").resolve is rt.resolve


def test_private_modules_never_load_from_disk(tmp_path: Path) -> None:
    # Imports by name go through the package's own finder (the integrations need it): a
    # module of the build comes from its verified bytes, any other file is not found.
    copy, package = _fresh_copy(tmp_path)
    rt = _import(tmp_path, package)
    assert rt.__path__ == []
    (copy / "_extra.py").write_text("X = 1\n")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{package}._extra")
    bundles = copy / "_bundles.py"
    original = bundles.read_bytes()
    bundles.write_text("raise SystemExit('replaced')\n")
    with pytest.raises(rt.DataMismatchError, match=r"_bundles\.py"):
        importlib.import_module(f"{package}._bundles")  # not loaded yet: checked, refused
    bundles.write_bytes(original)
    assert importlib.import_module(f"{package}._bundles").decode_call is rt.decode_call


def test_concurrent_first_use_runs_a_module_once(tmp_path: Path) -> None:
    copy, package = _fresh_copy(tmp_path)
    rt = _import(tmp_path, package)
    results: list[object] = []
    barrier = threading.Barrier(8)

    def first_use() -> None:
        barrier.wait()
        results.append(rt.decode_call)

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(r) for r in results}) == 1
    assert (copy / "_bundles.py").exists()
