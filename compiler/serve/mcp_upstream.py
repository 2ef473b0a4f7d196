"""Upstream MCP servers: connecting as a client, snapshotting their tools into catalog YAML
(``toolc import-mcp``) and matching their live tools against a build (proxy mode).

An upstream is ``NAME=COMMAND`` (a stdio server started with that command line, split as a
shell would) or ``NAME=URL`` (``http://`` or ``https://``: streamable HTTP). NAME is the
plugin id its tools carry in the catalog.
"""

from __future__ import annotations

import hashlib
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
    """A catalog tool served by an upstream tool."""

    tool: str
    upstream: Upstream
    remote: str

    @property
    def live(self) -> types.Tool:
        return self.upstream.tools[self.remote]


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


def match(catalog: list[Mapping[str, Any]], upstreams: list[Upstream]
          ) -> tuple[dict[str, Route], dict[str, str]]:
    """(catalog tool name -> route, catalog tool name -> why it is refused): a tool is routed
    only while its live definition has the hash import-mcp stored; every upstream tool left
    out (and every catalog tool of an upstream it lacks) is logged."""
    routes: dict[str, Route] = {}
    refused: dict[str, str] = {}
    for up in upstreams:
        plugin = up.spec.name
        mine = {str(t.get("wireNames", {}).get("mcp", t["name"])): t
                for t in catalog if t.get("plugin") == plugin}
        for remote, tool in up.tools.items():
            entry = mine.get(remote)
            if entry is None:
                LOG.warning("upstream %s: tool %r is not in the build (plugin %s): not exposed",
                            plugin, remote, plugin)
            elif (why := refusal(plugin, remote, entry, tool)) is not None:
                LOG.warning("%s", why)
                refused[str(entry["name"])] = why
            else:
                routes[str(entry["name"])] = Route(str(entry["name"]), up, remote)
        for remote, entry in mine.items():
            if remote not in up.tools:
                LOG.warning("upstream %s: the build's tool %s is not offered upstream",
                            plugin, entry["name"])
    return routes, refused


class UpstreamError(RuntimeError):
    """The upstream answered the call with an error result (its text is the message)."""


def forwarder(route: Route, raw: dict[str, types.CallToolResult]) -> Any:
    """The implementation of a routed tool: forward the call, translate the result for the
    runtime (text and image blocks), and keep the upstream's own result in ``raw`` under the
    call's id, for serve-mcp to answer with unchanged (structuredContent, audio, resources)."""

    async def forward(args: dict[str, Any], call: Any) -> dict[str, Any]:
        result = await route.upstream.session.call_tool(route.remote, args)
        blocks = [_block(c) for c in result.content]
        if result.is_error:
            text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
            raise UpstreamError(text or f"{route.upstream.spec.name} returned an error")
        if call.tool_call_id is not None:
            raw[call.tool_call_id] = result
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
