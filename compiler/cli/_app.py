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
    RequestError,
    UntrustedGroupError,
    peer_pair,
)
from ..api import MissingExtraError as _ApiMissingExtra
from ..rules.context import (
    CLI_OPTIONS,
    CONTEXT_KEYS,
    DM_SCOPES,
    GROUP_SCOPES,
    MESSAGE_KEYS,
    NEGATED_OPTIONS,
    REQUEST_CONTEXT_KEYS,
    ROUTE_OPTIONS,
)

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
        except UntrustedGroupError as exc:  # a command that knows the request says more
            refuse_untrusted_group(exc, {})
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
    modified build, a tool that is not visible (explain), a request toolc refuses
    (AgentSelectionRequiredError, UntrustedGroupError); 2 usage (also a missing optional
    extra); 4 internal error; 141 output pipe closed.
    NO_COLOR turns colour off, FORCE_COLOR on.

    \b
    Examples:
      toolc build
      toolc explain --channel telegram --peer group:-100123 --sender-id 42 exec
      toolc diff --base-rev origin/main --format markdown
    """


# -- shared options --------------------------------------------------------------------------
DEFS_ARG = click.argument("defs", default="definitions", type=click.Path(path_type=Path))


# the context's plain text options: (keyword, metavar, help), in the order --help lists them
_TEXT_OPTIONS: tuple[tuple[str, str, str], ...] = (
    ("agent_id", "ID", "Agent id (agents.list); an undeclared one means no agent layer."),
    ("session_key", "KEY", "Session key (agent:ID:CHANNEL:group:GID..., subagent markers)."),
    ("spawned_by", "KEY", "Session key of the session that spawned this one (a subagent "
     "keeps its parent's group policy)."),
    ("model_provider", "PROVIDER", "Model provider (byProvider keys, availability)."),
    ("model_id", "MODEL", "Model id (byProvider provider/model keys, "
     "applyPatch.allowModels)."),
    ("message_provider", "CHANNEL", "Message channel (channels.CHANNEL group policies)."),
    ("account_id", "ACCOUNT", "Channel account (its own groups replace the channel's).  "
     "[default: default]"),
    ("group_id", "GID", "Group (chat) id; Slack and Discord: the channel id."),
    ("group_space", "SPACE", "The group's container: a Discord guild id or name."),
    ("group_channel", "NAME", 'The group\'s channel name, e.g. "#general" (Slack, Discord).'),
    ("sender_id", "ID", 'Sender id (toolsBySender "id:..." keys).'),
    ("sender_e164", "PHONE", 'Sender phone number ("e164:..." keys).'),
    ("sender_username", "NAME", 'Sender username ("username:..." keys).'),
    ("sender_name", "NAME", 'Sender display name ("name:..." keys).'),
)


def context_options(fn: F) -> F:
    """The request's context as options (``toolc.rules.context.CLI_OPTIONS``)."""
    options = [
        *(click.option(CLI_OPTIONS[key], key, metavar=metavar, help=text)
          for key, metavar, text in _TEXT_OPTIONS),
        click.option(f"{CLI_OPTIONS['sender_is_owner']}/{NEGATED_OPTIONS['sender_is_owner']}",
                     "sender_is_owner", default=None,
                     help="The sender is (or is not) the owner: owner-only tools. Without "
                     "either, OpenClaw 2026.9 keeps owner-only tools (2026.3 removes them)."),
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


# -- messages in: the routing options --------------------------------------------------------
def _peer(ctx: click.Context, param: click.Parameter, value: str | None
          ) -> tuple[str, str] | None:
    if value is None:
        return None
    try:
        return peer_pair(value, str(param.name))
    except RequestError as exc:
        raise click.BadParameter(str(exc), ctx, param) from exc


def route_options(fn: F) -> F:
    """A message's routing fields as options (``toolc.rules.context.ROUTE_OPTIONS``); with
    ``--channel`` and ``--account`` they are what ``toolc_runtime.route`` takes."""
    options = [
        click.option(ROUTE_OPTIONS["peer"], "peer", metavar="KIND:ID", callback=_peer,
                     help="The chat the message came in: direct:ID (or dm:ID), group:ID or "
                     "channel:ID. With any routing option the request is a message, routed "
                     "by the bindings first."),
        click.option(ROUTE_OPTIONS["parent_peer"], "parent_peer", metavar="KIND:ID",
                     callback=_peer, help="The chat a thread belongs to (binding.peer.parent)."),
        click.option(ROUTE_OPTIONS["guild_id"], "guild_id", metavar="GUILD",
                     help="The Discord guild id of the message."),
        click.option(ROUTE_OPTIONS["team_id"], "team_id", metavar="TEAM",
                     help="The Microsoft Teams team id of the message."),
        click.option(ROUTE_OPTIONS["member_role_ids"], "member_role_ids", metavar="ROLE",
                     multiple=True, help="A role of the sender in the guild (repeatable)."),
        click.option(ROUTE_OPTIONS["default_agent_id"], "default_agent_id", metavar="ID",
                     help="The agent of a message no binding matches (2026.9)."),
        click.option(ROUTE_OPTIONS["dm_scope"], "dm_scope", type=click.Choice(DM_SCOPES),
                     default=None, help="Overrides session.dmScope (2026.9)."),
        click.option(ROUTE_OPTIONS["group_scope"], "group_scope",
                     type=click.Choice(GROUP_SCOPES), default=None,
                     help="Overrides session.groupScope (2026.9)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


# the context keywords a message leaves to its route: the agent, the session key, the group
_DECIDED = tuple(k for k in CONTEXT_KEYS if k not in REQUEST_CONTEXT_KEYS.values())


def _given(value: Any) -> bool:
    return value is not None and value != ()


def routing_given(kwargs: dict[str, Any]) -> bool:
    """Whether any routing option was given (the request is then a message)."""
    return any(_given(kwargs.get(k)) for k in ROUTE_OPTIONS)


def request_of(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The message-level request the options give (``toolc.rules.context.MESSAGE_KEYS``),
    or None when no routing option was given. A usage error for options the route decides
    (the agent, the session key, the group) and for a message without ``--channel``."""
    if not routing_given(kwargs):
        return None
    clash = [CLI_OPTIONS[k] for k in _DECIDED if _given(kwargs.get(k))]
    if clash:
        raise click.UsageError(
            f"{' '.join(clash)}: with --peer and the other routing options the route decides "
            "the agent, the session key and the group; drop them (or drop the routing "
            "options and give the context)")
    if kwargs.get("message_provider") is None:
        raise click.UsageError("a message needs its --channel (routing options were given)")
    given = {field: kwargs[key] for field, key in REQUEST_CONTEXT_KEYS.items()
             if kwargs.get(key) is not None}
    given |= {k: kwargs[k] for k in ROUTE_OPTIONS if _given(kwargs.get(k))}
    return {k: given[k] for k in MESSAGE_KEYS if k in given}  # in Request's order


def refuse_untrusted_group(exc: UntrustedGroupError, context: dict[str, Any], *,
                           lenient: str | None = None) -> NoReturn:
    """Exit 1 with the refusal and, in the command's words, what to pass instead: the
    message (routed, its session key names the group) or that session key. ``lenient``:
    the option that ignores the group as OpenClaw does, when the command has one."""
    channel = context.get("message_provider") or "<channel>"
    agent = context.get("agent_id") or "<agent>"
    gid = exc.value if exc.field == "group_id" else context.get("group_id") or "<id>"
    hint = (f"pass the message, --channel {channel} --peer group:{gid} (toolc routes it, and "
            f"its session key names the group), or that session key, --session-key "
            f"agent:{agent}:{channel}:group:{gid}")
    if lenient:
        hint += f"; {lenient} ignores the group as OpenClaw does"
    error(f"UntrustedGroupError: {exc}")
    echo(f"  {paint('hint', bold=True)}: {hint}", err=True)
    sys.exit(EXIT_INPUT)
