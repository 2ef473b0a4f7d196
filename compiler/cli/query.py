"""``toolc resolve``, ``toolc explain`` and ``toolc schema``: ask a build or the definitions."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .. import api
from ..schema import DIALECTS
from ._app import (
    EXIT_INPUT,
    EXIT_OK,
    context_of,
    context_options,
    echo,
    guard,
    main,
    message,
    paint,
    warn,
)


def _report_source(source: api.Source, consequence: str) -> None:
    """Name the source on stderr; warn first when the build and the definitions differ."""
    if source.current is False:
        warn(f"{source.build.as_posix()}/ is stale relative to "
             f"{source.definitions.as_posix()}/ (run "
             f"`toolc build`): {consequence}")
    echo(source.describe(), err=True)


def _warn_all(warnings: tuple[str, ...]) -> None:
    for text in warnings:
        warn(text)


@main.command()
@context_options
@click.option("--build", "build_dir", default="build", type=click.Path(path_type=Path),
              help="Build directory (engine: compiled).")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Definitions directory (selects the reference engine).  "
              "[default: definitions with --engine reference]")
@click.option("--engine", type=click.Choice(list(api.ENGINES)), default=None,
              help="compiled (the build's generated runtime) or reference (the interpreter "
              "over the definitions).  [default: compiled, or reference with --definitions]")
@click.option("--json", "as_json", is_flag=True, help='Print {"tools": [...]}.')
@guard
def resolve(build_dir: Path, defs: Path | None, engine: str | None, as_json: bool,
            **kwargs: Any) -> None:
    """Print the tools a request sees, one per line in catalog order.

    Warns on stderr when the build is stale relative to the definitions (when both exist)
    and when the request names an agent, channel, account or group that is not declared.
    Exits 1 with AgentSelectionRequiredError when the definitions follow OpenClaw 2026.9 and
    cannot choose the request's agent (several agents, none default: true, and neither
    --agent nor an agent:<id>: session key; or --agent and the session key's agent differ).

    \b
    Examples:
      toolc resolve --agent main --provider openai --channel telegram --group -100123
      toolc resolve --definitions definitions --agent viewer --json
    """
    source = api.resolve_source(build_dir, defs, engine)
    if source.kind == "definitions":
        _report_source(source, f"answering from {source.path.as_posix()}/ (without "
                       f"--definitions, resolve answers from {build_dir.as_posix()}/)")
    else:
        _report_source(source, "answering from it as built")
    result = api.resolve_from(source, context_of(kwargs))
    _warn_all(result.warnings)
    if as_json:
        echo(json.dumps({"tools": list(result.names), "source": source.to_json()}))
    else:
        echo("\n".join(result.names))


def _print_explanation(ex: api.Explanation) -> None:
    result_color = {"present": "green", "kept": "green", "absent": "red", "removed": "red"}
    verdict = paint("visible", err=False, fg="green") if ex.visible else paint(
        "not visible", err=False, fg="red")
    decided = f" (removed by: {ex.decided_by})" if ex.decided_by else ""
    echo(f"{paint(ex.tool, err=False, bold=True)}: {verdict}{decided} "
         f"[OpenClaw {ex.target}]")
    for row in ex.rows:
        result = paint(row.result, err=False, fg=result_color.get(row.result))
        if row.result in ("skipped", "not reached") and not row.details:
            echo(f"  {row.layer}: {result} ({row.rule})")
            continue
        echo(f"  {row.layer}: {result}" + (f" ({row.rule})" if row.result == "skipped"
                                           else ""))
        for d in row.details:
            where = d.where()
            echo(f"    {paint(where, err=False, bold=True)}: {d.text}" if where
                 else f"    {d.text}")


@main.command()
@context_options
@click.option("--build", "build_dir", default=None, type=click.Path(path_type=Path),
              help="Explain from a build directory (its sources/), cross-checked with "
              "its runtime.  [default: build when current, else --definitions]")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Explain from a definitions directory.  [default: definitions when build "
              "is missing or stale]")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"tool", "visible", "decided_by", "layers": [...]} (see the docs: '
              "docs/reference/cli.md).")
@click.argument("tool")
@guard
def explain(build_dir: Path | None, defs: Path | None, as_json: bool, tool: str,
            **kwargs: Any) -> None:
    """Show, layer by layer, which rule kept or removed TOOL for a request.

    TOOL is read as policies read names (Exec and bash mean exec). Every rule is printed
    with its file:line:col, also the allow list a tool is missing from. Exits 0 when TOOL
    is visible and 1 when it is not, so scripts can test access; also 1, with
    AgentSelectionRequiredError, for a request OpenClaw 2026.9 refuses (see resolve).

    \b
    Examples:
      toolc explain --agent viewer exec
      toolc explain --channel telegram --group -100123 --sender-username alice exec
      toolc explain --build build --agent main --provider openai apply_patch --json
    """
    try:
        source = api.explain_source(build_dir, defs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    # a build given or picked (current): explaining from it as built; else from definitions
    _report_source(source, "explaining from it as built" if source.kind == "build"
                   else f"explaining from {source.path.as_posix()}/")
    try:
        result = api.explain_from(source, tool, context_of(kwargs))
    except api.UnknownToolError as exc:
        raise click.UsageError(str(exc)) from exc
    _warn_all(result.warnings)
    if as_json:
        echo(json.dumps({**result.explanation.to_json(), "source": source.to_json()},
                        indent=2, ensure_ascii=False))
    else:
        _print_explanation(result.explanation)
    sys.exit(EXIT_OK if result.visible else EXIT_INPUT)


@main.command()
@click.argument("tool")
@click.option("--dialect", default=None, type=click.Choice(list(DIALECTS)),
              help="The schema dialect to print.")
@click.option("--provider", default=None, metavar="PROVIDER",
              help="Pick the dialect PROVIDER speaks, as the runtime's dialect_for does "
              "(providers.entries, built-in defaults, providers.default).")
@click.option("--model", default=None, metavar="MODEL",
              help="With --provider: a provider/model entry of providers.entries wins.")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Clean from the definitions.  [default: definitions, unless --build]")
@click.option("--build", "build_dir", default=None, type=click.Path(path_type=Path),
              help="Read the cleaned schema from a build directory (checked files).")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"tool": ..., "notes": [...]} on stdout.')
@guard
def schema(tool: str, dialect: str | None, provider: str | None, model: str | None,
           defs: Path | None, build_dir: Path | None, as_json: bool) -> None:
    """Print TOOL's tool object for a dialect and the notes explaining each change.

    Give exactly one of --dialect and --provider.

    \b
    Examples:
      toolc schema read --dialect gemini
      toolc schema exec --provider openai --model gpt-5-strict --build build
    """
    if (dialect is None) == (provider is None):
        raise click.UsageError("give exactly one of --dialect and --provider")
    if model is not None and provider is None:
        raise click.UsageError("--model needs --provider")
    if build_dir is not None and defs is not None:
        raise click.UsageError("give --build or --definitions, not both")
    schemas = api.load_schemas(defs, build_dir)
    if provider is not None:
        dialect, reason = schemas.dialect_for(provider, model)
        echo(f"dialect: {dialect} ({reason})", err=True)
    assert dialect is not None
    try:
        found = schemas.tool(tool, dialect)
    except api.UnknownToolError as exc:
        raise click.UsageError(str(exc)) from exc
    if as_json:
        echo(json.dumps({"tool": found.envelope, "notes": list(found.notes)}, indent=2,
                        sort_keys=True))
        return
    echo(json.dumps(found.envelope, indent=2))
    for note in found.notes:
        where = note["pointer"] or "(root)"
        lossy = " [lossy: kept in the description]" if note["lossy"] else ""
        echo(message(f"{note['severity']}[{note['code']}]", f"at {where}: "
                     f"{note['message']}{lossy}"), err=True)
