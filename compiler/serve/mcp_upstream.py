"""Upstream MCP servers: connecting as a client, snapshotting their tools into catalog YAML
(``toolc import-mcp``) and matching their live tools against a build (proxy mode).

An upstream is ``NAME=COMMAND`` (a stdio server started with that command line, split as a
shell would) or ``NAME=URL`` (``http://`` or ``https://``: streamable HTTP). NAME is the
plugin id its tools carry in the catalog.
"""

from __future__ import annotations

import json
import logging
import re
import shlex
import sys
from collections.abc import Mapping
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
    """A connected upstream: its session and the tools its tools/list gave, by name."""

    spec: UpstreamSpec
    session: ClientSession
    tools: dict[str, types.Tool] = field(default_factory=dict)


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
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    upstream = Upstream(spec, session)
    upstream.tools = {t.name: t for t in await list_tools(session)}
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


def catalog_entry(plugin: str, tool: types.Tool) -> dict[str, Any]:
    """One catalog entry for an upstream tool: its schema verbatim, its name kept on the wire."""
    name = catalog_name(tool.name)
    entry: dict[str, Any] = {"name": name}
    if tool.title:
        entry["label"] = tool.title
    entry["description"] = (tool.description or tool.title or tool.name).strip() or tool.name
    entry["plugin"] = plugin
    if name != tool.name:
        entry["wireNames"] = {"mcp": tool.name}
    entry["parameters"] = _plain(tool.input_schema)
    return entry


def snapshot_yaml(spec: UpstreamSpec, tools: list[types.Tool]) -> str:
    """The definitions file ``toolc import-mcp`` writes: the upstream's tools as plugin tools."""
    header = (
        f"# The tools of MCP server {spec.name!r} as its tools/list gave them (toolc import-mcp)\n"
        "# Review this file like code: serve-mcp exposes an upstream tool only while its name\n"
        "# and inputSchema match this snapshot. Re-run toolc import-mcp after an upgrade.\n"
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
    """A catalog tool served by an upstream tool."""

    tool: str
    upstream: Upstream
    remote: str


def match(catalog: list[Mapping[str, Any]], upstreams: list[Upstream]) -> dict[str, Route]:
    """Catalog tool name -> route, for the upstream tools the build holds with the same schema;
    every upstream tool left out (and every catalog tool of an upstream it lacks) is logged."""
    routes: dict[str, Route] = {}
    for up in upstreams:
        plugin = up.spec.name
        mine = {str(t.get("wireNames", {}).get("mcp", t["name"])): t
                for t in catalog if t.get("plugin") == plugin}
        for remote, tool in up.tools.items():
            entry = mine.get(remote)
            if entry is None:
                LOG.warning("upstream %s: tool %r is not in the build (plugin %s): not exposed",
                            plugin, remote, plugin)
            elif _plain(tool.input_schema) != entry["parameters"]:
                LOG.warning("upstream %s: tool %r changed its inputSchema since the build: not "
                            "exposed (re-run toolc import-mcp and review)", plugin, remote)
            else:
                routes[str(entry["name"])] = Route(str(entry["name"]), up, remote)
        for remote, entry in mine.items():
            if remote not in up.tools:
                LOG.warning("upstream %s: the build's tool %s is not offered upstream",
                            plugin, entry["name"])
    return routes


class UpstreamError(RuntimeError):
    """The upstream answered the call with an error result (its text is the message)."""


def forwarder(route: Route) -> Any:
    """The implementation of a routed tool: forward the call, translate the result."""

    async def forward(args: dict[str, Any], call: Any) -> dict[str, Any]:
        result = await route.upstream.session.call_tool(route.remote, args)
        blocks = [_block(c) for c in result.content]
        if result.is_error:
            text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
            raise UpstreamError(text or f"{route.upstream.spec.name} returned an error")
        return {"content": blocks, "details": result.structured_content}

    forward.__name__ = f"forward_{route.tool}"
    return forward


def _block(content: Any) -> dict[str, Any]:
    if isinstance(content, types.TextContent):
        return {"type": "text", "text": content.text}
    if isinstance(content, types.ImageContent):
        return {"type": "image", "data": content.data, "mimeType": content.mime_type}
    dumped = content.model_dump(by_alias=True, mode="json", exclude_none=True)
    return {"type": "text", "text": json.dumps(dumped, ensure_ascii=False)}
