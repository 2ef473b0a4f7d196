"""An attacker's view of ``toolc serve-mcp --upstream``: an upstream MCP server that changes a
tool after ``toolc import-mcp`` pinned it (a rug pull), while the proxy is serving.

Black box, like tests/test_adversarial_http.py: the build is made with the ``toolc`` command
line, serve-mcp runs as a subprocess, the official MCP SDK client talks to it (over stdio and
streamable HTTP), and the upstreams are real MCP servers (tests/mcp_support/upstream_server.py)
started by serve-mcp, which switch to changed definitions when a file appears and write down
every request they answer.

What it holds:

- an upstream that announces the change (notifications/tools/list_changed): serve-mcp tells
  its clients, the changed tools leave tools/list, a call is refused with what to do and never
  reaches the upstream; a tool changed back to its pinned definition is listed again; the
  upstream's list is not taken again for calls while the proxy has seen the current one;
- an upstream that changes silently, whether it declared ``tools.listChanged`` (its list is
  checked again before the first call) or not (its list is checked before every call): the
  check before routing refuses the call, which never reaches the upstream;
- the operator log and the decision log name the tool and what to do, never the arguments.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from tests.helpers import ROOT, write_definitions

PY = sys.executable
TOOLC = [PY, "-m", "toolc.cli"]
UPSTREAM = f"{PY} -m tests.mcp_support.upstream_server"
IMPL = "tests.mcp_support.served:IMPLEMENTATIONS"
SECRET = "s3cr3t-argument-value"  # what a call carries, which no log may show
UP = ["add", "shout", "fail", "media"]  # the upstream's tools as reviewed
WEB = ["web_add", "web_shout", "web_fail", "web_media"]
REDO = "re-run toolc import-mcp up=..., review the diff of the definitions and rebuild"


def toolc(*args: str) -> None:
    done = subprocess.run([*TOOLC, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A build with two imported upstreams (``up``, and ``web`` whose tools are ``web_*``),
    reviewed as they are before any rug pull, and an identity for HTTP."""
    root = tmp_path_factory.mktemp("proxy")
    echo = {"name": "echo", "description": "Echo a text.", "parameters": {
        "type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}}
    defs = write_definitions(root / "defs", {"tools.yaml": {"catalog": [echo]}})
    toolc("import-mcp", f"up={UPSTREAM}", "-o", str(defs / "plugins" / "up.yaml"))
    toolc("import-mcp", f"web={UPSTREAM} --prefix web_", "-o",
          str(defs / "plugins" / "web.yaml"))
    toolc("build", str(defs), "--out", str(root / "build"))
    token = secrets.token_urlsafe(32)
    ids = root / "identities.yaml"
    ids.write_text(yaml.safe_dump({"version": 1, "identities": [
        {"name": "alice", "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
         "context": {}}]}, sort_keys=False))
    return {"build": root / "build", "ids": ids, "token": token}


class Upstream:
    """One upstream as serve-mcp starts it: ``--upstream NAME=...`` with a pull file (the rug
    pull happens while it exists) and a file of the requests it answered."""

    def __init__(self, where: Path, name: str, list_changed: str, prefix: str = "") -> None:
        self.pull = where / f"{name}.pull"
        self.requests = where / f"{name}.requests"
        flags = f" --prefix {prefix}" if prefix else ""
        self.arg = (f"{name}={UPSTREAM}{flags} --list-changed {list_changed} "
                    f"--pull-when {self.pull} --requests {self.requests}")

    def seen(self) -> list[str]:
        """The requests it answered, in order (``list`` or ``call NAME``)."""
        if not self.requests.exists():
            return []
        return self.requests.read_text().splitlines()

    def calls(self) -> list[str]:
        return [line.removeprefix("call ") for line in self.seen() if line.startswith("call ")]


class Client:
    """An MCP SDK client session on serve-mcp and what it heard."""

    def __init__(self, session: ClientSession, heard: list[str]) -> None:
        self.session, self.heard = session, heard

    async def names(self) -> list[str]:
        return [t.name for t in (await self.session.list_tools()).tools]

    async def call(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        return await self.session.call_tool(name, args)

    async def told(self, times: int) -> None:
        """Wait until notifications/tools/list_changed came ``times`` times."""
        with anyio.fail_after(20):
            while self.heard.count("notifications/tools/list_changed") < times:
                await anyio.sleep(0.05)


@asynccontextmanager
async def serve(transport: str, project: dict[str, Any], where: Path,
                *upstreams: Upstream) -> AsyncIterator[Client]:
    """serve-mcp proxying ``upstreams`` (stderr in ``where/serve.log``, decisions in
    ``where/decisions.jsonl``), with one SDK client connected over ``transport``."""
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            heard.append(message.method)

    args = ["serve-mcp", "--build", str(project["build"]), "--impl", IMPL,
            "--decision-log", str(where / "decisions.jsonl")]
    for up in upstreams:
        args += ["--upstream", up.arg]
    with (where / "serve.log").open("w") as errlog:
        if transport == "stdio":
            params = StdioServerParameters(command=PY, args=[*TOOLC[1:], *args], cwd=str(ROOT),
                                           env={"PYTHONPATH": os.pathsep.join(sys.path)})
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                yield Client(session, heard)
            return
        port = _free_port()
        proc = subprocess.Popen([*TOOLC, *args, "--http", f"127.0.0.1:{port}",
                                 "--identities", str(project["ids"])], cwd=ROOT, stderr=errlog)
        try:
            await anyio.to_thread.run_sync(_wait_for_port, port, proc)
            headers = {"Authorization": f"Bearer {project['token']}"}
            async with create_mcp_http_client(headers=headers) as http, \
                    streamable_http_client(f"http://127.0.0.1:{port}/mcp",
                                           http_client=http) as (read, write), \
                    ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                yield Client(session, heard)
        finally:
            proc.terminate()
            proc.wait(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, "serve-mcp exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def refused_calls(where: Path) -> dict[str, str]:
    """The decision log's refused calls: tool -> reason."""
    lines = (where / "decisions.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return {r["tool"]: r["reason"] for r in records
            if r["event"] == "call" and r["outcome"] == "refused"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_announced_rug_pull_unlists_the_tool_and_refuses_its_calls(
        transport: str, project: dict[str, Any], tmp_path: Path) -> None:
    up = Upstream(tmp_path, "up", "sent")

    async def scenario() -> dict[str, Any]:
        got: dict[str, Any] = {}
        async with serve(transport, project, tmp_path, up) as client:
            got["before"] = await client.names()
            got["calls"] = [text(await client.call("shout", {"text": "before"})),
                            text(await client.call("add", {"a": 1, "b": 2})),
                            text(await client.call("add", {"a": 2, "b": 2}))]
            up.pull.touch()  # the upgrade: shout and fail change, extra appears; announced
            await client.told(1)
            got["after"] = await client.names()
            got["refused"] = await client.call("shout", {"text": SECRET})
            got["add"] = text(await client.call("add", {"a": 3, "b": 4}))
            up.pull.unlink()  # back to exactly what was reviewed; announced
            await client.told(2)
            got["back"] = await client.names()
            got["again"] = text(await client.call("shout", {"text": "again"}))
        return got

    got = anyio.run(scenario)
    assert got["before"] == [*UP, "echo"]
    assert got["calls"] == ["BEFORE", "3 (from stdio upstream)", "4 (from stdio upstream)"]
    assert got["after"] == ["add", "media", "echo"]
    refused = text(got["refused"])
    assert got["refused"].is_error
    assert "upstream up: tool 'shout' changed its definition since toolc import-mcp" in refused
    assert REDO in refused
    assert got["add"] == "7 (from stdio upstream)"
    assert got["back"] == [*UP, "echo"] and got["again"] == "AGAIN"
    # listed at connect and before the first call, then once per announcement (not per
    # call: the proxy had seen the current list); the refused call never reached it
    assert up.seen() == ["list", "list", "call shout", "call add", "call add",
                         "list", "call add", "list", "call shout"]
    log = (tmp_path / "serve.log").read_text()
    assert "upstream up: tool 'shout' changed its definition since toolc import-mcp" in log
    assert "unlisted: its calls are refused until a build with the new definition" in log
    assert "upstream up: tool 'shout' hashes to its upstreamSha256 again: listed again" in log
    assert refused_calls(tmp_path)["shout"].startswith("upstream-refused: ")
    for where in ("serve.log", "decisions.jsonl"):
        assert SECRET not in (tmp_path / where).read_text()


def test_an_unannounced_rug_pull_is_caught_before_the_call_is_routed(
        project: dict[str, Any], tmp_path: Path) -> None:
    """``up`` declares tools.listChanged but never sends it; ``web`` does not declare it."""
    up = Upstream(tmp_path, "up", "declared")
    web = Upstream(tmp_path, "web", "no", prefix="web_")

    async def scenario() -> dict[str, Any]:
        got: dict[str, Any] = {}
        async with serve("stdio", project, tmp_path, up, web) as client:
            got["before"] = await client.names()
            up.pull.touch()  # before any call: the proxy has not seen this list
            got["shout"] = await client.call("shout", {"text": SECRET})
            got["web_first"] = text(await client.call("web_shout", {"text": "first"}))
            web.pull.touch()  # after a call: an upstream that promised nothing, checked again
            got["web_shout"] = await client.call("web_shout", {"text": SECRET})
            # the refused calls never arrived
            assert up.calls() == [] and web.calls() == ["web_shout"]
            got["after"] = await client.names()
            await client.told(2)  # one per upstream found changed
        return got

    got = anyio.run(scenario)
    assert got["before"] == [*UP, *WEB, "echo"]
    assert got["web_first"] == "FIRST"
    for name, plugin in (("shout", "up"), ("web_shout", "web")):
        assert got[name].is_error
        assert f"upstream {plugin}: tool {name!r} changed its definition since toolc " \
            "import-mcp" in text(got[name])
    assert got["after"] == ["add", "media", "web_add", "web_media", "echo"]
    refused = refused_calls(tmp_path)
    assert refused["shout"].startswith("upstream-refused: ")
    assert refused["web_shout"].startswith("upstream-refused: ")
    for where in ("serve.log", "decisions.jsonl"):
        assert SECRET not in (tmp_path / where).read_text()
