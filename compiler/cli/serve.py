"""``toolc serve-mcp``, ``toolc identity add`` and ``toolc import-mcp``: toolc and MCP (the
extra toolc[mcp]; without it these exit 2, naming it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import api
from ._app import (
    context_of,
    context_options,
    echo,
    fail,
    guard,
    main,
    refuse_untrusted_group,
    request_of,
    route_options,
)

# The command-line names of the API's parameters, for "Invalid value for ..." messages.
_SERVE_OPTIONS = {"http": "--http", "upstreams": "--upstream", "watch": "--watch",
                  "workers": "--workers", "http_stack": "--http-stack"}


def _usage(exc: api.ServeOptionError, names: dict[str, str]) -> click.UsageError:
    if exc.option is None:
        return click.UsageError(str(exc))
    return click.BadParameter(str(exc), param_hint=names[exc.option])


@main.command("serve-mcp")
@context_options
@click.option("--build", "build_dir", default="build", type=click.Path(path_type=Path),
              help="Build directory to serve (polled: a new valid build replaces it).")
@click.option("--impl", "impl", metavar="MODULE:ATTR", default=None,
              help="Tool implementations: a mapping of tool name to fn(args, call), or a "
              "function of the runtime package returning one.")
@click.option("--hooks", "hooks", metavar="MODULE:ATTR", default=None,
              help="A function of the runtime package returning its HookRunner.")
@click.option("--http", "http", metavar="[HOST:]PORT", default=None,
              help="Serve streamable HTTP at http://HOST:PORT/mcp (HOST: 127.0.0.1) instead "
              "of stdio; needs --identities.")
@click.option("--identities", "identities", type=click.Path(path_type=Path), default=None,
              help="With --http: bearer token hashes and their contexts (toolc identity add); "
              "re-read when it changes, a removed token is refused at once.")
@click.option("--upstream", "upstreams", metavar="NAME=COMMAND|NAME=URL", multiple=True,
              help="Proxy an upstream MCP server's tools (plugin NAME in the build).")
@click.option("--reload-interval", type=click.FloatRange(min=0.05), default=1.0,
              help="Seconds between checks for a replaced build.")
@click.option("--max-sessions-per-identity", type=click.IntRange(min=1), default=16,
              show_default=True, help="With --http: open MCP sessions one identity may hold.")
@click.option("--max-inflight-per-identity", type=click.IntRange(min=1), default=8,
              show_default=True, help="With --http: requests one identity may have in flight.")
@click.option("--strict", is_flag=True,
              help="Refuse to start when a context names an agent the build does not declare.")
@click.option("--verify-key", type=click.Path(path_type=Path), default=None,
              metavar="PUBLIC.pem",
              help="Serve only builds signed by this key (toolc sign): checked before any "
              "byte of the build runs; refused at start (exit 1) and at reload (the last "
              "good build keeps serving). Needs toolc[sign].")
@click.option("--watch", default=None, metavar="oci://REGISTRY/REPO:TAG",
              help="Pull new builds of this registry tag into --build as they are pushed "
              "(verified; with --verify-key, signed). Workers sharing --build share one "
              "poller. Needs toolc[oci].")
@click.option("--watch-interval", type=click.FloatRange(min=0.05), default=30.0,
              show_default=True, help="With --watch: seconds between two asks of the registry.")
@click.option("--decision-log", "decision_log", type=click.Path(path_type=Path), default=None,
              metavar="FILE", help="Append one JSON line per decision (tool list, call allowed "
              "or refused with the deciding rule, exec approval) to FILE (rotated at 64 MiB).")
@click.option("--decision-log-key", "decision_log_key", type=click.Path(path_type=Path),
              default=None, metavar="FILE", help="The HMAC key senders are hashed with "
              "(created when missing; re-read at every build reload). Default: a random key "
              "per process.")
@click.option("--metrics-public", is_flag=True,
              help="With --http: serve GET /metrics without a bearer token.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="With --http: worker processes serving the port; sessions, per-identity "
              "limits and revocation hold across them.")
@click.option("--http-stack", type=click.Choice(api.HTTP_STACKS), default="lean",
              show_default=True, help="With --http: toolc's lean ASGI app, or the MCP SDK's "
              "(one worker; the baseline of the load benchmark).")
@guard
def serve_mcp(build_dir: Path, impl: str | None, hooks: str | None, http: str | None,
              identities: Path | None, upstreams: tuple[str, ...], reload_interval: float,
              max_sessions_per_identity: int, max_inflight_per_identity: int, strict: bool,
              verify_key: Path | None, watch: str | None, watch_interval: float,
              decision_log: Path | None, decision_log_key: Path | None, metrics_public: bool,
              workers: int, http_stack: str, **kwargs: Any) -> None:
    """Serve the build's tools over MCP (stdio, or streamable HTTP with --http).

    tools/list is the resolved tool set (mcp dialect); tools/call runs the wrapped request
    path into --impl or an --upstream; tools with neither are not listed. Over stdio the
    context flags say who calls; over HTTP each request's bearer token does (--identities),
    and the flags are refused. GET /healthz (no token) names the build served and the last
    build refused; GET /metrics is Prometheus text (toolc[metrics]), with a token unless
    --metrics-public. Exit 1 when the port is taken, an upstream is unreachable or (--strict) a
    context names an agent the build lacks.

    \b
    Examples:
      toolc serve-mcp --agent main --sender-id 42 --impl mytools:IMPLEMENTATIONS
      toolc serve-mcp --http 127.0.0.1:8765 --identities identities.yaml --impl mytools:IMPLS
      toolc serve-mcp --agent coder --upstream files="python -m files_server"
      toolc serve-mcp --agent main --impl mytools:IMPLS --verify-key keys/public.pem \\
          --watch oci://127.0.0.1:5000/policies/gateway:1
      toolc serve-mcp --http 8765 --identities ids.yaml --impl m:I --decision-log d.jsonl
      toolc serve-mcp --http 8765 --identities ids.yaml --impl m:I --workers 2
    """
    try:
        api.serve_with(api.ServeOptions(
            build_dir=build_dir, context=context_of(kwargs), http=http, identities=identities,
            impl=impl, hooks=hooks, upstreams=upstreams, reload_interval=reload_interval,
            strict=strict, max_sessions_per_identity=max_sessions_per_identity,
            max_inflight_per_identity=max_inflight_per_identity, verify_key=verify_key,
            watch=watch, watch_interval=watch_interval, decision_log=decision_log,
            decision_log_key=decision_log_key, metrics_public=metrics_public,
            workers=workers, http_stack=http_stack))
    except api.ServeOptionError as exc:
        raise _usage(exc, _SERVE_OPTIONS) from exc
    except api.McpError as exc:  # an upstream, the port, an unknown agent (--strict)
        fail(str(exc))


@main.group()
def identity() -> None:
    """Bearer-token identities for toolc serve-mcp --http.

    \b
    Examples:
      toolc identity add alice --agent main --sender-id 42 --identities identities.yaml
    """


@identity.command("add")
@context_options
@route_options
@click.argument("name")
@click.option("--identities", "path", type=click.Path(path_type=Path),
              default="identities.yaml", help="The identities file (created when missing).")
@click.option("--build", "build_dir", type=click.Path(path_type=Path), default="build",
              help="The build the identity is served from: its OpenClaw release decides "
              "whether a group the session key does not name is refused (2026.9 would "
              "ignore it; without a build there it is refused).")
@guard
def identity_add(name: str, path: Path, build_dir: Path, **kwargs: Any) -> None:
    """Add identity NAME with the given context; print its new bearer token once.

    With --peer (or another routing option) the identity is a message: stored as
    --channel, --peer, the sender and the other message options, it is routed as OpenClaw
    routes the message when served. Exits 1 with UntrustedGroupError for a --group,
    --group-space or --group-channel the build's OpenClaw release would ignore (2026.9: the
    session key does not name it); pass the message (--peer group:ID) instead. Only the
    token's sha256 is written to the file: keep the printed token secret.

    \b
    Examples:
      toolc identity add alice --channel telegram --peer group:-100123 --sender-id 42
      toolc identity add ops --agent ops --session-key agent:ops:main --owner
    """
    request = request_of(kwargs)
    context = {} if request is not None else context_of(kwargs)
    try:
        token = api.add_identity(path, name, context, request=request, build_dir=build_dir)
    except api.UntrustedGroupError as exc:
        refuse_untrusted_group(exc, context)
    except api.IdentitiesError as exc:
        raise click.UsageError(str(exc)) from exc
    echo(token)
    echo(f"added identity {name} to {path.as_posix()} (the token is not stored: keep it)",
         err=True)


@main.command("import-mcp")
@click.argument("upstream", metavar="NAME=COMMAND|NAME=URL")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="File to write.  [default: definitions/plugins/NAME.yaml]")
@guard
def import_mcp(upstream: str, out: Path | None) -> None:
    """Snapshot an MCP server's tools/list into catalog YAML (plugin NAME, schemas verbatim).

    \b
    Examples:
      toolc import-mcp files="python -m files_server" -o definitions/plugins/files.yaml
      toolc import-mcp search=http://127.0.0.1:9000/mcp
    """
    try:
        imported = api.import_mcp(upstream, out)
    except api.ServeOptionError as exc:
        raise _usage(exc, {"upstreams": "NAME=COMMAND"}) from exc
    except api.McpError as exc:
        fail(str(exc))
    echo(f"wrote {imported.path.as_posix()}: {imported.count} tool(s) of plugin "
         f"{imported.plugin}", err=True)
