"""``toolc init``, ``toolc import-openclaw`` and ``toolc schema-path``: start a project."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import api
from ._app import EXIT_INPUT, echo, fail, guard, main, message, print_diagnostics


@main.command()
@click.argument("defs", default="definitions", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True,
              help="Overwrite the files init writes where they exist (your other files are "
              "never touched or deleted).")
@guard
def init(defs: Path, force: bool) -> None:
    """Write a starter definitions directory DEFS (default: definitions) that builds as is.

    The shipped core catalog (catalog/, plugins/memory-core.yaml), the profiles, the
    provider dialects, a commented example policy (policy.yaml) and a copy of the editor
    schema (.schema/definitions.schema.json, named by each file's first line). Other files
    in DEFS are kept. Without --force, a file init writes that already exists makes it
    refuse and write nothing; with --force, those files are overwritten (only those:
    nothing else is changed or deleted).

    \b
    Examples:
      toolc init && toolc build
      toolc init policies
      toolc init --force     # restore the starter files, keep your own
    """
    try:
        result = api.init(defs, force=force)
    except api.ProjectWriteError as exc:
        fail(str(exc))
    if result.replaced:
        echo(f"overwrote {len(result.replaced)} of init's files in {defs.as_posix()}/: "
             f"{', '.join(result.replaced)}", err=True)
    echo(f"wrote a starter {defs.as_posix()}/; next: toolc build {defs.as_posix()}", err=True)


@main.command("import-openclaw")
@click.argument("config", type=click.Path(path_type=Path, dir_okay=False))
@click.option("-o", "--out", default="definitions", type=click.Path(path_type=Path),
              help="Definitions directory to write (must be new or empty).")
@click.option("--force", is_flag=True,
              help="Write into a non-empty OUT, overwriting the files the import writes "
              "(nothing else is touched; symbolic links are refused).")
@click.option("--allow-partial", is_flag=True,
              help="Import even when keys that could change tool access are left out "
              "(each is listed in the report).")
@guard
def import_openclaw_cmd(config: Path, out: Path, force: bool, allow_partial: bool) -> None:
    """Turn an OpenClaw config (JSON or JSON5) into definitions that mean the same.

    Writes OUT with the shipped core catalog (with OpenClaw 2026.3.2's own profiles), the
    config's tool-policy sections (tools, agents, channels, plugins) in
    openclaw/policy.yaml, and catalog stubs for the policy names no catalog knows in
    openclaw/stubs.yaml. Prints a report: the stubs, notes on changed meaning, and every
    key left out (no tool-policy meaning, by JSON path; values are never printed), then
    checks the result as `toolc validate` does. `$include` files are read as OpenClaw reads
    them. A key left out that could change tool access (a sandbox mode, elevated exec, ...)
    is an error unless --allow-partial. Secrets are never written nor printed: a kept key or
    value holding one is an error (its path redacted).

    \b
    Examples:
      toolc import-openclaw ~/.openclaw/openclaw.json -o definitions
      toolc import-openclaw openclaw.json5 -o policies --force
    """
    try:
        result = api.import_openclaw_config(config, out, force=force,
                                            allow_partial=allow_partial)
    except api.ImportRefused as exc:
        for text in exc.messages:
            echo(message("error", text), err=True)
        sys.exit(EXIT_INPUT)
    except (api.ConfigError, api.ProjectWriteError) as exc:  # ConfigError: already redacted
        fail(str(exc))
    _print_import_report(result, out)
    diagnostics = api.validate(out)
    errors = [d for d in diagnostics if d.severity == "error"]
    echo(f"check: {len(errors)} error(s), {len(diagnostics) - len(errors)} warning(s) "
         f"(toolc validate {out.as_posix()} lists them)")
    if errors:
        print_diagnostics(errors)
        sys.exit(EXIT_INPUT)


def _print_import_report(result: api.ImportResult, out: Path) -> None:
    echo(f"wrote {out.as_posix()}/ (openclaw/policy.yaml: the imported policy)")
    sections = [("included ($include)", result.included),
                ("catalog stubs to fill in (openclaw/stubs.yaml)", result.stubs),
                ("notes", result.notes),
                ("left out, could change tool access (--allow-partial): the import is "
                 "WIDER than the gateway here", result.partial),
                ("left out (no tool-policy meaning in toolc)", result.left_out)]
    for title, lines in sections:
        if lines:
            echo(f"{title}: {len(lines)}")
            for line in lines:
                echo(f"  {line}")


@main.command("schema-path")
def schema_path_cmd() -> None:
    """Print the path of the installed JSON Schema for definitions files (for editors:
    `# yaml-language-server: $schema=<that path>`).

    \b
    Examples:
      toolc schema-path
      cp "$(toolc schema-path)" definitions/.schema/   # refresh init's copy
    """
    echo(api.schema_path().as_posix())
