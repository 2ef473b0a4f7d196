"""serve-mcp's lean HTTP app (``toolc.serve.mcp_lean``) and its session stores, in process.

The black-box checks of the whole HTTP surface, against one worker and two, are
tests/test_adversarial_http.py; the SDK client's view is tests/test_mcp.py. Here: the edges of
the protocol the lean app answers itself (what the SDK's transport answers), the same
requests through the SDK's app and the lean one giving the same JSON-RPC results, and the
stores' caps and revocation across two connections (two workers) of one shared database.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from toolc import api
from toolc.api import build
from toolc.serve import mcp_server
from toolc.serve.mcp_http import Gateway, Limits
from toolc.serve.mcp_identity import IdentitySource, add_identity
from toolc.serve.mcp_lean import LeanApp
from toolc.serve.mcp_sessions import LocalStore, SessionStore, SharedStore

from tests.helpers import write_definitions

VERSION = "2025-06-18"
TEXT = {"type": "object", "additionalProperties": False, "required": ["text"],
        "properties": {"text": {"type": "string"}}}


def echo(args: dict[str, Any], call: Any) -> str:
    return f"{call.context.agent_id}|{args['text']}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("lean")
    defs = write_definitions(root / "defs", {"tools.yaml": {
        "catalog": [{"name": "echo", "description": "Echo a text.", "parameters": TEXT}],
        "agents": {"list": [{"id": "a"}]}}})
    build(defs, root / "build")
    ids = root / "ids.yaml"
    token = add_identity(ids, "ann", {"agent_id": "a"})
    return {"build": root / "build", "ids": ids, "token": token}


class Client:
    """Raw ASGI requests to a Gateway in front of an app, within one event loop."""

    def __init__(self, gateway: Gateway, token: str) -> None:
        self.gateway, self.token = gateway, token

    async def request(self, method: str = "POST", body: Any = None, sid: str | None = None,
                      raw: bytes | None = None, gone: anyio.Event | None = None,
                      **headers: str) -> tuple[int, dict[str, str], bytes]:
        """One request; with ``gone``, the client disconnects when it is set."""
        sent = {"host": "127.0.0.1:8765", "authorization": f"Bearer {self.token}",
                "accept": "application/json, text/event-stream",
                "content-type": "application/json", "mcp-protocol-version": VERSION}
        sent.update({k.replace("_", "-"): v for k, v in headers.items()})
        if sid is not None:
            sent["mcp-session-id"] = sid
        data = raw if raw is not None else b"" if body is None else json.dumps(body).encode()
        scope = {"type": "http", "method": method, "path": "/mcp", "query_string": b"",
                 "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 8765), "scheme": "http",
                 "http_version": "1.1", "root_path": "",
                 "headers": [(k.encode(), v.encode()) for k, v in sent.items()]}
        out: list[dict[str, Any]] = []
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                if gone is None:
                    await anyio.sleep_forever()
                else:
                    await gone.wait()
                    return {"type": "http.disconnect"}
            delivered = True
            return {"type": "http.request", "body": data, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            out.append(message)

        await self.gateway(scope, receive, send)
        start = out[0]
        got = {k.decode(): v.decode() for k, v in start["headers"]}
        return start["status"], got, b"".join(m.get("body", b"") for m in out[1:])

    async def open(self, capabilities: dict[str, Any] | None = None) -> str:
        status, headers, _ = await self.request(body=initialize(capabilities))
        assert status == 200
        return headers["mcp-session-id"]

    async def rpc(self, sid: str, method: str, params: dict[str, Any] | None = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
        if params is not None:
            message["params"] = params
        status, _, body = await self.request(body=message, sid=sid)
        assert status == 200, body
        return json.loads(body)


def initialize(capabilities: dict[str, Any] | None = None,
               version: str = VERSION) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities or {},
        "clientInfo": {"name": "test", "version": "1"}}}


def with_client(served: dict[str, Any], stack: str, script: Any) -> Any:
    """Run ``script(client)`` against a started service behind ``stack``'s app."""

    async def main() -> Any:
        options = mcp_server.Options(build_dir=served["build"],
                                     identities=IdentitySource(served["ids"]),
                                     impls={"echo": echo})
        service = mcp_server.McpService(options)
        async with AsyncExitStack() as stack_:
            await service.start(stack_)
            app: Any = service.server.streamable_http_app(host="127.0.0.1", json_response=True)
            if stack == "lean":
                app = service.lean = LeanApp(service, LocalStore(), "127.0.0.1", app)
            else:  # the SDK's app needs its session manager running
                await stack_.enter_async_context(app.router.lifespan_context(app))
            gateway = Gateway(app, options.identities, Limits(), service.health,
                              store=getattr(app, "store", None), lean=stack == "lean")
            async with anyio.create_task_group() as tg:
                service.tasks = tg
                try:
                    return await script(Client(gateway, served["token"]))
                finally:
                    tg.cancel_scope.cancel()

    return anyio.run(main)


# -- the same answers as the SDK's transport -------------------------------------------------------
def test_lean_and_sdk_answer_the_same_json_rpc(served: dict[str, Any]) -> None:
    async def script(client: Client) -> list[Any]:
        status, headers, body = await client.request(body=initialize())
        assert status == 200 and headers["content-type"] == "application/json"
        sid = headers["mcp-session-id"]
        done = await client.request(body={"jsonrpc": "2.0",
                                          "method": "notifications/initialized"}, sid=sid)
        assert done[0] == 202
        return [json.loads(body), await client.rpc(sid, "tools/list"),
                await client.rpc(sid, "tools/call", {"name": "echo",
                                                     "arguments": {"text": "hi"}}),
                await client.rpc(sid, "tools/call", {"name": "echo", "arguments": {}}),
                await client.rpc(sid, "tools/call", {"name": "nope", "arguments": {}}),
                await client.rpc(sid, "ping"), await client.rpc(sid, "resources/list")]

    lean = with_client(served, "lean", script)
    sdk = with_client(served, "sdk", script)
    assert lean == sdk
    assert lean[2]["result"] == {"content": [{"type": "text", "text": "a|hi"}],
                                 "isError": False}


def test_an_unknown_protocol_version_is_answered_with_the_latest_handshake(
        served: dict[str, Any]) -> None:
    async def script(client: Client) -> Any:
        status, _, body = await client.request(body=initialize(version="1999-01-01"))
        assert status == 200
        return json.loads(body)["result"]["protocolVersion"]

    assert with_client(served, "lean", script) == with_client(served, "sdk", script)


# -- the transport's own refusals ------------------------------------------------------------------
def test_the_transport_refuses_what_the_sdk_refuses(served: dict[str, Any]) -> None:
    async def script(client: Client) -> dict[str, int]:
        sid = await client.open()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        return {
            "no json accept": (await client.request(body=ping, sid=sid,
                                                    accept="text/html"))[0],
            "not json": (await client.request(body=ping, sid=sid,
                                              content_type="text/plain"))[0],
            "parse error": (await client.request(raw=b"{nope", sid=sid))[0],
            "not json-rpc": (await client.request(body={"hello": 1}, sid=sid))[0],
            "no session": (await client.request(body=ping))[0],
            "other host": (await client.request(body=ping, sid=sid, host="evil.test"))[0],
            "other origin": (await client.request(body=ping, sid=sid,
                                                  origin="http://evil.test"))[0],
            "too big": (await client.request(raw=b" " * (4 * 1024 * 1024 + 1), sid=sid))[0],
            "put": (await client.request("PUT", sid=sid))[0],
            "get without sse": (await client.request("GET", sid=sid,
                                                     accept="application/json"))[0],
            "delete": (await client.request("DELETE", sid=sid))[0],
            "after delete": (await client.request(body=ping, sid=sid))[0],
        }

    got = with_client(served, "lean", script)
    assert got == {"no json accept": 406, "not json": 400, "parse error": 400,
                   "not json-rpc": 400, "no session": 400, "other host": 421,
                   "other origin": 403, "too big": 413, "put": 405, "get without sse": 406,
                   "delete": 200, "after delete": 404}


def test_one_get_stream_per_session_and_delete_closes_it(served: dict[str, Any]) -> None:
    async def script(client: Client) -> tuple[int, int, int]:
        sid = await client.open()
        lean = client.gateway.app
        first: list[int] = []

        async def hold() -> None:
            first.append((await client.request("GET", sid=sid))[0])

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold)
            with anyio.fail_after(10):
                while not lean.streams():
                    await anyio.sleep(0.01)
            second = (await client.request("GET", sid=sid))[0]
            told = await lean.announce({"jsonrpc": "2.0",
                                        "method": "notifications/tools/list_changed"})
            deleted = (await client.request("DELETE", sid=sid))[0]
        return first[0], second, told * 1000 + deleted

    assert with_client(served, "lean", script) == (200, 409, 1200)


# -- the stores ------------------------------------------------------------------------------------
@pytest.fixture(params=["local", "shared"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[SessionStore]]:
    """Two views of one store: one process's, or two workers' of one shared database."""
    if request.param == "local":
        one = LocalStore()
        yield [one, one]
        return
    SharedStore.create(tmp_path)
    first, second = SharedStore(tmp_path), SharedStore(tmp_path)
    second.pid = first.pid + 1  # another worker
    yield [first, second]
    first.db.close()
    second.db.close()


def test_session_caps_count_every_worker(stores: list[SessionStore]) -> None:
    a, b = stores
    a.add("s1", "alice", "alice", {"elicit": True})
    assert b.get("s1") is not None and b.get("s1").info == {"elicit": True}  # type: ignore[union-attr]
    assert b.reserve("alice", 2)  # one held (on a) + this one opening (on b)
    assert not a.reserve("alice", 2)
    assert a.reserve("bob", 2)  # the others keep their own caps
    b.unreserve("alice")
    assert a.reserve("alice", 2)


def test_requests_in_flight_count_every_worker(stores: list[SessionStore]) -> None:
    a, b = stores
    assert a.acquire("dave", 2) and b.acquire("dave", 2)
    assert not a.acquire("dave", 2) and not b.acquire("dave", 2)
    b.release("dave")
    assert a.acquire("dave", 2)


def test_revocation_and_delete_hold_for_every_worker(stores: list[SessionStore]) -> None:
    a, b = stores
    a.add("s1", "mallory", "mallory", {})
    a.add("s2", "bob", "bob", {})
    b.add("s3", "mallory", "mallory", {})
    gone = b.revoke({"bob"})
    assert sorted(gone) == ["s1", "s3"] and {r.name for r in gone.values()} == {"mallory"}
    assert a.live(["s1", "s2", "s3"]) == {"s2"}
    assert a.remove("s2") is not None and b.get("s2") is None


def test_a_dead_workers_requests_in_flight_are_dropped(tmp_path: Path) -> None:
    SharedStore.create(tmp_path)
    live, dying = SharedStore(tmp_path), SharedStore(tmp_path)
    dying.pid = live.pid + 1
    assert dying.acquire("erin", 1)
    assert not live.acquire("erin", 1)
    SharedStore.forget_worker(tmp_path, dying.pid)
    assert live.acquire("erin", 1)


# -- options ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"workers": 2}, "--workers is for --http"),
    ({"workers": 2, "http": "0", "http_stack": "sdk"}, "serves one worker"),
    ({"http": "0", "http_stack": "fast"}, "expected lean or sdk"),
])
def test_worker_options_are_checked(served: dict[str, Any], kwargs: dict[str, Any],
                                    message: str) -> None:
    if "http" in kwargs:
        kwargs["identities"] = served["ids"]
    with pytest.raises(api.ServeOptionError, match=message):
        api.serve_mcp(served["build"], **kwargs)


def test_idle_sessions_expire_and_use_keeps_them(stores: list[SessionStore]) -> None:
    a, b = stores
    a.add("old", "amy", "amy", {})
    a.add("used", "amy", "amy", {})
    later = time.time() + 3600
    b.touch(["used"], later)
    assert a.expire(later - 1) == ["old"]
    assert b.live(["old", "used"]) == {"used"}


def test_a_cancellation_reaches_the_worker_running_the_call(tmp_path: Path) -> None:
    SharedStore.create(tmp_path)
    told, running = SharedStore(tmp_path), SharedStore(tmp_path)
    told.post_cancel("s1", json.dumps(7))
    told.post_cancel("s2", json.dumps("x"))
    assert running.take_cancels(["s1"]) == [("s1", "7")]
    assert running.take_cancels(["s1"]) == []  # taken once
    assert LocalStore().take_cancels(["s1"]) == []  # one process: cancelled directly


def test_a_closed_get_stream_frees_its_place(served: dict[str, Any]) -> None:
    async def script(client: Client) -> list[int]:
        sid = await client.open()
        lean = client.gateway.app
        statuses: list[int] = []
        for _ in range(2):  # the second GET after the first one's client went away
            gone = anyio.Event()

            async def hold(gone: anyio.Event = gone) -> None:
                statuses.append((await client.request("GET", sid=sid, gone=gone))[0])

            async with anyio.create_task_group() as tg:
                tg.start_soon(hold)
                with anyio.fail_after(10):
                    while not lean.streams():
                        await anyio.sleep(0.01)
                gone.set()
            assert lean.streams() == []
        return statuses

    assert with_client(served, "lean", script) == [200, 200]



def test_an_answer_reaches_the_worker_that_asked(tmp_path: Path) -> None:
    SharedStore.create(tmp_path)
    got, asked = SharedStore(tmp_path), SharedStore(tmp_path)
    got.post_answer("s1", "toolc-1", json.dumps({"id": "toolc-1", "result": {}}))
    assert asked.take_answer("s1", "toolc-2") is None
    assert json.loads(asked.take_answer("s1", "toolc-1") or "") == {"id": "toolc-1",
                                                                     "result": {}}
    assert asked.take_answer("s1", "toolc-1") is None  # taken once
