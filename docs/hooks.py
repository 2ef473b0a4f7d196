"""mkdocs hook: the command-line and diagnostic-code references are generated from the code
at every build, so they cannot drift from it.

A page asks for a generated part with a marker line: ``<!-- generated: cli -->`` (every
command of the ``toolc`` click group, with its ``--help``) or ``<!-- generated: diagnostics
-->`` (the table of ``toolc.codes.CODES``). Only public entry points are imported.
"""

from __future__ import annotations

from typing import Any

import click

MARKER = "<!-- generated: {} -->"
WIDTH = 100


def _commands(cmd: click.Command, name: str,
              parent: click.Context | None) -> list[tuple[str, click.Context]]:
    # the command's own settings (help option names, show_default), as `toolc` applies them
    settings = {**cmd.context_settings, "terminal_width": WIDTH, "max_content_width": WIDTH}
    ctx = click.Context(cmd, info_name=name, parent=parent, **settings)
    found = [(ctx.command_path, ctx)]
    if isinstance(cmd, click.Group):
        for sub in sorted(cmd.list_commands(ctx)):
            child = cmd.get_command(ctx, sub)
            if child is not None and not child.hidden:
                found += _commands(child, sub, ctx)
    return found


def cli_reference() -> str:
    from toolc.cli import main  # noqa: PLC0415 (imported when a page asks for it)

    parts = []
    for path, ctx in _commands(main, "toolc", None):
        short = ctx.command.get_short_help_str(limit=WIDTH)
        parts.append(f"### `{path}`\n\n{short}\n\n```text\n{ctx.get_help()}\n```\n")
    return "\n".join(parts)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def diagnostics_reference() -> str:
    from toolc.codes import CODES  # noqa: PLC0415

    rows = ["| code | severity | meaning |", "|---|---|---|"]
    rows += [f"| {c.code} | {c.severity} | {_cell(c.meaning)} |" for c in CODES]
    return "\n".join(rows) + "\n"


GENERATORS = {"cli": cli_reference, "diagnostics": diagnostics_reference}


def render(markdown: str) -> str:
    """``markdown`` with every marker line replaced by what it asks for."""
    for name, generate in GENERATORS.items():
        marker = MARKER.format(name)
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown


def on_page_markdown(markdown: str, **_: Any) -> str:
    return render(markdown)
