"""The integration modules are files of the build like every other: verified before they run,
imported by name through the package's own finder (never from disk), and the runtime's own
import loads no framework."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import import_runtime
from tests.integrations_support import Shipped

MODULES = ("pydantic_ai", "openai_agents", "langchain")
_count = [0]


def _copy(shipped: Shipped, tmp: Path) -> tuple[Path, str]:
    _count[0] += 1
    package = f"toolc_intlayout_{_count[0]}"
    shutil.copytree(shipped.out / "toolc_runtime", tmp / package)
    return tmp / package, package


def test_every_integration_is_listed_and_verified(shipped: Shipped) -> None:
    for name in ("__init__", *MODULES):
        assert f"integrations/{name}.py" in shipped.rt.FILE_SHA256
    for name in MODULES:
        module = shipped.integration(name)
        assert module.__file__.endswith(f"integrations/{name}.py")
        assert module.__spec__.loader.__class__.__name__ == "_VerifiedLoader"


def test_a_tampered_integration_is_refused_on_import(shipped: Shipped, tmp_path: Path) -> None:
    folder, package = _copy(shipped, tmp_path)
    target = folder / "integrations" / "langchain.py"
    target.write_text(target.read_text() + "\nRAN = True\n")
    import_runtime(tmp_path, package)
    with pytest.raises(RuntimeError, match="does not match this runtime"):
        importlib.import_module(f"{package}.integrations.langchain")


def test_an_extra_module_beside_the_integrations_is_refused(shipped: Shipped,
                                                            tmp_path: Path) -> None:
    folder, package = _copy(shipped, tmp_path)
    (folder / "integrations" / "crewai.py").write_text("RAN = True\n")
    with pytest.raises(RuntimeError, match=r"integrations/crewai\.py: an executable file"):
        import_runtime(tmp_path, package)


def test_the_runtime_imports_no_framework(shipped: Shipped) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import toolc_runtime as rt;"
            "rt.wrap(rt.resolve(agent_id='coder'), {}, validate=False);"
            "print(sorted(m for m in ('pydantic_ai', 'agents', 'langchain', 'langgraph')"
            " if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code, str(shipped.out)], capture_output=True,
                          text=True, check=True)
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize(("name", "entry"), [("pydantic_ai", "toolset"),
                                             ("openai_agents", "function_tools"),
                                             ("langchain", "middleware")])
def test_an_entry_point_refuses_a_keyword_wrap_does_not_take(shipped: Shipped, name: str,
                                                             entry: str) -> None:
    # wrap's keywords pass through as one typed value: a misspelt one is refused when the
    # framework object is made, as a signature spelling them out would refuse it
    make = getattr(shipped.integration(name), entry)
    with pytest.raises(TypeError, match="'hook'"):
        make({}, context=lambda _: {"agent_id": "coder"}, hook=None)
    assert make({}, context=lambda _: {"agent_id": "coder"}, hooks=None, validate=False) \
        is not None
