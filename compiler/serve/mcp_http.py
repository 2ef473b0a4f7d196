"""The HTTP front of ``toolc serve-mcp --http``: who may reach the MCP layer, and with what.

Every request passes through ``Gateway`` before the MCP SDK sees it:

- ``/.well-known/...`` answers 404: toolc offers no OAuth, and a 401 there makes clients
  (MCP Inspector) start an OAuth flow that cannot succeed.
- ``GET /metrics`` (Prometheus text, ``serve.observe``) needs a bearer token like the MCP
  layer, unless ``metrics_public`` (``--metrics-public``); without metrics it is a 404.
- ``GET /healthz`` answers without a token: the manifest digest of the build being served and
  the last build refused (digest and age), nothing about the policy itself.
- Everything else needs a bearer token of the identities file *as it is now*: the file is
  stat'ed on every request and re-read when it changed (``IdentitySource``). A token removed
  from the file is refused from the next request on, and its open MCP sessions are ended. A
  file that became unreadable or malformed lets nobody in until it is fixed (fail closed).
- An MCP session belongs to the token that opened it: a request naming another token's
  session (POST, GET stream, DELETE, a cancellation, a resume with Last-Event-ID) gets the
  same 404 as a session that does not exist.
- Each identity may hold at most ``Limits.sessions_per_identity`` open sessions and
  ``Limits.inflight_per_identity`` POST requests in flight; past that it gets 429, and the
  other identities keep working.

Sessions and counts live in a ``SessionStore`` (``mcp_sessions``): this process's
dictionaries, or with several workers one database they share, so the caps and revocation
hold across every worker of the port.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from .mcp_identity import Identities, Identity, IdentitySource, token_hash
from .mcp_sessions import LocalStore, SessionRow, SessionStore

LOG: Final = logging.getLogger("toolc.mcp")
IDENTITY_SCOPE_KEY: Final = "toolc.identity"
DIGEST_SCOPE_KEY: Final = "toolc.digest"
SESSION_SCOPE_KEY: Final = "toolc.session"
SESSION_HEADER: Final = b"mcp-session-id"
HEALTH_PATH: Final = "/healthz"
METRICS_PATH: Final = "/metrics"
DEFAULT_SESSIONS_PER_IDENTITY: Final = 16
DEFAULT_INFLIGHT_PER_IDENTITY: Final = 8
DIGEST_CACHE: Final = 4096


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-identity caps (``--max-sessions-per-identity``, ``--max-inflight-per-identity``)."""

    sessions_per_identity: int = DEFAULT_SESSIONS_PER_IDENTITY
    inflight_per_identity: int = DEFAULT_INFLIGHT_PER_IDENTITY


class Gateway:
    """ASGI middleware in front of the MCP app (see the module docstring).

    With the SDK's app (``lean=False``) the gateway registers each session it sees opened and
    ends a revoked one by a DELETE of its own; the lean app (``mcp_lean``) registers its
    sessions in the store itself and is told to end them (``app.end``)."""

    def __init__(self, app: Any, source: IdentitySource, limits: Limits,
                 health: Callable[[], Mapping[str, Any]], *, metrics: Any = None,
                 metrics_public: bool = False, store: SessionStore | None = None,
                 lean: bool = False,
                 freshen: Callable[[], Awaitable[None]] | None = None) -> None:
        self.app = app
        self.freshen = freshen  # brings the build up to date before a request is answered
        self.lean = lean
        self.store: SessionStore = store if store is not None else LocalStore()
        self.metrics = metrics  # serve.observe.Metrics, or None
        self.metrics_public = metrics_public
        self.source = source
        self.limits = limits
        self.health = health
        self._seen: Identities | None = source.current()
        self._scopes: dict[str, dict[str, Any]] = {}  # SDK app: each session's opening scope
        self._digests: dict[str, str] = {}
        self.stopping = False
        self._inflight = 0  # POST requests this process is answering (what a stop waits for)

    # -- ASGI ---------------------------------------------------------------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets or anything else
            await send({"type": "websocket.close", "code": 1008})
            return
        if self.stopping:  # nothing new starts (a reconnected stream would hold the stop up)
            await _respond(send, 503, {"error": "unavailable",
                                       "error_description": "the server is stopping"},
                           ((b"connection", b"close"),))
            return
        path = str(scope.get("path", ""))
        if path.startswith("/.well-known/"):
            await _respond(send, 404, {"error": "not_found",
                                       "error_description": "this server offers no OAuth"})
            return
        if self.freshen is not None:
            await self.freshen()
        if path == HEALTH_PATH:
            await self._health(scope, send)
            return
        if path == METRICS_PATH and self.metrics_public:
            await self._metrics(scope, send)
            return
        identities = await self.refresh()
        token = _bearer(scope)
        digest = self._digest(token) if token else None
        identity = identities.by_hash(digest) if identities and digest else None
        if identity is None or digest is None:
            why = ("the identities file is unusable" if identities is None else
                   "unknown bearer token" if token else "no bearer token")
            LOG.warning("refused an HTTP request from %s: %s", _peer(scope), why)
            await _unauthorized(send)
            return
        if path == METRICS_PATH:
            await self._metrics(scope, send)
            return
        await self._authorized(scope, receive, send, identity, digest)

    def _digest(self, token: str) -> str:
        """The token's sha256, remembered for the tokens seen last (one hash per request
        otherwise; a token that stops being valid is refused by the identities lookup)."""
        digest = self._digests.get(token)
        if digest is None:
            if len(self._digests) >= DIGEST_CACHE:
                self._digests.clear()
            digest = self._digests[token] = token_hash(token)
        return digest

    async def _authorized(self, scope: dict[str, Any], receive: Any, send: Any,
                          identity: Identity, digest: str) -> None:
        if self.lean:
            scope = {**scope, IDENTITY_SCOPE_KEY: identity, DIGEST_SCOPE_KEY: digest}
        else:
            user = AuthenticatedUser(AccessToken(token=digest, client_id=identity.name,
                                                 scopes=[], subject=digest))
            scope = {**scope, IDENTITY_SCOPE_KEY: identity, DIGEST_SCOPE_KEY: digest,
                     "user": user}
        sid = _header(scope, SESSION_HEADER)
        if sid is not None:
            session = self.store.get(sid)
            if session is None or session.owner != digest:
                if session is not None:
                    LOG.warning("refused %s's request for a session of %s", identity.name,
                                session.name)
                await _respond(send, 404, _rpc_error(-32600, "Session not found"))
                return
            scope[SESSION_SCOPE_KEY] = session
        elif scope["method"] == "POST" and not self._reserve_session(digest, identity):
            await _respond(send, 429, _rpc_error(
                -32000, f"identity {identity.name} has {self.limits.sessions_per_identity} "
                "open sessions (the limit): end one (DELETE) first"))
            return
        if scope["method"] != "POST":
            await self._forward(scope, receive, send, sid, digest, identity)
            return
        if not self.store.acquire(digest, self.limits.inflight_per_identity):
            if sid is None:
                self.store.unreserve(digest)
            await _respond(send, 429, _rpc_error(
                -32000, f"identity {identity.name} has {self.limits.inflight_per_identity} "
                "requests in flight (the limit)"))
            return
        self._inflight += 1
        try:
            await self._forward(scope, receive, send, sid, digest, identity)
        finally:
            self._inflight -= 1
            self.store.release(digest)
            if sid is None:
                self.store.unreserve(digest)

    async def _forward(self, scope: dict[str, Any], receive: Any, send: Any, sid: str | None,
                       digest: str, identity: Identity) -> None:
        if self.lean:
            await self.app(scope, receive, send)
            return
        if sid is not None and scope["method"] == "GET":
            # No event store: nothing can be replayed, and the SDK would answer a resume with
            # no response at all; a resume opens the session's stream afresh instead.
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"]
                                          if k.lower() != b"last-event-id"]}
        status = 0

        async def watch(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                opened = _header(message, SESSION_HEADER)
                # registered before the client can see the id, so its next request finds it
                if sid is None and opened is not None and status < 400:
                    self.store.add(opened, digest, identity.name, {})
                    self._scopes[opened] = scope
            await send(message)

        await self.app(scope, receive, watch)
        if sid is not None and scope["method"] == "DELETE" and status < 400:
            self.forget(sid)

    # -- sessions -----------------------------------------------------------------------------
    async def stop(self, grace: float, hurry: Callable[[], bool] = lambda: False) -> None:
        """The server is stopping: refuse what comes next (503), end the GET streams at once
        (a client sees its stream end), give the requests in flight ``grace`` seconds to be
        answered (less once ``hurry()``), then end what this process still holds (a call
        still running is answered "Request cancelled", its implementation told by its abort
        signal), so that every response completes and the server finds no connection to
        wait for. The lean app's sessions stay in the store; the SDK app's are ended as a
        DELETE would (its streams close no other way)."""
        self.stopping = True
        if self.lean:
            self.app.close_streams()
        with anyio.move_on_after(grace):
            while self._inflight and not hurry():
                await anyio.sleep(0.05)
        if self.lean:
            self.app.close_all()
            return
        for sid in list(self._scopes):
            session = self.store.get(sid)
            if session is not None:
                await self._end(sid, session)

    def _reserve_session(self, digest: str, identity: Identity) -> bool:
        if not self.store.reserve(digest, self.limits.sessions_per_identity):
            LOG.warning("refused a new session of %s: %d open (the limit)", identity.name,
                        self.limits.sessions_per_identity)
            return False
        return True

    def forget(self, sid: str | None) -> None:
        """A session ended (DELETE, idle timeout, revocation): it no longer counts."""
        if sid is not None:
            self.store.remove(sid)
            self._scopes.pop(sid, None)

    def owner_name(self, sid: str | None) -> str | None:
        session = self.store.get(sid) if sid is not None else None
        return session.name if session is not None else None

    # -- the identities file ------------------------------------------------------------------
    async def refresh(self) -> Identities | None:
        """The identities now; when the file changed, end the sessions of removed tokens."""
        identities = self.source.current()
        if identities is self._seen:
            return identities
        self._seen = identities
        if identities is None:
            return None  # refused until fixed; sessions are ended only by a valid new file
        # 404 from now on, even before the session has wound down
        revoked = self.store.revoke(set(identities.hashes()))
        names = sorted({s.name for s in revoked.values()})
        LOG.info("identities file changed: %d identities%s", len(identities),
                 f"; ended {len(revoked)} session(s) of removed {', '.join(names)}"
                 if revoked else "")
        for sid, session in revoked.items():
            await self._end(sid, session)
        return identities

    async def _end(self, sid: str, session: SessionRow) -> None:
        """Terminate a session in the app as its owner's DELETE would (closing its streams)."""
        if self.lean:
            self.app.end(sid)
            return
        opening = self._scopes.pop(sid, None)
        if opening is None:
            return
        headers = [(k, v) for k, v in opening["headers"]
                   if k.lower() in (b"host", b"origin", b"mcp-protocol-version")]
        scope = {**opening, "method": "DELETE", "query_string": b"",
                 "headers": [*headers, (SESSION_HEADER, sid.encode())]}
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if delivered:
                await anyio.sleep_forever()
            delivered = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 400:
                LOG.error("could not end session %s of %s (HTTP %s)", sid[:12], session.name,
                          message["status"])

        with anyio.move_on_after(10):
            await self.app(scope, receive, send)

    async def _metrics(self, scope: Mapping[str, Any], send: Any) -> None:
        if self.metrics is None:
            await _respond(send, 404, {"error": "not_found",
                                       "error_description": "metrics need toolc[metrics]"})
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, {"error": "method_not_allowed"})
            return
        body, content_type = self.metrics.render()
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", content_type.encode()),
            (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    # -- health -------------------------------------------------------------------------------
    async def _health(self, scope: Mapping[str, Any], send: Any) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await _respond(send, 405, {"error": "method_not_allowed"})
            return
        await _respond(send, 200, dict(self.health()))


# -- small HTTP helpers ----------------------------------------------------------------------------
def _header(scope: Mapping[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _bearer(scope: Mapping[str, Any]) -> str | None:
    value = _header(scope, b"authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _peer(scope: Mapping[str, Any]) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"


def _rpc_error(code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}


async def _respond(send: Any, status: int, body: Mapping[str, Any],
                   extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    data = json.dumps(body, sort_keys=True).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        *extra]})
    await send({"type": "http.response.body", "body": data})


async def _unauthorized(send: Any) -> None:
    await _respond(send, 401, {"error": "invalid_token",
                               "error_description": "a known bearer token is required"},
                   ((b"www-authenticate", b'Bearer realm="toolc"'),))
