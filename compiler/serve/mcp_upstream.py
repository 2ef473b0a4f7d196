"""Upstream MCP servers: connecting as a client, snapshotting their tools into catalog YAML
(``toolc import-mcp``) and matching their live tools against a build (proxy mode).

An upstream is ``NAME=COMMAND`` (a stdio server started with that command line, split as a
shell would) or ``NAME=URL`` (``http://`` or ``https://``: streamable HTTP). NAME is the
plugin id its tools carry in the catalog.

The match is kept current while serving (``Routing``): the upstream's tools/list is taken
again when it announces a change (notifications/tools/list_changed) and before a call is
routed whenever the proxy cannot know it has seen the current list, and every new list is
matched against the build again, so a tool whose definition stops hashing to its
``upstreamSha256`` (a rug pull) is unlisted and refused from then on.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import mcp_types as types
import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

LOG: Final = logging.getLogger("toolc.mcp")
PLUGIN_ID: Final = re.compile(r"[a-z0-9][a-z0-9_-]*")
_NOT_NAME: Final = re.compile(r"[^a-z0-9_]+")
_PAGE_CAP: Final = 100
LIST_TIMEOUT: Final = 30.0  # seconds a tools/list taken while serving may take


@dataclass(frozen=True, slots=True)
class UpstreamSpec:
    """``NAME=COMMAND`` or ``NAME=URL``, parsed."""

    name: str
    target: str

    @property
    def is_http(self) -> bool:
        return self.target.startswith(("http://", "https://"))

    @classmethod
    def parse(cls, raw: str) -> UpstreamSpec:
        """ValueError with a message fit for the command line when ``raw`` is malformed."""
        name, sep, target = raw.partition("=")
        name = name.strip()
        if not sep or not target.strip():
            raise ValueError(f"{raw!r}: expected NAME=COMMAND or NAME=URL")
        if not PLUGIN_ID.fullmatch(name):
            raise ValueError(f"{raw!r}: NAME must be a plugin id ({PLUGIN_ID.pattern})")
        return cls(name, target.strip())


@dataclass(slots=True)
class Upstream:
    """A connected upstream: its session, the tools its last tools/list gave (by name), and
    whether the proxy knows that list to be the upstream's current one.

    Listings are numbered (the one taken at connect is 1). ``announces``: the upstream
    declared ``tools.listChanged``, a promise to announce every change; its list is then
    current from a listing begun after its last announcement until the next one. The listing
    taken at connect does not count (``_trusted_after`` starts at 1): the first call checks
    again, since the build may be served long after connect. An upstream that promises nothing
    never has a current list (every call re-lists)."""

    spec: UpstreamSpec
    session: ClientSession
    tools: dict[str, types.Tool] = field(default_factory=dict)
    announces: bool = False
    listings: int = 0  # the number of the last listing taken in
    announced: anyio.Event = field(default_factory=anyio.Event)  # set by list_changed
    _started: int = 0  # the number of the last listing begun
    _trusted_after: int = 1
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def current(self) -> bool:
        """True when ``tools`` is the upstream's current list, as far as it promised."""
        return self.announces and self.listings > self._trusted_after

    def list_changed(self) -> None:
        """notifications/tools/list_changed arrived: a listing begun before it may be stale."""
        self._trusted_after = self._started
        self.announced.set()

    async def refresh(self) -> None:
        """Take tools/list again, unless a listing begun after this call ended meanwhile
        (concurrent callers share one). UpstreamUnavailable when it fails."""
        wanted = self._started + 1
        async with self._lock:
            if self.listings >= wanted:
                return
            self._started += 1
            number = self._started
            try:
                with anyio.fail_after(LIST_TIMEOUT):
                    tools = await list_tools(self.session)
            except Exception as exc:
                leaf = reason(exc)
                why = str(leaf) or type(leaf).__name__
                raise UpstreamUnavailable(f"upstream {self.spec.name}: tools/list failed "
                                          f"({why})") from exc
            self.tools = {t.name: t for t in tools}
            self.listings = number


class UpstreamUnavailable(Exception):
    """An upstream could not be started, reached or listed (the message says which)."""


def reason(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (task groups wrap what fails inside them)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def connect(stack: AsyncExitStack, spec: UpstreamSpec) -> Upstream:
    """Start (or reach) the upstream, run the handshake and list its tools; the connection
    lives as long as ``stack``. UpstreamUnavailable when that fails."""
    try:
        return await _connect(stack, spec)
    except Exception as exc:
        leaf = reason(exc)
        why = str(leaf) or type(leaf).__name__
        raise UpstreamUnavailable(f"upstream {spec.name} ({spec.target}): {why}") from exc


async def _connect(stack: AsyncExitStack, spec: UpstreamSpec) -> Upstream:
    if spec.is_http:
        read, write = await stack.enter_async_context(streamable_http_client(spec.target))
    else:
        argv = shlex.split(spec.target)
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        read, write = await stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
    upstream: Upstream | None = None

    async def on_message(message: Any) -> None:  # must not wait: it runs in the read loop
        if upstream is not None and isinstance(message, types.ToolListChangedNotification):
            upstream.list_changed()

    session = await stack.enter_async_context(
        ClientSession(read, write, message_handler=on_message))
    tools = (await session.initialize()).capabilities.tools
    upstream = Upstream(spec, session, announces=bool(tools and tools.list_changed))
    await upstream.refresh()
    return upstream


async def list_tools(session: ClientSession) -> list[types.Tool]:
    """Every page of the upstream's tools/list."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(_PAGE_CAP):
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        result = await session.list_tools(params=params)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor:
            break
    return tools


# -- import-mcp: a snapshot as catalog YAML ------------------------------------------------------
def catalog_name(wire: str) -> str:
    """A toolc tool name (``[a-z][a-z0-9_]*``) for an upstream tool name."""
    name = _NOT_NAME.sub("_", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", wire).lower()).strip("_")
    return name if name[:1].isalpha() else f"t_{name}"


# What a rug pull can change about an upstream tool; all of it is pinned at import.
PINNED_FIELDS: Final = ("name", "description", "inputSchema", "outputSchema", "annotations")


def definition_sha256(tool: types.Tool) -> str:
    """The sha256 of the canonical JSON (sorted keys, no whitespace) of the upstream tool's
    name, description, inputSchema, outputSchema and annotations (absent ones as null)."""
    dumped = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    pinned = {key: dumped.get(key) for key in PINNED_FIELDS}
    canonical = json.dumps(pinned, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def catalog_entry(plugin: str, tool: types.Tool) -> dict[str, Any]:
    """One catalog entry for an upstream tool: its schema verbatim, its name kept on the wire,
    the hash of its whole definition (``upstreamSha256``) for serve-mcp to compare."""
    name = catalog_name(tool.name)
    entry: dict[str, Any] = {"name": name}
    if tool.title:
        entry["label"] = tool.title
    entry["description"] = (tool.description or tool.title or tool.name).strip() or tool.name
    entry["plugin"] = plugin
    if name != tool.name:
        entry["wireNames"] = {"mcp": tool.name}
    entry["parameters"] = _plain(tool.input_schema)
    entry["upstreamSha256"] = definition_sha256(tool)
    return entry


def snapshot_yaml(spec: UpstreamSpec, tools: list[types.Tool]) -> str:
    """The definitions file ``toolc import-mcp`` writes: the upstream's tools as plugin tools."""
    header = (
        f"# The tools of MCP server {spec.name!r} as its tools/list gave them (toolc import-mcp)\n"
        "# Review this file like code: serve-mcp exposes an upstream tool only while its whole\n"
        "# definition (name, description, inputSchema, outputSchema, annotations) still has the\n"
        "# upstreamSha256 below. Re-run toolc import-mcp after an upgrade and review the diff.\n"
    )
    body = {"version": 1, "catalog": [catalog_entry(spec.name, t) for t in tools]}
    return header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=100)


def snapshot(spec: UpstreamSpec) -> tuple[str, int]:
    """(``snapshot_yaml`` of the upstream's tools, how many tools)."""

    async def run() -> tuple[str, int]:
        async with AsyncExitStack() as stack:
            up = await connect(stack, spec)
            return snapshot_yaml(spec, list(up.tools.values())), len(up.tools)

    try:
        return anyio.run(run)
    except BaseExceptionGroup as group:
        raise reason(group) from None


def _plain(value: Any) -> Any:
    """JSON values only (what the definitions and the build hold)."""
    return json.loads(json.dumps(value))


# -- serve time: which upstream tools a build lets through ---------------------------------------
@dataclass(frozen=True, slots=True)
class Route:
    """A catalog tool served by an upstream tool (``live``: its definition, as listed)."""

    tool: str
    upstream: Upstream
    remote: str
    live: types.Tool


def refusal(plugin: str, remote: str, entry: Mapping[str, Any], tool: types.Tool) -> str | None:
    """Why the build's entry may not route to the live upstream tool (None: it may)."""
    pinned = entry.get("upstreamSha256")
    redo = (f"re-run toolc import-mcp {plugin}=..., review the diff of the definitions and "
            "rebuild")
    if not pinned:
        return (f"upstream {plugin}: tool {remote!r} was imported without a definition hash "
                f"(upstreamSha256): not exposed; {redo}")
    live = definition_sha256(tool)
    if live != pinned:
        return (f"upstream {plugin}: tool {remote!r} changed its definition since toolc "
                f"import-mcp (sha256 {live[:12]}, imported {str(pinned)[:12]}): refused; {redo}")
    if _plain(tool.input_schema) != entry["parameters"]:  # the hash matches, the build not
        return (f"upstream {plugin}: tool {remote!r}: the build's parameters differ from the "
                f"imported inputSchema: refused; {redo}")
    return None


@dataclass(slots=True)
class _Match:
    """One upstream's tools against the build: routed, refused (why), and the lines to log
    at start (every tool left out, in the upstream's order)."""

    routes: dict[str, Route] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)


def _entries(catalog: list[Mapping[str, Any]], plugin: str) -> dict[str, Mapping[str, Any]]:
    """The build's tools of ``plugin``, by their MCP (upstream) name."""
    return {str(t.get("wireNames", {}).get("mcp", t["name"])): t
            for t in catalog if t.get("plugin") == plugin}


def match(mine: Mapping[str, Mapping[str, Any]], up: Upstream) -> _Match:
    """The build's tools of one upstream (``_entries``) against its last list: a tool is
    routed only while its live definition has the hash import-mcp stored."""
    plugin = up.spec.name
    found = _Match()
    for remote, tool in up.tools.items():
        entry = mine.get(remote)
        if entry is None:
            found.lines.append(f"upstream {plugin}: tool {remote!r} is not in the build "
                               f"(plugin {plugin}): not exposed")
        elif (why := refusal(plugin, remote, entry, tool)) is not None:
            found.lines.append(why)
            found.refused[str(entry["name"])] = why
        else:
            found.routes[str(entry["name"])] = Route(str(entry["name"]), up, remote, tool)
    for remote, entry in mine.items():
        if remote not in up.tools:
            found.lines.append(f"upstream {plugin}: the build's tool {entry['name']} is not "
                               "offered upstream")
            found.refused[str(entry["name"])] = (f"upstream {plugin} does not offer tool "
                                                 f"{remote!r}: not exposed")
    return found


class Routing:
    """A build's routes to its upstreams, kept in step with their lists.

    Each listing an upstream gives is matched against the build again (``resync``): a tool
    whose live definition no longer hashes to its ``upstreamSha256`` is unrouted (not listed,
    its calls refused) and ``on_change`` is called; one whose definition hashes to the pinned
    value again is routed again, since it is then exactly what was reviewed (serve-mcp started
    now would route it too). The state depends on the build and the upstream's current list
    only, never on what came before."""

    def __init__(self, catalog: list[Mapping[str, Any]], upstreams: list[Upstream]) -> None:
        self._upstreams = list(upstreams)
        self._entries = {up.spec.name: _entries(catalog, up.spec.name) for up in upstreams}
        # every catalog tool of a proxied plugin, served by its upstream alone
        self.proxied: dict[str, Upstream] = {str(t["name"]): up for up in upstreams
                                             for t in self._entries[up.spec.name].values()}
        self.routes: dict[str, Route] = {}
        self.refused: dict[str, str] = {}
        self._matched: dict[str, int] = {}
        self.on_change: Callable[[], None] | None = None
        for up in self._upstreams:  # every tool left out is logged once, at load
            found = self._rematch(up, quiet=True)
            for line in found.lines:
                LOG.warning("%s", line)

    @property
    def unrouted(self) -> frozenset[str]:
        """The proxied tools not routed now (never listed)."""
        return frozenset(self.proxied) - frozenset(self.routes)

    def resync(self) -> None:
        """Match every upstream listed since it was last matched; ``on_change`` when a tool
        was unlisted or listed again."""
        listed = [up for up in self._upstreams if self._matched[up.spec.name] != up.listings]
        if not listed:  # the common case, once per request: nothing new
            return
        before = frozenset(self.routes)
        for up in listed:
            self._rematch(up)
        if frozenset(self.routes) != before and self.on_change is not None:
            self.on_change()

    def _rematch(self, up: Upstream, *, quiet: bool = False) -> _Match:
        """Replace ``up``'s routes by a match of its last list; log what changed."""
        plugin = up.spec.name
        self._matched[plugin] = up.listings
        found = match(self._entries[plugin], up)
        mine = [n for n, u in self.proxied.items() if u is up]
        before = {n for n in mine if n in self.routes}
        for name in mine:
            self.routes.pop(name, None)
            self.refused.pop(name, None)
        self.routes.update(found.routes)
        self.refused.update(found.refused)
        if not quiet:
            for name in sorted(before - set(found.routes)):
                LOG.warning("%s; unlisted: its calls are refused until a build with the new "
                            "definition is served", found.refused[name])
            for name in sorted(set(found.routes) - before):
                LOG.warning("upstream %s: tool %r hashes to its upstreamSha256 again: listed "
                            "again", plugin, found.routes[name].remote)
        return found

    async def check(self, name: str, *, before_call: bool) -> str | None:
        """Why a call of ``name`` may not be routed now (None: it may, or it is no proxied
        tool). The upstream's tools/list is taken again first unless the proxy has seen its
        current list (``Upstream.current``): for one that announces changes, when a change
        was announced since (or no call has checked the list yet); for one that does not,
        ``before_call`` (the check before the wrapped path; the one just before forwarding
        then relies on it)."""
        up = self.proxied.get(name)
        if up is None:
            return None
        if not up.current and (before_call or up.announces):
            try:
                await up.refresh()
            except UpstreamUnavailable as exc:
                return f"{exc}: refused until it answers"
        self.resync()
        if name in self.routes:
            return None
        return self.refused.get(name, f"upstream {up.spec.name}: tool {name} is not exposed")


class UpstreamRefused(RuntimeError):
    """A call found its tool unrouted just before forwarding (the message says why)."""


class UpstreamError(RuntimeError):
    """The upstream answered the call with an error result (its text is the message)."""


def forwarder(routing: Routing, name: str, raw: dict[str, types.CallToolResult]) -> Any:
    """The implementation of a proxied tool: check its route once more (a change may have
    been announced while hooks ran), forward the call, translate the result for the runtime
    (text and image blocks), and keep the upstream's own result in ``raw`` under the call's
    id, for serve-mcp to answer with unchanged (structuredContent, audio, resources)."""

    async def forward(args: dict[str, Any], call: Any) -> dict[str, Any]:
        why = await routing.check(name, before_call=False)
        if why is not None:
            raise UpstreamRefused(why)
        route = routing.routes[name]
        result = await route.upstream.session.call_tool(route.remote, args)
        blocks = [_block(c) for c in result.content]
        if result.is_error:
            text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
            raise UpstreamError(text or f"{route.upstream.spec.name} returned an error")
        if call.tool_call_id is not None:
            raw[call.tool_call_id] = result
        return {"content": blocks, "details": result.structured_content}

    forward.__name__ = f"forward_{name}"
    return forward


def _block(content: Any) -> dict[str, Any]:
    if isinstance(content, types.TextContent):
        return {"type": "text", "text": content.text}
    if isinstance(content, types.ImageContent):
        return {"type": "image", "data": content.data, "mimeType": content.mime_type}
    dumped = content.model_dump(by_alias=True, mode="json", exclude_none=True)
    return {"type": "text", "text": json.dumps(dumped, ensure_ascii=False)}
