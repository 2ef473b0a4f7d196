"""``toolc serve-mcp``: an MCP server on a compiled build, and a policy-filtering MCP proxy.

tools/list answers with the request's resolved tool set in the ``mcp`` dialect; tools/call
runs the build's wrapped request path (owner guard, argument checks, hooks, abort, error
results) into the implementations, or into an upstream MCP server's tool (proxy mode).

Who calls: over stdio, the context given on the command line; over streamable HTTP, the
identity of the request's bearer token (``mcp_identity``), checked for every HTTP request
before the MCP layer sees it; nothing a client sends can change it.

The build directory is polled: a new build (a changed ``manifest.json``) is verified file by
file against its manifest and loaded beside the current one; on success it serves from then
on and every connected client gets ``notifications/tools/list_changed``; a bad build is
refused and logged, and the previous one keeps serving. Each build's runtime is loaded under
a private module name, with every file it reads loaded up front, so the one being served
never reads the directory again.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import itertools
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import anyio
import anyio.to_thread
import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

from .._version import __version__
from ..api import BuildError, read_build_file, read_manifest
from .mcp_identity import Identities, Identity
from .mcp_upstream import (
    Route,
    Upstream,
    UpstreamSpec,
    UpstreamUnavailable,
    connect,
    forwarder,
    match,
    reason,
)

LOG: Final = logging.getLogger("toolc.mcp")
IDENTITY_SCOPE_KEY: Final = "toolc.identity"
DIALECT: Final = "mcp"
_CALL_CONTEXT_KEYS: Final = ("agent_id", "session_key", "sender_is_owner", "model_provider",
                             "model_id")
_SEQ: Final = itertools.count(1)
_VIEW_CACHE_LIMIT: Final = 1024


# -- one loaded build ------------------------------------------------------------------------------
def manifest_digest(build_dir: Path) -> str:
    """The sha256 of a build's manifest.json (what changes when the build is replaced)."""
    try:
        return hashlib.sha256((build_dir / "manifest.json").read_bytes()).hexdigest()
    except OSError as exc:
        raise BuildError(f"{build_dir.as_posix()}/manifest.json: unreadable ({exc})") from exc


def load_runtime_copy(build_dir: Path) -> tuple[ModuleType, list[Mapping[str, Any]], str]:
    """(runtime, raw catalog entries, manifest digest) of a build, every file verified against
    the manifest first; the runtime is imported under a private name and fully loaded."""
    digest = manifest_digest(build_dir)
    manifest = read_manifest(build_dir)
    for rel in sorted(manifest["files"]):
        read_build_file(build_dir, rel, manifest)
    package = manifest["package"]
    catalog = json.loads(read_build_file(build_dir, f"{package}/catalog.json", manifest))
    init = build_dir / package / "__init__.py"
    alias = f"_toolc_mcp_{next(_SEQ)}_{package}"
    spec = importlib.util.spec_from_file_location(alias, init,
                                                  submodule_search_locations=[str(init.parent)])
    if spec is None or spec.loader is None:
        raise BuildError(f"{build_dir.as_posix()}: no runtime package {package}/")
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    try:
        spec.loader.exec_module(module)
        _warm(module)
    except Exception as exc:
        sys.modules.pop(alias, None)
        raise BuildError(f"{build_dir.as_posix()}: the runtime does not load ({exc})") from exc
    if manifest_digest(build_dir) != digest:
        raise BuildError(f"{build_dir.as_posix()}: replaced while it was being loaded")
    return module, list(catalog["tools"]), digest


def _warm(rt: ModuleType) -> None:
    """Read every file the runtime reads lazily (tables, catalog, bundles, models, modules)."""
    everyone = rt.resolve(sender_is_owner=True)
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
    hidden: frozenset[str] = frozenset()  # proxied tools whose upstream does not match
    _views: dict[tuple[tuple[str, Any], ...], View] = field(default_factory=dict)

    def view(self, context: Mapping[str, Any]) -> View:
        """What one context sees and may call (cached per context)."""
        key = tuple(sorted(context.items()))
        view = self._views.get(key)
        if view is None:
            if len(self._views) >= _VIEW_CACHE_LIMIT:
                self._views.clear()
            view = self._views[key] = View(self, context)
        return view


def load_generation(build_dir: Path, impls: ImplSource, hooks: HooksSource,
                    upstreams: list[Upstream]) -> Generation:
    """Load a build and bind the implementations (and upstream routes) to it."""
    rt, catalog, digest = load_runtime_copy(build_dir)
    given = dict(impls(rt) if callable(impls) else (impls or {}))
    routes: dict[str, Route] = match(catalog, upstreams)
    proxied = {u.spec.name for u in upstreams}
    # a proxied plugin's tools are its upstream's alone: routed, or hidden and never callable
    upstream_only = {str(t["name"]): str(t["plugin"]) for t in catalog
                     if t.get("plugin") in proxied}
    known = set(rt.TOOL_NAMES)
    for name in sorted(set(given) - known):
        LOG.warning("implementation %s: no such tool in the build: ignored", name)
    for name in sorted(set(given) & set(upstream_only)):
        LOG.warning("implementation %s: a tool of upstream %s, served by it alone: ignored",
                    name, upstream_only[name])
    implementations = {n: f for n, f in given.items() if n in known and n not in upstream_only}
    implementations.update({n: forwarder(r) for n, r in routes.items()})
    hidden = frozenset(n for n in upstream_only if n not in routes)
    return Generation(rt, digest, implementations, hooks(rt) if hooks is not None else None,
                      hidden)


class View:
    """One context's tool list (mcp dialect) and wrapped tools, on one build."""

    __slots__ = ("by_wire", "listing", "runtime", "tools")

    def __init__(self, gen: Generation, context: Mapping[str, Any]) -> None:
        rt = self.runtime = gen.runtime
        toolset = rt.resolve(**context)
        listed = [(d, n) for d, n in zip(rt.tool_definitions(toolset, dialect=DIALECT),
                                         toolset.names, strict=True) if n not in gen.hidden]
        self.listing: Final = types.ListToolsResult.model_validate(
            {"tools": [d for d, _ in listed]})
        self.by_wire: Final = {str(d["name"]): n for d, n in listed}
        call_context = rt.CallContext(**{k: context[k] for k in _CALL_CONTEXT_KEYS
                                         if k in context})
        self.tools: Final = rt.wrap(toolset, gen.implementations, context=call_context,
                                    hooks=gen.hooks, dialect=DIALECT)

    async def call(self, wire: str, arguments: Mapping[str, Any], call_id: str | None) -> Any:
        """The ToolResult of a call by its wire name (an error result when it may not run)."""
        name = self.by_wire.get(wire)
        if name is None:  # unknown, not in this context's set, hidden: the wrapper says which
            return self.tools.call(wire, dict(arguments), tool_call_id=call_id)
        if name not in self.tools:
            return self.runtime.error_result(name, f"Tool {name} has no implementation on "
                                             "this server")
        tool = self.tools[name]
        if tool.is_async:  # a cancelled request cancels its task
            return await tool.acall(dict(arguments), tool_call_id=call_id)
        signal = self.runtime.AbortSignal()
        try:
            return await anyio.to_thread.run_sync(
                partial(tool.call, dict(arguments), tool_call_id=call_id, signal=signal),
                abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            # the client cancelled: the thread's call sees its signal, its result is dropped
            signal.abort("cancelled by the MCP client")
            raise


def mcp_result(result: Any) -> types.CallToolResult:
    """A runtime ToolResult as an MCP CallToolResult (text and image blocks)."""
    return types.CallToolResult.model_validate(
        {"content": [c.to_dict() for c in result.content], "isError": bool(result.is_error)})


# -- the server ----------------------------------------------------------------------------------
@dataclass(slots=True)
class Options:
    """What ``toolc serve-mcp`` was asked for."""

    build_dir: Path
    context: Mapping[str, Any] = field(default_factory=dict)
    identities: Identities | None = None
    impls: ImplSource = None
    hooks: HooksSource = None
    upstreams: list[UpstreamSpec] = field(default_factory=list)
    reload_interval: float = 1.0


class McpService:
    """The MCP server: handlers, the build being served, connected clients, the watcher."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.upstreams: list[Upstream] = []
        self.generation: Generation | None = None
        self._refused: str | None = None
        self._sessions: dict[int, Any] = {}
        self.bus = InMemorySubscriptionBus()
        self.server: Server[Any] = Server(
            "toolc", version=__version__, on_list_tools=self._list_tools,
            on_call_tool=self._call_tool, on_subscriptions_listen=ListenHandler(self.bus))
        self.server.middleware.append(self._track)

    def init_options(self) -> Any:
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def start(self, stack: AsyncExitStack) -> None:
        """Connect the upstreams and load the build (BuildError when it cannot serve)."""
        for spec in self.options.upstreams:
            up = await connect(stack, spec)
            LOG.info("upstream %s: %d tool(s)", spec.name, len(up.tools))
            self.upstreams.append(up)
        self.generation = await anyio.to_thread.run_sync(self._load)
        LOG.info("serving build %s (%s)", self.options.build_dir.as_posix(),
                 self.generation.digest[:12])

    def _load(self) -> Generation:
        o = self.options
        return load_generation(o.build_dir, o.impls, o.hooks, self.upstreams)

    # -- identity -------------------------------------------------------------------------------
    def context_of(self, ctx: Any) -> Mapping[str, Any]:
        """The context of a request: its token's identity over HTTP, the flags over stdio."""
        if self.options.identities is None:
            return self.options.context
        scope = getattr(ctx.request, "scope", None)
        identity = scope.get(IDENTITY_SCOPE_KEY) if isinstance(scope, dict) else None
        if not isinstance(identity, Identity):
            raise MCPError(types.INVALID_REQUEST, "unauthenticated request")
        return identity.context

    # -- handlers ---------------------------------------------------------------------------------
    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        assert self.generation is not None
        listing: types.ListToolsResult = self.generation.view(self.context_of(ctx)).listing
        return listing

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> Any:
        assert self.generation is not None
        view = self.generation.view(self.context_of(ctx))
        call_id = None if ctx.request_id is None else str(ctx.request_id)
        try:
            result = await view.call(params.name, params.arguments or {}, call_id)
        except view.runtime.AbortError as exc:
            return types.CallToolResult.model_validate(
                {"content": [{"type": "text", "text": str(exc)}], "isError": True})
        return mcp_result(result)

    async def _track(self, ctx: Any, call_next: Any) -> Any:
        """Remember handshake-era connections, to tell them when the tool list changes."""
        if ctx.method == "notifications/initialized":
            connection = getattr(ctx.session, "_connection", None)
            key = id(connection)
            if connection is not None and key not in self._sessions:
                self._sessions[key] = ctx.session
                connection.exit_stack.callback(self._sessions.pop, key, None)
        return await call_next(ctx)

    # -- reloading --------------------------------------------------------------------------------
    async def watch(self) -> None:
        """Poll the build directory for a replaced build, forever."""
        while True:
            await anyio.sleep(self.options.reload_interval)
            await self.check_build()

    async def check_build(self) -> None:
        """Serve the build in the directory if it is new and valid; refuse it otherwise."""
        assert self.generation is not None
        try:
            digest = manifest_digest(self.options.build_dir)
        except BuildError as exc:
            if self._refused != "missing":
                LOG.error("%s; still serving build %s", exc, self.generation.digest[:12])
            self._refused = "missing"
            return
        if digest in (self.generation.digest, self._refused):
            return
        try:
            generation = await anyio.to_thread.run_sync(self._load)
        except Exception as exc:
            self._refused = digest
            LOG.error("refused the new build in %s: %s; still serving build %s",
                      self.options.build_dir.as_posix(), exc, self.generation.digest[:12])
            return
        self.generation, self._refused = generation, None
        LOG.info("serving the new build %s; telling %d client(s)", generation.digest[:12],
                 len(self._sessions))
        await self.announce()

    async def announce(self) -> None:
        """notifications/tools/list_changed to every connected client."""
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:
                LOG.info("client gone (%s)", exc)
                self._sessions.pop(key, None)
        await self.bus.publish(ToolsListChanged())


# -- transports ------------------------------------------------------------------------------------
def _bearer(scope: Mapping[str, Any]) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() or None if scheme.lower() == "bearer" else None
    return None


class BearerAuth:
    """ASGI middleware: every HTTP request needs a known bearer token; its identity goes into
    the request scope (anything the client put there is replaced)."""

    def __init__(self, app: Any, identities: Identities) -> None:
        self.app = app
        self.identities = identities

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets or anything else
            await send({"type": "websocket.close", "code": 1008})
            return
        token = _bearer(scope)
        identity = self.identities.lookup(token) if token else None
        if identity is None:
            LOG.warning("refused an HTTP request from %s: %s", _peer(scope),
                        "unknown bearer token" if token else "no bearer token")
            await _unauthorized(send)
            return
        await self.app({**scope, IDENTITY_SCOPE_KEY: identity}, receive, send)


def _peer(scope: Mapping[str, Any]) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


async def _unauthorized(send: Any) -> None:
    body = json.dumps({"error": "invalid_token",
                       "error_description": "a known bearer token is required"}).encode()
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="toolc"'),
        (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def serve_stdio(options: Options) -> None:
    """Serve one client over this process's stdin and stdout."""
    service = McpService(options)
    async with AsyncExitStack() as stack:
        await service.start(stack)
        async with anyio.create_task_group() as tg:
            tg.start_soon(service.watch)
            async with stdio_server() as (read, write):
                await service.server.run(read, write, service.init_options())
            tg.cancel_scope.cancel()


async def serve_http(options: Options, host: str, port: int) -> None:
    """Serve streamable HTTP on host:port at /mcp until interrupted."""
    assert options.identities is not None
    service = McpService(options)
    async with AsyncExitStack() as stack:
        await service.start(stack)
        # A call's answer as one JSON body rather than an SSE stream: about half the latency
        # on loopback; notifications still reach clients on their standalone GET stream.
        app = service.server.streamable_http_app(host=host, json_response=True)
        config = uvicorn.Config(BearerAuth(app, options.identities), host=host, port=port,
                                log_level="warning", lifespan="on", access_log=False)
        server = uvicorn.Server(config)
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve)
            while not server.started:
                if server.should_exit:
                    return
                await anyio.sleep(0.02)
            bound = server.servers[0].sockets[0].getsockname()
            where = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
            LOG.info("listening on http://%s:%d/mcp (%d identities)", where, bound[1],
                        len(options.identities))
            tg.start_soon(service.watch)
            while not server.should_exit:
                await anyio.sleep(0.1)
            tg.cancel_scope.cancel()


def run(options: Options, http: tuple[str, int] | None) -> None:
    """Serve until stdin closes (stdio) or until interrupted (HTTP)."""
    try:
        if http is None:
            anyio.run(serve_stdio, options)
        else:
            anyio.run(serve_http, options, *http)
    except KeyboardInterrupt:
        pass
    except BaseExceptionGroup as group:  # what failed inside the upstreams' task groups
        leaf = reason(group)
        if isinstance(leaf, (BuildError, UpstreamUnavailable)):
            raise leaf from None
        raise


def import_attr(spec: str) -> Any:
    """``MODULE:ATTR`` (the current directory is importable, as with ``python -m``)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{spec!r}: expected MODULE:ATTR")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    value: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


def setup_logging() -> None:
    """Log to stderr (stdout may be the MCP wire)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("toolc serve-mcp: %(levelname)s: %(message)s"))
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    LOG.propagate = False
