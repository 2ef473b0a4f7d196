"""The request context: the keywords every engine takes, checked; session-key parsing (5.4, 7.1, 9).

Parsing follows OpenClaw 2026.3.2's own functions (``parseAgentSessionKey``,
``resolveGroupContextFromSessionKey``, ``isSubagentSessionKey``, ``getSubagentDepth``), including
their case rules. The generated runtime carries its own copy of the same rules; the differential
tests hold the two to each other and ``make conformance`` holds both to OpenClaw.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..targets.grammar import SEGMENTED_SESSION_KEYS, agent_rest, collapsed_agent_part, js_trim

CONTEXT_KEYS = ("agent_id", "session_key", "spawned_by", "model_provider", "model_id",
                "message_provider", "account_id", "group_id", "group_space", "group_channel",
                "sender_id", "sender_e164",
                "sender_username", "sender_name", "sender_is_owner", "sandboxed", "spawn_depth")
# ``toolc resolve`` / ``explain`` option of each keyword (booleans are flags)
CLI_OPTIONS = {"agent_id": "--agent", "session_key": "--session-key",
               "spawned_by": "--spawned-by", "model_provider": "--provider",
               "model_id": "--model", "message_provider": "--channel",
               "account_id": "--account", "group_id": "--group",
               "group_space": "--group-space", "group_channel": "--group-channel",
               "sender_id": "--sender-id", "sender_e164": "--sender-e164",
               "sender_username": "--sender-username", "sender_name": "--sender-name",
               "sender_is_owner": "--owner", "sandboxed": "--sandboxed",
               "spawn_depth": "--spawn-depth"}
# A boolean's option for False: under 2026.9 an unset owner keeps owner-only tools, so "not
# the owner" must be said
NEGATED_OPTIONS = {"sender_is_owner": "--no-owner"}
# The CLI's options of a message-level request (MESSAGE_KEYS): its routing fields' own, and
# the context options that give the rest (``--channel`` gives ``channel``)
ROUTE_OPTIONS = {"peer": "--peer", "parent_peer": "--parent-peer", "guild_id": "--guild",
                 "team_id": "--team", "member_role_ids": "--role",
                 "default_agent_id": "--default-agent", "dm_scope": "--dm-scope",
                 "group_scope": "--group-scope"}
REQUEST_CONTEXT_KEYS = {"channel": "message_provider", "account_id": "account_id",
                        "sender_id": "sender_id", "sender_e164": "sender_e164",
                        "sender_username": "sender_username", "sender_name": "sender_name",
                        "sender_is_owner": "sender_is_owner",
                        "model_provider": "model_provider", "model_id": "model_id",
                        "sandboxed": "sandboxed"}

STRING_KEYS = frozenset(CONTEXT_KEYS) - {"sender_is_owner", "sandboxed", "spawn_depth"}
# The message-level request (``toolc_runtime.Request``'s fields, a test holds them equal):
# the message a gateway received, routed as OpenClaw routes it before resolve runs.
MESSAGE_KEYS = ("channel", "account_id", "peer", "parent_peer", "guild_id", "team_id",
                "member_role_ids", "default_agent_id", "dm_scope", "group_scope", "sender_id",
                "sender_e164", "sender_username", "sender_name", "sender_is_owner",
                "model_provider", "model_id", "sandboxed")
# the keys only a message has: a context holding one is a message, routed first
ROUTING_KEYS = frozenset(MESSAGE_KEYS) - frozenset(CONTEXT_KEYS)
PEER_KINDS = ("direct", "dm", "group", "channel")
DM_SCOPES = ("main", "per-peer", "per-channel-peer", "per-account-channel-peer")
GROUP_SCOPES = ("per-group", "main")
# resolve's keywords a message does not name, and what it names instead
ROUTED_KEYS = {"agent_id": "the route decides the agent (a binding, else default_agent_id)",
               "session_key": "the route builds the session key",
               "spawned_by": "a message starts a run of its own",
               "spawn_depth": "a message starts a run of its own",
               "message_provider": "the channel is the message provider",
               "group_id": "the chat is peer: group:<id>",
               "group_space": "the guild or team is guild_id or team_id",
               "group_channel": "the chat is peer: channel:<id>"}
_THREAD_MARKERS = (":thread:", ":topic:")


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """One request. Strings that are empty after trimming are absent (``None``)."""

    agent_id: str | None = None
    session_key: str | None = None
    spawned_by: str | None = None
    model_provider: str | None = None
    model_id: str | None = None
    message_provider: str | None = None
    account_id: str | None = None
    group_id: str | None = None
    # OpenClaw's groupSpace (a Discord guild id or name) and groupChannel (a channel's name,
    # e.g. "#general"), which Discord's and Slack's resolvers read beside the group id
    group_space: str | None = None
    group_channel: str | None = None
    sender_id: str | None = None
    sender_e164: str | None = None
    sender_username: str | None = None
    sender_name: str | None = None
    sender_is_owner: bool | None = None
    sandboxed: bool | None = None
    spawn_depth: int | None = None

    @classmethod
    def of(cls, **kwargs: Any) -> Context:
        """Check every keyword (TypeError naming the keyword); blank strings become None."""
        unknown = set(kwargs) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(f"unknown context keyword(s): {', '.join(sorted(unknown))}")
        return cls(**{k: check_value(k, v) for k, v in kwargs.items()})


def check_value(key: str, value: Any) -> Any:
    """One context value, checked. A malformed value is refused, never read as "allow more"."""
    if value is None:
        return None
    if key in STRING_KEYS:
        if not isinstance(value, str):
            raise TypeError(f"{key} must be a str or None, got {type(value).__name__}")
        return value if value.strip() else None
    if key == "spawn_depth":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TypeError(f"spawn_depth must be a non-negative int or None, got {value!r}")
        return value
    if not isinstance(value, bool):
        raise TypeError(f"{key} must be a bool or None, got {type(value).__name__}")
    return value


def is_message(ctx: Mapping[str, Any]) -> bool:
    """Whether a context is a message-level request (it holds a key only a message has)."""
    return not ROUTING_KEYS.isdisjoint(ctx)


def parse_peer(value: object, key: str = "peer") -> str:
    """A peer as ``KIND:ID`` (``KIND`` one of direct, dm, group, channel; ``ID`` may hold
    colons), from that text or a ``[kind, id]`` pair; ValueError or TypeError naming ``key``."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(v, str) for v in value):
        kind, pid = value
    elif isinstance(value, str):
        kind, _, pid = value.partition(":")
    else:
        raise TypeError(f"{key} must be KIND:ID or a [kind, id] pair, got {value!r}")
    if js_trim(kind).lower() not in PEER_KINDS or not js_trim(pid):
        raise ValueError(f"{key} must be KIND:ID with KIND one of {', '.join(PEER_KINDS)} and "
                         f"an ID (e.g. group:-100123), got {value!r}")
    return f"{js_trim(kind).lower()}:{js_trim(pid)}"


def check_message(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A message-level context, checked as ``toolc_runtime.Request.of`` checks it (keys are
    Request's fields, the channel is required); peers come back as ``KIND:ID``, roles as a
    tuple. ValueError naming a key that is not a field (with what to pass instead for
    resolve's keywords that the route decides), TypeError for an ill-typed value."""
    unknown = sorted(str(k) for k in raw if k not in MESSAGE_KEYS)
    if unknown:
        why = "; ".join(f"{k}: {ROUTED_KEYS[k]}" for k in unknown if k in ROUTED_KEYS)
        raise ValueError(f"not a field of a message-level context: {', '.join(unknown)}"
                         + (f" ({why})" if why else ""))
    checked: dict[str, Any] = {}
    for key, value in raw.items():
        checked[key] = _message_value(key, value)
    if not checked.get("channel"):
        raise ValueError("a message-level context needs its channel")
    return checked


def _message_value(key: str, value: Any) -> Any:
    if value is None:
        return None
    if key in ("peer", "parent_peer"):
        return parse_peer(value, key)
    if key == "member_role_ids":
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(
                isinstance(v, str) for v in value):
            raise TypeError(f"member_role_ids must be a list of str, got {value!r}")
        return tuple(value)
    if key in ("dm_scope", "group_scope"):
        allowed = DM_SCOPES if key == "dm_scope" else GROUP_SCOPES
        if value not in allowed:
            raise ValueError(f"{key} must be one of {', '.join(allowed)}, got {value!r}")
        return value
    if key in ("sender_is_owner", "sandboxed"):
        return check_value(key, value)
    if not isinstance(value, str):
        raise TypeError(f"{key} must be a str or None, got {type(value).__name__}")
    return value if value.strip() else None


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    agent: str | None  # the raw agent id of an ``agent:ID:...`` key
    channel: str | None
    group: str | None
    is_subagent: bool
    depth: int


_NO_SESSION = SessionInfo(agent=None, channel=None, group=None, is_subagent=False, depth=0)


def parse_session_key(key: str | None) -> SessionInfo:
    """``agent:ID:CHANNEL:group:GID[:topic:T]`` and ``:subagent:`` markers (OpenClaw's rules)."""
    raw = js_trim(key or "")
    if not raw:
        return _NO_SESSION
    lower = raw.lower()
    agent, rest = collapsed_agent_part(lower)
    channel, group = group_context(raw)
    return SessionInfo(agent=agent, channel=channel, group=group,
                       is_subagent=lower.startswith("subagent:") or rest.startswith("subagent:"),
                       depth=lower.count(":subagent:"))


def is_cron_session(key: str | None) -> bool:
    """2026.9 ``isCronSessionKey``: an agent key whose rest starts with ``cron:``."""
    agent, rest = collapsed_agent_part(js_trim(key or "").lower())
    return agent is not None and rest.startswith("cron:")


def group_context(raw_key: str | None) -> tuple[str | None, str | None]:
    """``resolveGroupContextFromSessionKey``: (channel, group id) of a group session key."""
    raw = js_trim(raw_key or "")
    if not raw:
        return None, None
    lower = raw.lower()
    cut = max(lower.rfind(m) for m in _THREAD_MARKERS)
    if cut > 0:
        raw = js_trim(raw[:cut]) or raw
    parts = [p for p in raw.split(":") if p]
    body = parts[2:] if parts and parts[0] == "agent" else parts
    if body and body[0] == "subagent":
        body = body[1:]
    if len(body) < 3 or body[1] not in ("group", "channel"):
        return None, None
    group = js_trim(":".join(body[2:]))
    if not group:
        return None, None
    return js_trim(body[0]).lower(), group


# -- OpenClaw 2026.9.6 (targets with group_id_needs_session / agent_selection) -----------------
_TOPIC_SENDER = re.compile(r"^(.+):topic:([^:]+):sender:([^:]+)$", re.IGNORECASE | re.DOTALL)
_TOPIC = re.compile(r"^(.+):topic:([^:]+)$", re.IGNORECASE | re.DOTALL)
_SENDER = re.compile(r"^(.+):sender:([^:]+)$", re.IGNORECASE | re.DOTALL)


def _unique(values: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        v = js_trim(value)
        if v and v not in out:
            out.append(v)
    return tuple(out)


def scoped_group_ids(group_id: str | None) -> tuple[str, ...]:
    """``buildScopedGroupIdCandidates`` (agent-tools.policy, 2026.9.6): ``C:topic:T:sender:S``
    tries itself, ``C:topic:T`` then ``C``; ``C:topic:T`` tries itself then ``C``;
    ``C:sender:S`` itself then ``C``; anything else only itself."""
    raw = js_trim(group_id or "")
    if not raw:
        return ()
    m = _TOPIC_SENDER.match(raw)
    if m:
        return _unique([raw, f"{m.group(1)}:topic:{m.group(2)}", m.group(1)])
    m = _TOPIC.match(raw)
    if m:
        return _unique([f"{m.group(1)}:topic:{m.group(2)}", m.group(1)])
    m = _SENDER.match(raw)
    if m:
        return _unique([raw, m.group(1)])
    return (raw,)


def session_group_ids(raw_key: str | None) -> tuple[str | None, tuple[str, ...]]:
    """``resolveGroupContextFromSessionKey`` (2026.9.6): (channel, group ids) a session key
    names. A ``:thread:T`` suffix (last, any case, T not blank) is cut first; then
    ``parseRawSessionConversationRef`` (``[agent:ID:]CHANNEL:group|channel:ID``, segments
    kept as they are, the kind in any case), else the older split that drops empty segments
    and a leading ``subagent``. Channel plugins' own conversation resolvers are not modelled
    (the generic resolution adds nothing to the scoped candidates)."""
    raw = js_trim(raw_key or "")
    if not raw:
        return None, ()
    cut = raw.lower().rfind(":thread:")
    if cut >= 0 and js_trim(raw[cut + 8:]):
        raw = raw[:cut]
    parts = raw.split(":")
    wrapped = js_trim(parts[0]).lower() == "agent"
    ref: tuple[str, str] | None = None
    if not (wrapped and (not js_trim(parts[1] if len(parts) > 1 else "") or len(parts) < 3)):
        body = parts[2:] if wrapped else parts
        if (body and js_trim(body[0]).lower() != "agent" and len(body) >= 3
                and js_trim(body[2]) and js_trim(body[0])
                and js_trim(body[1]).lower() in ("group", "channel")):
            rid = js_trim(":".join(body[2:]))
            if rid:
                ref = (js_trim(body[0]).lower(), rid)
    if ref is not None:
        return ref[0], scoped_group_ids(ref[1])
    split = [p for p in raw.split(":") if p]
    body = split[2:] if split and split[0] == "agent" else split
    if body and body[0] == "subagent":
        body = body[1:]
    if len(body) < 3 or body[1] not in ("group", "channel"):
        return None, ()
    gid = js_trim(":".join(body[2:]))
    if not gid:
        return None, ()
    return body[0].strip().lower() or None, scoped_group_ids(gid)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrustedGroup:
    """The group layer's inputs under the trusted group id rule (2026.9.6)."""

    channel: str | None  # the session key's, else spawned_by's, else message_provider
    group_ids: tuple[str, ...]  # tried in order
    dropped: bool  # the caller's group id was refused (group_space/group_channel go too)


def trusted_group(session_key: str | None, spawned_by: str | None, group_id: str | None,
                  message_provider: str | None) -> TrustedGroup:
    """``resolveTrustedGroupIdFromContexts`` + ``resolveGroupToolPolicyOutcome``: a caller's
    group id counts only when the session key or ``spawned_by`` names it (else it is
    dropped with group_space and group_channel); the ids tried are the session key's, then
    spawned_by's, then the trusted caller's scoped candidates; the channel is the session
    key's, else spawned_by's, else the message provider."""
    s_channel, s_ids = session_group_ids(session_key)
    p_channel, p_ids = session_group_ids(spawned_by)
    trusted = _unique([*s_ids, *p_ids])
    caller = js_trim(group_id or "")
    dropped = bool(caller) and caller not in trusted
    ids = _unique([*trusted, *(() if dropped or not caller else scoped_group_ids(caller))])
    return TrustedGroup(channel=s_channel or p_channel or message_provider, group_ids=ids,
                        dropped=dropped)


def ignored_group(session_key: str | None, spawned_by: str | None, group_id: str | None,
                  group_space: str | None, group_channel: str | None
                  ) -> tuple[str, str] | None:
    """The first of ``(keyword, value)`` that 2026.9.6 would ignore (``trusted_group``): a
    caller's group id neither the session key nor ``spawned_by`` names, and the space and
    channel beside a group that is not trusted (an ignored id, or no group named at all).
    toolc refuses such a request unless asked for the release's silent behaviour."""
    trusted = [*session_group_ids(session_key)[1], *session_group_ids(spawned_by)[1]]
    caller = js_trim(group_id or "")
    if caller and caller not in trusted:
        return "group_id", group_id or ""
    if not trusted:
        for keyword, value in (("group_space", group_space), ("group_channel", group_channel)):
            if value is not None and value.strip():
                return keyword, value
    return None


# the name tests/test_access9.py imports (it predates the grammars in toolc.targets.grammar)
subagent9 = SEGMENTED_SESSION_KEYS.subagent_of


_DELIVERY_KINDS = frozenset({"channel", "direct", "dm", "group"})


def delivery_channel(key: str | None) -> str | None:
    """``parseSessionDeliveryRoute(sessionKey)?.channel`` (2026.9.6): the channel of an
    agent-scoped delivery key, ``agent:ID:CHANNEL:(group|channel|direct|dm):PEER`` or
    ``agent:ID:CHANNEL:ACCOUNT:(direct|dm):PEER`` (a ``:thread:`` suffix cut first),
    lowercased; None for any other key."""
    raw = js_trim(key or "")
    if not raw:
        return None
    cut = raw.lower().rfind(":thread:")
    if cut >= 0:
        raw = raw[:cut]
    agent_key = agent_rest(js_trim(raw))
    if agent_key is None:
        return None
    rest = agent_key[1].lower()
    parts = rest.split(":")
    if parts[0] == "agent" or len(parts) < 3:
        return None
    channel = parts[0].strip()
    if not channel:
        return None
    if len(parts) >= 4 and parts[2] in ("direct", "dm"):
        ok = parts[1].strip() and parts[3].strip() and ":".join(parts[3:]).strip()
        return channel if ok else None
    if parts[1] not in _DELIVERY_KINDS or not parts[2].strip():
        return None
    return channel
