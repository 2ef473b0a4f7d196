"""``toolc resolve``, ``toolc explain``, ``toolc route`` and ``toolc schema``: ask a build or the
definitions."""

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
    refuse_untrusted_group,
    request_of,
    route_options,
    warn,
)

# resolve's and explain's option for OpenClaw's silent behaviour (``strict=False``)
LENIENT = "--no-strict"
_lenient_option = click.option(
    LENIENT, "lenient", is_flag=True,
    help="Ignore a group the session key does not name, silently, as OpenClaw 2026.9 does "
    "(its exact answer), instead of refusing the request (exit 1).")


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


def _ask(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(context, message-level request) of the options: a request when routing options
    were given (the context is then empty), else the context."""
    request = request_of(kwargs)
    return ({} if request is not None else context_of(kwargs)), request


def _route_line(route: api.RouteResult) -> str:
    return f"route: {route.describe()}"


@main.command()
@context_options
@route_options
@click.option("--build", "build_dir", default="build", type=click.Path(path_type=Path),
              help="Build directory (engine: compiled).")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Definitions directory (selects the reference engine).  "
              "[default: definitions with --engine reference]")
@click.option("--engine", type=click.Choice(list(api.ENGINES)), default=None,
              help="compiled (the build's generated runtime) or reference (the interpreter "
              "over the definitions).  [default: compiled, or reference with --definitions]")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"tools": [...], "source": {...}} (and "route" for a message).')
@_lenient_option
@guard
def resolve(build_dir: Path, defs: Path | None, engine: str | None, as_json: bool,
            lenient: bool, **kwargs: Any) -> None:
    """Print the tools a request sees, one per line in catalog order.

    With --peer (or another routing option) the request is the message a gateway received:
    it is routed first as OpenClaw routes it (bindings, session settings) and resolved with
    its route's agent and session key; the route is said on stderr with the position of the
    binding that decided. Warns on stderr when the build is stale relative to the
    definitions (when both exist) and when the request names an agent, channel, account or
    group that is not declared. Exits 1 with AgentSelectionRequiredError when the definitions
    follow OpenClaw 2026.9 and cannot choose the request's agent (several agents, none
    default: true, and neither --agent nor an agent:<id>: session key; or --agent and the
    session key's agent differ; or a message no binding routes), and with
    UntrustedGroupError for a group OpenClaw 2026.9 would ignore (--group, --group-space or
    --group-channel that the session key does not name: pass the message, --peer group:ID,
    instead; --no-strict ignores the group as OpenClaw does).

    \b
    Examples:
      toolc resolve --channel telegram --peer group:-100123 --sender-id 42 --provider openai
      toolc resolve --agent main --session-key agent:main:telegram:group:-100123 --no-owner
      toolc resolve --definitions definitions --agent viewer --json
    """
    context, request = _ask(kwargs)
    source = api.resolve_source(build_dir, defs, engine)
    if source.kind == "definitions":
        _report_source(source, f"answering from {source.path.as_posix()}/ (without "
                       f"--definitions, resolve answers from {build_dir.as_posix()}/)")
    else:
        _report_source(source, "answering from it as built")
    try:
        result = api.resolve_from(source, context, request=request, strict=not lenient)
    except api.UntrustedGroupError as exc:
        refuse_untrusted_group(exc, context, lenient=LENIENT)
    except api.RequestError as exc:
        raise click.UsageError(str(exc)) from exc
    if result.route is not None:
        echo(_route_line(result.route), err=True)
    _warn_all(result.warnings)
    if as_json:
        out: dict[str, Any] = {"tools": list(result.names), "source": source.to_json()}
        if result.route is not None:
            out["route"] = result.route.to_json()
        echo(json.dumps(out))
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
@route_options
@click.option("--build", "build_dir", default=None, type=click.Path(path_type=Path),
              help="Explain from a build directory (its sources/), cross-checked with "
              "its runtime.  [default: build when current, else --definitions]")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Explain from a definitions directory.  [default: definitions when build "
              "is missing or stale]")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"tool", "visible", "decided_by", "layers": [...]} (and "route" for '
              "a message; see the docs: docs/reference/cli.md).")
@_lenient_option
@click.argument("tool")
@guard
def explain(build_dir: Path | None, defs: Path | None, as_json: bool, lenient: bool, tool: str,
            **kwargs: Any) -> None:
    """Show, layer by layer, which rule kept or removed TOOL for a request.

    TOOL is read as policies read names (Exec and bash mean exec). Every rule is printed
    with its file:line:col, also the allow list a tool is missing from. With --peer (or
    another routing option) the message is routed first and the route is the first line,
    with the position of the binding that decided. Exits 0 when TOOL is visible and 1 when
    it is not, so scripts can test access; also 1, with AgentSelectionRequiredError or
    UntrustedGroupError, for a request toolc refuses (see resolve).

    \b
    Examples:
      toolc explain --agent viewer exec
      toolc explain --channel telegram --peer group:-100123 --sender-username alice exec
      toolc explain --build build --agent main --provider openai apply_patch --json
    """
    context, request = _ask(kwargs)
    try:
        source = api.explain_source(build_dir, defs)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    # a build given or picked (current): explaining from it as built; else from definitions
    _report_source(source, "explaining from it as built" if source.kind == "build"
                   else f"explaining from {source.path.as_posix()}/")
    try:
        result = api.explain_from(source, tool, context, request=request, strict=not lenient)
    except api.UntrustedGroupError as exc:
        refuse_untrusted_group(exc, context, lenient=LENIENT)
    except (api.UnknownToolError, api.RequestError) as exc:
        raise click.UsageError(str(exc)) from exc
    _warn_all(result.warnings)
    if as_json:
        out = {**result.explanation.to_json(), "source": source.to_json()}
        if result.route is not None:
            out["route"] = result.route.to_json()
        echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        if result.route is not None:
            echo(_route_line(result.route))
        _print_explanation(result.explanation)
    sys.exit(EXIT_OK if result.visible else EXIT_INPUT)


@main.command()
@click.option("--channel", "channel", required=True, metavar="CHANNEL",
              help="The channel the message came in on (telegram, discord, ...).")
@click.option("--account", "account_id", metavar="ACCOUNT",
              help="The channel account that received it.  [default: default]")
@route_options
@click.option("--build", "build_dir", default="build", type=click.Path(path_type=Path),
              help="Build directory.")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Route from a definitions directory (compiled into a temporary build).")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"agent_id", "session_key", "main_session_key", "matched_by", '
              '"channel", "account_id", "binding": {"index", "source"} or null, "source"}.')
@guard
def route(channel: str, account_id: str | None, build_dir: Path, defs: Path | None,
          as_json: bool, **routing: Any) -> None:
    """Print the agent and session key OpenClaw gives a message, and the binding that decided.

    Routes as the build's OpenClaw release does (resolveAgentRoute: the bindings' tiers
    peer, parent peer, peer wildcard, guild and roles, guild, team, account, channel, else
    the default agent). The line names the binding's file:line:col, "added by OpenClaw's
    loader" for the channel-wide binding 2026.9's loader adds for the default agent, or
    "default: no binding matches". Exits 1 with AgentSelectionRequiredError when no binding
    matches and no default agent can be chosen (2026.9, agents.ownership: explicit).

    \b
    Examples:
      toolc route --channel telegram --peer group:-100123
      toolc route --channel discord --guild 123 --role 456 --peer channel:789 --json
      toolc route --definitions definitions --channel whatsapp --peer direct:+15550001
    """
    source = api.resolve_source(build_dir, defs)
    _report_source(source, "routing with it as built" if source.kind == "build"
                   else f"routing with {source.path.as_posix()}/")
    try:
        found = api.route_from(source, {"channel": channel, "account_id": account_id,
                                        **routing})
    except api.RequestError as exc:
        raise click.UsageError(str(exc)) from exc
    if as_json:
        echo(json.dumps({**found.to_json(), "source": source.to_json()}))
    else:
        echo(found.describe())


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
