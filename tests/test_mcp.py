"""toolc serve-mcp and import-mcp, end to end: the server runs as a subprocess and the MCP
SDK's own clients (stdio and streamable HTTP) talk to it; the proxied upstreams are small MCP
servers written with the SDK (tests/mcp_support/upstream_server.py)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from click.testing import CliRunner
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from toolc.api import build
from toolc.cli import main
from toolc.serve.mcp_identity import Identities, IdentitiesError, add_identity, token_hash

from tests.helpers import ROOT, write_definitions

PY = sys.executable
TOOLC = [PY, "-m", "toolc.cli"]
UPSTREAM = [PY, "-m", "tests.mcp_support.upstream_server"]
IMPL = "tests.mcp_support.served:IMPLEMENTATIONS"
HOOKS = "tests.mcp_support.served:hooks"
TEXT = {"type": "object", "additionalProperties": False, "required": ["text"],
        "properties": {"text": {"type": "string"}}}
EMPTY = {"type": "object", "properties": {}}


def catalog(*extra: str) -> dict[str, Any]:
    tools = [
        {"name": "echo", "description": "Echo a text.", "parameters": TEXT},
        {"name": "aecho", "description": "Echo a text, asynchronously.", "parameters": TEXT},
        {"name": "admin", "description": "Owner only.", "ownerOnly": True, "parameters": EMPTY},
        {"name": "secret", "description": "Denied to b.", "parameters": EMPTY},
        {"name": "unimplemented", "description": "Nobody serves it.", "parameters": EMPTY},
        {"name": "sleepy", "description": "Wait for an abort.", "parameters": {
            "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}},
    ]
    tools += [{"name": n, "description": f"The {n} tool.", "parameters": EMPTY} for n in extra]
    return {
        "catalog": tools,
        "agents": {"list": [{"id": "a"}, {"id": "b", "tools": {"deny": ["secret", "up"]}}]},
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Definitions with two imported upstreams (stdio and HTTP), built; identities a and b;
    the HTTP upstream running (changed since its import, like the stdio one at serve time)."""
    root = tmp_path_factory.mktemp("mcp")
    defs = write_definitions(root / "defs", {"tools.yaml": catalog()})
    web_port = free_port()
    web = subprocess.Popen([*UPSTREAM, "--prefix", "web_", "--http", str(web_port)], cwd=ROOT)
    try:
        url = f"http://127.0.0.1:{web_port}/mcp"
        _wait_for_port(web_port)
        for upstream, out in ((f"up={' '.join(UPSTREAM)}", "up.yaml"), (f"web={url}", "web.yaml")):
            done = subprocess.run([*TOOLC, "import-mcp", upstream, "-o",
                                   str(defs / "plugins" / out)],
                                  cwd=ROOT, capture_output=True, text=True, timeout=60,
                                  check=False)
            assert done.returncode == 0, done.stderr
        build(defs, root / "build")
        ids = root / "identities.yaml"
        tokens = {"a": add_identity(ids, "alice", {"agent_id": "a", "sender_is_owner": True}),
                  "b": add_identity(ids, "bob", {"agent_id": "b"})}
        yield {"root": root, "defs": defs, "build": root / "build", "ids": ids,
               "tokens": tokens, "web": url}
    finally:
        web.terminate()
        web.wait(10)


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def test_import_mcp_snapshots_tools_as_a_plugin_verbatim(project: dict[str, Any]) -> None:
    data = yaml.safe_load((project["defs"] / "plugins" / "up.yaml").read_text())
    assert data["version"] == 1 and set(data) == {"version", "catalog"}
    add = data["catalog"][0]
    assert add == {"name": "add", "label": "Add", "description": "Add two integers.",
                   "plugin": "up", "parameters": {
                       "type": "object", "additionalProperties": False, "required": ["a", "b"],
                       "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}
    assert [t["name"] for t in data["catalog"]] == ["add", "shout", "fail"]


@pytest.fixture(scope="module")
def http_server(project: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """serve-mcp over HTTP, proxying both upstreams (the stdio one started --changed)."""
    port = free_port()
    log = (project["root"] / "http.log").open("w+")
    proc = subprocess.Popen(
        [*TOOLC, "serve-mcp", "--build", str(project["build"]), "--http", f"127.0.0.1:{port}",
         "--identities", str(project["ids"]), "--impl", IMPL, "--hooks", HOOKS,
         "--reload-interval", "0.2",
         "--upstream", f"up={' '.join(UPSTREAM)} --changed", "--upstream",
         f"web={project['web']}"], cwd=ROOT, stderr=log)
    try:
        _wait_for_port(port)
        yield {**project, "url": f"http://127.0.0.1:{port}/mcp", "log": log, "proc": proc}
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as client, \
            streamable_http_client(url, http_client=client) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run(fn: Any, *args: Any) -> Any:
    return anyio.run(fn, *args)


def test_http_identities_see_their_own_tool_lists(http_server: dict[str, Any]) -> None:
    async def names(who: str) -> list[str]:
        async with http_session(http_server["url"], http_server["tokens"][who]) as s:
            return [t.name for t in (await s.list_tools()).tools]

    web = ["web_add", "web_shout", "web_fail"]
    mine = ["echo", "aecho", "unimplemented", "sleepy"]
    # up's shout changed its schema upstream: not listed (plugin files sort before tools.yaml)
    assert run(names, "a") == ["add", "fail", *web, "echo", "aecho", "admin", "secret",
                               "unimplemented", "sleepy"]
    assert run(names, "b") == [*web, *mine]


def test_http_calls_take_the_wrapped_path(http_server: dict[str, Any]) -> None:
    async def calls() -> dict[str, types.CallToolResult]:
        out = {}
        async with http_session(http_server["url"], http_server["tokens"]["b"]) as s:
            out["echo"] = await s.call_tool("echo", {"text": "hi"})
            out["aecho"] = await s.call_tool("aecho", {"text": "hi"})
            out["bad"] = await s.call_tool("echo", {"text": 5})
            out["secret"] = await s.call_tool("secret", {})
            out["admin"] = await s.call_tool("admin", {}, meta={"sender_is_owner": True})
            out["blocked"] = await s.call_tool("echo", {"text": "please block me"})
            out["none"] = await s.call_tool("unimplemented", {})
        async with http_session(http_server["url"], http_server["tokens"]["a"]) as s:
            out["owner"] = await s.call_tool("admin", {})
            out["allowed"] = await s.call_tool("secret", {})
        return out

    out = run(calls)
    assert (text(out["echo"]), out["echo"].is_error) == ("hi", False)
    assert '"agent": "b"' in text(out["aecho"])
    assert out["bad"].is_error and "Input should be a valid string" in text(out["bad"])
    for denied in ("secret", "admin"):  # nothing in the request widens bob's context
        assert out[denied].is_error
        assert f"Tool {denied} is not available to this request" in text(out[denied])
    assert out["blocked"].is_error and "blocked by the test hook" in text(out["blocked"])
    assert out["none"].is_error and "has no implementation" in text(out["none"])
    assert text(out["owner"]) == "administered" and text(out["allowed"]) == "the secret"


def test_http_refuses_unknown_and_missing_tokens(http_server: dict[str, Any]) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    hdrs = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer not-a-token"},
                 {"Authorization": f"Basic {http_server['tokens']['a']}"}):
        response = httpx2.post(http_server["url"], json=body, headers={**hdrs, **auth})
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")

    async def initialize() -> None:
        async with http_session(http_server["url"], "wrong"):
            pass

    with pytest.raises(BaseException):  # noqa: B017 - the SDK raises a group of HTTP errors
        run(initialize)
    http_server["log"].flush()
    log = Path(http_server["log"].name).read_text()
    assert "unknown bearer token" in log and "no bearer token" in log


def test_proxy_filters_upstream_tools_and_forwards_calls(http_server: dict[str, Any]) -> None:
    async def calls() -> dict[str, types.CallToolResult]:
        async with http_session(http_server["url"], http_server["tokens"]["a"]) as s:
            return {
                "add": await s.call_tool("add", {"a": 2, "b": 3}),
                "web_add": await s.call_tool("web_add", {"a": 2, "b": 40}),
                "web_shout": await s.call_tool("web_shout", {"text": "hey"}),
                "web_fail": await s.call_tool("web_fail", {}),
                "typo": await s.call_tool("add", {"a": "2", "b": 3}),
                "shout": await s.call_tool("shout", {"text": "x"}),
                "extra": await s.call_tool("extra", {}),
            }

    out = run(calls)
    assert text(out["add"]) == "5 (from stdio upstream)"
    assert text(out["web_add"]) == "42 (from web_ upstream)"
    assert text(out["web_shout"]) == "HEY"
    assert out["web_fail"].is_error and "web_fail failed upstream" in text(out["web_fail"])
    assert out["typo"].is_error and "valid integer" in text(out["typo"])  # checked before
    assert out["shout"].is_error and "not available to this request" in text(out["shout"])
    assert out["extra"].is_error and "Tool extra not found" in text(out["extra"])
    http_server["log"].flush()
    log = Path(http_server["log"].name).read_text()
    assert "upstream up: tool 'shout' changed its inputSchema since the build" in log
    assert "upstream up: tool 'extra' is not in the build" in log
    assert "implementation shout: a tool of upstream up, served by it alone: ignored" in log


def test_a_cancelled_request_aborts_its_sync_call(http_server: dict[str, Any],
                                                 tmp_path: Path) -> None:
    marker = tmp_path / "sleepy.txt"

    async def cancel() -> None:
        async with http_session(http_server["url"], http_server["tokens"]["b"]) as s:
            with anyio.move_on_after(0.5):
                await s.call_tool("sleepy", {"path": str(marker)})
            with anyio.fail_after(10):
                while not marker.exists():
                    await anyio.sleep(0.05)

    run(cancel)
    assert marker.read_text() == "aborted: cancelled by the MCP client"


def test_stdio_replaced_build_is_announced_and_a_corrupt_one_refused(
        project: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "build"
    shutil.copytree(project["build"], out)
    errlog = (tmp_path / "stdio.log").open("w+")
    changed: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification) and \
                message.method == "notifications/tools/list_changed":
            changed.append(message.method)

    async def session() -> dict[str, Any]:
        params = StdioServerParameters(
            command=PY, args=[*TOOLC[1:], "serve-mcp", "--build", str(out), "--agent", "b",
                              "--impl", IMPL, "--reload-interval", "0.1"],
            cwd=str(ROOT), env={"PYTHONPATH": os.pathsep.join(sys.path)})
        got: dict[str, Any] = {}
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, message_handler=on_message) as s:
            await s.initialize()
            got["before"] = [t.name for t in (await s.list_tools()).tools]
            got["echo"] = text(await s.call_tool("echo", {"text": "over stdio"}))
            got["admin"] = await s.call_tool("admin", {})
            defs2 = write_definitions(tmp_path / "defs2", {"tools.yaml": catalog("fresh")})
            await anyio.to_thread.run_sync(lambda: build(defs2, out))
            with anyio.fail_after(20):
                while not changed:
                    await anyio.sleep(0.05)
            got["after"] = [t.name for t in (await s.list_tools()).tools]
            await anyio.to_thread.run_sync(_swap_in_corrupt_build, tmp_path, out)
            await _wait_for_log(errlog, "refused the new build")
            got["kept"] = [t.name for t in (await s.list_tools()).tools]
            got["still"] = text(await s.call_tool("echo", {"text": "still here"}))
            got["notified"] = len(changed)
        return got

    got = run(session)
    assert got["before"] == ["web_add", "web_shout", "web_fail", "echo", "aecho",
                             "unimplemented", "sleepy"]
    assert got["echo"] == "over stdio"
    assert got["admin"].is_error
    assert got["after"] == ["echo", "aecho", "unimplemented", "sleepy", "fresh"]
    assert got["kept"] == got["after"] and got["still"] == "still here"
    assert got["notified"] == 1
    errlog.seek(0)
    assert "does not match the sha256" in errlog.read()


def _swap_in_corrupt_build(tmp: Path, out: Path) -> None:
    """A valid build of new definitions with one file changed after the fact, put in place."""
    defs3 = write_definitions(tmp / "defs3", {"tools.yaml": catalog("fresh", "third")})
    staged = tmp / "staged"
    build(defs3, staged)
    tables = staged / "toolc_runtime" / "tables.json"
    tables.write_text(tables.read_text().replace('"third"', '"thirz"'))
    os.rename(out, tmp / "old")
    os.rename(staged, out)


async def _wait_for_log(log: Any, needle: str) -> None:
    with anyio.fail_after(20):
        while True:
            log.flush()
            if needle in Path(log.name).read_text():
                return
            await anyio.sleep(0.05)


def test_http_clients_hear_of_a_replaced_build(http_server: dict[str, Any]) -> None:
    """Last: it rebuilds the shared build (on the standalone GET stream of each client)."""
    changed: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            changed.append(message.method)

    async def session() -> tuple[list[str], list[str]]:
        headers = {"Authorization": f"Bearer {http_server['tokens']['b']}"}
        async with create_mcp_http_client(headers=headers) as client, \
                streamable_http_client(http_server["url"], http_client=client) as (r, w), \
                ClientSession(r, w, message_handler=on_message) as s:
            await s.initialize()
            before = [t.name for t in (await s.list_tools()).tools]
            write_definitions(http_server["defs"], {"tools.yaml": catalog("fresh")})
            await anyio.to_thread.run_sync(build, http_server["defs"], http_server["build"])
            with anyio.fail_after(20):
                while not changed:
                    await anyio.sleep(0.05)
            return before, [t.name for t in (await s.list_tools()).tools]

    before, after = run(session)
    assert changed == ["notifications/tools/list_changed"]
    assert after == [*before, "fresh"]


def test_identity_add_stores_only_the_token_hash(tmp_path: Path) -> None:
    path = tmp_path / "ids.yaml"
    runner = CliRunner()
    added = runner.invoke(main, ["identity", "add", "carol", "--identities", str(path),
                                 "--agent", "a", "--group", "-100", "--owner"])
    assert added.exit_code == 0, added.output
    token = added.stdout.strip()
    text = path.read_text()
    assert token not in text and token_hash(token) in text
    identity = Identities.load(path).lookup(token)
    assert identity is not None and identity.name == "carol"
    assert dict(identity.context) == {"agent_id": "a", "group_id": "-100",
                                      "sender_is_owner": True}
    assert Identities.load(path).lookup(token + "x") is None
    again = runner.invoke(main, ["identity", "add", "carol", "--identities", str(path)])
    assert again.exit_code == 2 and "exists" in again.output
    path.write_text(f"version: 1\nidentities:\n- name: dave\n  token_sha256: {token}\n")
    with pytest.raises(IdentitiesError, match="never the token itself"):
        Identities.load(path)
    path.write_text(f"version: 1\nidentities:\n- name: eve\n  token_sha256: '{'0' * 64}'\n"
                    "  context: {sender_is_owner: 'yes'}\n")
    with pytest.raises(IdentitiesError, match="sender_is_owner"):
        Identities.load(path)
