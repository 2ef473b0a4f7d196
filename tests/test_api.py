"""``toolc.api`` is the one public Python API: what the CLI prints comes from it as typed values,
and the CLI (``toolc.cli``, a package of command families) imports nothing else of toolc."""

from __future__ import annotations

import inspect
import shutil
from importlib.metadata import entry_points
from pathlib import Path

import grimp
import pytest
from click.testing import CliRunner
from toolc import api
from toolc.cli import main

from tests.helpers import write_definitions
from tests.test_cli import CATALOG, POLICY


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("api")
    write_definitions(root / "definitions", {"catalog.yaml": CATALOG, "policy.yaml": POLICY})
    api.build(root / "definitions", root / "build")
    return root


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout


# -- the API answers what the CLI prints ------------------------------------------------------
def test_resolve_from_the_build_and_from_the_definitions(project: Path) -> None:
    context = {"agent_id": "viewer"}
    defs = project / "definitions"
    compiled = api.resolve(project / "build", context, definitions=defs, engine="compiled")
    reference = api.resolve(context=context, definitions=defs)
    assert compiled.names == reference.names == ("read", "message")
    assert (compiled.source.kind, reference.source.kind) == ("build", "definitions")
    assert compiled.source.current is True and compiled.warnings == ()
    code, out = cli("resolve", "--build", str(project / "build"), "--agent", "viewer")
    assert code == 0 and tuple(out.split()) == compiled.names


def test_resolve_without_a_build_says_how_to_make_one(project: Path, tmp_path: Path) -> None:
    missing = tmp_path / "build"
    defs = project / "definitions"
    with pytest.raises(api.BuildError, match=r"toolc build .* first, or answer from the "):
        api.resolve(missing, {"agent_id": "viewer"}, definitions=defs, engine="compiled")
    source = api.resolve_source(missing, defs, "compiled")
    assert source.describe().endswith("(no toolc build there)")


def test_resolve_warns_about_an_undeclared_agent(project: Path) -> None:
    result = api.resolve(project / "build", {"agent_id": "nobody"})
    assert len(result.warnings) == 1 and "nobody" in result.warnings[0]


def test_explain_returns_the_layers_and_cross_checks_the_build(project: Path) -> None:
    context = {"agent_id": "viewer"}
    from_build = api.explain("exec", context, build_dir=project / "build")
    from_defs = api.explain("Exec", context, definitions=project / "definitions")
    assert from_build.visible is False and from_build.explanation.decided_by == "agent"
    assert [(r.layer, r.result) for r in from_defs.explanation.rows] == [
        (r.layer, r.result) for r in from_build.explanation.rows]
    assert from_build.source.kind == "build" and from_defs.source.kind == "definitions"
    code, _ = cli("explain", "--build", str(project / "build"), "--agent", "viewer", "exec")
    assert code == 1


def test_explain_refuses_an_unknown_tool_and_two_sources(project: Path) -> None:
    with pytest.raises(api.UnknownToolError, match="nosuchtool"):
        api.explain("nosuchtool", definitions=project / "definitions")
    with pytest.raises(ValueError, match="not both"):
        api.explain("read", build_dir=project / "build", definitions=project / "definitions")


def test_schema_picks_the_dialect_as_the_runtime_does(project: Path) -> None:
    for kwargs in ({"definitions": project / "definitions"}, {"build_dir": project / "build"}):
        schemas = api.load_schemas(**kwargs)
        assert schemas.dialect_for("google") == ("gemini", 'providers.entries."google"')
        assert schemas.dialect_for("openai", "gpt-5-strict")[0] == "openai-strict"
        found = api.schema("READ", provider="google", **kwargs)
        assert (found.tool, found.dialect) == ("read", "gemini")
    with pytest.raises(api.UnknownToolError, match="did you mean"):
        schemas.tool("raed", "openai")


def test_diff_and_check_build_between_two_revisions(project: Path, tmp_path: Path) -> None:
    head = tmp_path / "definitions"
    shutil.copytree(project / "definitions", head)
    policy = head / "policy.yaml"
    text = policy.read_text("utf-8").replace("allow: [read, message]", "allow: [read, exec]")
    policy.write_text(text.replace("        deny: [exec]\n", ""), "utf-8")
    result = api.diff(str(project / "definitions"), str(head))
    assert result.access_changed and result.widened
    assert [c.tool for c in result.changes] == ["exec", "message"]  # viewer: +exec, -message
    assert '"exec"' in api.render_diff(result, "json")
    assert api.check_build(project / "definitions", project / "build").stale == ()
    assert "manifest.json" in api.check_build(head, project / "build").stale


def test_init_writes_the_starter_and_refuses_to_overwrite(tmp_path: Path) -> None:
    defs = tmp_path / "definitions"
    first = api.init(defs)
    assert "policy.yaml" in first.written and first.replaced == ()
    with pytest.raises(api.ProjectWriteError):
        api.init(defs)
    assert api.init(defs, force=True).replaced == first.written
    assert api.validate(defs) == []


# -- the API is documented, the CLI only parses and prints ------------------------------------
def test_every_public_name_exists_and_every_entry_point_has_a_docstring() -> None:
    for name in api.__all__:
        obj = getattr(api, name)
        defined_here = getattr(obj, "__module__", "").startswith(("toolc.api", "toolc.builds"))
        if defined_here and (inspect.isfunction(obj) or inspect.isclass(obj)):
            doc = inspect.getdoc(obj) or ""
            assert doc and not doc.startswith(f"{name}("), f"toolc.api.{name} has no docstring"


def test_the_cli_imports_nothing_of_toolc_but_the_api() -> None:
    # Click options need the context keys and the dialect names; every answer is the API's.
    allowed = {"toolc.api", "toolc.rules.context", "toolc.schema"}
    graph = grimp.build_graph("toolc", cache_dir=None)
    cli_modules = {m for m in graph.modules if m == "toolc.cli" or m.startswith("toolc.cli.")}
    imported = {dep for m in cli_modules for dep in graph.find_modules_directly_imported_by(m)}
    assert imported - cli_modules - allowed == set()


def test_the_console_script_is_the_click_group() -> None:
    [script] = entry_points(group="console_scripts", name="toolc")
    assert script.value == "toolc.cli:main" and script.load() is main
    assert {"build", "validate", "resolve", "explain", "route", "schema", "diff", "init",
            "import-openclaw", "migrate", "schema-path", "serve-mcp", "identity",
            "import-mcp", "keygen", "sign", "verify", "push", "pull",
            "report"} == set(main.commands)
