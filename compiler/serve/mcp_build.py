"""One build as serve-mcp serves it: the runtime copy loaded from the checked bytes of the
build (``load_runtime_copy``), the generation that binds implementations, hooks and upstream
routes to it (``load_generation``), and one context's view of it: its tool list and wrapped
tools (``View``). ``mcp_server`` swaps generations as builds are replaced."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import itertools
import json
import logging
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..builds.read import BuildError, read_build_file, read_manifest, run_runtime
from ..rules.context import is_message
from .mcp_upstream import Routing, Upstream, forwarder
from .observe import Observer

LOG: Final = logging.getLogger("toolc.mcp")
DIALECT: Final = "mcp"
_CALL_CONTEXT_KEYS: Final = ("agent_id", "session_key", "sender_is_owner", "model_provider",
                             "model_id")
_SEQ: Final = itertools.count(1)
_VIEW_CACHE_LIMIT: Final = 1024
SYNC_CALL_THREADS: Final = 40  # sync implementations running at once (anyio's default)
# Who asks the human about an exec approval for the call being served (set per tools/call).
CALL_ASKER: contextvars.ContextVar[Callable[[Any, Any], None] | None] = contextvars.ContextVar(
    "toolc_mcp_asker", default=None)
NO_ELICITATION: Final = (
    "exec needs approval and this MCP client cannot be asked: it does not declare the "
    "elicitation capability. Use a client that supports MCP elicitation (it is asked to "
    "approve each command), or allow the command in the definitions (the agent's "
    "tools.exec allowlist) and rebuild.")


def manifest_digest(build_dir: Path) -> str:
    """The sha256 of a build's manifest.json (what changes when the build is replaced)."""
    try:
        return hashlib.sha256((build_dir / "manifest.json").read_bytes()).hexdigest()
    except OSError as exc:
        raise BuildError(f"{build_dir.as_posix()}/manifest.json: unreadable ({exc})") from exc


@dataclass(frozen=True, slots=True)
class LoadedBuild:
    runtime: ModuleType
    catalog: list[Mapping[str, Any]]  # raw catalog.json entries
    digest: str  # of manifest.json
    agents: tuple[str, ...]  # the declared agent ids (normalized)


# A check of a whole build before any byte of it runs (``--verify-key``: the signature):
# the files it checked, by name, ``manifest.json`` included; raises BuildError.
Verifier = Callable[[Path], Mapping[str, bytes]]


def load_runtime_copy(build_dir: Path, verify: Verifier | None = None) -> LoadedBuild:
    """A build's runtime, every file verified against the manifest first (and with
    ``verify``, the whole build against its signature); the runtime is imported under a
    private name, from the very bytes of ``__init__.py`` that were checked, and fully
    loaded (the runtime checks every other file it reads against ``__init__.py``)."""
    if verify is not None:
        files = dict(verify(build_dir))
        digest = hashlib.sha256(files["manifest.json"]).hexdigest()
        manifest = json.loads(files["manifest.json"])
    else:
        digest = manifest_digest(build_dir)
        manifest = read_manifest(build_dir)
        files = {rel: read_build_file(build_dir, rel, manifest)
                 for rel in sorted(manifest["files"])}
    package = manifest["package"]
    catalog = json.loads(files[f"{package}/catalog.json"])
    tables = json.loads(files[f"{package}/tables.json"])
    init = f"{package}/__init__.py"
    if init not in files:
        raise BuildError(f"{build_dir.as_posix()}: no runtime package {package}/")
    alias = f"_toolc_mcp_{next(_SEQ)}_{package}"
    try:
        module = run_runtime(build_dir, alias, manifest, files[init])
        _warm(module)
    except Exception as exc:
        sys.modules.pop(alias, None)
        raise BuildError(f"{build_dir.as_posix()}: the runtime does not load ({exc})") from exc
    if manifest_digest(build_dir) != digest:
        raise BuildError(f"{build_dir.as_posix()}: replaced while it was being loaded")
    return LoadedBuild(module, list(catalog["tools"]), digest, tuple(sorted(tables["agents"])))


def _warm(rt: ModuleType) -> None:
    """Read every file the runtime reads lazily (tables and their shards, catalog, bundles,
    models, modules)."""
    try:
        everyone = rt.resolve(sender_is_owner=True)
    except rt.AgentSelectionRequiredError as exc:  # 2026.9, several agents: warm one of them
        everyone = rt.resolve(sender_is_owner=True, agent_id=exc.agent_ids[0])
    # _shards holds them (_policy in builds before it was split)
    shards = sys.modules.get(f"{rt.__name__}._shards") or sys.modules.get(f"{rt.__name__}._policy")
    load_shards = getattr(shards, "_load_shards", None)
    if load_shards is not None:  # every table shard (builds before shards have none)
        load_shards()
    rt.tool_definitions(everyone, dialect=DIALECT)
    rt.wrap(everyone, {}, dialect=DIALECT)  # needs pydantic and a build with models
    for name in rt.TOOL_NAMES[:1]:  # executes models.py
        with contextlib.suppress(ValueError):
            rt.validate_args(name, {})
    assert rt.openai_chat is not None  # the last static module: all of them are loaded


Implementations = Mapping[str, Callable[..., Any]]
ImplSource = Implementations | Callable[[ModuleType], Implementations] | None
HooksSource = Callable[[ModuleType], Any] | None


@dataclass(slots=True)
class Generation:
    """A loaded build and what serves its tools: implementations, hooks, upstream routes."""

    runtime: ModuleType
    digest: str
    implementations: dict[str, Callable[..., Any]]
    hooks: Any
    routing: Routing  # the proxied tools: routed, or refused (rug pull, ...) for now
    unserved: frozenset[str] = frozenset()  # never listed: no implementation here
    raw: dict[str, types.CallToolResult] = field(default_factory=dict)  # by call id
    external: frozenset[str] = frozenset()  # externalContent tools (their text is wrapped)
    agents: tuple[str, ...] = ()
    decisions: Any = None  # the runtime's DecisionLog (serve.observe), None when not logging
    _views: dict[tuple[tuple[str, Any], ...], View] = field(default_factory=dict)

    @property
    def hidden(self) -> frozenset[str]:
        """The tools not listed: no implementation here, or not routed to their upstream."""
        return self.unserved | self.routing.unrouted

    @property
    def refused(self) -> Mapping[str, str]:
        """Why a proxied tool is not routed, by tool."""
        return self.routing.refused

    def forget_views(self) -> None:
        """Drop the views made so far (the routes changed: their lists are stale)."""
        self._views.clear()

    def view(self, context: Mapping[str, Any]) -> View:
        """What one context sees and may call (cached per context). A context the build
        refuses (AgentSelectionRequiredError: an OpenClaw 2026.9 build with several agents
        and none chosen) is an invalid request, never an empty or a global tool list."""
        self.routing.resync()  # an upstream listed since: its tools' routes first
        key = tuple(sorted(context.items()))
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= _VIEW_CACHE_LIMIT:
                self._views.clear()
            try:
                view = self._views[key] = View(self, context)
            except (TypeError, ValueError) as exc:
                # AgentSelectionRequiredError; a context refused at load (a group the target
                # would ignore, a message it cannot route) never gets this far
                raise MCPError(types.INVALID_REQUEST, f"refused: {exc}") from exc
        return view

    def resolved(self, context: Mapping[str, Any]) -> tuple[Any, Any]:
        """(the message-level request or None, the ToolSet) of ``context``: a message is
        routed first (``resolve_request``), resolve's keywords are resolved."""
        rt = self.runtime
        if not is_message(context):
            return None, rt.resolve(**context)
        request_type = getattr(rt, "Request", None)
        if request_type is None:
            raise ValueError("a message-level context needs a build that routes (routes.json); "
                             "rebuild it with this toolc")
        request = request_type.of(context)
        return request, rt.resolve_request(request)[1]

    def refusal(self, context: Mapping[str, Any]) -> tuple[str, bool] | None:
        """Why the build refuses every request of ``context`` (None: it does not), and
        whether the context itself is wrong for it (a group the target would ignore, a
        message it cannot route: refused at load) rather than lacking an agent choice."""
        try:
            self.resolved(context)
        except self.runtime.AgentSelectionRequiredError as exc:
            return str(exc), False
        except (TypeError, ValueError) as exc:
            return str(exc), True
        return None

    def unknown_agent(self, agent_id: object) -> bool:
        """True when ``agent_id`` names no agent of the build (it then gets no agent layer,
        as in OpenClaw); ids are compared as the runtime normalizes them."""
        if not isinstance(agent_id, str):
            return False
        rt = self.runtime  # _sessions holds it (_policy in builds before it was split)
        sessions = getattr(rt, "_sessions", None) or getattr(rt, "_policy", None)
        normalize = getattr(sessions, "_normalize_id", None)
        key = normalize(agent_id) if callable(normalize) else agent_id.strip().lower()
        return (key or "main") not in self.agents


def load_generation(build_dir: Path, impls: ImplSource, hooks: HooksSource,
                    upstreams: list[Upstream], verify: Verifier | None = None,
                    observer: Observer | None = None) -> Generation:
    """Load a build and bind the implementations (and upstream routes) to it."""
    loaded = load_runtime_copy(build_dir, verify)
    rt, catalog = loaded.runtime, loaded.catalog
    given = dict(impls(rt) if callable(impls) else (impls or {}))
    # a proxied plugin's tools are its upstream's alone: routed, or hidden and never callable
    routing = Routing(catalog, upstreams)
    known = set(rt.TOOL_NAMES)
    for name in sorted(set(given) - known):
        LOG.warning("implementation %s: no such tool in the build: ignored", name)
    for name in sorted(set(given) & set(routing.proxied)):
        LOG.warning("implementation %s: a tool of upstream %s, served by it alone: ignored",
                    name, routing.proxied[name].spec.name)
    generation = Generation(rt, loaded.digest, {}, hooks(rt) if hooks is not None else None,
                            routing=routing, agents=loaded.agents,
                            external=frozenset(str(t["name"]) for t in catalog
                                               if t.get("externalContent")))
    implementations = {n: f for n, f in given.items()
                       if n in known and n not in routing.proxied}
    implementations.update({n: forwarder(routing, n, generation.raw)
                            for n in routing.proxied if n in known})
    generation.implementations = implementations
    unserved = [n for n in rt.TOOL_NAMES if n not in implementations]
    if unserved:
        LOG.warning("not listed, no implementation in this process (--impl/--upstream): %s",
                    ", ".join(unserved))
    generation.unserved = frozenset(unserved)
    if observer is not None:
        generation.decisions = observer.decision_log_for(rt, loaded.digest)
    return generation


class View:
    """One context's tool list (mcp dialect) and wrapped tools, on one build."""

    __slots__ = ("_wire", "by_wire", "decisions", "gen", "listing", "runtime", "tools",
                 "unlisted")

    def __init__(self, gen: Generation, context: Mapping[str, Any]) -> None:
        self.gen = gen
        rt = self.runtime = gen.runtime
        request, toolset = gen.resolved(context)
        every = list(zip(rt.tool_definitions(toolset, dialect=DIALECT), toolset.names,
                         strict=True))
        hidden, routes = gen.hidden, gen.routing.routes
        listed = [(_with_upstream(d, r.live if (r := routes.get(n)) else None), n)
                  for d, n in every if n not in hidden]
        self.listing: Final = types.ListToolsResult.model_validate(
            {"tools": [d for d, _ in listed]})
        self.by_wire: Final = {str(d["name"]): n for d, n in listed}
        self._wire: dict[str, Any] | None = None
        # in this context's set but not served: the call says why, not "unknown tool"
        self.unlisted: Final = {str(d["name"]): n for d, n in every if n in hidden}
        if request is None:
            call_context = rt.CallContext(**{k: context[k] for k in _CALL_CONTEXT_KEYS
                                             if k in context})
            decisions = None if gen.decisions is None else gen.decisions.request(**context)
        else:  # wrap derives the call context from the route
            call_context = None
            decisions = None if gen.decisions is None else gen.decisions.request(request)
        self.decisions: Final = decisions
        self.tools: Final = rt.wrap(request or toolset, gen.implementations,
                                    context=call_context, hooks=gen.hooks, dialect=DIALECT,
                                    approvals=_approvals(rt), decisions=self.decisions)

    def listing_wire(self) -> dict[str, Any]:
        """The listing as the SDK puts it on the wire (made once per view)."""
        if self._wire is None:
            self._wire = self.listing.model_dump(by_alias=True, mode="json", exclude_none=True,
                                                 exclude_unset=True)
        return self._wire

    async def call(self, wire: str, arguments: Mapping[str, Any], call_id: str | None) -> Any:
        """The ToolResult of a call by its wire name (an error result when it may not run)."""
        name = self.by_wire.get(wire)
        if name is None:
            hidden = self.unlisted.get(wire)
            if hidden is not None:  # named as the client calls it (an upstream's own name)
                why = self.gen.refused.get(hidden)
                if why is not None:
                    return self._refuse(hidden, call_id, why, wire=wire, code="upstream-refused")
                return self._refuse(hidden, call_id, f"Tool {wire} has no implementation on "
                                    "this server", wire=wire, code="not-served")
            # unknown, or not in this context's set: the wrapper says which
            return self.tools.call(wire, dict(arguments), tool_call_id=call_id)
        if name in self.gen.routing.proxied:  # the upstream may have changed the tool
            why = await self.gen.routing.check(name, before_call=True)
            if why is not None:
                return self._refuse(name, call_id, why, wire=wire, code="upstream-refused")
        tool = self.tools[name]
        if tool.is_async:  # a cancelled request cancels its task
            return await tool.acall(dict(arguments), tool_call_id=call_id)
        signal = self.runtime.AbortSignal()
        run = partial(tool.call, dict(arguments), tool_call_id=call_id, signal=signal)
        try:
            # the event loop's executor rather than anyio.to_thread: the same thread handoff
            # (the caller's context variables go along) at about half its CPU per call
            return await asyncio.get_running_loop().run_in_executor(
                _sync_calls(), contextvars.copy_context().run, run)
        except anyio.get_cancelled_exc_class():
            # the client cancelled: the thread's call sees its signal, its result is dropped
            signal.abort("cancelled by the MCP client")
            raise

    def _refuse(self, name: str, call_id: str | None, why: str, *, wire: str, code: str) -> Any:
        """The error result of a call that may not run here (decision-logged without its
        arguments, as ``code``), naming the tool as the client called it (``wire``)."""
        if self.decisions is not None:
            self.decisions.refused(name, call_id, why, code=code)
        return self.runtime.error_result(wire, why)


_POOL: list[ThreadPoolExecutor] = []


def _sync_calls() -> ThreadPoolExecutor:
    """The threads sync implementations run in (as many as anyio's default limiter allows);
    made on first use, so a forked worker makes its own."""
    if not _POOL:
        _POOL.append(ThreadPoolExecutor(max_workers=SYNC_CALL_THREADS,
                                        thread_name_prefix="toolc-mcp-call"))
    return _POOL[0]


def _approvals(rt: ModuleType) -> Any:
    """An ApprovalManager of the runtime whose approvals are put to the calling MCP client by
    elicitation (``CALL_ASKER``); without an asker the exec call fails with how to approve."""

    class ElicitingApprovals(rt.ApprovalManager):  # type: ignore[name-defined,misc]
        def register(self, record: Any) -> Any:
            ask = CALL_ASKER.get()
            if ask is None:
                raise rt.ExecDeniedError(NO_ELICITATION, tool="exec", code="no-approver")
            waiter = super().register(record)
            ask(self, record)
            return waiter

    return ElicitingApprovals()


def _with_upstream(definition: Mapping[str, Any], live: types.Tool | None) -> Any:
    """A proxied tool's listing with the upstream's annotations and outputSchema (pinned by
    the import hash, so they are what was reviewed)."""
    if live is None:
        return definition
    extra = live.model_dump(by_alias=True, mode="json", exclude_none=True,
                            include={"annotations", "output_schema"})
    return {**definition, **extra}


def mcp_result(result: Any) -> types.CallToolResult:
    """A runtime ToolResult as an MCP CallToolResult (text and image blocks)."""
    return types.CallToolResult.model_validate(
        {"content": [c.to_dict() for c in result.content], "isError": bool(result.is_error)})
