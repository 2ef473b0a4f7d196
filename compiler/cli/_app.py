"""The ``toolc`` click group and what every command shares: output (colour, diagnostics), the
error guard and its exit codes, a closed output pipe, a missing extra, the context options."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from ..api import (
    AgentSelectionRequiredError,
    BuildError,
    DefinitionsError,
    Diagnostic,
    DiffInputError,
    InternalError,
)
from ..api import MissingExtraError as _ApiMissingExtra
from ..rules.context import CLI_OPTIONS, CONTEXT_KEYS

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 4
# The reader of the output went away (`toolc explain ... | head`): what a shell reports for a
# command that SIGPIPE ended (128 + 13), without a word on stderr.
EXIT_CLOSED_PIPE = 141
EXIT_CHANGED, EXIT_WIDENED = 2, 3  # toolc diff
F = TypeVar("F", bound=Callable[..., Any])


# -- output ----------------------------------------------------------------------------------
def use_color(stream: Any = None) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (https://no-color.org); FORCE_COLOR
    (any value but 0) forces it elsewhere (CI logs, tests)."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR", "0") not in ("", "0"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def _color(err: bool) -> bool:
    return use_color(sys.stderr if err else sys.stdout)


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    # click strips ANSI codes from a stream it takes for a file: pass on what we decided.
    click.echo(text, err=err, nl=nl, color=_color(err) or None)


def paint(text: str, *, err: bool = True, fg: str | None = None, bold: bool = False) -> str:
    return click.style(text, fg=fg, bold=bold) if _color(err) else text


_SEVERITY_COLOR = {"error": "red", "warning": "yellow"}


def message(severity: str, text: str, *, pos: str | None = None) -> str:
    """``[pos: ]severity: text`` with the severity coloured and the position bold."""
    head = paint(severity, fg=_SEVERITY_COLOR.get(severity.split("[", maxsplit=1)[0]), bold=True)
    return (f"{paint(pos, bold=True)}: " if pos else "") + f"{head}: {text}"


def warn(text: str) -> None:
    echo(message("warning", text), err=True)


def error(text: str) -> None:
    echo(message("error", text), err=True)


def fail(text: str) -> NoReturn:
    """An input error: said on stderr, exit 1."""
    error(text)
    sys.exit(EXIT_INPUT)


def print_diagnostics(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
    for d in diagnostics:
        text = message(f"{d.severity}[{d.code}]", d.message, pos=str(d.pos))
        if d.hint:
            text += f"\n  {paint('hint', bold=True)}: {d.hint}"
        echo(text, err=True)
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = sum(d.severity == "warning" for d in diagnostics)
    notes = len(diagnostics) - errors - warnings
    if diagnostics:
        echo(f"{errors} error(s), {warnings} warning(s)"
             + (f", {notes} note(s)" if notes else ""), err=True)


# -- errors and exit codes -------------------------------------------------------------------
class MissingExtraError(click.ClickException):
    """An optional extra of toolc is missing or broken: a usage problem (exit 2), not a bug."""

    exit_code = EXIT_USAGE


def guard(fn: F) -> F:
    """Input errors exit 1 with diagnostics; anything unexpected exits 4, never silently."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DefinitionsError as exc:
            print_diagnostics(exc.diagnostics)
            sys.exit(EXIT_INPUT)
        except (DiffInputError, BuildError) as exc:
            fail(str(exc))
        except AgentSelectionRequiredError as exc:  # the request's input, as OpenClaw 2026.9
            fail(f"AgentSelectionRequiredError: {exc}")
        except _ApiMissingExtra as exc:
            raise MissingExtraError(str(exc)) from exc
        except InternalError as exc:
            echo(message("toolc: internal error", f"{exc}\nthis is a bug in toolc; please "
                         "report it with this message"), err=True)
            sys.exit(EXIT_INTERNAL)
        except (click.ClickException, click.exceptions.Exit, SystemExit, BrokenPipeError):
            raise  # a closed output pipe is handled once, by the group (_Toolc.invoke)
        except Exception:
            echo("toolc: internal error (this is a bug in toolc):", err=True)
            echo(traceback.format_exc(), err=True)
            sys.exit(EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


class _Toolc(click.Group):
    """The ``toolc`` group: a closed stdout or stderr ends any command quietly."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _closed_pipe()


def _closed_pipe() -> NoReturn:
    """Exit quietly after the reader closed our output: point stdout and stderr at the null
    device first, so that the interpreter's final flush cannot fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            os.dup2(null, stream.fileno())
    except (OSError, ValueError, AttributeError):  # not file-backed (tests): nothing to flush
        pass
    sys.exit(EXIT_CLOSED_PIPE)


@click.group(cls=_Toolc,
             context_settings={"help_option_names": ["-h", "--help"], "show_default": True})
@click.version_option(package_name="toolc")
def main() -> None:
    """Compile LLM-agent tool policies ahead of time.

    Exit codes: 0 ok; 1 errors in the definitions, drift (build --check), a missing or
    modified build, a tool that is not visible (explain); 2 usage (also a missing optional
    extra); 4 internal error; 141 output pipe closed.
    NO_COLOR turns colour off, FORCE_COLOR on.

    \b
    Examples:
      toolc build
      toolc explain --agent main --channel telegram --group -100123 exec
      toolc diff --base-rev origin/main --format markdown
    """


# -- shared options --------------------------------------------------------------------------
DEFS_ARG = click.argument("defs", default="definitions", type=click.Path(path_type=Path))


def context_options(fn: F) -> F:
    """The request's context as options (``toolc.rules.context.CLI_OPTIONS``)."""
    options = [
        click.option(CLI_OPTIONS["agent_id"], "agent_id", metavar="ID",
                     help="Agent id (agents.list); an undeclared one means no agent layer."),
        click.option(CLI_OPTIONS["session_key"], "session_key", metavar="KEY",
                     help="Session key (agent:ID:CHANNEL:group:GID..., subagent markers)."),
        click.option(CLI_OPTIONS["spawned_by"], "spawned_by", metavar="KEY",
                     help="Session key of the session that spawned this one (a subagent keeps "
                     "its parent's group policy)."),
        click.option(CLI_OPTIONS["model_provider"], "model_provider", metavar="PROVIDER",
                     help="Model provider (byProvider keys, availability)."),
        click.option(CLI_OPTIONS["model_id"], "model_id", metavar="MODEL",
                     help="Model id (byProvider provider/model keys, applyPatch.allowModels)."),
        click.option(CLI_OPTIONS["message_provider"], "message_provider", metavar="CHANNEL",
                     help="Message channel (channels.CHANNEL group policies)."),
        click.option(CLI_OPTIONS["account_id"], "account_id", metavar="ACCOUNT",
                     help="Channel account (its own groups replace the channel's).  "
                     "[default: default]"),
        click.option(CLI_OPTIONS["group_id"], "group_id", metavar="GID",
                     help="Group (chat) id; Slack and Discord: the channel id."),
        click.option(CLI_OPTIONS["group_space"], "group_space", metavar="SPACE",
                     help="The group's container: a Discord guild id or name."),
        click.option(CLI_OPTIONS["group_channel"], "group_channel", metavar="NAME",
                     help='The group\'s channel name, e.g. "#general" (Slack, Discord).'),
        click.option(CLI_OPTIONS["sender_id"], "sender_id", metavar="ID",
                     help='Sender id (toolsBySender "id:..." keys).'),
        click.option(CLI_OPTIONS["sender_e164"], "sender_e164", metavar="PHONE",
                     help='Sender phone number ("e164:..." keys).'),
        click.option(CLI_OPTIONS["sender_username"], "sender_username", metavar="NAME",
                     help='Sender username ("username:..." keys).'),
        click.option(CLI_OPTIONS["sender_name"], "sender_name", metavar="NAME",
                     help='Sender display name ("name:..." keys).'),
        click.option(CLI_OPTIONS["sender_is_owner"], "sender_is_owner", is_flag=True, default=None,
                     help="The sender is the owner (owner-only tools)."),
        click.option(CLI_OPTIONS["sandboxed"], "sandboxed", is_flag=True, default=None,
                     help="Sandboxed whatever the session key says; without it the "
                          "definitions' sandbox mode decides from the session key (this flag "
                          "cannot turn that off)."),
        click.option(CLI_OPTIONS["spawn_depth"], "spawn_depth", type=click.IntRange(min=0),
                     metavar="N",
                     help="Subagent depth (1 or more marks a subagent session)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def context_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The context options that were given, as a request context."""
    return {k: kwargs[k] for k in CONTEXT_KEYS if kwargs.get(k) is not None}
