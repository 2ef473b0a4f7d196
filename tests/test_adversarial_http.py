"""An attacker's view of ``toolc serve-mcp --http``, black box.

A real server process on 127.0.0.1 (a free port), driven over real HTTP with raw requests
(httpx) and with the official MCP SDK client. Nothing of the server is imported: the build and
the identities are made with the ``toolc`` command line, so any later serving stack that keeps
the command line and the HTTP surface must pass this module unchanged.

What it holds (one server per scenario group, not per test):

- the matrix {call, stream (GET), delete, cancel, resume} x {own, other, revoked identity}:
  every request outside "own" is refused (404 for another identity's session, 401 for a
  revoked token), with 0 successes; the refused requests leave the owner's session working;
- revocation: removing a token from the identities file refuses its next request and ends its
  open session (its GET stream closes) without a restart; a malformed file lets nobody in;
- per-identity limits on open sessions and requests in flight, while the others keep working;
- after_tool_call parameters stay with their own session when two use the same request id;
- tools.listChanged is advertised and notifications/tools/list_changed is sent;
- /.well-known/oauth-* answer 404; /healthz names the build served and the last refusal, and
  a build whose manifest arrives before its files is served once the files are all there;
- a port in use is a one-line error and exit 1, not a traceback.

Every scenario runs against one server process and against ``--workers 2`` (a supervisor and
two worker processes sharing the port, their sessions and their per-identity counts): the
kernel hands each connection to either worker, so a session opened on one is used, streamed,
cancelled, revoked and deleted through both.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from mcp.client.session import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from tests.helpers import ROOT, write_definitions

PY = sys.executable
TOOLC = [PY, "-m", "toolc.cli"]
IMPL = "tests.mcp_support.served:IMPLEMENTATIONS"
HOOKS = "tests.mcp_support.served:hooks"
VERSION = "2025-06-18"
ACCEPT = "application/json, text/event-stream"
TEXT = {"type": "object", "additionalProperties": False, "required": ["text"],
        "properties": {"text": {"type": "string"}}}
GATE = {"type": "object", "required": ["path", "started"], "properties": {
    "path": {"type": "string"}, "started": {"type": "string"}, "tag": {"type": "string"}}}
SESSIONS_CAP = len(OPS_ALL := ('call', 'stream', 'delete', 'cancel', 'resume'))
INFLIGHT_CAP = 2
NAMES = ("alice", "bob", "mallory", "carol", "dave", "erin")


def catalog(*extra: str) -> dict[str, Any]:
    tools = [{"name": "echo", "description": "Echo a text.", "parameters": TEXT},
             {"name": "gate", "description": "Wait for a file.", "parameters": GATE}]
    tools += [{"name": n, "description": f"The {n} tool.",
               "parameters": {"type": "object", "properties": {}}} for n in extra]
    return {"catalog": tools}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def toolc(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*TOOLC, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done


def wait_until(predicate: Any, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Server:
    """A ``toolc serve-mcp --http`` process and raw HTTP helpers for it."""

    def __init__(self, root: Path, build: Path, ids: Path, *extra: str) -> None:
        self.root, self.build, self.ids = root, build, ids
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"
        self.log_path = root / f"server-{self.port}.log"
        self.after_log = root / f"after-{self.port}.jsonl"
        self.log = self.log_path.open("w")
        env = {**os.environ, "TOOLC_TEST_AFTER_LOG": str(self.after_log)}
        self.proc = subprocess.Popen(
            [*TOOLC, "serve-mcp", "--build", str(build), "--http", f"127.0.0.1:{self.port}",
             "--identities", str(ids), "--impl", IMPL, "--hooks", HOOKS,
             "--reload-interval", "0.1", *extra], cwd=ROOT, stderr=self.log, env=env)
        self.http = httpx2.Client(timeout=30)
        wait_until(self._listening, "the server to listen")

    def _listening(self) -> bool:
        assert self.proc.poll() is None, self.log_path.read_text()
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def stop(self) -> None:
        self.http.close()
        self.proc.terminate()
        self.proc.wait(10)
        self.log.close()

    def logged(self) -> str:
        self.log.flush()
        return self.log_path.read_text()

    # -- raw requests --------------------------------------------------------------------------
    def headers(self, token: str | None, sid: str | None = None, **more: str) -> dict[str, str]:
        out = {"Accept": ACCEPT, "MCP-Protocol-Version": VERSION, **more}
        if token:
            out["Authorization"] = f"Bearer {token}"
        if sid:
            out["Mcp-Session-Id"] = sid
        return out

    def post(self, token: str | None, body: dict[str, Any], sid: str | None = None
             ) -> httpx2.Response:
        return self.http.post(self.url, json=body, headers=self.headers(token, sid))

    def open(self, token: str) -> str:
        """A new session of ``token`` (initialize + initialized); its id."""
        response = self.post(token, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                     "params": {"protocolVersion": VERSION, "capabilities": {},
                                                "clientInfo": {"name": "raw", "version": "1"}}})
        assert response.status_code == 200, response.text
        sid = response.headers["mcp-session-id"]
        done = self.post(token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        assert done.status_code == 202, done.text
        return sid

    def call(self, token: str, sid: str, name: str, args: dict[str, Any],
             rid: int = 1) -> httpx2.Response:
        return self.post(token, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                 "params": {"name": name, "arguments": args}}, sid)

    def stream_status(self, token: str, sid: str, **more: str) -> int:
        with self.http.stream("GET", self.url, headers=self.headers(token, sid, **more)) as r:
            return r.status_code

    def delete(self, token: str, sid: str) -> int:
        return self.http.delete(self.url, headers=self.headers(token, sid)).status_code

    def cancel(self, token: str, sid: str, rid: int = 1) -> int:
        return self.post(token, {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                 "params": {"requestId": rid, "reason": "test"}},
                         sid).status_code

    def health(self) -> dict[str, Any]:
        response = self.http.get(f"{self.base}/healthz")
        assert response.status_code == 200
        return dict(response.json())


def set_identities(path: Path, keep: dict[str, Any]) -> None:
    """Rewrite the identities file (atomically, as an editor or a deploy would)."""
    tmp = path.with_name(path.name + ".edit")
    tmp.write_text(yaml.safe_dump(keep, sort_keys=False))
    os.replace(tmp, path)


def without(data: dict[str, Any], name: str) -> dict[str, Any]:
    return {**data, "identities": [i for i in data["identities"] if i["name"] != name]}


@pytest.fixture(scope="module", params=[1, 2], ids=["1-worker", "2-workers"])
def project(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The build and identities of one server (each server replaces its build)."""
    root = tmp_path_factory.mktemp("adversarial")
    defs = write_definitions(root / "defs", {"tools.yaml": catalog()})
    toolc("build", str(defs), "--out", str(root / "build"))
    ids = root / "identities.yaml"
    # the documented file format, written directly (six `toolc identity add` cost seconds)
    tokens = {n: secrets.token_urlsafe(32) for n in NAMES}
    ids.write_text(yaml.safe_dump({"version": 1, "identities": [
        {"name": n, "token_sha256": hashlib.sha256(t.encode()).hexdigest(), "context": {}}
        for n, t in tokens.items()]}, sort_keys=False))
    return {"root": root, "defs": defs, "build": root / "build", "ids": ids, "tokens": tokens,
            "workers": request.param}


@pytest.fixture(scope="module")
def server(project: dict[str, Any]) -> Iterator[Server]:
    srv = Server(project["root"], project["build"], project["ids"],
                 "--max-sessions-per-identity", str(SESSIONS_CAP),
                 "--max-inflight-per-identity", str(INFLIGHT_CAP),
                 "--workers", str(project["workers"]))
    try:
        yield srv
    finally:
        srv.stop()


# -- the matrix --------------------------------------------------------------------------------
OPS = OPS_ALL


def attempt(srv: Server, op: str, token: str, sid: str) -> int:
    """The HTTP status of one operation on session ``sid`` with ``token``."""
    if op == "call":
        return srv.call(token, sid, "echo", {"text": "hi"}).status_code
    if op == "stream":
        return srv.stream_status(token, sid)
    if op == "delete":
        return srv.delete(token, sid)
    if op == "cancel":
        return srv.cancel(token, sid)
    return srv.stream_status(token, sid, **{"Last-Event-ID": "0"})


def test_session_matrix_own_other_revoked(server: Server, project: dict[str, Any]) -> None:
    tokens, original = project["tokens"], yaml.safe_load(project["ids"].read_text())
    results: dict[tuple[str, str], int] = {}
    for op in OPS:  # own: alice on her session
        sid = server.open(tokens["alice"])
        results[(op, "own")] = attempt(server, op, tokens["alice"], sid)
        if op != "delete":
            server.delete(tokens["alice"], sid)
    intact = {}
    for op in OPS:  # other: bob on alice's session; alice's session is untouched by it
        sid = server.open(tokens["alice"])
        results[(op, "other")] = attempt(server, op, tokens["bob"], sid)
        intact[op] = server.call(tokens["alice"], sid, "echo", {"text": "still"}).status_code
        server.delete(tokens["alice"], sid)
    sids = {op: server.open(tokens["mallory"]) for op in OPS}
    set_identities(project["ids"], without(original, "mallory"))
    try:
        for op in OPS:  # revoked: mallory on her own session, after her token was removed
            results[(op, "revoked")] = attempt(server, op, tokens["mallory"], sids[op])
        for op in OPS:  # and nobody else can pick the ended sessions up
            results[(op, "revoked, by other")] = attempt(server, op, tokens["bob"], sids[op])
    finally:
        set_identities(project["ids"], original)
    print("\nmatrix (HTTP status):")
    for op in OPS:
        print(f"  {op:7}", "  ".join(f"{who}={results[(op, who)]}" for who in
                                     ("own", "other", "revoked", "revoked, by other")))
    assert all(results[(op, "own")] < 300 for op in OPS), results
    assert all(results[(op, "other")] == 404 for op in OPS), results
    assert all(results[(op, "revoked")] == 401 for op in OPS), results
    assert all(results[(op, "revoked, by other")] == 404 for op in OPS), results
    assert intact == dict.fromkeys(OPS, 200), intact
    successes = sum(1 for (op, who), status in results.items()
                    if who != "own" and status < 400)
    assert successes == 0


def test_revocation_ends_the_open_session_at_once(server: Server,
                                                  project: dict[str, Any]) -> None:
    tokens, original = project["tokens"], yaml.safe_load(project["ids"].read_text())
    sid = server.open(tokens["erin"])
    ended = threading.Event()
    opened = threading.Event()

    def hold_stream() -> None:
        with server.http.stream("GET", server.url,
                                headers=server.headers(tokens["erin"], sid)) as r:
            assert r.status_code == 200
            opened.set()
            for _ in r.iter_bytes():
                pass
        ended.set()

    reader = threading.Thread(target=hold_stream, daemon=True)
    reader.start()
    assert opened.wait(20)
    assert server.call(tokens["erin"], sid, "echo", {"text": "before"}).status_code == 200
    set_identities(project["ids"], without(original, "erin"))
    try:
        # the very next request (anyone's) applies the change and ends erin's session
        assert server.call(tokens["erin"], sid, "echo", {"text": "after"}).status_code == 401
        assert ended.wait(10), "the revoked identity's GET stream is still open"
        assert server.call(tokens["bob"], server.open(tokens["bob"]), "echo",
                           {"text": "x"}).status_code == 200
    finally:
        set_identities(project["ids"], original)
    assert server.call(tokens["erin"], sid, "echo", {"text": "back"}).status_code == 404
    assert "ended 1 session(s) of removed erin" in server.logged()


def test_a_malformed_identities_file_lets_nobody_in(server: Server,
                                                    project: dict[str, Any]) -> None:
    tokens, original = project["tokens"], project["ids"].read_text()
    sid = server.open(tokens["bob"])
    tmp = project["ids"].with_name("broken.yaml")
    tmp.write_text("version: 1\nidentities: [{name: bob, token_sha256: nope}\n")
    os.replace(tmp, project["ids"])
    try:
        assert server.call(tokens["bob"], sid, "echo", {"text": "x"}).status_code == 401
        assert server.post(tokens["alice"], {"jsonrpc": "2.0", "id": 0, "method": "ping"}
                           ).status_code == 401
    finally:
        tmp.write_text(original)
        os.replace(tmp, project["ids"])
    assert server.call(tokens["bob"], sid, "echo", {"text": "x"}).status_code == 200
    assert "refusing every request until the file is fixed" in server.logged()


# -- limits ------------------------------------------------------------------------------------
def test_one_identity_cannot_hold_every_session(server: Server,
                                                project: dict[str, Any]) -> None:
    tokens = project["tokens"]
    mine = [server.open(tokens["carol"]) for _ in range(SESSIONS_CAP)]
    refused = server.post(tokens["carol"], {
        "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
    assert refused.status_code == 429 and "open sessions" in refused.text
    other = server.open(tokens["bob"])  # the others keep working
    assert server.call(tokens["bob"], other, "echo", {"text": "x"}).status_code == 200
    assert server.delete(tokens["carol"], mine[0]) == 200
    again = server.open(tokens["carol"])  # an ended session frees its place
    for sid in [*mine[1:], again]:
        assert server.delete(tokens["carol"], sid) == 200


def test_one_identity_cannot_hold_every_worker(server: Server, project: dict[str, Any],
                                               tmp_path: Path) -> None:
    tokens = project["tokens"]
    sid = server.open(tokens["dave"])
    release = tmp_path / "release"
    statuses: list[int] = []

    def slow(n: int) -> None:
        args = {"path": str(release), "started": str(tmp_path / f"started-{n}")}
        statuses.append(server.call(tokens["dave"], sid, "gate", args, rid=10 + n).status_code)

    threads = [threading.Thread(target=slow, args=(n,)) for n in range(INFLIGHT_CAP)]
    for t in threads:
        t.start()
    try:
        wait_until(lambda: all((tmp_path / f"started-{n}").exists()
                               for n in range(INFLIGHT_CAP)), "the slow calls to start")
        over = server.call(tokens["dave"], sid, "echo", {"text": "x"}, rid=99)
        assert over.status_code == 429 and "in flight" in over.text
        bob = server.open(tokens["bob"])
        assert server.call(tokens["bob"], bob, "echo", {"text": "x"}).status_code == 200
    finally:
        release.write_text("go")
        for t in threads:
            t.join(30)
    assert statuses == [200] * INFLIGHT_CAP
    assert server.call(tokens["dave"], sid, "echo", {"text": "x"}, rid=100).status_code == 200


def test_after_tool_call_params_stay_with_their_session(server: Server,
                                                        project: dict[str, Any],
                                                        tmp_path: Path) -> None:
    """Two identities, the same JSON-RPC id at once: alice's call starts, bob's starts (same
    id), alice's ends first; each after_tool_call must see its own call's params."""
    tokens = project["tokens"]
    sids = {who: server.open(tokens[who]) for who in ("alice", "bob")}
    got: dict[str, httpx2.Response] = {}

    def call(who: str, tag: str) -> threading.Thread:
        args = {"path": str(tmp_path / f"release-{who}"), "started": str(tmp_path / who),
                "tag": tag}
        thread = threading.Thread(target=lambda: got.__setitem__(who, server.call(
            tokens[who], sids[who], "gate", args, rid=7)))
        thread.start()
        wait_until((tmp_path / who).exists, f"{who}'s call to start")
        return thread

    threads = [call("alice", "alice-secret"), call("bob", "bob")]
    for who, thread in zip(("alice", "bob"), threads, strict=True):
        (tmp_path / f"release-{who}").write_text("go")
        thread.join(30)
    assert [got[w].status_code for w in ("alice", "bob")] == [200, 200]

    def tags() -> list[str]:
        lines = server.after_log.read_text().splitlines() if server.after_log.exists() else []
        return sorted(str(p["tag"]) for p in (json.loads(line)["params"] for line in lines)
                      if "tag" in p)

    wait_until(lambda: len(tags()) >= 2, "both after_tool_call events")
    assert tags() == ["alice-secret", "bob"]


# -- what the server tells -----------------------------------------------------------------------
def test_well_known_oauth_answers_404(server: Server, project: dict[str, Any]) -> None:
    for path in ("/.well-known/oauth-protected-resource",
                 "/.well-known/oauth-protected-resource/mcp",
                 "/.well-known/oauth-authorization-server"):
        for token in (None, project["tokens"]["alice"]):
            response = server.http.get(server.base + path, headers=server.headers(token))
            assert response.status_code == 404, (path, response.status_code)


def test_health_needs_no_token_and_names_the_build(server: Server,
                                                   project: dict[str, Any]) -> None:
    digest = hashlib.sha256((project["build"] / "manifest.json").read_bytes()).hexdigest()
    health = server.health()
    assert health["serving"] == {"manifest_sha256": digest}
    assert health["last_refusal"] is None and health["status"] == "ok"
    text = json.dumps(health)
    assert "echo" not in text and "gate" not in text  # nothing of the policy


def test_sdk_client_sees_list_changed_advertised_and_sent(
        server: Server, project: dict[str, Any], tmp_path: Path) -> None:
    """Last on this server: it replaces the build, its manifest first and then its files."""
    heard: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            heard.append(message.method)

    staged = tmp_path / "staged"
    defs = write_definitions(tmp_path / "defs", {"tools.yaml": catalog("fresh")})
    toolc("build", str(defs), "--out", str(staged))
    new_digest = hashlib.sha256((staged / "manifest.json").read_bytes()).hexdigest()

    async def session() -> tuple[Any, list[str], list[str]]:
        headers = {"Authorization": f"Bearer {project['tokens']['alice']}"}
        async with create_mcp_http_client(headers=headers) as client, \
                streamable_http_client(server.url, http_client=client) as (r, w), \
                ClientSession(r, w, message_handler=on_message) as s:
            result = await s.initialize()
            before = [t.name for t in (await s.list_tools()).tools]
            await anyio.to_thread.run_sync(copy_manifest_first, staged, project["build"],
                                           server)
            with anyio.fail_after(20):
                while "notifications/tools/list_changed" not in heard:
                    await anyio.sleep(0.05)
            return result, before, [t.name for t in (await s.list_tools()).tools]

    result, before, after = anyio.run(session)
    assert result.capabilities.tools is not None
    assert result.capabilities.tools.list_changed is True
    assert before == ["echo", "gate"] and after == ["echo", "gate", "fresh"]
    health = server.health()
    assert health["serving"] == {"manifest_sha256": new_digest} and health["status"] == "ok"
    assert "trying again when the directory changes" in server.logged()


def copy_manifest_first(staged: Path, build: Path, server: Server) -> None:
    """A non-atomic deploy: the new manifest lands first (the server refuses it: the files
    do not match yet), then the files one by one; the old build serves meanwhile."""
    old = server.health()["serving"]
    shutil.copy2(staged / "manifest.json", build / "manifest.json")
    wait_until(lambda: server.health()["last_refusal"] is not None, "the refusal")
    health = server.health()
    assert health["serving"] == old and health["status"] == "refusing-new-build"
    for path in sorted(staged.rglob("*")):
        if path.is_file() and path.name != "manifest.json":
            target = build / path.relative_to(staged)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


# -- starting up ---------------------------------------------------------------------------------
def test_port_in_use_is_one_line_and_exit_1(project: dict[str, Any]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [*TOOLC, "serve-mcp", "--build", str(project["build"]), "--http",
             f"127.0.0.1:{port}", "--identities", str(project["ids"]), "--impl", IMPL],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line]
    assert errors == [f"toolc serve-mcp: error: cannot listen on 127.0.0.1:{port}: "
                      "Address already in use"] or \
        errors[-1].endswith(f"cannot listen on 127.0.0.1:{port}: Address already in use")


def test_strict_refuses_a_new_build_that_drops_a_served_agent(tmp_path: Path) -> None:
    """--strict checks every new build as it checked the first: a build without an agent an
    identity is served is refused (the last good build keeps serving), never a crash."""
    agents = {"agents": {"list": [{"id": "keep"}]}}
    defs = write_definitions(tmp_path / "defs", {"tools.yaml": catalog(), "a.yaml": agents})
    build = tmp_path / "build"
    toolc("build", str(defs), "--out", str(build))
    ids = tmp_path / "identities.yaml"
    token = secrets.token_urlsafe(32)
    ids.write_text(yaml.safe_dump({"version": 1, "identities": [
        {"name": "kim", "token_sha256": hashlib.sha256(token.encode()).hexdigest(),
         "context": {"agent_id": "keep"}}]}, sort_keys=False))
    srv = Server(tmp_path, build, ids, "--strict")
    try:
        served = srv.health()["serving"]
        (defs / "a.yaml").write_text("version: 1\nagents:\n  list:\n    - id: other\n")
        toolc("build", str(defs), "--out", str(build))
        wait_until(lambda: srv.health()["last_refusal"] is not None, "the refusal")
        assert srv.proc.poll() is None, srv.logged()
        health = srv.health()
        assert health["serving"] == served and health["status"] == "refusing-new-build"
        assert "agent 'keep' is not declared in the build" in srv.logged()
        sid = srv.open(token)
        assert srv.call(token, sid, "echo", {"text": "hi"}).status_code == 200
    finally:
        srv.stop()


# -- stopping ------------------------------------------------------------------------------------
def _hold_raw_stream(srv: Server, token: str, sid: str, out: dict[str, Any],
                     opened: threading.Event) -> None:
    """Hold a session's GET stream until the server ends it: ``out["stream"]`` is "ended"
    when the response was complete (its last chunk sent), else what the client saw."""
    try:
        with srv.http.stream("GET", srv.url, headers=srv.headers(token, sid)) as r:
            assert r.status_code == 200
            opened.set()
            for _ in r.iter_bytes():
                pass
        out["stream"] = "ended"
    except Exception as exc:
        out["stream"] = repr(exc)


def _sdk_client(srv: Server, token: str, out: dict[str, Any], done: threading.Event) -> None:
    """The MCP SDK's client connected (its own GET stream open) until ``done``."""
    async def session() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as client, \
                streamable_http_client(srv.url, http_client=client) as (r, w), \
                ClientSession(r, w) as s:
            await s.initialize()
            out["tools"] = [t.name for t in (await s.list_tools()).tools]
            await anyio.to_thread.run_sync(done.wait)

    try:
        anyio.run(session)
    except Exception as exc:  # its DELETE at the end finds no server: not what is tested
        out["sdk"] = repr(exc)


def _get_stream_log(caplog: pytest.LogCaptureFixture, what: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records
            if r.name == "mcp.client.streamable_http" and what in r.getMessage()]


@pytest.mark.parametrize("stack", ["lean", "sdk"])
@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT", "SIGINT twice"])
def test_a_stop_ends_streams_and_calls_without_a_traceback(
        project: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture,
        stop: str, stack: str) -> None:
    """SIGTERM and SIGINT stop the server: exit 0, no traceback, every open stream ended at
    once (its response complete: a client sees a normal end), a call in flight answered:
    with its result when it finishes within the grace (SIGTERM here), else cancelled once
    the grace is over (SIGINT), or at once after a second SIGINT."""
    if stack == "sdk" and project["workers"] > 1:
        pytest.skip("--http-stack sdk serves one worker")
    caplog.set_level(logging.DEBUG, logger="mcp.client.streamable_http")
    srv = Server(project["root"], project["build"], project["ids"],
                 "--workers", str(project["workers"]), "--http-stack", stack)
    token = project["tokens"]["dave"]
    out: dict[str, Any] = {}
    done, opened = threading.Event(), threading.Event()
    started, release = tmp_path / "started", tmp_path / "release"

    def in_flight() -> None:
        response = srv.call(token, srv.open(token), "gate",
                            {"path": str(release), "started": str(started), "tag": "x"},
                            rid=7)
        out["call"] = (time.monotonic(), response.status_code, response.json())

    sdk = threading.Thread(target=_sdk_client, args=(srv, token, out, done), daemon=True)
    call = threading.Thread(target=in_flight, daemon=True)
    try:  # every worker serving (a stop while one still starts is another matter)
        wait_until(lambda: srv.logged().count("listening on") == project["workers"],
                   "every worker to listen")
        raw = threading.Thread(target=_hold_raw_stream,
                               args=(srv, token, srv.open(token), out, opened), daemon=True)
        for thread in (sdk, raw, call):
            thread.start()
        assert opened.wait(20)
        wait_until(lambda: bool(_get_stream_log(caplog, "GET SSE connection established")),
                   "the SDK client's GET stream")
        wait_until(lambda: "tools" in out, "the SDK client's tool list")  # then the stop
        wait_until(started.exists, "the call in flight")
        srv.proc.send_signal(signal.SIGTERM if stop == "SIGTERM" else signal.SIGINT)
        raw.join(20)  # the streams end at once, while the call still runs
        assert out.get("stream") == "ended" and call.is_alive(), out
        hurried = time.monotonic()
        if stop == "SIGTERM":
            release.write_text("go")  # it finishes within the grace: its own result
        elif stop == "SIGINT twice":
            srv.proc.send_signal(signal.SIGINT)
        call.join(20)
        release.write_text("go")  # (cancelled: its worker thread ends now)
        code = srv.proc.wait(30)
    finally:
        done.set()
        release.write_text("go")
        if srv.proc.poll() is None:
            srv.proc.kill()
        srv.stop()
    sdk.join(20)
    logged = srv.log_path.read_text()
    assert code == 0, logged
    assert "Traceback" not in logged and "CancelledError" not in logged, logged
    assert out["tools"][:2] == ["echo", "gate"]
    answered, status, answer = out["call"]
    if stop == "SIGTERM":
        assert (status, answer["id"]) == (200, 7) and "released x" in json.dumps(answer)
    else:
        assert "error" in answer, answer  # the SDK's app: a 500 in its own words
        if stack == "lean":
            assert (status, answer["id"], answer["error"]["message"]) == (
                200, 7, "Request cancelled")
    if stop == "SIGINT twice":
        assert answered - hurried < 3, "the second SIGINT did not hurry the stop"
    # the SDK client's GET stream ended as a normal end of stream: it tried to reconnect
    # before any error (an abrupt end logs "GET stream error" first)
    ends = [r for r in caplog.records if r.name == "mcp.client.streamable_http"
            and ("GET stream disconnected" in r.getMessage()
                 or "GET stream error" in r.getMessage())]
    assert ends and "GET stream disconnected" in ends[0].getMessage(), \
        [(r.getMessage(), r.exc_info) for r in ends]
