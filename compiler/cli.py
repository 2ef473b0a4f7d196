"""The ``toolc`` command line: build, validate, resolve, explain, schema, diff, init,
import-openclaw, schema-path.

Exit codes: 0 ok; 1 errors in the definitions, a stale build under --check, a missing or
modified build directory, another build holding the output past --lock-timeout, or (explain)
a tool that is not visible; 2 usage errors, including a missing optional extra (the message
names it, e.g. ``toolc[mcp]``); 4 internal failure (a bug in toolc: please report it with
what it prints); 141 the reader closed the output pipe (``| head``), nothing printed.
``toolc diff`` has its own: 0 no access change, 2 access changed, 3 widened under
``--fail-on widen``, 1 errors (also a build that fails verification).

Colour: diagnostics and explain use colour on a terminal; ``NO_COLOR`` (any value) turns it
off, ``FORCE_COLOR`` (any value but ``0``) turns it on where the stream is not a terminal.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final, NoReturn, TypeVar

import click

from .api import (
    BuildError,
    build_is_current,
    check_package_name,
    read_build_file,
    read_manifest,
    resolve_build,
    resolve_definitions,
    stamped_files,
)
from .api import build as api_build
from .api import validate as api_validate
from .audit.declared import Declared, context_warnings
from .audit.explain import Explanation, UnknownToolError, catalog_tool
from .audit.explain import explain as explain_tool
from .diagnostics import DefinitionsError, Diagnostic, Diagnostics, did_you_mean
from .importers.openclaw import ConfigError, ImportRefused, ImportResult, import_openclaw
from .importers.openclaw_load import load_config
from .importers.openclaw_secrets import Secrets
from .importers.starter import ProjectWriteError, init_files, schema_path, write_new_files
from .locks import LockTimeoutError
from .pipeline.bundles import build_bundles, dialect_for
from .pipeline.render import DEFAULT_PACKAGE
from .pipeline.writer import OutputDirError, check_output_dir, diff_disk
from .review.diff import DiffInputError, compute_diff, load_side, render_diff, side_from_revision
from .rules.context import CLI_OPTIONS, CONTEXT_KEYS
from .rules.names import normalize_tool_name
from .schema import DIALECTS
from .semantics.reference import ReferenceInterpreter
from .serve.mcp_identity import IdentitiesError, add_identity

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 4
# The reader of the output went away (`toolc explain ... | head`): what a shell reports for a
# command that SIGPIPE ended (128 + 13), without a word on stderr.
EXIT_CLOSED_PIPE = 141
EXIT_CHANGED, EXIT_WIDENED = 2, 3  # toolc diff
F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_DEFS, DEFAULT_BUILD = Path("definitions"), Path("build")


class InternalError(Exception):
    """toolc contradicts itself (e.g. its two engines disagree): a bug, exit 4."""


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


def _echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    # click strips ANSI codes from a stream it takes for a file: pass on what we decided.
    click.echo(text, err=err, nl=nl, color=_color(err) or None)


def _paint(text: str, *, err: bool = True, fg: str | None = None, bold: bool = False) -> str:
    return click.style(text, fg=fg, bold=bold) if _color(err) else text


_SEVERITY_COLOR = {"error": "red", "warning": "yellow"}


def _message(severity: str, text: str, *, pos: str | None = None) -> str:
    """``[pos: ]severity: text`` with the severity coloured and the position bold."""
    head = _paint(severity, fg=_SEVERITY_COLOR.get(severity.split("[", maxsplit=1)[0]), bold=True)
    return (f"{_paint(pos, bold=True)}: " if pos else "") + f"{head}: {text}"


def _warn(text: str) -> None:
    _echo(_message("warning", text), err=True)


def _error(text: str) -> None:
    _echo(_message("error", text), err=True)


def _print_diagnostics(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
    for d in diagnostics:
        text = _message(f"{d.severity}[{d.code}]", d.message, pos=str(d.pos))
        if d.hint:
            text += f"\n  {_paint('hint', bold=True)}: {d.hint}"
        _echo(text, err=True)
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    if diagnostics:
        _echo(f"{errors} error(s), {warnings} warning(s)", err=True)


def _guard(fn: F) -> F:
    """Input errors exit 1 with diagnostics; anything unexpected exits 4, never silently."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DefinitionsError as exc:
            _print_diagnostics(exc.diagnostics)
            sys.exit(EXIT_INPUT)
        except (DiffInputError, BuildError) as exc:
            _error(str(exc))
            sys.exit(EXIT_INPUT)
        except InternalError as exc:
            _echo(_message("toolc: internal error", f"{exc}\nthis is a bug in toolc; please "
                           "report it with this message"), err=True)
            sys.exit(EXIT_INTERNAL)
        except (click.ClickException, click.exceptions.Exit, SystemExit, BrokenPipeError):
            raise  # a closed output pipe is handled once, by the group (_Toolc.invoke)
        except Exception:
            _echo("toolc: internal error (this is a bug in toolc):", err=True)
            _echo(traceback.format_exc(), err=True)
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


_DEFS_ARG = click.argument("defs", default="definitions", type=click.Path(path_type=Path))


@main.command()
@_DEFS_ARG
@click.option("-o", "--out", default="build", type=click.Path(path_type=Path),
              help="Output directory (replaced atomically).")
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--package-name", default=DEFAULT_PACKAGE,
              help="Name of the generated runtime package.")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 when OUT differs from a fresh build (drift).")
@click.option("--force", is_flag=True,
              help="Rebuild even when inputs are unchanged (never overrides the OUT checks).")
@click.option("--lock-timeout", type=click.FloatRange(min=0), default=None, metavar="SEC",
              help="When another toolc process is writing OUT, wait at most SEC seconds (0: fail "
              "at once) instead of until it is done; then exit 1.")
@_guard
def build(defs: Path, out: Path, strict: bool, package_name: str, check: bool,
          force: bool, lock_timeout: float | None) -> None:
    """Compile DEFS (default: definitions) into OUT.

    OUT is replaced atomically and only if it is a previous toolc build, an empty directory
    or missing: a file, the definitions directory, the current directory (or a directory
    containing either) and any other non-empty directory are refused, even with --force.
    Two builds into one OUT never mix: the second waits for the first (see --lock-timeout),
    then rebuilds or finds OUT up to date.

    \b
    Examples:
      toolc build                      # definitions/ -> build/
      toolc build --check --strict     # CI: exit 1 on drift or on any warning
      toolc build policies -o dist/policy --package-name acme_tools
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
            _echo(_message("error", "stale", pos=f"{out.as_posix()}/{rel}"), err=True)
        if stale:
            _echo("run `make build` (or `toolc build`) and commit the result", err=True)
            sys.exit(EXIT_INPUT)
        return
    try:
        check_output_dir(out, defs)
    except OutputDirError as exc:
        _error(str(exc))
        sys.exit(EXIT_INPUT)
    def waiting(lock: Path) -> None:
        _echo(f"waiting for another toolc process writing {out.as_posix()} (lock "
              f"{lock.as_posix()})", err=True)

    try:
        result = api_build(defs, out, strict=strict, package_name=package_name, force=force,
                           lock_timeout=lock_timeout, on_wait=waiting)
    except (OutputDirError, LockTimeoutError) as exc:
        _error(str(exc))
        sys.exit(EXIT_INPUT)
    _print_diagnostics(result.diagnostics)
    if result.up_to_date:
        _echo(f"{out.as_posix()} is up to date", err=True)
    else:
        _echo(f"wrote {len(result.files)} files to {out.as_posix()}", err=True)


@main.command()
@_DEFS_ARG
@click.option("--strict", is_flag=True,
              help="Treat warnings as errors (recommended in CI: an unknown name in a deny "
              "list is otherwise only a warning).")
@_guard
def validate(defs: Path, strict: bool) -> None:
    """Check DEFS (default: definitions) and report every problem; writes nothing.

    \b
    Examples:
      toolc validate
      toolc validate --strict policies
    """
    diagnostics = api_validate(defs, strict=strict)
    _print_diagnostics(diagnostics)
    if any(d.severity == "error" for d in diagnostics):
        sys.exit(EXIT_INPUT)
    _echo(f"{defs.as_posix()}: ok", err=True)


def _context_options(fn: F) -> F:
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
                     help="The session runs sandboxed (sandbox layer)."),
        click.option(CLI_OPTIONS["spawn_depth"], "spawn_depth", type=click.IntRange(min=0),
                     metavar="N",
                     help="Subagent depth (1 or more marks a subagent session)."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _context(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: kwargs[k] for k in CONTEXT_KEYS if kwargs.get(k) is not None}


def load_runtime(out: Path) -> ModuleType:
    """Import the generated runtime package from a build directory."""
    package = read_manifest(out)["package"]
    init = out / package / "__init__.py"
    spec = importlib.util.spec_from_file_location(package, init,
                                                  submodule_search_locations=[str(init.parent)])
    if spec is None or spec.loader is None or not init.is_file():
        raise BuildError(f"{out.as_posix()}: no runtime package {package}/")
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    try:
        spec.loader.exec_module(module)
    except RuntimeError as exc:
        mismatch = getattr(module, "DataMismatchError", None)
        if mismatch is not None and isinstance(exc, mismatch):
            raise BuildError(str(exc)) from exc
        raise
    return module


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Where resolve or explain reads its answer, said on stderr and in --json."""

    kind: str  # "build" or "definitions"
    path: Path
    build: Path  # the build compared with the definitions
    build_id: str | None  # sha256 of its manifest.json (first 12 hex digits); None: no build
    current: bool | None  # built from the definitions as they are now; None: nothing to compare

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path.as_posix(), "build": self.build_id,
                "current": self.current}

    def describe(self) -> str:
        if self.kind == "definitions":
            return f"source: definitions {self.path.as_posix()}/ (reference interpreter)"
        state = {True: "current with the definitions", False: "stale",
                 None: "no definitions to compare with"}[self.current]
        return f"source: build {self.path.as_posix()}/ (build {self.build_id}, {state})"


def _source(kind: str, path: Path, build_dir: Path, defs: Path) -> Source:
    """``build_dir`` compared with ``defs`` by the build's inputs digest (``toolc build``'s
    own no-op check): definitions edited since (or another toolc) make it stale."""
    try:
        manifest = (build_dir / "manifest.json").read_bytes()
    except OSError:
        return Source(kind=kind, path=path, build=build_dir, build_id=None, current=None)
    return Source(kind=kind, path=path, build=build_dir,
                  build_id=hashlib.sha256(manifest).hexdigest()[:12],
                  current=build_is_current(defs, build_dir) if defs.is_dir() else None)


def _report_source(source: Source, defs: Path, consequence: str) -> None:
    """Name the source on stderr; warn first when the build and the definitions differ."""
    if source.current is False:
        _warn(f"{source.build.as_posix()}/ is stale relative to {defs.as_posix()}/ (run "
              f"`toolc build`): {consequence}")
    _echo(source.describe(), err=True)


def _warn_undeclared(declared: Declared, context: dict[str, Any]) -> None:
    for text in context_warnings(declared, context):
        _warn(text)


def _tables(build_dir: Path) -> dict[str, Any]:
    manifest = read_manifest(build_dir)
    raw = read_build_file(build_dir, f"{manifest['package']}/tables.json", manifest)
    tables: dict[str, Any] = json.loads(raw)
    return tables


@main.command()
@_context_options
@click.option("--build", "build_dir", default="build", type=click.Path(path_type=Path),
              help="Build directory (engine: compiled).")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Definitions directory (selects the reference engine).  "
              "[default: definitions with --engine reference]")
@click.option("--engine", type=click.Choice(["compiled", "reference"]), default=None,
              help="compiled (the build's generated runtime) or reference (the interpreter "
              "over the definitions).  [default: compiled, or reference with --definitions]")
@click.option("--json", "as_json", is_flag=True, help='Print {"tools": [...]}.')
@_guard
def resolve(build_dir: Path, defs: Path | None, engine: str | None, as_json: bool,
            **kwargs: Any) -> None:
    """Print the tools a request sees, one per line in catalog order.

    Warns on stderr when the build is stale relative to the definitions (when both exist)
    and when the request names an agent, channel, account or group that is not declared.

    \b
    Examples:
      toolc resolve --agent main --provider openai --channel telegram --group -100123
      toolc resolve --definitions definitions --agent viewer --json
    """
    engine = engine or ("reference" if defs is not None else "compiled")
    context = _context(kwargs)
    definitions = defs or DEFAULT_DEFS
    if engine == "reference":
        source = _source("definitions", definitions, build_dir, definitions)
        _report_source(source, definitions, f"answering from {definitions.as_posix()}/ "
                       f"(without --definitions, resolve answers from {build_dir.as_posix()}/)")
    else:
        source = _source("build", build_dir, build_dir, definitions)
        _report_source(source, definitions, "answering from it as built")
    if engine == "reference":
        resolved = resolve_definitions(defs or DEFAULT_DEFS)
        _warn_undeclared(Declared.of_resolved(resolved), context)
        names = ReferenceInterpreter(resolved).resolve(**context).names
    else:
        runtime = load_runtime(build_dir)
        _warn_undeclared(Declared.of_tables(_tables(build_dir)), context)
        names = tuple(runtime.resolve(**context).names)
    if as_json:
        _echo(json.dumps({"tools": list(names), "source": source.to_json()}))
    else:
        _echo("\n".join(names))


def _explain_source(build_dir: Path | None, defs: Path | None) -> Source:
    """The option given, else build/ when it is current relative to definitions/ (or there
    are no definitions), else definitions/; said on stderr, with a warning when build/ and
    definitions/ differ (resolve answers from build/)."""
    if build_dir is not None and defs is not None:
        raise click.UsageError("give --build or --definitions, not both")
    if build_dir is not None:
        source = _source("build", build_dir, build_dir, DEFAULT_DEFS)
        _report_source(source, DEFAULT_DEFS, "explaining from it as built")
        return source
    if defs is not None:
        source = _source("definitions", defs, DEFAULT_BUILD, defs)
        _report_source(source, defs, f"explaining from {defs.as_posix()}/")
        return source
    has_build = (DEFAULT_BUILD / "manifest.json").is_file()
    build = _source("build", DEFAULT_BUILD, DEFAULT_BUILD, DEFAULT_DEFS)
    if has_build and build.current is not False:
        _report_source(build, DEFAULT_DEFS, "")
        return build
    source = _source("definitions", DEFAULT_DEFS, DEFAULT_BUILD, DEFAULT_DEFS)
    _report_source(source, DEFAULT_DEFS, f"explaining from {DEFAULT_DEFS.as_posix()}/")
    return source


def _check_runtime_agrees(build_dir: Path, context: dict[str, Any], tool: str,
                          explanation: Explanation) -> None:
    """The build's generated runtime must give the reference's answer (exit 4 otherwise)."""
    names = tuple(load_runtime(build_dir).resolve(**context).names)
    if explanation.resolution is None:  # never present: nothing else was evaluated
        reference = tuple(n for n in names if n != tool)
    else:
        reference = explanation.resolution.names
    if names == reference and (tool in names) == explanation.visible:
        return
    only_ref = sorted(set(reference) - set(names))
    only_rt = sorted(set(names) - set(reference))
    raise InternalError(
        f"{build_dir.as_posix()}: the reference interpreter (over sources.json) and the "
        f"generated runtime disagree for this request: {tool} is "
        f"{'visible' if explanation.visible else 'not visible'} in the reference and "
        f"{'visible' if tool in names else 'not visible'} in the runtime (only in the "
        f"reference: {', '.join(only_ref) or '-'}; only in the runtime: "
        f"{', '.join(only_rt) or '-'}); a toolc bug, or a build whose files were edited "
        "together with its manifest")


def _print_explanation(ex: Explanation) -> None:
    result_color = {"present": "green", "kept": "green", "absent": "red", "removed": "red"}
    verdict = _paint("visible", err=False, fg="green") if ex.visible else _paint(
        "not visible", err=False, fg="red")
    decided = f" (removed by: {ex.decided_by})" if ex.decided_by else ""
    _echo(f"{_paint(ex.tool, err=False, bold=True)}: {verdict}{decided}")
    for row in ex.rows:
        result = _paint(row.result, err=False, fg=result_color.get(row.result))
        if row.result in ("skipped", "not reached") and not row.details:
            _echo(f"  {row.layer}: {result} ({row.rule})")
            continue
        _echo(f"  {row.layer}: {result}" + (f" ({row.rule})" if row.result == "skipped"
                                            else ""))
        for d in row.details:
            where = d.where()
            _echo(f"    {_paint(where, err=False, bold=True)}: {d.text}" if where
                  else f"    {d.text}")


@main.command()
@_context_options
@click.option("--build", "build_dir", default=None, type=click.Path(path_type=Path),
              help="Explain from a build directory (its sources.json), cross-checked with "
              "its runtime.  [default: build when current, else --definitions]")
@click.option("--definitions", "defs", default=None, type=click.Path(path_type=Path),
              help="Explain from a definitions directory.  [default: definitions when build "
              "is missing or stale]")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"tool", "visible", "decided_by", "layers": [...]} (see README).')
@click.argument("tool")
@_guard
def explain(build_dir: Path | None, defs: Path | None, as_json: bool, tool: str,
            **kwargs: Any) -> None:
    """Show, layer by layer, which rule kept or removed TOOL for a request.

    TOOL is read as policies read names (Exec and bash mean exec). Every rule is printed
    with its file:line:col, also the allow list a tool is missing from. Exits 0 when TOOL
    is visible and 1 when it is not, so scripts can test access.

    \b
    Examples:
      toolc explain --agent viewer exec
      toolc explain --channel telegram --group -100123 --sender-username alice exec
      toolc explain --build build --agent main --provider openai apply_patch --json
    """
    source = _explain_source(build_dir, defs)
    path = source.path
    resolved = resolve_build(path) if source.kind == "build" else resolve_definitions(path)
    context = _context(kwargs)
    try:
        name = catalog_tool(resolved, tool)
    except UnknownToolError as exc:
        raise click.UsageError(str(exc)) from exc
    _warn_undeclared(Declared.of_resolved(resolved), context)
    ex = explain_tool(resolved, name, context)
    if source.kind == "build":
        _check_runtime_agrees(path, context, name, ex)
    if as_json:
        _echo(json.dumps({**ex.to_json(), "source": source.to_json()}, indent=2,
                         ensure_ascii=False))
    else:
        _print_explanation(ex)
    sys.exit(EXIT_OK if ex.visible else EXIT_INPUT)


def _dialect_reason(provider: str, model: str | None, providers: dict[str, Any]) -> str:
    """Why ``dialect_for`` picks what it picks, in the definitions' words."""
    p = provider.strip().lower()
    m = (model or "").strip().lower()
    entries = providers["entries"]
    full = (m if "/" in m else f"{p}/{m}") if p and m else None
    if full is not None and full in entries:
        return f'providers.entries."{full}"'
    if p in entries:
        return f'providers.entries."{p}"'
    if p in providers["builtin"]:
        return f"built-in default for provider {p}"
    if ("google" in p or "gemini" in p) and "anthropic" not in p:
        return "built-in: a provider naming google or gemini speaks gemini-json"
    return "providers.default"


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
@_guard
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
    if build_dir is not None:
        manifest = read_manifest(build_dir)
        bundles = json.loads(read_build_file(build_dir, f"{manifest['package']}/bundles.json",
                                             manifest))
        notes_all = json.loads(read_build_file(build_dir, "schema-notes.json", manifest))
        if provider is not None:  # the build's own runtime answers: exactly its rule
            dialect = str(load_runtime(build_dir).dialect_for(provider, model))
        providers = bundles["providers"]
    else:
        resolved = resolve_definitions(defs or DEFAULT_DEFS)
        bundle = build_bundles(resolved, Diagnostics())
        bundles, notes_all = bundle.data, bundle.notes
        providers = bundles["providers"]
        if provider is not None:
            dialect = dialect_for(provider, model, providers["entries"], providers["default"])
    assert dialect is not None
    if provider is not None:
        _echo(f"dialect: {dialect} ({_dialect_reason(provider, model, providers)})", err=True)
    name = normalize_tool_name(tool)  # as policies read names, like explain
    envelopes = bundles["dialects"][dialect]["tools"]
    if name not in envelopes:
        hint = did_you_mean(name, envelopes)
        raise click.UsageError(f'unknown tool "{name}"' + (f" ({hint})" if hint else ""))
    envelope, notes = envelopes[name], notes_all[dialect].get(name, [])
    if as_json:
        _echo(json.dumps({"tool": envelope, "notes": notes}, indent=2, sort_keys=True))
        return
    _echo(json.dumps(envelope, indent=2))
    for note in notes:
        where = note["pointer"] or "(root)"
        lossy = " [lossy: kept in the description]" if note["lossy"] else ""
        _echo(_message(f"{note['severity']}[{note['code']}]", f"at {where}: "
                       f"{note['message']}{lossy}"), err=True)


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
        raise _DiffUsageError("give BASE and HEAD, or --base-rev REV and at most HEAD")
    if base_rev is not None:
        base = side_from_revision(base_rev, defs)
        head = load_side(sides[0] if sides else str(defs), definitions=defs)
    else:
        base = load_side(sides[0], definitions=defs)
        head = load_side(sides[1] if len(sides) > 1 else str(defs), definitions=defs)
    result = compute_diff(base, head)
    _echo(render_diff(result, fmt, color=fmt == "text" and use_color()), nl=False)
    if fail_on == "widen" and result.widened:
        sys.exit(EXIT_WIDENED)
    sys.exit(EXIT_CHANGED if result.access_changed else EXIT_OK)


@main.command()
@click.argument("defs", default="definitions", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True,
              help="Overwrite the files init writes where they exist (your other files are "
              "never touched or deleted).")
@_guard
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
    files = init_files()
    replaced = sorted(rel for rel in files if (defs / rel).exists())
    try:
        write_new_files(files, defs, force=force, refuse_non_empty=False)
    except ProjectWriteError as exc:
        _error(str(exc))
        sys.exit(EXIT_INPUT)
    if replaced:
        _echo(f"overwrote {len(replaced)} of init's files in {defs.as_posix()}/: "
              f"{', '.join(replaced)}", err=True)
    _echo(f"wrote a starter {defs.as_posix()}/; next: toolc build {defs.as_posix()}", err=True)


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
@_guard
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
        loaded = load_config(config, config.as_posix())
        result = import_openclaw(loaded.config, config.name, allow_partial=allow_partial,
                                 included=loaded.included)
        write_new_files(result.files, out, force=force, refuse_non_empty=True)
    except ImportRefused as exc:
        for message in exc.messages:
            _echo(_message("error", message), err=True)
        sys.exit(EXIT_INPUT)
    except ConfigError as exc:  # before the config is known: redact by shape
        _echo(_message("error", Secrets().redact(str(exc))), err=True)
        sys.exit(EXIT_INPUT)
    except ProjectWriteError as exc:
        _error(str(exc))
        sys.exit(EXIT_INPUT)
    _print_import_report(result, out)
    diagnostics = api_validate(out)
    errors = [d for d in diagnostics if d.severity == "error"]
    _echo(f"check: {len(errors)} error(s), {len(diagnostics) - len(errors)} warning(s) "
          f"(toolc validate {out.as_posix()} lists them)")
    if errors:
        _print_diagnostics(errors)
        sys.exit(EXIT_INPUT)


def _print_import_report(result: ImportResult, out: Path) -> None:
    _echo(f"wrote {out.as_posix()}/ (openclaw/policy.yaml: the imported policy)")
    sections = [("included ($include)", result.included),
                ("catalog stubs to fill in (openclaw/stubs.yaml)", result.stubs),
                ("notes", result.notes),
                ("left out, could change tool access (--allow-partial): the import is "
                 "WIDER than the gateway here", result.partial),
                ("left out (no tool-policy meaning in toolc)", result.left_out)]
    for title, lines in sections:
        if lines:
            _echo(f"{title}: {len(lines)}")
            for line in lines:
                _echo(f"  {line}")


@main.command("schema-path")
def schema_path_cmd() -> None:
    """Print the path of the installed JSON Schema for definitions files (for editors:
    `# yaml-language-server: $schema=<that path>`).

    \b
    Examples:
      toolc schema-path
      cp "$(toolc schema-path)" definitions/.schema/   # refresh init's copy
    """
    _echo(schema_path().as_posix())


# -- MCP ---------------------------------------------------------------------------------------
class MissingExtraError(click.ClickException):
    """An optional extra of toolc is missing or broken: a usage problem (exit 2), not a bug."""

    exit_code = EXIT_USAGE


# The optional extras (pyproject's [project.optional-dependencies]) and what each brings.
EXTRAS: Final = {"mcp": "the MCP Python SDK, anyio, starlette and uvicorn"}


def _mcp_module(command: str, name: str) -> ModuleType:
    """``toolc.<name>``, or a clear error naming the extra when anything its import chain
    needs is missing or too old (any ImportError from outside toolc itself)."""
    return _extra_module(command, name, "mcp")


def _extra_module(command: str, name: str, extra: str) -> ModuleType:
    try:
        return importlib.import_module(f"toolc.{name}")
    except ImportError as exc:
        missing = exc.name or ""
        if missing == "toolc" or missing.startswith("toolc."):
            raise  # toolc's own module is missing: a broken install, reported as internal
        what = f"module {missing!r} is missing" if isinstance(exc, ModuleNotFoundError) and \
            missing else f"importing it failed ({exc})"
        raise MissingExtraError(
            f"toolc {command} needs the optional extra toolc[{extra}] ({EXTRAS[extra]}), and "
            f"{what}: install it with pip install 'toolc[{extra}]' (or upgrade it with "
            f"pip install -U 'toolc[{extra}]')") from exc


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    host = host.strip("[]") if sep else "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 <= number <= 65535:
        raise click.BadParameter(f"{value!r}: expected HOST:PORT or PORT", param_hint="--http")
    return host or "127.0.0.1", number


def _upstream_specs(values: tuple[str, ...], param: str) -> list[Any]:
    upstream = _mcp_module("serve-mcp", "serve.mcp_upstream")
    try:
        specs = [upstream.UpstreamSpec.parse(v) for v in values]
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=param) from exc
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise click.BadParameter("each upstream NAME may be given once", param_hint=param)
    return specs


@main.command("serve-mcp")
@_context_options
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
@_guard
def serve_mcp(build_dir: Path, impl: str | None, hooks: str | None, http: str | None,
              identities: Path | None, upstreams: tuple[str, ...], reload_interval: float,
              max_sessions_per_identity: int, max_inflight_per_identity: int, strict: bool,
              **kwargs: Any) -> None:
    """Serve the build's tools over MCP (stdio, or streamable HTTP with --http).

    tools/list is the resolved tool set (mcp dialect); tools/call runs the wrapped request
    path into --impl or an --upstream; tools with neither are not listed. Over stdio the
    context flags say who calls; over HTTP each request's bearer token does (--identities),
    and the flags are refused. GET /healthz (no token) names the build served and the last
    build refused. Exit 1 when the port is taken, an upstream is unreachable or (--strict) a
    context names an agent the build lacks.

    \b
    Examples:
      toolc serve-mcp --agent main --sender-id 42 --impl mytools:IMPLEMENTATIONS
      toolc serve-mcp --http 127.0.0.1:8765 --identities identities.yaml --impl mytools:IMPLS
      toolc serve-mcp --agent coder --upstream files="python -m files_server"
    """
    server = _mcp_module("serve-mcp", "serve.mcp_server")
    identity = _mcp_module("serve-mcp", "serve.mcp_identity")
    context = _context(kwargs)
    if http is not None and identities is None:
        raise click.UsageError("--http needs --identities (toolc identity add makes one)")
    if http is None and identities is not None:
        raise click.UsageError("--identities is for --http (over stdio the flags give the "
                               "context)")
    if http is not None and context:
        raise click.UsageError("over --http the identities file gives each request's context; "
                               "drop the context flags")
    try:
        ids = identity.IdentitySource(identities) if identities is not None else None
        impl_source = server.import_attr(impl) if impl else None
        hooks_source = server.import_attr(hooks) if hooks else None
    except (identity.IdentitiesError, ValueError, ImportError, AttributeError) as exc:
        raise click.UsageError(str(exc)) from exc
    read_manifest(build_dir)  # exit 1 now, with the reason, when there is no build
    options = server.Options(build_dir=build_dir, context=context, identities=ids,
                             impls=impl_source, hooks=hooks_source,
                             upstreams=_upstream_specs(upstreams, "--upstream"),
                             reload_interval=reload_interval, strict=strict,
                             limits=_mcp_module("serve-mcp", "serve.mcp_http").Limits(
                                 max_sessions_per_identity, max_inflight_per_identity))
    server.setup_logging()
    try:
        server.run(options, None if http is None else _host_port(http))
    except (_mcp_module("serve-mcp", "serve.mcp_upstream").UpstreamUnavailable,
            server.ServeError) as exc:  # an upstream, the port, an unknown agent (--strict)
        _error(str(exc))
        sys.exit(EXIT_INPUT)


@main.group()
def identity() -> None:
    """Bearer-token identities for toolc serve-mcp --http.

    \b
    Examples:
      toolc identity add alice --agent main --sender-id 42 --identities identities.yaml
    """


@identity.command("add")
@_context_options
@click.argument("name")
@click.option("--identities", "path", type=click.Path(path_type=Path),
              default="identities.yaml", help="The identities file (created when missing).")
@_guard
def identity_add(name: str, path: Path, **kwargs: Any) -> None:
    """Add identity NAME with the given context; print its new bearer token once.

    Only the token's sha256 is written to the file: keep the printed token secret.

    \b
    Examples:
      toolc identity add alice --agent main --channel telegram --group -100123 --sender-id 42
    """
    try:
        token = add_identity(path, name, _context(kwargs))
    except IdentitiesError as exc:
        raise click.UsageError(str(exc)) from exc
    _echo(token)
    _echo(f"added identity {name} to {path.as_posix()} (the token is not stored: keep it)",
          err=True)


@main.command("import-mcp")
@click.argument("upstream", metavar="NAME=COMMAND|NAME=URL")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="File to write.  [default: definitions/plugins/NAME.yaml]")
@_guard
def import_mcp(upstream: str, out: Path | None) -> None:
    """Snapshot an MCP server's tools/list into catalog YAML (plugin NAME, schemas verbatim).

    \b
    Examples:
      toolc import-mcp files="python -m files_server" -o definitions/plugins/files.yaml
      toolc import-mcp search=http://127.0.0.1:9000/mcp
    """
    mod = _mcp_module("import-mcp", "serve.mcp_upstream")
    spec = _upstream_specs((upstream,), "NAME=COMMAND")[0]
    try:
        text, count = mod.snapshot(spec)
    except mod.UpstreamUnavailable as exc:
        _error(str(exc))
        sys.exit(EXIT_INPUT)
    path = out or DEFAULT_DEFS / "plugins" / f"{spec.name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _echo(f"wrote {path.as_posix()}: {count} tool(s) of plugin {spec.name}", err=True)


if __name__ == "__main__":  # pragma: no cover
    main()
