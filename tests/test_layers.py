"""toolc's imports point down its layers, with no cycle (compiler/__init__.py draws the map).

The layers are an import-linter contract in pyproject.toml, run here with the real
``lint-imports``; the same graph (grimp's) is checked for what a layers contract does not see: a
module cycle inside one layer, an import of the ``toolc`` package itself from inside it, and a
module that no layer names. Each check also runs on tests/layering/layered, a small package that
breaks all of them, and must reject it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

from tests.helpers import ROOT

FIXTURE = ROOT / "tests" / "layering"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(config: Path, *, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    return subprocess.run([str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)


def graph_of(package: str, path: Path | None = None) -> grimp.ImportGraph:
    if path is not None:
        sys.path.insert(0, str(path))
    try:
        return grimp.build_graph(package, cache_dir=None)
    finally:
        if path is not None:
            sys.path.remove(str(path))


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """One cycle per strongly connected group of modules (Tarjan), each as a closed path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in sorted(graph.find_modules_directly_imported_by(node)):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def root_importers(graph: grimp.ImportGraph, root: str) -> set[str]:
    """Modules that import the package itself (its __init__): every one of them runs back up."""
    return graph.find_modules_that_directly_import(root)


def unplaced(graph: grimp.ImportGraph, root: str, layers: list[str]) -> set[str]:
    """The package's direct children that no layer names."""
    named = {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}
    children = {m for m in graph.modules if m.count(".") == root.count(".") + 1}
    return children - named


def contract_layers(config: Path) -> list[str]:
    data = tomllib.loads(config.read_text("utf-8"))
    [contract] = data["tool"]["importlinter"]["contracts"]
    layers: list[str] = contract["layers"]
    return layers


# -- toolc ---------------------------------------------------------------------------------------
def test_toolc_imports_point_down_the_layers() -> None:
    proc = lint_imports(ROOT / "pyproject.toml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 kept, 0 broken" in proc.stdout


def test_toolc_has_no_import_cycle() -> None:
    assert cycles(graph_of("toolc")) == []


def test_nothing_inside_toolc_imports_the_package_itself() -> None:
    # api, render and mcp_server once took __version__ from toolc/__init__, which imports them.
    assert root_importers(graph_of("toolc"), "toolc") == set()


def test_every_toolc_module_sits_in_a_layer() -> None:
    # A new module or package must be placed in the contract, or nothing would hold it.
    layers = contract_layers(ROOT / "pyproject.toml")
    assert unplaced(graph_of("toolc"), "toolc", layers) == set()


def test_reference_interpreter_stands_apart_from_the_stages() -> None:
    graph = graph_of("toolc")
    assert not graph.chain_exists("toolc.semantics.reference", "toolc.api", as_packages=False)
    assert graph.chain_exists("toolc.api", "toolc.semantics.reference", as_packages=False)
    assert not graph.chain_exists("toolc.pipeline.bundles", "toolc.semantics.reference",
                                  as_packages=False)


# -- the negative case: a package that breaks the layering ---------------------------------------
def test_upward_import_is_rejected() -> None:
    proc = lint_imports(FIXTURE / "importlinter.toml", path=FIXTURE)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "0 kept, 1 broken" in proc.stdout
    assert "layered.bottom -> layered.top" in proc.stdout


def test_cycle_and_root_import_are_rejected() -> None:
    graph = graph_of("layered", FIXTURE)
    assert cycles(graph) == [["layered.bottom", "layered.top"]]
    assert root_importers(graph, "layered") == {"layered.middle"}


def test_module_outside_every_layer_is_rejected() -> None:
    graph = graph_of("layered", FIXTURE)
    assert unplaced(graph, "layered", ["layered.top", "layered.bottom"]) == {"layered.middle"}

