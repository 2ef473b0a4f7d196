"""``toolc diff``: who gains or loses which tool between two revisions."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import click

from .. import api
from ._app import EXIT_CHANGED, EXIT_INPUT, EXIT_OK, EXIT_WIDENED, echo, guard, main, use_color


class _DiffCommand(click.Command):
    """``toolc diff`` exits 1 on usage errors: its 2 means "access changed"."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            raise _DiffUsageError(exc.format_message(), exc.ctx) from exc


class _DiffUsageError(click.UsageError):
    exit_code = EXIT_INPUT


@main.command(cls=_DiffCommand)
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
              "(stable, format 2).")
@click.option("--fail-on", type=click.Choice(["widen"]), default=None,
              help="widen: exit 3 when any tool becomes visible in any class where it was not, "
              "or in the run of a message that a binding change moves.")
@guard
def diff(sides: tuple[str, ...], base_rev: str | None, defs: Path, fmt: str,
         fail_on: str | None) -> None:
    """Show exactly who gains or loses which tool between BASE and HEAD.

    Each side is a build directory, a definitions directory or a git revision of this
    repository. A change to bindings or session settings is shown as the messages that run
    elsewhere (another agent or session key) and the tools their runs gain or lose. Exit
    codes: 0 no access change, 2 access changed, 3 widened (with --fail-on widen), 1 errors.

    \b
    Examples:
      toolc diff build-old build
      toolc diff --base-rev origin/main --format markdown
      toolc diff HEAD~1 definitions --fail-on widen
    """
    limit = 1 if base_rev is not None else 2
    if len(sides) > limit or (base_rev is None and not sides):
        raise _DiffUsageError("give BASE and HEAD, or --base-rev REV and at most HEAD")
    # A diff builds millions of small objects that live until it is printed: the cyclic
    # collector would walk them again and again for nothing, and once more when it is
    # switched back on (they are then set aside for good: the process is about to exit).
    enabled = gc.isenabled()
    gc.disable()
    try:
        if base_rev is not None:
            result = api.diff(head=sides[0] if sides else None, base_rev=base_rev,
                              definitions=defs)
        else:
            result = api.diff(sides[0], sides[1] if len(sides) > 1 else None, definitions=defs)
        echo(api.render_diff(result, fmt, color=fmt == "text" and use_color()), nl=False)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    if fail_on == "widen" and result.widened:
        sys.exit(EXIT_WIDENED)
    sys.exit(EXIT_CHANGED if result.access_changed else EXIT_OK)


@main.command()
@click.argument("build_side", metavar="BUILD")
@click.option("--base", "base", metavar="OTHER_BUILD", default=None,
              help="Mark what changed from OTHER_BUILD (a build, definitions or revision): "
              "the exact gains and losses toolc diff reports.")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=Path("access.html"),
              show_default=True, help="The HTML file to write.")
@click.option("--definitions", "defs", default="definitions", show_default=True,
              type=click.Path(path_type=Path),
              help="Where the definitions live inside the repository (for revisions).")
@click.option("--title", default=None, help="The page's title (default: names the builds).")
@guard
def report(build_side: str, base: str | None, out: Path, defs: Path,
           title: str | None) -> None:
    """Write an access report: one self-contained HTML file (no network).

    The matrix of agents x tools, each cell coloured always / only for some providers,
    channels, groups or senders / never (hover for the condition), with filters for the
    request kind, provider, channel, group and sender; with --base, every gained and lost
    cell is marked. BUILD is a build directory, a definitions directory or a revision.

    \b
    Examples:
      toolc report build -o access.html
      toolc report build --base build-old -o access.html
    """
    result = api.report(build_side, base, definitions=defs, title=title)
    out.write_text(result.html, encoding="utf-8")
    changes = f"; {result.gained} gained and {result.lost} lost cell(s)" if base else ""
    echo(f"wrote {out.as_posix()}: {result.agents} agents x {result.tools} tools, "
         f"{len(result.html.encode()):,} bytes{changes}", err=True)
