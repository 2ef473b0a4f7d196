"""MCP Streamable HTTP (the initialize-handshake protocol versions) as a small raw ASGI app.

The MCP SDK's HTTP transport spends most of a call's server CPU in its plumbing (Starlette
requests, one memory stream and task per request, pydantic on every JSON-RPC message, the
session's message loop): about 1.9 ms per tools/call on the project's 2-core machine. This app
serves the same protocol directly on uvicorn's ASGI interface and calls the same handlers
(``McpService.list_tools`` / ``call_tool``, the build's wrapped request path):

- POST ``initialize`` opens a session (``Mcp-Session-Id``, a random 128-bit id); the result
  is the SDK's own ``InitializeResult`` of the service's initialization options;
- POST ``tools/list``, ``tools/call``, ``ping``; notifications (``initialized``,
  ``cancelled``: the call's task is cancelled, its sync implementation sees its abort signal)
  and responses (answers to the server's elicitation requests) get 202;
- a tools/call of a session whose client declared ``elicitation`` answers as an SSE stream,
  so an exec approval's ``elicitation/create`` request travels on it; every other request
  answers as one JSON body;
- GET opens the session's notification stream (SSE; one per session, 409 for a second;
  ``notifications/tools/list_changed`` when a new build is served); DELETE ends the session
  and closes its stream;
- the SDK's checks: Content-Type (400), Accept (406), Host/Origin against DNS rebinding when
  bound to loopback (421/403), a 4 MiB body limit (413), a session id on every request but
  initialize (400), an unknown one (404).

Requests with an ``MCP-Protocol-Version`` header outside the handshake versions (the
stateless 2026 envelope) are passed to the SDK's app unchanged, as the SDK routes them.

Who may do what (tokens, session owners, per-identity limits, revocation) is decided in front
of this app by ``mcp_http.Gateway``; the sessions themselves live in its ``SessionStore``
(shared between worker processes), so any worker serves any session's requests.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from ..runtime._errors import printable
from .mcp_http import DIGEST_SCOPE_KEY, IDENTITY_SCOPE_KEY, SESSION_HEADER, SESSION_SCOPE_KEY
from .mcp_sessions import SessionStore

LOG: Final = logging.getLogger("toolc.mcp")
MAX_BODY: Final = 4 * 1024 * 1024  # the SDK's default request body limit
JSON_TYPE: Final = b"application/json"
SSE_TYPE: Final = b"text/event-stream"
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "::1")
ELICIT_TIMEOUT: Final = 600.0  # an unanswered approval is denied after this long
ANSWER_POLL: Final = 0.1  # seconds between two looks for an answer another worker took
IDLE_TIMEOUT: Final = 1800.0  # a session unused this long is ended (the SDK's default)
SSE_PING: Final = 15.0  # seconds between two comments on an idle GET stream (as the SDK)
TOUCH_EVERY: Final = 60.0  # a session's last use is written at most this often per worker

Send = Callable[[dict[str, Any]], Any]


@dataclass(slots=True)
class _Local:
    """What this worker holds of one session: its GET stream and its calls in flight."""

    stream: MemoryObjectSendStream[bytes] | None = None
    calls: dict[Any, anyio.CancelScope] = field(default_factory=dict)
    asks: dict[str, Any] = field(default_factory=dict)  # elicitation id -> its answer box


class LeanApp:
    """The ASGI app (see the module docstring); ``service`` is an ``McpService``."""

    def __init__(self, service: Any, store: SessionStore, host: str, sdk_app: Any = None) -> None:
        self.service = service
        self.store = store
        self.sdk_app = sdk_app  # the 2026 stateless envelope, served by the SDK
        self.guard_hosts = host in LOOPBACK_HOSTS
        self._local: dict[str, _Local] = {}
        self._touched: dict[str, float] = {}  # when this worker last wrote a session's use
        self._init_result: dict[str, Any] | None = None

    # -- ASGI -----------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            if self.sdk_app is not None:
                await self.sdk_app(scope, receive, send)
            else:
                await _lifespan(receive, send)
            return
        headers = _headers(scope)
        version = headers.get(b"mcp-protocol-version")
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS \
                and self.sdk_app is not None:
            await self.sdk_app(scope, receive, send)
            return
        if scope.get("path") != "/mcp":
            await _text(send, 404, b"Not Found")
            return
        method = scope["method"]
        if method == "POST" and not headers.get(b"content-type", b"").lower().startswith(
                JSON_TYPE):
            await _text(send, 400, b"Invalid Content-Type header")
            return
        refused = self._dns_rebinding(headers)
        if refused is not None:
            await _text(send, *refused)
            return
        if method == "POST":
            await self._post(scope, headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            await self._delete(headers, send)
        else:
            await _error(send, 405, "Method Not Allowed", extra=((b"allow", b"GET, POST, DELETE"),))

    def _dns_rebinding(self, headers: Mapping[bytes, bytes]) -> tuple[int, bytes] | None:
        """The SDK's DNS-rebinding check for a loopback bind (Host, then Origin)."""
        if not self.guard_hosts:
            return None
        host = headers.get(b"host", b"").decode("latin-1")
        if not any(host == h or host.startswith(h + ":")
                   for h in ("127.0.0.1", "localhost", "[::1]")):
            return 421, b"Invalid Host header"
        origin = headers.get(b"origin", b"").decode("latin-1")
        if origin and not any(origin == o or origin.startswith(o + ":") for o in (
                "http://127.0.0.1", "http://localhost", "http://[::1]")):
            return 403, b"Invalid Origin header"
        return None

    # -- POST -----------------------------------------------------------------------------------
    async def _post(self, scope: dict[str, Any], headers: Mapping[bytes, bytes], receive: Any,
                    send: Send) -> None:
        accepts = _accepts(headers)
        if "json" not in accepts:
            await _error(send, 406, "Not Acceptable: Client must accept application/json")
            return
        body = await _body(receive)
        if body is None:
            await _text(send, 413, b"Request body too large")
            return
        try:
            message = json.loads(body)
        except ValueError as exc:
            await _error(send, 400, f"Parse error: {exc}", PARSE_ERROR)
            return
        if not _is_message(message):
            await _error(send, 400, "Validation error: not a JSON-RPC 2.0 message",
                         INVALID_PARAMS)
            return
        sid = _sid(headers)
        if message.get("method") == "initialize" and "id" in message:
            await self._initialize(scope, message, send)
            return
        if sid is None:
            await _error(send, 400, "Bad Request: Missing session ID")
            return
        session = scope.get(SESSION_SCOPE_KEY) or self.store.get(sid)
        if session is None:  # ended meanwhile (the gateway saw it a moment ago)
            await _error(send, 404, "Not Found: Session has been terminated")
            return
        self._used(sid)
        if "method" not in message:  # a response: the answer to one of our requests
            await _accepted(send, sid)
            self._answer(sid, message)
            return
        if "id" not in message:  # a notification
            await _accepted(send, sid)
            self._notified(sid, message)
            return
        await self._request(scope, sid, session.info, message, accepts, send)

    async def _initialize(self, scope: dict[str, Any], message: dict[str, Any],
                          send: Send) -> None:
        params = message.get("params")
        try:
            init = types.InitializeRequestParams.model_validate(params or {}, by_name=False)
        except ValueError as exc:
            await _respond(send, 200, _rpc_error(message["id"], INVALID_PARAMS, str(exc)))
            return
        version = init.protocol_version if init.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS \
            else LATEST_HANDSHAKE_VERSION
        sid = secrets.token_hex(16)
        elicit = init.capabilities.elicitation is not None
        self.store.add(sid, scope[DIGEST_SCOPE_KEY], scope[IDENTITY_SCOPE_KEY].name,
                       {"elicit": elicit, "version": version})
        result = {**self._initialize_result(), "protocolVersion": version}
        await _respond(send, 200, {"jsonrpc": "2.0", "id": message["id"], "result": result},
                       sid)

    def _initialize_result(self) -> dict[str, Any]:
        if self._init_result is None:
            opts = self.service.init_options()
            result = types.InitializeResult(
                protocol_version=LATEST_HANDSHAKE_VERSION, capabilities=opts.capabilities,
                server_info=types.Implementation(name=opts.server_name, title=opts.title,
                                                 description=opts.description,
                                                 version=opts.server_version,
                                                 website_url=opts.website_url,
                                                 icons=opts.icons),
                instructions=opts.instructions)
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if not wire["capabilities"].get("extensions"):  # as the SDK leaves it out
                wire["capabilities"].pop("extensions", None)
            self._init_result = wire
        return self._init_result

    async def _request(self, scope: dict[str, Any], sid: str, info: Mapping[str, Any],
                       message: dict[str, Any], accepts: set[str], send: Send) -> None:
        rid, method = message["id"], message.get("method")
        params = message.get("params") or {}
        identity = scope[IDENTITY_SCOPE_KEY]
        if method == "ping":
            await _respond(send, 200, {"jsonrpc": "2.0", "id": rid, "result": {}}, sid)
        elif method == "tools/list":
            answer = self._rpc(rid, lambda: self.service.list_tools(identity.context))
            await _respond(send, 200, answer, sid)
        elif method == "tools/call" and isinstance(params, dict) and \
                isinstance(params.get("name"), str):
            stream = bool(info.get("elicit")) and "sse" in accepts
            await self._call(sid, identity, rid, params, stream, send)
        elif method == "tools/call":
            await _respond(send, 200, _rpc_error(rid, INVALID_PARAMS, "Invalid request parameters"),
                           sid)
        else:
            error = _rpc_error(rid, METHOD_NOT_FOUND, "Method not found")
            error["error"]["data"] = method
            await _respond(send, 200, error, sid)

    def _rpc(self, rid: Any, answer: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return {"jsonrpc": "2.0", "id": rid, "result": answer()}
        except self.service.rpc_errors as exc:
            return _rpc_error(rid, exc.error.code, exc.error.message)

    async def _call(self, sid: str, identity: Any, rid: Any, params: dict[str, Any],
                    stream: bool, send: Send) -> None:
        local = self._local.setdefault(sid, _Local())
        call_id = f"{_call_key(sid)}:{rid}"
        arguments = params.get("arguments") or {}
        if stream:  # the approval's elicitation request goes out before the result
            await _start(send, 200, SSE_TYPE, sid)
            asker = self._asker(sid, local, send)
        else:
            asker = None
        answer: dict[str, Any] | None = None
        with anyio.CancelScope() as scope:
            local.calls[rid] = scope
            try:
                result = await self.service.call_tool(identity.context, call_id, params["name"],
                                                      arguments, asker)
                answer = {"jsonrpc": "2.0", "id": rid, "result": result}
            except self.service.rpc_errors as exc:
                answer = _rpc_error(rid, exc.error.code, exc.error.message)
            except Exception as exc:  # a broken implementation: a JSON-RPC error, as the SDK
                LOG.exception("tools/call %s failed", printable(params["name"]))
                answer = _rpc_error(rid, INTERNAL_ERROR, str(exc))
            finally:
                local.calls.pop(rid, None)
        if answer is None:  # cancelled by the client (notifications/cancelled)
            answer = _rpc_error(rid, INVALID_REQUEST, "Request cancelled")
        if stream:
            await _event(send, answer)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        else:
            await _respond(send, 200, answer, sid)
        if not local.calls and local.stream is None and not local.asks:
            self._local.pop(sid, None)

    def _asker(self, sid: str, local: _Local, send: Send) -> Any:
        """What ``_elicit`` talks to: ``elicit_form`` sends ``elicitation/create`` on the
        call's own SSE stream and waits for the client's answer (a POSTed response)."""
        store = self.store

        class Asker:
            async def elicit_form(self, message: str, schema: dict[str, Any]) -> Any:
                ask_id = f"toolc-{secrets.token_hex(8)}"
                box: list[Any] = []
                done = anyio.Event()
                local.asks[ask_id] = (box, done)
                try:
                    await _event(send, {"jsonrpc": "2.0", "id": ask_id,
                                        "method": "elicitation/create",
                                        "params": {"mode": "form", "message": message,
                                                   "requestedSchema": schema}})
                    with anyio.fail_after(ELICIT_TIMEOUT):
                        while not done.is_set():  # answered here, or to another worker
                            with anyio.move_on_after(ANSWER_POLL):
                                await done.wait()
                            posted = store.take_answer(sid, ask_id)
                            if posted is not None and not done.is_set():
                                box.append(json.loads(posted))
                                done.set()
                finally:
                    local.asks.pop(ask_id, None)
                answer = box[0]
                if "error" in answer:
                    raise RuntimeError(str(answer["error"].get("message")))
                return types.ElicitResult.model_validate(answer.get("result") or {})

        return self.service.asker_for(Asker())

    def _answer(self, sid: str, message: Mapping[str, Any]) -> None:
        local = self._local.get(sid)
        waiting = local.asks.get(str(message.get("id"))) if local is not None else None
        if waiting is None:  # another worker asked: it takes the answer from the store
            self.store.post_answer(sid, str(message.get("id")), json.dumps(message))
            return
        box, done = waiting
        box.append(message)
        done.set()

    def _notified(self, sid: str, message: Mapping[str, Any]) -> None:
        if message.get("method") != "notifications/cancelled":
            return
        params = message.get("params") or {}
        rid = params.get("requestId")
        local = self._local.get(sid)
        scope = local.calls.get(rid) if local is not None else None
        if scope is not None:
            scope.cancel()
        elif isinstance(rid, (str, int)):  # another worker may run it
            self.store.post_cancel(sid, json.dumps(rid))

    # -- GET and DELETE -------------------------------------------------------------------------
    async def _get(self, headers: Mapping[bytes, bytes], receive: Any, send: Send) -> None:
        if "sse" not in _accepts(headers):
            await _error(send, 406, "Not Acceptable: Client must accept text/event-stream")
            return
        sid = _sid(headers)
        if sid is None:
            await _error(send, 400, "Bad Request: Missing session ID")
            return
        if self.store.get(sid) is None:
            await _error(send, 404, "Not Found: Session has been terminated")
            return
        local = self._local.setdefault(sid, _Local())
        if local.stream is not None:
            await _error(send, 409, "Conflict: Only one SSE stream is allowed per session")
            return
        writer, reader = anyio.create_memory_object_stream[bytes](64)
        local.stream = writer

        async def until_disconnect(scope: anyio.CancelScope) -> None:
            """The client closed the stream: free its place (a reconnect is not a 409)."""
            while (await receive())["type"] != "http.disconnect":
                pass
            scope.cancel()

        try:
            await _start(send, 200, SSE_TYPE, sid)
            async with anyio.create_task_group() as tg, reader:
                tg.start_soon(until_disconnect, tg.cancel_scope)
                while True:
                    with anyio.move_on_after(SSE_PING):  # keeps proxies from closing it
                        try:
                            event = await reader.receive()
                        except anyio.EndOfStream:
                            break
                        await send({"type": "http.response.body", "body": event,
                                    "more_body": True})
                        continue
                    await send({"type": "http.response.body", "body": b": ping\r\n\r\n",
                                "more_body": True})
                tg.cancel_scope.cancel()
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:
            pass  # the client went away
        finally:
            if local.stream is writer:
                local.stream = None
            if not local.calls and not local.asks and local.stream is None:
                self._local.pop(sid, None)

    async def _delete(self, headers: Mapping[bytes, bytes], send: Send) -> None:
        sid = _sid(headers)
        if sid is None:
            await _error(send, 400, "Bad Request: Missing session ID")
            return
        self.end(sid)
        await _respond(send, 200, None, sid)

    # -- sessions -------------------------------------------------------------------------------
    def end(self, sid: str) -> None:
        """End a session: out of the store, its stream closed, its calls cancelled."""
        self.store.remove(sid)
        self.close_local(sid)

    def close_local(self, sid: str) -> None:
        """Close what this worker holds of session ``sid`` (ended by any worker)."""
        local = self._local.pop(sid, None)
        if local is None:
            return
        if local.stream is not None:
            local.stream.close()
        for scope in local.calls.values():
            scope.cancel()

    def close_streams(self) -> None:
        """Close every GET stream of this worker (its response ends normally)."""
        for local in list(self._local.values()):
            if local.stream is not None:
                local.stream.close()

    def close_all(self) -> None:
        """Close every stream and cancel every call of this worker (a stop)."""
        for sid in list(self._local):
            self.close_local(sid)

    def streams(self) -> list[str]:
        """The sessions with a GET stream open on this worker."""
        return [sid for sid, local in self._local.items() if local.stream is not None]

    def _used(self, sid: str) -> None:
        now = time.time()
        if now - self._touched.get(sid, 0.0) >= TOUCH_EVERY:
            if len(self._touched) > 4 * len(self._local) + 1024:
                self._touched.clear()
            self._touched[sid] = now
            self.store.touch([sid], now)

    def sweep(self) -> None:
        """End the sessions idle for IDLE_TIMEOUT (a stream or a call in flight holds its
        session), cancel the calls another worker was told to cancel, and close the streams
        of sessions another worker ended (DELETE, revocation, idle)."""
        for sid in list(self._local):
            self._used(sid)
        for sid in self.store.expire(time.time() - IDLE_TIMEOUT):
            LOG.info("session %s ended: idle for %d s", sid[:8], IDLE_TIMEOUT)
        running = [sid for sid, local in self._local.items() if local.calls]
        for sid, rid in self.store.take_cancels(running):
            scope = self._local[sid].calls.get(json.loads(rid)) if sid in self._local else None
            if scope is not None:
                scope.cancel()
        if not self._local:
            return
        live = self.store.live(list(self._local))
        for sid in [s for s in self._local if s not in live]:
            self.close_local(sid)

    async def announce(self, notification: Mapping[str, Any]) -> int:
        """Send a notification on every open GET stream of this worker; how many."""
        event = _sse(notification)
        told = 0
        for local in list(self._local.values()):
            if local.stream is not None:
                try:
                    local.stream.send_nowait(event)
                    told += 1
                except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # a client that does not read its stream misses it
        return told


# -- small HTTP helpers ----------------------------------------------------------------------------
def _headers(scope: Mapping[str, Any]) -> dict[bytes, bytes]:
    return {k.lower(): v for k, v in scope.get("headers", ())}


def _sid(headers: Mapping[bytes, bytes]) -> str | None:
    value = headers.get(SESSION_HEADER)
    return value.decode("latin-1") if value is not None else None


def _call_key(sid: str) -> str:
    """A key of the session for its call ids (the session id itself is a secret)."""
    return hashlib.sha256(sid.encode()).hexdigest()[:16]


def _accepts(headers: Mapping[bytes, bytes]) -> set[str]:
    """What the Accept header allows, as the SDK reads it (wildcards included)."""
    kinds = {t.split(";")[0].strip().lower()
             for t in headers.get(b"accept", b"").decode("latin-1").split(",")}
    out = set()
    if kinds & {"*/*", "application/json", "application/*"}:
        out.add("json")
    if kinds & {"*/*", "text/event-stream", "text/*"}:
        out.add("sse")
    return out


def _is_message(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if "method" in message:
        return isinstance(message["method"], str) and \
            isinstance(message.get("id", 0), (str, int)) and \
            isinstance(message.get("params", {}), dict)
    return "id" in message and ("result" in message or "error" in message)


async def _body(receive: Any) -> bytes | None:
    """The request body, or None past the limit."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _rpc_error(rid: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def _sse(message: Mapping[str, Any]) -> bytes:
    return b"event: message\r\ndata: " + json.dumps(message, separators=(",", ":")).encode() \
        + b"\r\n\r\n"


async def _start(send: Send, status: int, content_type: bytes, sid: str | None,
                 extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    headers = [(b"content-type", content_type), *extra]
    if content_type == SSE_TYPE:
        headers += [(b"cache-control", b"no-cache, no-transform")]
    if sid is not None:
        headers.append((SESSION_HEADER, sid.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _event(send: Send, message: Mapping[str, Any]) -> None:
    await send({"type": "http.response.body", "body": _sse(message), "more_body": True})


async def _respond(send: Send, status: int, message: Mapping[str, Any] | None,
                   sid: str | None = None) -> None:
    data = b"" if message is None else json.dumps(message, separators=(",", ":")).encode()
    await _start(send, status, JSON_TYPE, sid, ((b"content-length", str(len(data)).encode()),))
    await send({"type": "http.response.body", "body": data})


async def _accepted(send: Send, sid: str) -> None:
    await _respond(send, 202, None, sid)


async def _error(send: Send, status: int, message: str, code: int = INVALID_REQUEST,
                 extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    data = json.dumps(_rpc_error(None, code, message), separators=(",", ":")).encode()
    await _start(send, status, JSON_TYPE, None,
                 ((b"content-length", str(len(data)).encode()), *extra))
    await send({"type": "http.response.body", "body": data})


async def _text(send: Send, status: int, text: bytes) -> None:
    await _start(send, status, b"text/plain; charset=utf-8", None,
                 ((b"content-length", str(len(text)).encode()),))
    await send({"type": "http.response.body", "body": text})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
