"""Messages in: route an inbound message to its agent and session key as OpenClaw 2026.9.6's
``resolveAgentRoute`` does, and resolve the tools of the run it starts (``resolve_message``).

A gateway knows the message it received (channel, account, the chat's kind and id, the
thread's parent, the guild or team, the sender), not OpenClaw's session key. OpenClaw turns
the message into an agent and a session key with the config's ``bindings`` and ``session``
settings, and 2026.9 applies a group's tool policy only through that key. The build holds
the bindings (``routes.json``, read on first use and checked like every file); this module
applies them tier by tier, in the release's order: the peer, the thread's parent peer, a
peer wildcard, guild with roles, guild, team, account, channel, else the default agent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from . import read_verified
from ._errors import AgentSelectionRequiredError
from ._policy import resolve
from ._sessions import _js_trim, _normalize_id
from ._tables import ToolSet


class Peer(NamedTuple):
    """A chat: ``kind`` is ``direct``, ``group`` or ``channel``; ``id`` the channel's id."""

    kind: str
    id: str


class Route(NamedTuple):
    """Where OpenClaw runs a message: ``agent_id``, ``session_key`` and ``main_session_key``
    as ``resolveAgentRoute`` builds them, ``matched_by`` in OpenClaw's words
    (``binding.peer``, ``binding.peer.parent``, ``binding.peer.wildcard``,
    ``binding.guild+roles``, ``binding.guild``, ``binding.team``, ``binding.account``,
    ``binding.channel``, ``default``), the normalized ``channel`` and ``account_id``, and
    ``binding``: the deciding binding's index in the build's bindings (None: ``default``)."""

    agent_id: str
    session_key: str
    main_session_key: str
    matched_by: str
    channel: str
    account_id: str
    binding: int | None

    def describe(self) -> str:
        """The route in one line, with where the deciding binding is written."""
        where = binding_source(self.binding)
        return (
            f"agent {self.agent_id}, session {self.session_key} ({self.matched_by}"
            + (f" at {where}" if where else "")
            + ")"
        )


# -- the build's routing data ------------------------------------------------------------
class _Binding(NamedTuple):
    order: int
    account: str  # "*" or a normalized account id
    peer_state: str  # none, valid, wildcard
    peer_kind: str | None
    peer_id: str | None
    guild: str | None
    team: str | None
    roles: tuple[str, ...] | None
    agent: str
    dm_scope: str | None
    group_scope: str | None
    source: str | None  # file:line:col (None: added by OpenClaw's loader)


class _Routes(NamedTuple):
    by_channel: Mapping[str, tuple[_Binding, ...]]
    every: tuple[_Binding, ...]
    dm_scope: str
    group_scope: str
    identity_links: tuple[tuple[str, tuple[str, ...]], ...] | None
    main_key: str
    default_agent: str | None
    agents: frozenset[str]
    agent_ids: tuple[str, ...]
    # the release's rules (toolc.targets.Target.routing_rules)
    peer_wildcard: bool
    binding_session: bool
    lowercase_key: bool


_ROUTES: list[_Routes] = []
_LOCK: Final = threading.Lock()


def _routes() -> _Routes:
    if not _ROUTES:
        with _LOCK:
            if not _ROUTES:
                _ROUTES.append(_decode(json.loads(read_verified("routes.json"))))
    return _ROUTES[0]


def _decode(raw: Mapping[str, Any]) -> _Routes:
    rules = raw["rules"]
    wildcards = bool(rules["peer_wildcard"])
    every: list[_Binding] = []
    by_channel: dict[str, list[_Binding]] = {}
    for order, row in enumerate(raw["bindings"]):
        channel, account, kind, pid, guild, team, roles, agent, dm, group, source = row
        state = "none" if kind is None else "wildcard" if pid == "*" and wildcards else "valid"
        binding = _Binding(
            order,
            account,
            state,
            kind,
            pid,
            guild,
            team,
            tuple(roles) if roles else None,
            agent,
            dm,
            group,
            source,
        )
        every.append(binding)
        if channel and (kind is None or pid):  # OpenClaw drops a blank channel or peer id
            by_channel.setdefault(channel, []).append(binding)
    session = raw["session"]
    links = session.get("identity_links")
    roster = tuple(raw["agents"])  # empty: no roster (pickFirstExistingAgentId takes any id)
    ids = roster or ("main",)
    return _Routes(
        {k: tuple(v) for k, v in by_channel.items()},
        tuple(every),
        session.get("dm_scope") or "main",
        session.get("group_scope") or "per-group",
        None if links is None else tuple((k, tuple(v)) for k, v in links),
        session.get("main_key") or "main",
        raw.get("default_agent"),
        frozenset(roster),
        ids,
        wildcards,
        bool(rules["binding_session"]),
        bool(rules["lowercase_key"]),
    )


def binding_source(index: int | None) -> str | None:
    """Where the build's binding ``index`` is written (``file:line:col``); None for no
    binding, or one OpenClaw's loader adds (a channel-wide binding of the default agent)."""
    if index is None:
        return None
    return _routes().every[index].source


# -- normalization (OpenClaw's own rules) ----------------------------------------------------
_BLOCKED_KEYS: Final = frozenset({"__proto__", "constructor", "prototype"})
_KINDS: Final = {"direct": "direct", "dm": "direct", "group": "group", "channel": "channel"}
_DM_SCOPES: Final = frozenset({"main", "per-peer", "per-channel-peer", "per-account-channel-peer"})
_GROUP_SCOPES: Final = frozenset({"per-group", "main"})


def _lower(value: str | None) -> str:
    """``normalizeLowercaseStringOrEmpty``."""
    return _js_trim(value).lower() if value else ""


def normalize_account_id(value: str | None) -> str:
    """``normalizeAccountId``: ``default`` when blank; lowercased, runs of characters outside
    ``[a-z0-9_-]`` turned into ``-`` (at most 64 characters)."""
    trimmed = _js_trim(value) if value else ""
    if not trimmed:
        return "default"
    canonical = _normalize_id(trimmed)
    return canonical if canonical and canonical not in _BLOCKED_KEYS else "default"


def _peer(value: object, keyword: str) -> Peer | None:
    if value is None:
        return None
    if not (isinstance(value, tuple) and len(value) == 2):
        raise TypeError(f"{keyword} must be a (kind, id) pair or None, got {value!r}")
    kind, pid = value
    if not isinstance(kind, str) or not isinstance(pid, str):
        raise TypeError(f"{keyword} must be a pair of str, got {value!r}")
    normalized = _KINDS.get(_lower(kind))
    if normalized is None:
        raise ValueError(f"{keyword}: kind {kind!r} is not direct, group or channel")
    return Peer(normalized, _js_trim(pid))


def _text(value: object, keyword: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{keyword} must be a str or None, got {type(value).__name__}")


def _scope(value: object, keyword: str, allowed: frozenset[str]) -> str | None:
    text = _text(value, keyword)
    if text is None:
        return None
    if text not in allowed:
        raise ValueError(f"{keyword} must be one of {', '.join(sorted(allowed))}, got {text!r}")
    return text


# -- session keys (buildAgentPeerSessionKey) ---------------------------------------------------
def _peer_id(channel: str, kind: str, pid: str) -> str:
    """``normalizeSessionPeerId``: lowercased, except Signal group ids and Matrix rooms."""
    if (channel == "signal" and kind == "group") or (
        channel == "matrix" and kind in ("channel", "group")
    ):
        return pid
    return pid.lower()


def _linked(routes: _Routes, channel: str, pid: str) -> str | None:
    """``resolveLinkedDirectPeerId``: the canonical name a DM peer is linked to."""
    if routes.identity_links is None or not pid:
        return None
    candidates = {pid.lower()}
    if channel:
        candidates.add(f"{channel}:{pid}".lower())
    for canonical, ids in routes.identity_links:
        name = _js_trim(canonical)
        if name and any(_lower(i) in candidates for i in ids):
            return name
    return None


def _main_key(routes: _Routes, agent: str) -> str:
    return f"agent:{agent}:{routes.main_key}"


def _session_key(  # noqa: PLR0913, PLR0917 - buildAgentSessionKey's inputs
    routes: _Routes,
    agent: str,
    channel: str,
    account: str,
    peer: Peer | None,
    dm_scope: str,
    group_scope: str,
) -> str:
    """``buildAgentSessionKey``: where OpenClaw keeps the conversation of ``peer``."""
    channel = channel or "unknown"
    if peer is None or peer.kind == "direct":
        pid = (peer.id or "unknown") if peer is not None else ""
        if dm_scope != "main":
            pid = _linked(routes, channel, pid) or pid
        pid = pid.lower()
        if pid and dm_scope == "per-account-channel-peer":
            return f"agent:{agent}:{channel}:{account}:direct:{pid}"
        if pid and dm_scope == "per-channel-peer":
            return f"agent:{agent}:{channel}:direct:{pid}"
        if pid and dm_scope == "per-peer":
            return f"agent:{agent}:direct:{pid}"
        return _main_key(routes, agent)
    if group_scope == "main":
        return _main_key(routes, agent)
    pid = _peer_id(channel, peer.kind, peer.id or "unknown") or "unknown"
    return f"agent:{agent}:{channel}:{peer.kind}:{pid}"


# -- the tiers -----------------------------------------------------------------------------
class _Index(NamedTuple):
    """``buildEvaluatedBindingsIndex`` of one channel and account."""

    by_peer: Mapping[str, tuple[_Binding, ...]]
    wildcard: tuple[_Binding, ...]
    guild_roles: Mapping[str, tuple[_Binding, ...]]
    guild: Mapping[str, tuple[_Binding, ...]]
    team: Mapping[str, tuple[_Binding, ...]]
    account: tuple[_Binding, ...]
    channel: tuple[_Binding, ...]


def _lookup_key(kind: str, pid: str) -> str:
    return f"{'group' if kind == 'channel' else kind}:{pid}"


def _index(bindings: Iterable[_Binding]) -> _Index:
    by_peer: dict[str, list[_Binding]] = {}
    guild_roles: dict[str, list[_Binding]] = {}
    guild: dict[str, list[_Binding]] = {}
    team: dict[str, list[_Binding]] = {}
    wildcard: list[_Binding] = []
    account: list[_Binding] = []
    channel: list[_Binding] = []
    for b in bindings:
        if b.peer_state == "valid":
            by_peer.setdefault(_lookup_key(b.peer_kind or "", b.peer_id or ""), []).append(b)
        elif b.peer_state == "wildcard":
            wildcard.append(b)
        elif b.guild and b.roles:
            guild_roles.setdefault(b.guild, []).append(b)
        elif b.guild:
            guild.setdefault(b.guild, []).append(b)
        elif b.team:
            team.setdefault(b.team, []).append(b)
        elif b.account != "*":
            account.append(b)
        else:
            channel.append(b)

    def frozen(m: dict[str, list[_Binding]]) -> dict[str, tuple[_Binding, ...]]:
        return {k: tuple(v) for k, v in m.items()}

    return _Index(
        frozen(by_peer),
        tuple(wildcard),
        frozen(guild_roles),
        frozen(guild),
        frozen(team),
        tuple(account),
        tuple(channel),
    )


_INDEXES: dict[tuple[str, str], _Index] = {}
_INDEX_LIMIT: Final = 2000


def _index_for(routes: _Routes, channel: str, account: str) -> _Index:
    """The bindings of ``channel`` that apply to ``account`` (its own, and ``*``), in the
    order they are written, indexed by tier (cached per channel and account)."""
    key = (channel, account)
    found = _INDEXES.get(key)
    if found is None:
        bindings = routes.by_channel.get(channel, ())
        found = _index(b for b in bindings if b.account in ("*", account))
        if len(_INDEXES) >= _INDEX_LIMIT:
            _INDEXES.clear()
        _INDEXES[key] = found
    return found


class _Scope(NamedTuple):
    peer: Peer | None
    guild: str
    team: str
    roles: frozenset[str]


def _matches(b: _Binding, scope: _Scope) -> bool:
    """``matchesBindingScope``: the binding's peer (a group binding matches a channel peer
    and the reverse), guild, team and roles (any one of them) against the message."""
    if b.peer_state != "none":
        peer = scope.peer
        if peer is None or not (
            b.peer_kind == peer.kind
            or (b.peer_kind in ("group", "channel") and peer.kind in ("group", "channel"))
        ):
            return False
        if b.peer_state == "valid" and peer.id != b.peer_id:
            return False
    if b.guild and b.guild != scope.guild:
        return False
    if b.team and b.team != scope.team:
        return False
    return b.roles is None or any(r in scope.roles for r in b.roles)


def _first(candidates: Sequence[_Binding] | None, scope: _Scope) -> _Binding | None:
    for b in candidates or ():
        if _matches(b, scope):
            return b
    return None


def _agent(routes: _Routes, raw: str) -> str:
    """``pickFirstExistingAgentId`` of a route's agent (bindings were checked at build)."""
    normalized = _normalize_id(raw) or "main"
    if normalized in routes.agents or normalized == "main" or not routes.agents:
        return normalized
    raise AgentSelectionRequiredError(
        f"the default agent id {raw!r} names no declared agent",
        agent_ids=routes.agent_ids,
        hint=f"pass one of {', '.join(routes.agent_ids)} as default_agent_id",
    )


_MEMO: dict[tuple[object, ...], Route] = {}
_MEMO_LIMIT: Final = 65536


def route(  # noqa: PLR0913 - the inputs of OpenClaw's resolveAgentRoute
    channel: str,
    *,
    account_id: str | None = None,
    peer: tuple[str, str] | None = None,
    parent_peer: tuple[str, str] | None = None,
    guild_id: str | None = None,
    team_id: str | None = None,
    member_role_ids: Sequence[str] = (),
    default_agent_id: str | None = None,
    dm_scope: str | None = None,
    group_scope: str | None = None,
) -> Route:
    """The agent and session key OpenClaw 2026.9.6 gives a message (``resolveAgentRoute``).

    ``peer`` is the chat the message came in (``("group", "-100123")``, ``("direct",
    "42")``; ``dm`` means direct), ``parent_peer`` the chat a thread belongs to, ``guild_id``
    / ``team_id`` / ``member_role_ids`` the Discord guild, Teams team and the sender's roles.
    ``dm_scope`` / ``group_scope`` override the definitions' ``session`` settings (a
    binding's own ``session`` overrides both). AgentSelectionRequiredError when no binding
    matches and no default agent can be chosen (``agents.ownership: explicit``); TypeError or
    ValueError for a malformed input. Results are memoized (bounded)."""
    roles = tuple(member_role_ids)
    key = (
        channel,
        account_id,
        peer,
        parent_peer,
        guild_id,
        team_id,
        roles,
        default_agent_id,
        dm_scope,
        group_scope,
    )
    try:
        found = _MEMO.get(key)
    except TypeError:  # unhashable: the checks name the keyword
        found = None
    if found is not None:
        return found
    found = _route(
        _text(channel, "channel"),
        _text(account_id, "account_id"),
        _peer(peer, "peer"),
        _peer(parent_peer, "parent_peer"),
        _text(guild_id, "guild_id"),
        _text(team_id, "team_id"),
        roles,
        _text(default_agent_id, "default_agent_id"),
        _scope(dm_scope, "dm_scope", _DM_SCOPES),
        _scope(group_scope, "group_scope", _GROUP_SCOPES),
    )
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[key] = found
    return found


def _route(  # noqa: PLR0913, PLR0917 - route()'s checked inputs
    raw_channel: str | None,
    raw_account: str | None,
    peer: Peer | None,
    parent: Peer | None,
    raw_guild: str | None,
    raw_team: str | None,
    roles: tuple[str, ...],
    default_agent: str | None,
    dm_scope: str | None,
    group_scope: str | None,
) -> Route:
    for role in roles:
        if not isinstance(role, str):
            raise TypeError(f"member_role_ids must hold str, got {type(role).__name__}")
    routes = _routes()
    if not routes.binding_session:
        for keyword, value in (
            ("default_agent_id", default_agent),
            ("dm_scope", dm_scope),
            ("group_scope", group_scope),
        ):
            if value is not None:
                raise ValueError(
                    f"{keyword}: OpenClaw 2026.3 routes take no {keyword} (the definitions "
                    "say dmScope); it is a 2026.9 input"
                )
    channel = _lower(raw_channel)
    account = normalize_account_id(raw_account)
    guild = _js_trim(raw_guild) if raw_guild else ""
    team = _js_trim(raw_team) if raw_team else ""
    scope = _Scope(peer, guild, team, frozenset(roles))
    index = _index_for(routes, channel, account)
    matched: _Binding | None = None
    by = "default"
    tiers: tuple[tuple[bool, Sequence[_Binding] | None, str, _Scope], ...] = (
        (
            peer is not None,
            index.by_peer.get(_lookup_key(peer.kind, peer.id)) if peer else None,
            "binding.peer",
            scope,
        ),
        (
            parent is not None and bool(parent.id),
            index.by_peer.get(_lookup_key(parent.kind, parent.id)) if parent else None,
            "binding.peer.parent",
            scope._replace(peer=parent),
        ),
        (peer is not None, index.wildcard, "binding.peer.wildcard", scope),
        (bool(guild and roles), index.guild_roles.get(guild), "binding.guild+roles", scope),
        (bool(guild), index.guild.get(guild), "binding.guild", scope),
        (bool(team), index.team.get(team), "binding.team", scope),
        (True, index.account, "binding.account", scope),
        (True, index.channel, "binding.channel", scope),
    )
    for applies, candidates, words, tier_scope in tiers:
        if applies:
            matched = _first(candidates, tier_scope)
            if matched is not None:
                by = words
                break
    if matched is not None:
        agent = matched.agent
        dm = matched.dm_scope or dm_scope or routes.dm_scope  # (2026.3: none of the first two)
        group = matched.group_scope or group_scope or routes.group_scope
    else:
        fallback = _lower(default_agent) or routes.default_agent
        if fallback is None:
            raise AgentSelectionRequiredError(
                f"no binding routes a message on {channel or '(no channel)'} account {account}, "
                "and no default agent can be chosen",
                agent_ids=routes.agent_ids,
                hint=(
                    f"add a channel-wide binding for {channel}:{account} "
                    f'({{agentId: <agent>, match: {{channel: "{channel}", accountId: '
                    f'"{account}"}}}}) or mark one agent default: true'
                ),
            )
        agent = _agent(routes, fallback)
        dm = dm_scope or routes.dm_scope
        group = group_scope or routes.group_scope
    key = _session_key(routes, agent, channel, account, peer, dm, group)
    return Route(
        agent_id=agent,
        session_key=key.lower() if routes.lowercase_key else key,
        main_session_key=_main_key(routes, agent),
        matched_by=by,
        channel=channel,
        account_id=account,
        binding=None if matched is None else matched.order,
    )


# -- the message-level request ---------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """One request for tools, as a gateway has it: the message it received (routed as
    OpenClaw routes it) with its sender and the model it will call.

    ``channel`` and the routing fields (``account_id``, ``peer``, ``parent_peer``,
    ``guild_id``, ``team_id``, ``member_role_ids``, ``default_agent_id``, ``dm_scope``,
    ``group_scope``) decide the agent and the session key (``route``); the sender fields,
    ``sender_is_owner``, ``model_provider``, ``model_id`` and ``sandboxed`` go to ``resolve``
    with them. The same value is what ``wrap``, serve-mcp's identities and the framework
    integrations take for a request."""

    channel: str
    account_id: str | None = None
    peer: tuple[str, str] | None = None
    parent_peer: tuple[str, str] | None = None
    guild_id: str | None = None
    team_id: str | None = None
    member_role_ids: tuple[str, ...] = ()
    default_agent_id: str | None = None
    dm_scope: str | None = None
    group_scope: str | None = None
    sender_id: str | None = None
    sender_e164: str | None = None
    sender_username: str | None = None
    sender_name: str | None = None
    sender_is_owner: bool | None = None
    model_provider: str | None = None
    model_id: str | None = None
    sandboxed: bool | None = None

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> Request:
        """The request a mapping of its fields stands for (an identities file, a framework's
        run context, JSON): ``peer`` / ``parent_peer`` as ``(kind, id)``, ``[kind, id]`` or
        ``"kind:id"``, ``member_role_ids`` as any sequence of str. A key that is none of the
        fields is refused (ValueError naming it); so are ``resolve``'s keywords that the
        route decides (``agent_id``, ``session_key``, ``message_provider``, ``group_id``, ...):
        a message never names them itself. TypeError or ValueError for an ill-typed value."""
        unknown = sorted(str(k) for k in values if k not in MESSAGE_KEYS)
        if unknown:
            raise ValueError(_not_message_keys(unknown))
        if values.get("channel") is None:
            raise ValueError("a message-level request needs its channel (channel=...)")
        kw: dict[str, Any] = {}
        for key, value in values.items():
            if key in ("peer", "parent_peer"):
                kw[key] = _peer(_pair(value, key), key)
            elif key == "member_role_ids":
                kw[key] = _roles(value)
            elif key in ("dm_scope", "group_scope"):
                kw[key] = _scope(value, key, _DM_SCOPES if key == "dm_scope" else _GROUP_SCOPES)
            elif key in ("sender_is_owner", "sandboxed"):
                if value is not None and not isinstance(value, bool):
                    raise TypeError(f"{key} must be a bool or None, got {value!r}")
                kw[key] = value
            else:
                kw[key] = _text(value, key)
        return cls(**kw)

    def route(self) -> Route:
        return route(
            self.channel,
            account_id=self.account_id,
            peer=self.peer,
            parent_peer=self.parent_peer,
            guild_id=self.guild_id,
            team_id=self.team_id,
            member_role_ids=self.member_role_ids,
            default_agent_id=self.default_agent_id,
            dm_scope=self.dm_scope,
            group_scope=self.group_scope,
        )

    def context(self, routed: Route | None = None) -> dict[str, Any]:
        """``resolve``'s keywords for the run this message starts (routed first unless
        ``routed`` is given): the route's agent, session key and account, the channel as
        the message provider, the chat as its group where the session key names it (see
        ``_routed_group``; ``groupScope: main`` means no group policy), the guild or team
        as the group's space, and the sender and the model."""
        found = self.route() if routed is None else routed
        group = _routed_group(found, _peer(self.peer, "peer"))
        return {
            "agent_id": found.agent_id,
            "session_key": found.session_key,
            "message_provider": self.channel,
            "account_id": found.account_id,
            "group_id": group,
            "group_space": (self.guild_id or self.team_id) if group is not None else None,
            "sender_id": self.sender_id,
            "sender_e164": self.sender_e164,
            "sender_username": self.sender_username,
            "sender_name": self.sender_name,
            "sender_is_owner": self.sender_is_owner,
            "model_provider": self.model_provider,
            "model_id": self.model_id,
            "sandboxed": self.sandboxed,
        }


MESSAGE_KEYS: Final = frozenset(Request.__dataclass_fields__)
"""The keys of a message-level request (``Request``'s fields)."""
ROUTING_KEYS: Final = MESSAGE_KEYS - {
    "account_id",
    "sender_id",
    "sender_e164",
    "sender_username",
    "sender_name",
    "sender_is_owner",
    "model_provider",
    "model_id",
    "sandboxed",
}
"""The keys only a message has (``resolve`` takes the others too): a mapping holding one of
them is a message-level request, routed first."""
# resolve's keywords a message does not name: the route (or the message's peer) decides them
_ROUTED: Final = {
    "agent_id": "the route decides the agent (a binding, else default_agent_id)",
    "session_key": "the route builds the session key",
    "spawned_by": "a message starts a run of its own; spawned runs pass resolve's keywords",
    "spawn_depth": "a message starts a run of its own; spawned runs pass resolve's keywords",
    "message_provider": "the channel is the message provider",
    "group_id": "the chat is peer=('group', <id>) (or 'channel')",
    "group_space": "the guild or team is guild_id or team_id",
    "group_channel": "the chat is peer=('channel', <id>)",
}


def _not_message_keys(keys: Sequence[str]) -> str:
    why = "; ".join(f"{k}: {_ROUTED[k]}" for k in keys if k in _ROUTED)
    return (
        f"not a field of a message-level request: {', '.join(keys)}"
        + (f" ({why})" if why else "")
        + f"; the fields are {', '.join(sorted(MESSAGE_KEYS))}"
    )


def _pair(value: object, keyword: str) -> object:
    """A peer as ``(kind, id)`` from a pair or ``"kind:id"`` (the id may hold colons)."""
    if isinstance(value, str):
        kind, sep, pid = value.partition(":")
        if not sep or not _js_trim(pid):
            raise ValueError(f"{keyword} must be KIND:ID (e.g. group:-100123), got {value!r}")
        return (kind, pid)
    if isinstance(value, list):
        return tuple(value)
    return value


def _roles(value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise TypeError(f"member_role_ids must be a sequence of str, got {value!r}")
    roles = tuple(value)
    for role in roles:
        if not isinstance(role, str):
            raise TypeError(f"member_role_ids must hold str, got {type(role).__name__}")
    return roles


# Keyed on the message's values, not on the Request (whose construction and field-by-field
# hash would cost more than the rest of a cached call). The flags key as ``resolve``'s memo
# keys them: ``sender_is_owner`` True, None or False, ``sandboxed`` absent/False or not, so a
# malformed flag (``1`` equals ``True``) may only ever hit the narrowest entry, and raises on
# a miss.
_MESSAGES: dict[tuple[object, ...], tuple[Route, ToolSet]] = {}


def _routed_group(found: Route, peer: Peer | None) -> str | None:
    """The group id of a routed run. An inbound run passes the chat id as session keys spell
    it (get-reply: ``resolveGroupSessionKey(ctx)?.id``, normalized as the key's peer id:
    2026.9.6 lowercases it except Signal groups and Matrix rooms, 2026.3.2 always), and 2026.9
    trusts it, with its space, only where the session key names it: passed as written, an id
    in another case would be refused by ``resolve`` (strict) and dropped by OpenClaw. None for
    a DM, and where the key names no group (``groupScope: main``), as OpenClaw drops it."""
    if peer is None or peer.kind == "direct" or not peer.id:
        return None
    named = _peer_id(found.channel, peer.kind, peer.id)
    key = f"agent:{found.agent_id}:{found.channel or 'unknown'}:{peer.kind}:{named}"
    if _routes().lowercase_key:
        named, key = named.lower(), key.lower()
    return named if found.session_key == key else None


def resolve_request(request: Request) -> tuple[Route, ToolSet]:
    """``(route, tools)`` of a message-level request (memoized, bounded)."""
    r = request
    return _resolve_keyed(
        (
            r.channel,
            r.account_id,
            r.peer,
            r.parent_peer,
            r.guild_id,
            r.team_id,
            tuple(r.member_role_ids),
            r.default_agent_id,
            r.dm_scope,
            r.group_scope,
            r.sender_id,
            r.sender_e164,
            r.sender_username,
            r.sender_name,
            True if r.sender_is_owner is True else None if r.sender_is_owner is None else False,
            r.model_provider,
            r.model_id,
            r.sandboxed is not None and r.sandboxed is not False,
        ),
        request,
    )


def _resolve_keyed(key: tuple[object, ...], request: Request) -> tuple[Route, ToolSet]:
    try:
        found = _MESSAGES.get(key)
    except TypeError:  # a field that cannot be hashed: the checks name it
        found = None
    if found is not None:
        return found
    routed = request.route()
    found = (routed, resolve(**request.context(routed), strict=False))
    if len(_MESSAGES) >= _MEMO_LIMIT:
        _MESSAGES.clear()
    _MESSAGES[key] = found
    return found


def resolve_message(  # noqa: PLR0913 - the message's parts, one keyword each
    channel: str,
    *,
    account_id: str | None = None,
    peer: tuple[str, str] | None = None,
    parent_peer: tuple[str, str] | None = None,
    guild_id: str | None = None,
    team_id: str | None = None,
    member_role_ids: Sequence[str] = (),
    default_agent_id: str | None = None,
    dm_scope: str | None = None,
    group_scope: str | None = None,
    sender_id: str | None = None,
    sender_e164: str | None = None,
    sender_username: str | None = None,
    sender_name: str | None = None,
    sender_is_owner: bool | None = None,
    model_provider: str | None = None,
    model_id: str | None = None,
    sandboxed: bool | None = None,
) -> tuple[Route, ToolSet]:
    """The route of a message and the tools of the run it starts, as OpenClaw 2026.9.6
    decides them: ``route`` with the routing keywords, then ``resolve`` with the route's
    agent, session key and account, the channel as the message provider, and the sender,
    owner flag, model and sandbox flag. The group's and its senders' policies apply exactly
    where OpenClaw applies them: through the session key the route builds."""
    roles = member_role_ids if type(member_role_ids) is tuple else tuple(member_role_ids)
    key = (
        channel,
        account_id,
        peer,
        parent_peer,
        guild_id,
        team_id,
        roles,
        default_agent_id,
        dm_scope,
        group_scope,
        sender_id,
        sender_e164,
        sender_username,
        sender_name,
        True if sender_is_owner is True else None if sender_is_owner is None else False,
        model_provider,
        model_id,
        sandboxed is not None and sandboxed is not False,
    )
    try:
        found = _MESSAGES.get(key)
    except TypeError:  # a value that cannot be hashed: the checks name it
        found = None
    if found is not None:
        return found
    return _resolve_keyed(
        key,
        Request(
            channel=channel,
            account_id=account_id,
            peer=peer,
            parent_peer=parent_peer,
            guild_id=guild_id,
            team_id=team_id,
            member_role_ids=roles,
            default_agent_id=default_agent_id,
            dm_scope=dm_scope,
            group_scope=group_scope,
            sender_id=sender_id,
            sender_e164=sender_e164,
            sender_username=sender_username,
            sender_name=sender_name,
            sender_is_owner=sender_is_owner,
            model_provider=model_provider,
            model_id=model_id,
            sandboxed=sandboxed,
        ),
    )
