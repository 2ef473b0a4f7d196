"""Ask a build or a definitions directory: which tools a request sees (resolve), why one tool is
kept or removed (explain), and a tool's schema in a provider's dialect (schema)."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from ..audit.declared import Declared, context_warnings
from ..audit.explain import Explanation, UnknownToolError, catalog_tool
from ..audit.explain import explain as explain_tool
from ..builds.compile import compile_files, resolve_definitions
from ..builds.incremental import build_is_current
from ..builds.read import (
    BUILD_SOURCES_ROOT,
    BuildError,
    read_build_file,
    read_manifest,
    resolve_build,
    run_runtime,
)
from ..builds.read import read_tables as read_build_tables
from ..diagnostics import Diagnostics, did_you_mean
from ..pipeline.bundles import build_bundles
from ..pipeline.writer import publish
from ..rules.names import normalize_tool_name
from ..runtime._dialects import DialectRegistry
from ..semantics.reference import ReferenceInterpreter
from .routing import ROUTE_KEYWORDS, RouteResult, route_with, toolc_refusal

DEFAULT_DEFS, DEFAULT_BUILD = Path("definitions"), Path("build")
ENGINES = ("compiled", "reference")  # the build's generated runtime, the reference interpreter


class InternalError(Exception):
    """toolc contradicts itself (e.g. its two engines disagree): a bug (the CLI exits 4)."""


def load_runtime(out: Path) -> ModuleType:
    """Import the generated runtime package of the build directory ``out`` under its own
    name: its ``__init__.py`` runs from bytes checked against the manifest, never through the
    import system, and it checks every other file as it loads (``run_runtime``; BuildError
    when a file differs from what it was built with)."""
    manifest = read_manifest(out)
    package = manifest["package"]
    source = read_build_file(out, f"{package}/__init__.py", manifest)
    return run_runtime(out, package, manifest, source)


def read_tables(out: Path) -> dict[str, Any]:
    """A build's tables, ``tables.json`` and its shards (checked against its manifest)."""
    return read_build_tables(out)


# -- where the answer comes from ---------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Where resolve or explain reads its answer (the CLI says it on stderr and in --json)."""

    kind: Literal["build", "definitions"]
    path: Path
    build: Path  # the build compared with the definitions
    definitions: Path  # the definitions compared with the build
    build_id: str | None  # sha256 of its manifest.json (first 12 hex digits); None: no build
    current: bool | None  # built from the definitions as they are now; None: nothing to compare

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path.as_posix(), "build": self.build_id,
                "current": self.current}

    def describe(self) -> str:
        if self.kind == "definitions":
            return f"source: definitions {self.path.as_posix()}/ (reference interpreter)"
        if self.build_id is None:
            return f"source: build {self.path.as_posix()}/ (no toolc build there)"
        state = {True: "current with the definitions", False: "stale",
                 None: "no definitions to compare with"}[self.current]
        return f"source: build {self.path.as_posix()}/ (build {self.build_id}, {state})"


def source(kind: Literal["build", "definitions"], path: Path, build_dir: Path,
           defs: Path) -> Source:
    """``build_dir`` compared with ``defs`` by the build's inputs digest (``toolc build``'s
    own no-op check): definitions edited since (or another toolc) make it stale."""
    try:
        manifest = (build_dir / "manifest.json").read_bytes()
    except OSError:
        return Source(kind=kind, path=path, build=build_dir, definitions=defs, build_id=None,
                      current=None)
    return Source(kind=kind, path=path, build=build_dir, definitions=defs,
                  build_id=hashlib.sha256(manifest).hexdigest()[:12],
                  current=build_is_current(defs, build_dir) if defs.is_dir() else None)


def resolve_source(build_dir: Path = DEFAULT_BUILD, definitions: Path | None = None,
                   engine: str | None = None) -> Source:
    """Where ``resolve`` answers from: the build (engine ``compiled``, the default) or the
    definitions (engine ``reference``, the default when ``definitions`` is given)."""
    engine = engine or ("reference" if definitions is not None else "compiled")
    if engine not in ENGINES:
        raise ValueError(f"engine {engine!r}: expected {' or '.join(ENGINES)}")
    defs = definitions or DEFAULT_DEFS
    if engine == "reference":
        return source("definitions", defs, build_dir, defs)
    return source("build", build_dir, build_dir, defs)


def explain_source(build_dir: Path | None = None, definitions: Path | None = None) -> Source:
    """Where ``explain`` reads from: the one given, else build/ when it is current relative to
    definitions/ (or there are no definitions), else definitions/. ValueError for both."""
    if build_dir is not None and definitions is not None:
        raise ValueError("give --build or --definitions, not both")
    if build_dir is not None:
        return source("build", build_dir, build_dir, DEFAULT_DEFS)
    if definitions is not None:
        return source("definitions", definitions, DEFAULT_BUILD, definitions)
    build = source("build", DEFAULT_BUILD, DEFAULT_BUILD, DEFAULT_DEFS)
    if (DEFAULT_BUILD / "manifest.json").is_file() and build.current is not False:
        return build
    return source("definitions", DEFAULT_DEFS, DEFAULT_BUILD, DEFAULT_DEFS)


# -- route -------------------------------------------------------------------------------------
def _require_build(src: Source) -> None:
    """BuildError, with what to run, when a build source has no build but definitions."""
    if src.build_id is None and src.definitions.is_dir():
        raise BuildError(
            f"{src.path.as_posix()}: not a toolc build (no manifest.json); run "
            f"`toolc build {src.definitions.as_posix()} -o {src.path.as_posix()}` first, "
            f"or answer from the definitions with `--definitions "
            f"{src.definitions.as_posix()}`")


@contextmanager
def routing_runtime(src: Source) -> Iterator[ModuleType]:
    """The generated runtime that routes for ``src``: the build's own, or for definitions
    one compiled into a temporary build (routing has one implementation, the runtime's;
    the build's files are read while the block runs)."""
    if src.kind == "build":
        _require_build(src)
        yield load_runtime(src.path)
        return
    files, _, _ = compile_files(src.path, with_models=False)
    with tempfile.TemporaryDirectory(prefix="toolc-route-") as tmp:
        out = Path(tmp) / "build"
        publish(files, out)
        yield load_runtime(out)


def _sources_root(src: Source) -> str:
    """The directory a build's binding positions are relative to, as explain names files."""
    return src.path.as_posix() if src.kind == "definitions" else BUILD_SOURCES_ROOT


def _routed(runtime: ModuleType, src: Source, request: Mapping[str, Any]
            ) -> tuple[RouteResult, dict[str, Any]]:
    return route_with(runtime, request, sources=_sources_root(src))


def _asked(context: dict[str, Any], request: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the request names, for the undeclared-name warnings: a route's account is
    ``default`` when the message names none, which is no account the caller named."""
    if request is None or request.get("account_id") is not None:
        return context
    return {k: v for k, v in context.items() if k != "account_id"}


def route_from(src: Source, request: Mapping[str, Any]) -> RouteResult:
    """``route`` with its source already chosen; ``request``: at least the routing fields
    of a message-level request (``toolc.rules.context.MESSAGE_KEYS``)."""
    with routing_runtime(src) as runtime:
        return _routed(runtime, src, request)[0]


def route(build_dir: Path | str, channel: str, *, definitions: Path | None = None,
          **routing: Any) -> RouteResult:
    """The agent and session key OpenClaw gives a message on ``channel``, and the binding
    that decided (``toolc_runtime.route``; as ``toolc route``): from the build, or with
    ``definitions`` from them compiled into a temporary build. ``routing``: ``account_id``,
    ``peer`` / ``parent_peer`` (``(kind, id)``), ``guild_id``, ``team_id``,
    ``member_role_ids``, ``default_agent_id``, ``dm_scope``, ``group_scope``. Raises
    AgentSelectionRequiredError when the release refuses the message (no binding matches and
    there is no default agent) and RequestError for an input the build cannot take."""
    unknown = sorted(set(routing) - set(ROUTE_KEYWORDS))
    if unknown:
        raise TypeError(f"route() got unknown keyword(s): {', '.join(unknown)}")
    return route_from(resolve_source(Path(build_dir), definitions),
                      {"channel": channel, **routing})


# -- resolve -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ResolveResult:
    """The tools a request sees, in catalog order, and where the answer came from."""

    names: tuple[str, ...]
    source: Source
    warnings: tuple[str, ...]  # the request names an agent, channel, ... nobody declared
    route: RouteResult | None = None  # a message-level request: its route


def _one_request(context: dict[str, Any], request: Mapping[str, Any] | None) -> None:
    if request is not None and context:
        raise ValueError("give a context or a message-level request, not both: the route "
                         "decides the agent, the session key and the group")


def resolve_from(src: Source, context: dict[str, Any], *, request: Mapping[str, Any] | None = None,
                 strict: bool = True) -> ResolveResult:
    """``resolve`` with its source already chosen: the reference interpreter over the
    definitions, or the build's generated runtime. A ``request`` is routed first (by the
    build's runtime, or one compiled from the definitions) and resolved with its route."""
    _one_request(context, request)
    routed = None
    if src.kind == "definitions":
        resolved = resolve_definitions(src.path)
        if request is not None:
            with routing_runtime(src) as runtime:
                routed, context = _routed(runtime, src, request)
        warnings = context_warnings(Declared.of_resolved(resolved), _asked(context, request))
        names = ReferenceInterpreter(resolved).resolve(
            strict=strict and routed is None, **context).names
    else:
        _require_build(src)
        runtime = load_runtime(src.path)
        if request is not None:
            routed, context = _routed(runtime, src, request)
        warnings = context_warnings(Declared.of_tables(read_tables(src.path)),
                                    _asked(context, request))
        names = runtime_resolve(runtime, context, strict=strict and routed is None)
    return ResolveResult(names=tuple(names), source=src, warnings=tuple(warnings),
                         route=routed)


def runtime_resolve(runtime: ModuleType, context: dict[str, Any], *,
                    strict: bool = True) -> tuple[str, ...]:
    """A build's ``resolve``; its refusals (AgentSelectionRequiredError, UntrustedGroupError:
    the generated package's own classes) are raised as toolc's (``toolc.runtime._errors``),
    so that callers catch one. ``strict=False``: a group the release ignores is ignored."""
    try:
        # a build from before `strict` takes no such keyword (and ignores such a group)
        found = runtime.resolve(**context) if strict else runtime.resolve(**context,
                                                                          strict=False)
    except Exception as exc:
        refusal = toolc_refusal(runtime, exc)
        if refusal is not None:
            raise refusal from exc
        raise
    return tuple(found.names)


def resolve(build_dir: Path = DEFAULT_BUILD, context: dict[str, Any] | None = None, *,
            definitions: Path | None = None, engine: str | None = None,
            request: Mapping[str, Any] | None = None, strict: bool = True) -> ResolveResult:
    """The tools the request ``context`` (``toolc.rules.context.CONTEXT_KEYS``: agent_id,
    message_provider, group_id, ...) sees: from the build's runtime, or with ``definitions``
    (or ``engine="reference"``) from the reference interpreter. As ``toolc resolve``.

    Or the tools of the run a message starts: ``request`` (a mapping of
    ``toolc_runtime.Request``'s fields, ``toolc.rules.context.MESSAGE_KEYS``; without
    ``context``) is routed first and resolved with its route (``result.route``), as
    ``toolc_runtime.resolve_request`` does. Under OpenClaw 2026.9 a context naming a group
    its session key does not name is refused (UntrustedGroupError) unless ``strict`` is
    False, which ignores the group as the release does."""
    return resolve_from(resolve_source(build_dir, definitions, engine), context or {},
                        request=request, strict=strict)


# -- explain -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ExplainResult:
    """Layer by layer, which rule kept or removed a tool, and where that was read."""

    explanation: Explanation
    source: Source
    warnings: tuple[str, ...]
    route: RouteResult | None = None  # a message-level request: its route

    @property
    def visible(self) -> bool:
        return self.explanation.visible


def explain_from(src: Source, tool: str, context: dict[str, Any], *,
                 request: Mapping[str, Any] | None = None, strict: bool = True) -> ExplainResult:
    """``explain`` with its source already chosen. ``tool`` is read as policies read names
    (UnknownToolError, a ValueError, when no catalog has it). From a build, the build's
    runtime must agree with the reference (InternalError otherwise). A ``request`` is routed
    first, as in ``resolve_from``."""
    _one_request(context, request)
    resolved = resolve_build(src.path) if src.kind == "build" else resolve_definitions(src.path)
    name = catalog_tool(resolved, tool)
    routed = None
    if request is not None:
        with routing_runtime(src) as runtime:
            routed, context = _routed(runtime, src, request)
    strict = strict and routed is None  # a route's group counts where its key names it
    warnings = context_warnings(Declared.of_resolved(resolved), _asked(context, request))
    ex = explain_tool(resolved, name, context, strict=strict)
    if src.kind == "build":
        check_runtime_agrees(src.path, context, name, ex, strict=strict)
    return ExplainResult(explanation=ex, source=src, warnings=tuple(warnings), route=routed)


def explain(tool: str, context: dict[str, Any] | None = None, *, build_dir: Path | None = None,
            definitions: Path | None = None, request: Mapping[str, Any] | None = None,
            strict: bool = True) -> ExplainResult:
    """Why ``tool`` is visible or not for the request ``context``, as ``toolc explain``: from
    ``build_dir`` or ``definitions`` (give at most one), else as ``explain_source`` picks.
    ``request`` (a message, without ``context``) is routed first; ``strict`` as in
    ``resolve`` (False: the group layer says the ignored group is ignored)."""
    return explain_from(explain_source(build_dir, definitions), tool, context or {},
                        request=request, strict=strict)


def check_runtime_agrees(build_dir: Path, context: dict[str, Any], tool: str,
                         explanation: Explanation, *, strict: bool = True) -> None:
    """The build's generated runtime must give the reference's answer (InternalError)."""
    names = runtime_resolve(load_runtime(build_dir), context, strict=strict)
    if explanation.resolution is None:  # never present: nothing else was evaluated
        reference = tuple(n for n in names if n != tool)
    else:
        reference = explanation.resolution.names
    if names == reference and (tool in names) == explanation.visible:
        return
    only_ref = sorted(set(reference) - set(names))
    only_rt = sorted(set(names) - set(reference))
    raise InternalError(
        f"{build_dir.as_posix()}: the reference interpreter (over sources/) and the "
        f"generated runtime disagree for this request: {tool} is "
        f"{'visible' if explanation.visible else 'not visible'} in the reference and "
        f"{'visible' if tool in names else 'not visible'} in the runtime (only in the "
        f"reference: {', '.join(only_ref) or '-'}; only in the runtime: "
        f"{', '.join(only_rt) or '-'}); a toolc bug, or a build whose files were edited "
        "together with its manifest")


# -- schema ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSchema:
    """A tool object in one dialect, with the notes explaining each change to its schema."""

    tool: str
    dialect: str
    envelope: Any
    notes: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Schemas:
    """Every tool's cleaned schema in every dialect, from definitions or a build."""

    bundles: dict[str, Any]
    notes: dict[str, Any]
    build: Path | None  # read from this build (its runtime picks dialects)

    def dialect_for(self, provider: str, model: str | None = None) -> tuple[str, str]:
        """The dialect ``provider`` (and ``model``) speaks, and why, in the definitions'
        words: from a build its own runtime answers (exactly its rule)."""
        dialect, reason = DialectRegistry.from_json(self.bundles["providers"]).dialect_for(
            provider, model)
        if self.build is not None:
            dialect = str(load_runtime(self.build).dialect_for(provider, model))
        return dialect, reason

    def tool(self, tool: str, dialect: str) -> ToolSchema:
        """``tool`` (read as policies read names) in ``dialect``; UnknownToolError if none."""
        name = normalize_tool_name(tool)
        envelopes = self.bundles["dialects"][dialect]["tools"]
        if name not in envelopes:
            hint = did_you_mean(name, envelopes)
            raise UnknownToolError(f'unknown tool "{name}"' + (f" ({hint})" if hint else ""))
        return ToolSchema(tool=name, dialect=dialect, envelope=envelopes[name],
                          notes=tuple(self.notes[dialect].get(name, [])))


def load_schemas(definitions: Path | None = None, build_dir: Path | None = None) -> Schemas:
    """The schemas of ``build_dir`` (its checked files) when given, else cleaned from
    ``definitions`` (default: definitions)."""
    if build_dir is not None and definitions is not None:
        raise ValueError("give --build or --definitions, not both")
    if build_dir is not None:
        manifest = read_manifest(build_dir)
        bundles = json.loads(read_build_file(build_dir, f"{manifest['package']}/bundles.json",
                                             manifest))
        notes = json.loads(read_build_file(build_dir, "schema-notes.json", manifest))
        return Schemas(bundles=bundles, notes=notes, build=build_dir)
    bundle = build_bundles(resolve_definitions(definitions or DEFAULT_DEFS), Diagnostics())
    return Schemas(bundles=bundle.data, notes=bundle.notes, build=None)


def schema(tool: str, *, dialect: str | None = None, provider: str | None = None,
           model: str | None = None, definitions: Path | None = None,
           build_dir: Path | None = None) -> ToolSchema:
    """``tool``'s tool object in ``dialect``, or in the dialect ``provider`` (and ``model``)
    speaks: as ``toolc schema``. Give exactly one of ``dialect`` and ``provider``."""
    if (dialect is None) == (provider is None):
        raise ValueError("give exactly one of dialect and provider")
    schemas = load_schemas(definitions, build_dir)
    if provider is not None:
        dialect, _ = schemas.dialect_for(provider, model)
    assert dialect is not None
    return schemas.tool(tool, dialect)


def dialect_reason(provider: str, model: str | None, providers: dict[str, Any]) -> str:
    """Why ``dialect_for`` picks what it picks, in the definitions' words (``providers``:
    a build's table, ``bundles.json``'s ``providers``)."""
    return DialectRegistry.from_json(providers).dialect_for(provider, model)[1]
