"""The ``toolc`` command line: build, validate, resolve, explain, schema.

Exit codes: 0 ok; 1 errors in the definitions (or a stale build under --check); 2 usage
errors; 4 internal failure (a bug in toolc: please report it with the traceback it prints).
``toolc diff`` has its own: 0 no access change, 2 access changed, 3 widened under
``--fail-on widen``, 1 errors.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import click

from .api import build as api_build
from .api import check_package_name, resolve_definitions, stamped_files
from .api import validate as api_validate
from .bundles import build_bundles
from .context import CONTEXT_KEYS
from .diagnostics import DefinitionsError, Diagnostic, Diagnostics
from .diff import DiffInputError, compute_diff, load_side, render_diff, side_from_revision
from .reference import ReferenceInterpreter
from .render import DEFAULT_PACKAGE
from .schema import DIALECTS
from .writer import OutputDirError, check_output_dir, diff_disk

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 4
EXIT_CHANGED, EXIT_WIDENED = 2, 3  # toolc diff
F = TypeVar("F", bound=Callable[..., Any])


def _print_diagnostics(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
    for d in diagnostics:
        click.echo(d.render(), err=True)
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    if diagnostics:
        click.echo(f"{errors} error(s), {warnings} warning(s)", err=True)


def _guard(fn: F) -> F:
    """Input errors exit 1 with diagnostics; anything unexpected exits 3, never silently."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DefinitionsError as exc:
            _print_diagnostics(exc.diagnostics)
            sys.exit(EXIT_INPUT)
        except DiffInputError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(EXIT_INPUT)
        except click.exceptions.Exit:
            raise
        except (click.ClickException, SystemExit):
            raise
        except Exception:
            click.echo("toolc: internal error (this is a bug in toolc):", err=True)
            click.echo(traceback.format_exc(), err=True)
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolc")
def main() -> None:
    """Compile LLM-agent tool policies ahead of time."""


@main.command()
@click.argument("defs", default="definitions", type=click.Path(path_type=Path))
@click.option("-o", "--out", default="build", type=click.Path(path_type=Path),
              help="Output directory (replaced atomically).")
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--package-name", default=DEFAULT_PACKAGE, show_default=True,
              help="Name of the generated runtime package.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when OUT is stale.")
@click.option("--force", is_flag=True,
              help="Rebuild even when inputs are unchanged (never overrides the OUT checks).")
@_guard
def build(defs: Path, out: Path, strict: bool, package_name: str, check: bool,
          force: bool) -> None:
    """Compile DEFS into OUT.

    OUT is replaced atomically and only if it is a previous toolc build, an empty directory
    or missing: a file, the definitions directory, the current directory (or a directory
    containing either) and any other non-empty directory are refused, even with --force.
    """
    try:
        check_package_name(package_name)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--package-name") from exc
    if check:
        files, diagnostics, _ = stamped_files(defs, package=package_name, strict=strict)
        _print_diagnostics(diagnostics)
        stale = diff_disk(files, out)
        for rel in stale:
            click.echo(f"{out.as_posix()}/{rel}: stale", err=True)
        if stale:
            click.echo("run `make build` (or `toolc build`) and commit the result", err=True)
            sys.exit(EXIT_INPUT)
        return
    try:
        check_output_dir(out, defs)
    except OutputDirError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    result = api_build(defs, out, strict=strict, package_name=package_name, force=force)
    _print_diagnostics(result.diagnostics)
    if result.up_to_date:
        click.echo(f"{out.as_posix()} is up to date", err=True)
    else:
        click.echo(f"wrote {len(result.files)} files to {out.as_posix()}", err=True)


@main.command()
@click.argument("defs", default="definitions", type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@_guard
def validate(defs: Path, strict: bool) -> None:
    """Check DEFS and report every problem; writes nothing."""
    diagnostics = api_validate(defs, strict=strict)
    _print_diagnostics(diagnostics)
    if any(d.severity == "error" for d in diagnostics):
        sys.exit(EXIT_INPUT)
    click.echo(f"{defs.as_posix()}: ok", err=True)


def _context_options(fn: F) -> F:
    options = [
        click.option("--agent", "agent_id"), click.option("--session-key", "session_key"),
        click.option("--spawned-by", "spawned_by",
                     help="Session key of the session that spawned this one (a subagent keeps "
                     "its parent's group policy)."),
        click.option("--provider", "model_provider"), click.option("--model", "model_id"),
        click.option("--channel", "message_provider"), click.option("--account", "account_id"),
        click.option("--group", "group_id"), click.option("--sender-id", "sender_id"),
        click.option("--sender-e164", "sender_e164"),
        click.option("--sender-username", "sender_username"),
        click.option("--sender-name", "sender_name"),
        click.option("--owner", "sender_is_owner", is_flag=True, default=None,
                     help="The sender is the owner."),
        click.option("--sandboxed", is_flag=True, default=None),
        click.option("--spawn-depth", "spawn_depth", type=click.IntRange(min=0)),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _context(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: kwargs[k] for k in CONTEXT_KEYS if kwargs.get(k) is not None}


def load_runtime(out: Path) -> ModuleType:
    """Import the generated runtime package from a build directory."""
    try:
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"{out}/manifest.json: not a toolc build ({exc})") from exc
    package = manifest["package"]
    init = out / package / "__init__.py"
    spec = importlib.util.spec_from_file_location(package, init,
                                                  submodule_search_locations=[str(init.parent)])
    if spec is None or spec.loader is None:
        raise click.UsageError(f"cannot import {init}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    spec.loader.exec_module(module)
    return module


@main.command()
@_context_options
@click.option("--build", "build_dir", default="build", type=click.Path(path_type=Path),
              show_default=True, help="Build directory (engine: compiled).")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Definitions directory (engine: reference).")
@click.option("--engine", type=click.Choice(["compiled", "reference"]), default=None,
              help="compiled (the generated runtime) or reference (the interpreter).")
@click.option("--json", "as_json", is_flag=True, help='Print {"tools": [...]}.')
@_guard
def resolve(build_dir: Path, defs: Path | None, engine: str | None, as_json: bool,
            **kwargs: Any) -> None:
    """Print the tools a request sees."""
    engine = engine or ("reference" if defs is not None else "compiled")
    context = _context(kwargs)
    if engine == "reference":
        names = ReferenceInterpreter(resolve_definitions(defs or Path("definitions"))).resolve(
            **context).names
    else:
        names = tuple(load_runtime(build_dir).resolve(**context).names)
    if as_json:
        click.echo(json.dumps({"tools": list(names)}))
    else:
        click.echo("\n".join(names))


@main.command()
@_context_options
@click.option("--definitions", "defs", default="definitions", show_default=True,
              type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True)
@click.argument("tool")
@_guard
def explain(defs: Path, as_json: bool, tool: str, **kwargs: Any) -> None:
    """Show, layer by layer, which rule kept or removed TOOL for a request."""
    interp = ReferenceInterpreter(resolve_definitions(defs))
    result = interp.resolve(**_context(kwargs))
    if tool not in result.inventory:
        known = ", ".join(result.inventory)
        raise click.UsageError(f'unknown tool "{tool}" (known: {known})')
    rows: list[dict[str, Any]] = []
    inv = result.inventory[tool]
    rows.append({"layer": "inventory", "result": "present" if inv.kept else "absent",
                 "rule": inv.render()})
    for step in result.steps if inv.kept else ():
        decision = step.decisions.get(tool)
        if not step.active:
            rows.append({"layer": step.label, "result": "skipped", "rule": "no policy"})
        elif decision is None:
            rows.append({"layer": step.label, "result": "-", "rule": "removed earlier"})
        else:
            note = " (allowlist ignored: no core entries)" if step.stripped else ""
            rows.append({"layer": step.label, "result": "kept" if decision.kept else "removed",
                         "rule": decision.render() + note})
    visible = tool in result.names
    if as_json:
        click.echo(json.dumps({"tool": tool, "visible": visible, "layers": rows}, indent=2))
        return
    click.echo(f"{tool}: {'visible' if visible else 'not visible'}")
    width = max(len(r["layer"]) for r in rows)
    for r in rows:
        click.echo(f"  {r['layer']:<{width}}  {r['result']:<8} {r['rule']}")


@main.command()
@click.argument("tool")
@click.option("--dialect", required=True, type=click.Choice(list(DIALECTS)))
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Clean from the definitions (default when --build is not given).")
@click.option("--build", "build_dir", default=None, type=click.Path(path_type=Path),
              help="Read the cleaned schema from a build directory.")
@click.option("--json", "as_json", is_flag=True)
@_guard
def schema(tool: str, dialect: str, defs: Path | None, build_dir: Path | None,
           as_json: bool) -> None:
    """Print TOOL's tool object for DIALECT and the notes explaining each change."""
    if build_dir is not None:
        package = json.loads((build_dir / "manifest.json").read_text("utf-8"))["package"]
        bundles = json.loads((build_dir / package / "bundles.json").read_text("utf-8"))
        notes_all = json.loads((build_dir / "schema-notes.json").read_text("utf-8"))
        envelopes = bundles["dialects"][dialect]["tools"]
        if tool not in envelopes:
            raise click.UsageError(f'unknown tool "{tool}"')
        envelope, notes = envelopes[tool], notes_all[dialect].get(tool, [])
    else:
        resolved = resolve_definitions(defs or Path("definitions"))
        found = next((t for t in resolved.tools if t.name == tool), None)
        if found is None:
            raise click.UsageError(f'unknown tool "{tool}"')
        bundle = build_bundles(resolved, Diagnostics())
        envelope = bundle.data["dialects"][dialect]["tools"][tool]
        notes = bundle.notes[dialect].get(tool, [])
    if as_json:
        click.echo(json.dumps({"tool": envelope, "notes": notes}, indent=2, sort_keys=True))
        return
    click.echo(json.dumps(envelope, indent=2))
    for note in notes:
        where = note["pointer"] or "(root)"
        lossy = " [lossy: kept in the description]" if note["lossy"] else ""
        click.echo(f"{note['severity']}[{note['code']}] at {where}: {note['message']}{lossy}",
                   err=True)


def use_color(stream: Any = None) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (https://no-color.org)."""
    stream = stream or sys.stdout
    return not os.environ.get("NO_COLOR") and hasattr(stream, "isatty") and stream.isatty()


@main.command()
@click.argument("sides", nargs=-1, metavar="[BASE] [HEAD]")
@click.option("--base-rev", metavar="REV", default=None,
              help="Use the definitions at git revision REV as BASE (compiled in a temporary "
              "worktree that is removed afterwards); then the only argument is HEAD.")
@click.option("--definitions", "defs", default="definitions", show_default=True,
              type=click.Path(path_type=Path),
              help="Where the definitions live inside the repository (for --base-rev and "
              "revision arguments), and HEAD's default.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]),
              default="text", show_default=True,
              help="text (colour on a terminal), markdown (a pull-request comment) or json "
              "(stable, format 1).")
@click.option("--fail-on", type=click.Choice(["widen"]), default=None,
              help="widen: exit 3 when any tool becomes visible in any class where it was not.")
@_guard
def diff(sides: tuple[str, ...], base_rev: str | None, defs: Path, fmt: str,
         fail_on: str | None) -> None:
    """Show exactly who gains or loses which tool between BASE and HEAD.

    Each side is a build directory, a definitions directory or a git revision of this
    repository. Exit codes: 0 no access change, 2 access changed, 3 widened (with
    --fail-on widen), 1 errors.

    \b
    Examples:
      toolc diff build-old build
      toolc diff --base-rev origin/main --format markdown
      toolc diff HEAD~1 definitions --fail-on widen
    """
    limit = 1 if base_rev is not None else 2
    if len(sides) > limit or (base_rev is None and not sides):
        raise click.UsageError("give BASE and HEAD, or --base-rev REV and at most HEAD")
    if base_rev is not None:
        base = side_from_revision(base_rev, defs)
        head = load_side(sides[0] if sides else str(defs), definitions=defs)
    else:
        base = load_side(sides[0], definitions=defs)
        head = load_side(sides[1] if len(sides) > 1 else str(defs), definitions=defs)
    result = compute_diff(base, head)
    click.echo(render_diff(result, fmt, color=fmt == "text" and use_color()), nl=False)
    if fail_on == "widen" and result.widened:
        sys.exit(EXIT_WIDENED)
    sys.exit(EXIT_CHANGED if result.access_changed else EXIT_OK)


if __name__ == "__main__":  # pragma: no cover
    main()
