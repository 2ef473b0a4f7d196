"""``toolc init``, ``toolc import-openclaw``, ``toolc migrate`` and ``toolc schema-path``: start
a project, move it to a newer OpenClaw release."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import api
from ._app import EXIT_INPUT, echo, fail, guard, main, message, print_diagnostics

_OPENCLAW = click.Choice(api.OPENCLAW_RELEASES)
NEWEST_KEY = api.NEWEST_OPENCLAW


@main.command()
@click.argument("defs", default="definitions", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True,
              help="Overwrite the files init writes where they exist (your other files are "
              "never touched or deleted).")
@click.option("--openclaw", "openclaw", type=_OPENCLAW, default=NEWEST_KEY, show_default=True,
              help="The OpenClaw release whose semantics and catalog the project follows.")
@guard
def init(defs: Path, force: bool, openclaw: str) -> None:
    """Write a starter definitions directory DEFS (default: definitions) that builds as is.

    The OpenClaw release's core catalog (catalog/, plugins/), its profiles, the provider
    dialects, a commented example policy naming the release (policy.yaml: `openclaw:
    "2026.9"`, or the --openclaw value) and a copy of the editor
    schema (.schema/definitions.schema.json, named by each file's first line). Other files
    in DEFS are kept. Without --force, a file init writes that already exists makes it
    refuse and write nothing; with --force, those files are overwritten (only those:
    nothing else is changed or deleted).

    \b
    Examples:
      toolc init && toolc build
      toolc init policies
      toolc init --force     # restore the starter files, keep your own
      toolc init --openclaw 2026.3   # a project for gateways still on OpenClaw 2026.3
    """
    try:
        result = api.init(defs, force=force, openclaw=openclaw)
    except api.ProjectWriteError as exc:
        fail(str(exc))
    if result.replaced:
        echo(f"overwrote {len(result.replaced)} of init's files in {defs.as_posix()}/: "
             f"{', '.join(result.replaced)}", err=True)
    echo(f"wrote a starter {defs.as_posix()}/ for OpenClaw {openclaw}; next: toolc build "
         f"{defs.as_posix()}", err=True)


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
@click.option("--openclaw", "openclaw", type=_OPENCLAW, default=None,
              help="The OpenClaw release the gateway runs (default: from the config's "
              "meta.lastTouchedVersion: 2026.9 or later -> 2026.9, earlier -> 2026.3; "
              "without it 2026.9).")
@guard
def import_openclaw_cmd(config: Path, out: Path, force: bool, allow_partial: bool,
                        openclaw: str | None) -> None:
    """Turn an OpenClaw config (JSON or JSON5) into definitions that mean the same.

    Writes OUT for the gateway's OpenClaw release (--openclaw, else the release that last
    wrote the config, meta.lastTouchedVersion; `openclaw:` in openclaw/policy.yaml) with
    that release's core catalog and its own profiles, the
    config's tool-policy sections (tools, agents, channels, plugins) and its routing (route
    bindings; session dmScope, groupScope, identityLinks) in
    openclaw/policy.yaml, and catalog stubs for the policy names no catalog knows in
    openclaw/stubs.yaml. Prints a report: the stubs, notes on changed meaning, and every
    key left out (no tool-policy meaning, by JSON path; values are never printed), then
    checks the result as `toolc validate` does. `$include` files are read as OpenClaw reads
    them. A key left out that could change tool access (a sandbox mode, elevated exec, ...)
    is an error unless --allow-partial. Secrets are never written nor printed: a kept key or
    value holding one is an error (its path redacted). A config the release's own loader
    would refuse for a reason that touches tool access (a missing `$include`, an agent
    roster it cannot select from, allow beside alsoAllow, a binding to an undeclared agent,
    ...) is refused with that reason. ACP bindings are listed and left out.

    \b
    Examples:
      toolc import-openclaw ~/.openclaw/openclaw.json -o definitions
      toolc import-openclaw old-gateway.json --openclaw 2026.3 -o legacy
      toolc import-openclaw openclaw.json5 -o policies --force
    """
    try:
        result = api.import_openclaw_config(config, out, force=force,
                                            allow_partial=allow_partial, openclaw=openclaw)
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
    echo(f"OpenClaw {result.openclaw} semantics ({result.openclaw_reason}; --openclaw "
         "chooses)")
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


@main.command("migrate")
@click.argument("defs", default="definitions", type=click.Path(path_type=Path))
@click.option("--openclaw", "openclaw", type=_OPENCLAW, default=NEWEST_KEY, show_default=True,
              help="The OpenClaw release to move the project to.")
@click.option("--check", is_flag=True,
              help="Write nothing: print the file diff and the access diff; exit 1 when the "
              "migration would change something.")
@guard
def migrate_cmd(defs: Path, openclaw: str, check: bool) -> None:
    """Move the definitions DEFS (default: definitions) to a newer OpenClaw release, and
    print the access diff the upgrade causes.

    Sets `openclaw:`, renames the tools the release renamed (cron -> automations, image ->
    view_image) in every policy list, group, assertion and catalog entry, replaces starter
    files you never edited with the release's starter, and gives a roster of several agents
    without a default `agents.ownership: explicit` and channel-wide bindings to the first
    agent (as `openclaw doctor --fix` does). Bindings carry over; what the release routes
    differently is noted with the tools it moves. Then
    it compiles both sides and prints who gains or loses which tool only because of the
    upgrade (as `toolc diff` prints it), with one explained request per change and the rule
    behind it. The new files are checked before anything is written, then swapped in at
    once. Migrating a project that already follows the release changes nothing.

    \b
    Examples:
      toolc migrate --check            # what would change, exit 1 if anything
      toolc migrate --openclaw 2026.9 definitions
    """
    try:
        result = api.migrate(defs, openclaw=openclaw, check=check)
    except (api.MigrationError, api.ProjectWriteError) as exc:
        fail(str(exc))
    if check and result.file_diff:
        echo(result.file_diff, nl=False)
    prefix = "migrate --check (not written)" if check else "migrate"
    for line in result.plan.done:
        echo(f"{prefix}: {line}", err=True)
    for line in result.plan.notes:
        echo(f"{prefix}: note: {line}", err=True)
    echo(result.diff_text(), nl=False)
    if not result.changed:
        echo(f"{defs.as_posix()}: already follows OpenClaw {result.plan.target}", err=True)
    elif check:
        sys.exit(EXIT_INPUT)
    else:
        echo(f"migrated {defs.as_posix()}/ to OpenClaw {openclaw}; next: toolc build "
             f"{defs.as_posix()}", err=True)


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
