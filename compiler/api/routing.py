"""Messages in: the route of a message (its agent, session key and the binding that decided,
with where that binding is written) and the context of the run it starts, as the build's
generated runtime computes them (``toolc_runtime.Request``: ``route``, ``context``).

A message-level request is given as a mapping of ``toolc_runtime.Request``'s fields
(``toolc.rules.context.MESSAGE_KEYS``: ``channel``, ``peer``, ``sender_id``, ...), as a
context is a mapping of ``resolve``'s keywords; the build's runtime makes its own ``Request``
of it, so that routing has one implementation.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..rules.context import MESSAGE_KEYS, ROUTE_OPTIONS, parse_peer
from ..runtime._errors import AgentSelectionRequiredError, UntrustedGroupError

# ``route``'s keywords beside the channel: the account and the routing fields
ROUTE_KEYWORDS = ("account_id", *ROUTE_OPTIONS)


class RequestError(ValueError):
    """A message-level request the build cannot take: a malformed peer or scope, or an input
    its release has no use for (``dm_scope`` under 2026.3). The CLI exits 2."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteResult:
    """Where OpenClaw runs a message (``toolc_runtime.Route``) and where the deciding binding
    is written: ``binding_source`` is its ``file:line:col`` (None for no binding, or for one
    OpenClaw's config loader adds: a channel-wide binding of the default agent)."""

    agent_id: str
    session_key: str
    main_session_key: str
    matched_by: str
    channel: str
    account_id: str
    binding: int | None  # the deciding binding's index in the build's bindings
    binding_source: str | None

    @property
    def decided_by(self) -> str:
        """The deciding binding in words: its position, the loader, or ``default``."""
        if self.binding is None:
            return "default: no binding matches"
        return self.binding_source or "added by OpenClaw's loader"

    def describe(self) -> str:
        """The route in one line (``toolc route``, and the first line of resolve and explain
        for a message)."""
        how = self.decided_by if self.binding is None else f"{self.matched_by}, {self.decided_by}"
        return f"agent {self.agent_id}, session {self.session_key} ({how})"

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape (docs/reference/cli.md, toolc route)."""
        binding = None if self.binding is None else {"index": self.binding,
                                                     "source": self.binding_source}
        return {"agent_id": self.agent_id, "session_key": self.session_key,
                "main_session_key": self.main_session_key, "matched_by": self.matched_by,
                "channel": self.channel, "account_id": self.account_id, "binding": binding}


def request_fields(request: Mapping[str, Any]) -> dict[str, Any]:
    """A message-level request's fields as ``toolc_runtime.Request`` takes them: TypeError
    for an unknown field or a missing ``channel``; peers as ``(kind, id)`` or ``KIND:ID``
    text (RequestError when malformed), roles as a sequence; None values left out."""
    unknown = sorted(set(request) - set(MESSAGE_KEYS))
    if unknown:
        raise TypeError(f"unknown request field(s): {', '.join(unknown)} (known: "
                        f"{', '.join(MESSAGE_KEYS)})")
    if not isinstance(request.get("channel"), str):
        raise TypeError("a message-level request needs its channel (a str)")
    out = {k: v for k, v in request.items() if v is not None}
    for key in ("peer", "parent_peer"):
        if isinstance(out.get(key), str):
            out[key] = peer_pair(out[key], key)
    if "member_role_ids" in out:
        out["member_role_ids"] = tuple(out["member_role_ids"])
    return out


def peer_pair(text: str, key: str = "peer") -> tuple[str, str]:
    """``KIND:ID`` text (``toolc.rules.context.parse_peer``) as the ``(kind, id)`` pair
    ``route`` takes; RequestError naming ``key`` when malformed."""
    try:
        kind, _, pid = parse_peer(text, key).partition(":")
    except (TypeError, ValueError) as exc:
        raise RequestError(str(exc)) from exc
    return kind, pid


def toolc_refusal(runtime: ModuleType, exc: Exception) -> Exception | None:
    """A build's refusal (its generated package's AgentSelectionRequiredError or
    UntrustedGroupError) as toolc's own class (``toolc.runtime._errors``), so that callers
    catch one; None for any other exception."""
    refused = getattr(runtime, "AgentSelectionRequiredError", None)
    if refused is not None and isinstance(exc, refused):
        return AgentSelectionRequiredError(exc.reason, agent_ids=exc.agent_ids, code=exc.code,
                                           hint=_hint_of(exc))
    untrusted = getattr(runtime, "UntrustedGroupError", None)
    if untrusted is not None and isinstance(exc, untrusted):
        copy = UntrustedGroupError(exc.field, exc.value, session_key=None)
        copy.message, copy.args = exc.message, exc.args  # the build's own words
        return copy
    return None


def _hint_of(exc: Any) -> str | None:
    """The advice after the reason in a refusal's message (kept word for word)."""
    head = f"agent selection required: {exc.reason}; "
    text = str(exc)
    return text[len(head):] if text.startswith(head) else None


def route_with(runtime: ModuleType, request: Mapping[str, Any], *, sources: str
               ) -> tuple[RouteResult, dict[str, Any]]:
    """``request`` (``request_fields``) routed by a build's runtime (``Request.route``), and
    ``resolve``'s keywords for the run it starts (``Request.context``: the route's agent,
    session key and account, the channel as the message provider, the chat as its group,
    the sender, owner flag, model and sandbox flag; absent ones left out). The group counts
    only where the route's session key names it (``groupScope: main``: no group policy), so
    resolve the context with ``strict=False``, as ``resolve_request`` does. ``sources``
    names the definitions directory the build's binding positions are relative to. Raises
    AgentSelectionRequiredError (the release refuses: no binding and no default agent) or
    RequestError (an input the runtime rejects)."""
    fields = request_fields(request)
    try:
        message = runtime.Request(**fields)
        routed = message.route()
        context = {k: v for k, v in message.context(routed).items() if v is not None}
    except (TypeError, ValueError) as exc:
        refusal = toolc_refusal(runtime, exc)
        if refusal is not None:
            raise refusal from exc
        raise RequestError(_in_cli_words(str(exc))) from exc
    where = importlib.import_module(f"{runtime.__name__}._route").binding_source(routed.binding)
    found = RouteResult(agent_id=routed.agent_id, session_key=routed.session_key,
                        main_session_key=routed.main_session_key, matched_by=routed.matched_by,
                        channel=routed.channel, account_id=routed.account_id,
                        binding=routed.binding,
                        binding_source=None if where is None else f"{sources}/{where}")
    return found, context


def _in_cli_words(text: str) -> str:
    """The runtime names a keyword; say its option too (``dm_scope (--dm-scope)``)."""
    keyword = text.split(":", 1)[0].split(" ", 1)[0]
    option = ROUTE_OPTIONS.get(keyword)
    return f"{keyword} ({option}){text[len(keyword):]}" if option else text
