"""``toolc serve-mcp``: an MCP server on a compiled build, and a policy-filtering MCP proxy.

tools/list answers with the request's resolved tool set in the ``mcp`` dialect; tools/call
runs the build's wrapped request path (owner guard, argument checks, hooks, abort, error
results) into the implementations, or into an upstream MCP server's tool (proxy mode).

Who calls: over stdio, the context given on the command line; over streamable HTTP, the
identity of the request's bearer token (``mcp_identity``), checked for every HTTP request
before the MCP layer sees it; nothing a client sends can change it. A context is the message a
gateway would receive (``toolc_runtime.Request``'s fields: routed first, as OpenClaw routes
it) or ``resolve``'s keywords; one the build can never serve as given (a group its target
would ignore, a message it cannot route) is refused when it is loaded, never at a call.

The build directory is polled: a new build (a changed ``manifest.json``) is verified file by
file against its manifest and loaded beside the current one; on success it serves from then
on and every connected client gets ``notifications/tools/list_changed``; a bad build is
refused and logged, and the previous one keeps serving. Each build's runtime is loaded under
a private module name, with every file it reads loaded up front, so the one being served
never reads the directory again.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import logging
import os
import socket
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from signal import SIGINT
from types import FrameType
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

from .._version import __version__
from ..builds.read import BuildError
from ..runtime._errors import printable
from .mcp_build import (
    CALL_ASKER,
    LOG,
    Generation,
    HooksSource,
    ImplSource,
    Verifier,
    View,
    load_generation,
    manifest_digest,
    mcp_result,
)
from .mcp_http import HEALTH_PATH, IDENTITY_SCOPE_KEY, Gateway, Limits
from .mcp_identity import Identity, IdentitySource
from .mcp_lean import LeanApp
from .mcp_sessions import LocalStore, SharedStore
from .mcp_upstream import (
    Upstream,
    UpstreamSpec,
    UpstreamUnavailable,
    connect,
    reason,
)
from .observe import Observer
from .workers import stop_signals, supervise

# A stop lets calls in flight finish for this long (then they are cancelled); uvicorn's own
# limit, after which it cancels whatever still runs, is a last resort beyond it.
STOP_GRACE: Final = 5
_UVICORN_GRACE: Final = STOP_GRACE + 3
# uvicorn's HTTP parser and event loop: httptools and uvloop when installed (uvicorn's own
# "standard" set, the extra toolc[mcp] brings them), else its pure-Python h11 and asyncio.
HTTP_PARSER: Final = "httptools" if importlib.util.find_spec("httptools") else "h11"


# -- the server ----------------------------------------------------------------------------------
@dataclass(slots=True)
class Options:
    """What ``toolc serve-mcp`` was asked for."""

    build_dir: Path
    context: Mapping[str, Any] = field(default_factory=dict)
    identities: IdentitySource | None = None
    impls: ImplSource = None
    hooks: HooksSource = None
    upstreams: list[UpstreamSpec] = field(default_factory=list)
    reload_interval: float = 1.0
    limits: Limits = field(default_factory=Limits)
    strict: bool = False  # an unknown agent is an error, not a warning
    verify: Verifier | None = None  # --verify-key: the signature, before anything runs
    poller: Any = None  # --watch oci://REF: toolc.ship.oci.Poller
    watch_interval: float = 30.0  # seconds between two asks of the registry
    observer: Observer | None = None  # decision logs and metrics (serve.observe)
    http_stack: str = "lean"  # "lean" (mcp_lean) or "sdk" (the MCP SDK's app, the baseline)
    workers: int = 1  # HTTP worker processes sharing the port (workers.py)
    state_dir: Path | None = None  # with workers: the SharedStore's directory


class ServeError(Exception):
    """serve-mcp cannot start (the message says why, in one line)."""


class _Server(Server[Any]):
    """The SDK server, advertising ``tools.listChanged: true`` on every transport: serve-mcp
    sends notifications/tools/list_changed when a new build is served. (Over streamable HTTP
    the SDK builds the initialize result with default options, which say false.)"""

    def create_initialization_options(self, notification_options: Any = None,
                                      *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, *args, **kwargs)


@dataclass(slots=True)
class Refusal:
    """The last build refused: which, why, when, and the directory state it was tried on."""

    digest: str
    reason: str
    at: float
    stamp: tuple[tuple[str, int, int, int], ...]


def _manifest_stat(build_dir: Path) -> tuple[int, int, int] | None:
    """What changes when manifest.json is replaced or rewritten (inode, size, mtime)."""
    try:
        st = (build_dir / "manifest.json").stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def tree_stamp(build_dir: Path) -> tuple[tuple[str, int, int, int], ...]:
    """Every file of a build directory with its size, mtime and inode: what changes while a
    build is still being written into place."""
    out = []
    for path in sorted(build_dir.rglob("*")):
        with contextlib.suppress(OSError):
            st = path.stat()
            out.append((path.relative_to(build_dir).as_posix(), st.st_size, st.st_mtime_ns,
                        st.st_ino))
    return tuple(out)


class McpService:
    """The MCP server: handlers, the build being served, connected clients, the watcher."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.upstreams: list[Upstream] = []
        self.generation: Generation | None = None
        self.refusal: Refusal | None = None
        self._poll_error: str | None = None
        self.gateway: Gateway | None = None
        self.lean: Any = None  # the lean HTTP app (mcp_lean.LeanApp), when it serves
        self._manifest_seen: tuple[int, int, int] | None = None
        self._checking = anyio.Lock()
        self.rpc_errors = MCPError
        self.tasks: Any = None  # the serving task group (elicitations run in it)
        self._loop_thread = threading.get_ident()
        self._sessions: dict[int, Any] = {}
        self._call_keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self.bus = InMemorySubscriptionBus()
        self.server: Server[Any] = _Server(
            "toolc", version=__version__, on_list_tools=self._list_tools,
            on_call_tool=self._call_tool, on_subscriptions_listen=ListenHandler(self.bus))
        self.server.middleware.append(self._track)
        if options.identities is not None:  # a re-read file is checked against the build
            options.identities.check = self._unservable

    def init_options(self) -> Any:
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def start(self, stack: AsyncExitStack) -> None:
        """Connect the upstreams and load the build (BuildError when it cannot serve)."""
        if self.options.poller is not None:
            stack.callback(self.options.poller.close)  # another worker may poll from then on
        for spec in self.options.upstreams:
            up = await connect(stack, spec)
            LOG.info("upstream %s: %d tool(s)", spec.name, len(up.tools))
            self.upstreams.append(up)
        self._manifest_seen = _manifest_stat(self.options.build_dir)
        self.generation = await anyio.to_thread.run_sync(self._load)
        self._observe_serving(self.generation)
        self.check_agents(self.generation)
        LOG.info("serving build %s (%s)", self.options.build_dir.as_posix(),
                 self.generation.digest[:12])

    def _unservable(self, identity: Identity) -> str | None:
        """Why the build served now can never serve ``identity`` as it is written (None: it
        can): what makes a re-read identities file refused."""
        refused = self.generation.refusal(identity.context) if self.generation else None
        return refused[0] if refused is not None and refused[1] else None

    def check_agents(self, gen: Generation) -> None:
        """Refuse a context the build can never serve as given (a group its target would
        ignore, a message it cannot route); warn (refuse with --strict) when a context
        names an agent the build lacks or chooses none where the build needs one."""
        contexts = [("--agent", self.options.context)]
        source = self.options.identities
        current = source.current() if source is not None else None
        if current is not None:
            contexts = [(f"identity {i.name}", i.context) for i in current.all()]
        for who, context in contexts:
            refused = gen.refusal(context)
            if refused is not None:
                if refused[1]:
                    raise ServeError(f"{who}: {refused[0]}")
                text = f"{who}: every request is refused: {refused[0]}"
                if self.options.strict:
                    raise ServeError(text)
                LOG.warning("%s", text)
            agent = context.get("agent_id")
            if not gen.unknown_agent(agent):
                continue
            message = (f"{who}: agent {agent!r} is not declared in the build (known: "
                       f"{', '.join(gen.agents) or 'none'}); it is served the policy of no "
                       "agent")
            if self.options.strict:
                raise ServeError(message)
            LOG.warning("%s", message)

    def _load(self) -> Generation:
        o = self.options
        gen = load_generation(o.build_dir, o.impls, o.hooks, self.upstreams, o.verify,
                              o.observer)
        gen.routing.on_change = partial(self._routes_changed, gen)
        return gen

    # -- upstreams --------------------------------------------------------------------------------
    def _routes_changed(self, gen: Generation) -> None:
        """An upstream tool was unlisted or listed again: new views, and clients told."""
        gen.forget_views()
        if gen is self.generation and self.tasks is not None:
            self.tasks.start_soon(self.announce)

    async def follow_upstreams(self) -> None:
        """Match the build against an upstream's list as soon as it announces a change
        (notifications/tools/list_changed), forever."""
        async with anyio.create_task_group() as tg:
            for up in self.upstreams:
                tg.start_soon(self._follow, up)

    async def _follow(self, up: Upstream) -> None:
        while True:
            await up.announced.wait()
            up.announced = anyio.Event()  # set again by an announcement during the listing
            try:
                await up.refresh()
            except UpstreamUnavailable as exc:
                LOG.warning("%s after it announced a change; the next call of one of its "
                            "tools lists it again", exc)
                continue
            if self.generation is not None:
                self.generation.routing.resync()

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

    def call_id(self, ctx: Any) -> str | None:
        """The tool_call_id of a request: its JSON-RPC id, prefixed with a key of its
        connection, so two sessions (or identities) using the same id never share the
        after_tool_call parameters the runtime keeps by call id."""
        if ctx.request_id is None:
            return None
        key = self._call_keys.get(ctx.session)
        if key is None:
            key = self._call_keys[ctx.session] = uuid.uuid4().hex
        return f"{key}:{ctx.request_id}"

    # -- handlers ---------------------------------------------------------------------------------
    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        listing: types.ListToolsResult = self._view_listed(self.context_of(ctx)).listing
        return listing

    def _view_listed(self, context: Mapping[str, Any]) -> View:
        assert self.generation is not None
        view = self.generation.view(context)
        if view.decisions is not None:
            view.decisions.listed(view.by_wire.values())
        return view

    def list_tools(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """tools/list of ``context`` as its JSON-RPC result (the lean HTTP app)."""
        return self._view_listed(context).listing_wire()

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> Any:
        result = await self._call(self.context_of(ctx), self.call_id(ctx), params.name,
                                  params.arguments or {}, self._asker(ctx))
        return result if isinstance(result, types.CallToolResult) else mcp_result(result)

    async def call_tool(self, context: Mapping[str, Any], call_id: str | None, name: str,
                        arguments: Mapping[str, Any],
                        asker: Callable[[Any, Any], None] | None) -> dict[str, Any]:
        """tools/call as its JSON-RPC result (the lean HTTP app): the SDK's wire form of
        the same CallToolResult, without its models on the way."""
        result = await self._call(context, call_id, name, arguments, asker)
        if isinstance(result, types.CallToolResult):
            wire: dict[str, Any] = result.model_dump(by_alias=True, mode="json",
                                                     exclude_none=True, exclude_unset=True)
            return wire
        return {"content": [c.to_dict() for c in result.content],
                "isError": bool(result.is_error)}

    async def _call(self, context: Mapping[str, Any], call_id: str | None, wire: str,
                    arguments: Mapping[str, Any],
                    asker: Callable[[Any, Any], None] | None) -> Any:
        """A runtime ToolResult, or a proxied tool's own CallToolResult."""
        gen = self.generation
        assert gen is not None
        view = gen.view(context)
        token = CALL_ASKER.set(asker)
        try:
            result = await view.call(wire, arguments, call_id)
        except view.runtime.AbortError as exc:
            return types.CallToolResult.model_validate(
                {"content": [{"type": "text", "text": str(exc)}], "isError": True})
        finally:
            CALL_ASKER.reset(token)
            raw = gen.raw.pop(call_id, None) if call_id is not None else None
        name = view.by_wire.get(wire)
        if raw is not None and not result.is_error and name not in gen.external:
            return raw  # a proxied tool's own result: structuredContent, every block kind
        return result

    def _asker(self, ctx: Any) -> Callable[[Any, Any], None] | None:
        """How to put an exec approval of this call to its client (None: it cannot be)."""
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        if not ctx.session.check_client_capability(wanted):
            return None
        return self.asker_for(ctx.session)

    def asker_for(self, session: Any) -> Callable[[Any, Any], None] | None:
        """An asker putting approvals to ``session`` (anything with ``elicit_form``)."""
        if self.tasks is None:
            return None
        tasks = self.tasks
        token = anyio.lowlevel.current_token()

        def ask(manager: Any, record: Any) -> None:
            start = partial(tasks.start_soon, _elicit, session, manager, record)
            if threading.get_ident() == self._loop_thread:
                start()
            else:  # the call runs in a worker thread: hand the question to the event loop
                anyio.from_thread.run_sync(start, token=token)

        return ask

    async def _track(self, ctx: Any, call_next: Any) -> Any:
        """Remember handshake-era connections, to tell them when the tool list changes, and
        tell the HTTP gateway when a session ends (so it no longer counts)."""
        connection = getattr(ctx.session, "_connection", None)
        if ctx.method == "initialize" and connection is not None and self.gateway is not None \
                and self.lean is None:
            sid = getattr(connection, "session_id", None)
            connection.exit_stack.callback(self.gateway.forget, sid)
        if ctx.method == "notifications/initialized":
            key = id(connection)
            if connection is not None and key not in self._sessions:
                self._sessions[key] = ctx.session
                connection.exit_stack.callback(self._sessions.pop, key, None)
        return await call_next(ctx)

    # -- reloading --------------------------------------------------------------------------------
    async def watch(self) -> None:
        """Poll the build directory (and the identities file, and with --watch the
        registry), forever."""
        next_poll = time.monotonic()
        while True:
            await anyio.sleep(self.options.reload_interval)
            if self.gateway is not None:  # a revoked token's sessions end without a request
                await self.gateway.refresh()
            if self.lean is not None:  # sessions another worker ended
                self.lean.sweep()
            if self.options.poller is not None and time.monotonic() >= next_poll:
                next_poll = time.monotonic() + self.options.watch_interval
                await self.poll_registry()
            await self.check_build()

    async def poll_registry(self) -> None:
        """One round of the registry poller (``--watch``; it pulls into the build directory,
        which ``check_build`` then loads). Only the worker holding the poll lock asks the
        registry; a refused or unreachable artifact is logged once, and the build being
        served stays."""
        poller = self.options.poller
        try:
            said = await anyio.to_thread.run_sync(poller.poll)
        except Exception as exc:
            if str(exc) != self._poll_error:
                LOG.error("--watch: %s; still serving build %s", exc,
                          self.generation.digest[:12] if self.generation else "none")
            self._poll_error = str(exc)
            return
        self._poll_error = None
        if said:
            LOG.info("--watch: %s", said)

    async def freshen(self) -> None:
        """Check the build now when its manifest.json changed since the last check: with
        several workers, a client told of a new build by one worker may ask another next,
        and no worker answers from a build older than the manifest it can see (one stat
        per request). While a new build is refused (its manifest came before its files), every
        request checks again, so that a worker whose neighbour already serves the completed
        build does not answer from the old one until its own watcher looks."""
        if (_manifest_stat(self.options.build_dir) == self._manifest_seen
                and self.refusal is None):
            return
        async with self._checking:
            if (_manifest_stat(self.options.build_dir) != self._manifest_seen
                    or self.refusal is not None):
                await self.check_build()

    async def check_build(self) -> None:
        """Serve the build in the directory if it is new and valid; refuse it otherwise.

        A refused build is tried again whenever anything in the directory changes (a build
        whose manifest arrived before its files loads once they are all there); the last good
        build keeps serving meanwhile."""
        assert self.generation is not None
        build_dir = self.options.build_dir
        self._manifest_seen = _manifest_stat(build_dir)
        try:
            digest = manifest_digest(build_dir)
        except BuildError as exc:
            self._refuse("missing", str(exc), ())
            return
        if digest == self.generation.digest:
            return
        stamp = await anyio.to_thread.run_sync(tree_stamp, build_dir)
        last = self.refusal
        if last is not None and (last.digest, last.stamp) == (digest, stamp):
            return
        try:
            generation = await anyio.to_thread.run_sync(self._load)
        except Exception as exc:
            self._refuse(digest, str(exc), stamp)
            return
        try:
            self.check_agents(generation)
        except ServeError as exc:  # --strict: a new build that drops a served agent
            self._refuse(digest, str(exc), stamp)
            return
        self.generation, self.refusal = generation, None
        self._observe_serving(generation, reload=True)
        LOG.info("serving the new build %s; telling %d client(s)", generation.digest[:12],
                 len(self._sessions) if self.lean is None else len(self.lean.streams()))
        await self.announce()

    def _observe_serving(self, gen: Generation, *, reload: bool = False) -> None:
        observer = self.options.observer
        if observer is not None:
            observer.serving(gen.decisions, gen.digest)
            if reload:
                observer.reloaded("ok")

    def _refuse(self, digest: str, why: str, stamp: tuple[Any, ...]) -> None:
        assert self.generation is not None
        if self.options.observer is not None:
            self.options.observer.reloaded("refused")
        last = self.refusal
        self.refusal = Refusal(digest, why, time.time(), stamp)
        if last is not None and (last.digest, last.reason) == (digest, why):
            return  # the same refusal again: logged once
        LOG.error("refused the new build in %s (manifest %s): %s; still serving build %s; "
                  "trying again when the directory changes", self.options.build_dir.as_posix(),
                  digest[:12], why, self.generation.digest[:12])

    def health(self) -> dict[str, Any]:
        """What GET /healthz answers: the build served and the last refusal (digests and an
        age only: nothing of the policy, no paths)."""
        gen = self.generation
        last = self.refusal
        return {
            "status": "ok" if last is None else "refusing-new-build",
            "serving": None if gen is None else {"manifest_sha256": gen.digest},
            "last_refusal": None if last is None else {
                "manifest_sha256": None if last.digest == "missing" else last.digest,
                "seconds_ago": round(time.time() - last.at, 1)},
        }

    async def announce(self) -> None:
        """notifications/tools/list_changed to every connected client."""
        if self.lean is not None:
            told = await self.lean.announce({"jsonrpc": "2.0",
                                             "method": "notifications/tools/list_changed"})
            LOG.info("told %d client stream(s) of the new build", told)
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:
                LOG.info("client gone (%s)", exc)
                self._sessions.pop(key, None)
        await self.bus.publish(ToolsListChanged())


async def _elicit(session: Any, manager: Any, record: Any) -> None:
    """Ask the client (MCP elicitation) to approve one exec command; accept runs it once,
    anything else (decline, cancel, an error) denies it."""
    request = record.request
    where = f" in {request.cwd}" if request.cwd else ""
    # what allow-always would trust, though it is not offered here: the person learns that
    # approving this command for good would approve its executable with any arguments
    scope = getattr(request, "allow_always", "")  # "" from a build made before the field
    message = (f"Approve running this command once{where}?\n\n{request.command}\n\n"
               "Accept to run it once; decline to refuse it. Allow always is not offered "
               f"over MCP. {scope}").rstrip()
    try:
        answer = await session.elicit_form(message, {"type": "object", "properties": {}})
    except Exception as exc:
        LOG.warning("exec approval %s: the client could not be asked (%s): denied",
                    printable(record.id[:8]), printable(exc))
        manager.resolve(record.id, "deny", "serve-mcp: elicitation failed")
        return
    decision = "allow-once" if answer.action == "accept" else "deny"
    LOG.info("exec approval %s: %s by the MCP client (elicitation)", record.id[:8], decision)
    manager.resolve(record.id, decision, f"mcp elicitation: {answer.action}")


# -- transports ------------------------------------------------------------------------------------
async def serve_stdio(options: Options) -> None:
    """Serve one client over this process's stdin and stdout."""
    service = McpService(options)
    async with AsyncExitStack() as stack:
        await service.start(stack)
        async with anyio.create_task_group() as tg:
            service.tasks = tg
            tg.start_soon(service.watch)
            tg.start_soon(service.follow_upstreams)
            async with stdio_server() as (read, write):
                await service.server.run(read, write, service.init_options())
            tg.cancel_scope.cancel()


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (ServeError naming the address when it is taken)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        raise ServeError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


async def serve_http(options: Options, host: str, port: int,
                     sock: socket.socket | None = None) -> None:
    """Serve streamable HTTP on host:port at /mcp until interrupted (on ``sock``, a bound
    socket, when a supervisor gave one to this worker)."""
    assert options.identities is not None
    sock = sock if sock is not None else bind(host, port)
    service = McpService(options)
    async with AsyncExitStack() as stack:
        stack.callback(sock.close)
        await service.start(stack)
        # A call's answer as one JSON body rather than an SSE stream: about half the latency
        # on loopback; notifications still reach clients on their standalone GET stream.
        # The lean app passes the 2026 stateless envelope to this one.
        app: Any = service.server.streamable_http_app(host=host, json_response=True)
        store = SharedStore(options.state_dir) if options.state_dir is not None else None
        lean = options.http_stack == "lean"
        if lean:
            app = service.lean = LeanApp(service, store or LocalStore(), host, app)
            store = service.lean.store
        observer = options.observer
        gateway = service.gateway = Gateway(
            app, options.identities, options.limits, service.health,
            metrics=observer.metrics if observer is not None else None,
            metrics_public=observer is not None and observer.metrics_public, store=store,
            lean=lean, freshen=service.freshen if lean else None)
        config = uvicorn.Config(gateway, log_level="warning", lifespan="on", access_log=False,
                                http=HTTP_PARSER, timeout_graceful_shutdown=_UVICORN_GRACE)
        server = _Uvicorn(config)
        with stop_signals(server.handle_exit):
            await _serve_until_stopped(service, gateway, server, sock)


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, whose second SIGINT (a second Ctrl-C, as for uvicorn) hurries
    toolc's stop instead of uvicorn's own forced exit, which skips the app's lifespan
    shutdown and leaves open requests to be cancelled with the event loop (each a
    CancelledError traceback)."""

    hurried = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == SIGINT:
            self.hurried = True
        else:
            super().handle_exit(sig, frame)


async def _serve_until_stopped(service: McpService, gateway: Gateway, server: _Uvicorn,
                               sock: socket.socket) -> None:
    """Run uvicorn on ``sock`` until SIGTERM or SIGINT, then stop as uvicorn stops: the
    gateway ends the open streams and lets calls in flight finish (``Gateway.stop``),
    uvicorn waits for their responses to complete and ends the app's lifespan. Cancelling
    uvicorn instead would cut its shutdown short: the lifespan and every open request end
    in a CancelledError, which uvicorn prints as a traceback, and no stream ends properly."""
    options = service.options
    assert options.identities is not None
    stopped = anyio.Event()

    async def serve() -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            stopped.set()

    bound = sock.getsockname()  # now: uvicorn closes the socket as soon as it stops
    async with anyio.create_task_group() as tg:
        service.tasks = tg
        tg.start_soon(serve)
        while not server.started:
            if server.should_exit:
                return
            await anyio.sleep(0.02)
        where = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        current = options.identities.current()
        LOG.info("listening on http://%s:%d/mcp (%d identities; health: %s, no token; "
                 "%s)", where, bound[1], len(current) if current is not None else 0,
                 HEALTH_PATH, _stack_note(options))
        tg.start_soon(service.watch)
        tg.start_soon(service.follow_upstreams)
        while not server.should_exit:
            await anyio.sleep(0.1)
        LOG.info("stopping: ending open streams; calls in flight have %g s to finish",
                 STOP_GRACE)
        await gateway.stop(STOP_GRACE, lambda: server.hurried)
        await stopped.wait()
        tg.cancel_scope.cancel()


def run_worker(options: Options, host: str, port: int, sock: socket.socket) -> None:
    """One HTTP worker of a supervisor (``workers.supervise``), on its listening socket."""
    anyio.run(serve_http, options, host, port, sock, **_loop_options())


def _loop_options() -> dict[str, Any]:
    """anyio.run's backend options for HTTP: uvloop when it is installed."""
    if importlib.util.find_spec("uvloop") is None:
        return {}
    return {"backend_options": {"use_uvloop": True}}


def _stack_note(options: Options) -> str:
    stack = "the MCP SDK's HTTP app" if options.http_stack == "sdk" else "lean HTTP app"
    worker = f"worker {os.getpid()}, " if options.workers > 1 else ""
    return f"{worker}{stack} on uvicorn ({HTTP_PARSER})"


def run(options: Options, http: tuple[str, int] | None) -> None:
    """Serve until stdin closes (stdio) or until interrupted (HTTP); with ``workers`` > 1,
    a supervisor process and that many HTTP workers (``workers.supervise``)."""
    try:
        if http is None:
            anyio.run(serve_stdio, options)
        elif options.workers > 1:
            supervise(options, *http, bind, run_worker)
        else:
            anyio.run(serve_http, options, *http, **_loop_options())
    except KeyboardInterrupt:
        pass
    except BaseExceptionGroup as group:  # what failed inside the upstreams' task groups
        leaf = reason(group)
        if isinstance(leaf, (BuildError, UpstreamUnavailable, ServeError)):
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
