"""Messages in, kept plain: which agent and session key OpenClaw gives an inbound message.

A literal port of ``resolveAgentRoute`` as the releases ship it: 2026.9.6's
(``dist/resolve-route-6ukGCxYl.mjs``, with ``binding-scope-DY44yLIJ.mjs``,
``session-key-CBvmC8zz.mjs``, ``account-id-B1bfbA5J.mjs`` and the roster rules of
``agent-scope-config-IQKOEtZ4.mjs``), and 2026.3.2's (``dist/resolve-route-DCfod4Po.js``)
where the target's switches (``Target.route_*``, ``agent_selection``) say the release
differs. It reads the config the release's loader made: the bindings as written, then, in
2026.9.6, the channel-wide bindings its loader adds for a legacy ``default: true`` agent
(``materializeLegacyDefaultAgentRoles`` in ``legacy.roster-zIYbDm7V.mjs``), derived here
from the same rule, not taken from the build.

Nothing is indexed or cached: every message scans its channel's bindings once per tier, in
the order the loader holds them. It is the oracle the generated router
(``runtime/_route.py``, tables built ahead of time and memoized) is tested against, and what
``toolc explain`` routes with. Rules sit below the pipeline, so the definitions' binding,
agent and session values come in through the protocols below (``BindingDef``, ``AgentDef``,
``SessionDef`` satisfy them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..diagnostics import Pos
from ..runtime._errors import AgentSelectionRequiredError
from ..targets import Target
from ..targets.grammar import js_trim
from .names import DEFAULT_AGENT_ID, normalize_account_id, normalize_agent_id, normalize_channel

MATCHED_BY = ("binding.peer", "binding.peer.parent", "binding.peer.wildcard",
              "binding.guild+roles", "binding.guild", "binding.team", "binding.account",
              "binding.channel", "default")
DM_SCOPES = ("main", "per-peer", "per-channel-peer", "per-account-channel-peer")
GROUP_SCOPES = ("main", "per-group")
PEER_KINDS = ("direct", "group", "channel")
# OpenClaw's config loader forces session.mainKey to "main" (applySessionDefaults)
MAIN_KEY = "main"


class BindingLike(Protocol):
    """A written route binding (``pipeline.model.BindingDef``)."""

    @property
    def agent_id(self) -> str: ...
    @property
    def channel(self) -> str: ...
    @property
    def account(self) -> str | None: ...
    @property
    def peer_kind(self) -> str | None: ...
    @property
    def peer_id(self) -> str | None: ...
    @property
    def guild_id(self) -> str | None: ...
    @property
    def team_id(self) -> str | None: ...
    @property
    def roles(self) -> tuple[str, ...] | None: ...
    @property
    def dm_scope(self) -> str | None: ...
    @property
    def group_scope(self) -> str | None: ...
    @property
    def pos(self) -> Pos: ...


class AgentLike(Protocol):
    """A roster entry (``pipeline.model.AgentDef``)."""

    @property
    def id(self) -> str: ...
    @property
    def default(self) -> bool: ...


class SessionLike(Protocol):
    """The ``session`` settings (``pipeline.model.SessionDef``)."""

    @property
    def dm_scope(self) -> str | None: ...
    @property
    def group_scope(self) -> str | None: ...
    @property
    def identity_links(self) -> tuple[tuple[str, tuple[str, ...]], ...] | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedBinding:
    """One binding of the loaded config, its values as the config holds them: written
    (``source`` is where) or added by the loader (``source`` None)."""

    order: int  # its index in the loaded bindings (the runtime's ``Route.binding``)
    agent_id: str
    channel: str
    account: str | None = None
    peer: tuple[str, str] | None = None
    guild_id: str | None = None
    team_id: str | None = None
    roles: tuple[str, ...] | None = None
    dm_scope: str | None = None
    group_scope: str | None = None
    source: Pos | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Routing:
    """What ``resolveAgentRoute`` reads of the loaded config: the bindings, the roster (its
    normalized ids in order, the ``default: true`` markers, ``agents.ownership``), the
    ``session`` settings, and the release (``target``)."""

    bindings: tuple[LoadedBinding, ...]
    agents: tuple[str, ...]
    marked: tuple[str, ...]  # the ids of the entries marked default: true, in order
    explicit: bool  # agents.ownership: explicit
    dm_scope: str | None
    group_scope: str | None
    identity_links: tuple[tuple[str, tuple[str, ...]], ...] | None
    target: Target


@dataclass(frozen=True, slots=True, kw_only=True)
class Route:
    """Where OpenClaw runs a message (the runtime's ``toolc_runtime.Route``): the agent,
    the session key and the agent's main key, ``matched_by`` in OpenClaw's words, the
    normalized channel and account, the deciding binding's index in the loaded bindings and
    where it is written (None for ``default``, or a binding the loader added)."""

    agent_id: str
    session_key: str
    main_session_key: str
    matched_by: str
    channel: str
    account_id: str
    binding: int | None
    source: Pos | None

    def describe(self) -> str:
        """The route in one line, with where the deciding binding is written."""
        how = self.matched_by
        if self.source is not None:
            how += f" at {self.source}"
        elif self.binding is not None:
            how += ", the channel-wide binding OpenClaw's loader adds for the default agent"
        return f"agent {self.agent_id}, session {self.session_key} ({how})"


# -- the loaded config -----------------------------------------------------------------------
def routing(*, bindings: Sequence[BindingLike], agents: Sequence[AgentLike],
            ownership: str | None, channels: Iterable[str], session: SessionLike,
            target: Target) -> Routing:
    """The config the release's loader hands ``resolveAgentRoute``: the written bindings,
    then (2026.9.6) one channel-wide binding to the legacy default agent for each configured
    channel lacking one, where the loader migrates the marker
    (``migratePersistedImplicitMainRoster``: a roster of more than one agent; a sole agent's
    marker is dropped without adding anything)."""
    written = tuple(
        LoadedBinding(order=i, agent_id=b.agent_id, channel=b.channel, account=b.account,
                      peer=(b.peer_kind, b.peer_id or "") if b.peer_kind is not None else None,
                      guild_id=b.guild_id, team_id=b.team_id, roles=b.roles,
                      dm_scope=b.dm_scope, group_scope=b.group_scope, source=b.pos)
        for i, b in enumerate(bindings))
    explicit = ownership == "explicit"
    ids = tuple(dict.fromkeys(normalize_agent_id(a.id) for a in agents))
    if not ids and target.route_main_roster and not explicit:
        ids = (DEFAULT_AGENT_ID,)  # 2026.9.6's loader: agents.entries {main: {}}
    marked = tuple(normalize_agent_id(a.id) for a in agents if a.default)
    legacy = _raw_legacy_default(marked, explicit=explicit)
    added: tuple[LoadedBinding, ...] = ()
    if target.route_implicit_channel_bindings and legacy is not None and len(ids) > 1:
        added = tuple(
            LoadedBinding(order=len(written) + i, agent_id=legacy, channel=channel, account="*")
            for i, channel in enumerate(_unbound_channels(written, channels, target)))
    return Routing(bindings=written + added, agents=ids, marked=marked, explicit=explicit,
                   dm_scope=session.dm_scope, group_scope=session.group_scope,
                   identity_links=session.identity_links, target=target)


def _channel_id(raw: str | None, target: Target) -> str | None:
    """``normalizeRouteBindingChannelId``: a known channel's canonical id, else the id
    lowercased."""
    channel = normalize_channel(js_trim(raw or ""))
    return target.request_channel_aliases.get(channel or "", channel)


def _wide_channel(b: LoadedBinding, target: Target) -> str | None:
    """``isChannelWideBinding``: the channel a binding binds whole (every account, ``*``, and
    no peer, guild, team or roles), else None."""
    if ((js_trim(b.account) if b.account is not None else None) != "*" or b.peer is not None
            or js_trim(b.guild_id or "") or js_trim(b.team_id or "") or b.roles):
        return None
    return _channel_id(b.channel, target)


def _unbound_channels(written: Sequence[LoadedBinding], channels: Iterable[str],
                      target: Target) -> list[str]:
    """``listUnboundAmbientChannelIds``: the configured channels, sorted, without a
    channel-wide binding."""
    ids = {c for c in (_channel_id(raw, target) for raw in channels) if c}
    wide = {_wide_channel(b, target) for b in written}
    return [c for c in sorted(ids) if c not in wide]


# -- the roster (agent-scope-config) ---------------------------------------------------------
def _raw_legacy_default(marked: Sequence[str], *, explicit: bool) -> str | None:
    """``tryResolveRawLegacyDefaultAgentId``: the one entry marked ``default: true``,
    unless ``agents.ownership`` is ``explicit``."""
    return marked[0] if not explicit and len(marked) == 1 else None


def _sole_agent(cfg: Routing) -> str | None:
    """``tryResolveSoleAgentId``: ``main`` without a roster, the one entry of a roster of
    one, else None (an empty roster reads as none, as everywhere in toolc)."""
    if not cfg.agents:
        return DEFAULT_AGENT_ID
    return cfg.agents[0] if len(cfg.agents) == 1 else None


def _compatibility_agent(cfg: Routing) -> str | None:
    """``tryResolveLegacyCompatibilityAgentId``: under ``ownership: explicit`` the recorded
    system agent (definitions carry none), else the legacy data owner: the retained legacy
    default, the raw one, or the sole agent."""
    if cfg.explicit:
        return None
    return _raw_legacy_default(cfg.marked, explicit=False) or _sole_agent(cfg)


def _default_agent(cfg: Routing, channel: str, account: str) -> str:
    """``resolveDefaultAgentId``: the raw legacy default, else the sole agent, else
    AgentSelectionRequiredError naming the channel and account (the surface OpenClaw names)."""
    found = _raw_legacy_default(cfg.marked, explicit=cfg.explicit) or _sole_agent(cfg)
    if found is not None:
        return found
    raise AgentSelectionRequiredError(
        f"no binding routes a message on {channel or '(no channel)'} account {account}, and "
        "no default agent can be chosen",
        agent_ids=cfg.agents,
        hint=(f"add a channel-wide binding for {channel}:{account} ({{agentId: <agent>, match: "
              f'{{channel: "{channel}", accountId: "{account}"}}}}) or mark one agent '
              "default: true"))


def _first_marked_agent(cfg: Routing) -> str:
    """2026.3.2 ``resolveDefaultAgentId``: the first entry marked default, else the first
    entry, else ``main``."""
    if not cfg.agents:
        return DEFAULT_AGENT_ID
    return cfg.marked[0] if cfg.marked else cfg.agents[0]


def _pick_agent(cfg: Routing, agent_id: str) -> str:
    """``pickFirstExistingAgentId``: the roster's agent of that id; ``main`` always routes;
    any id without a roster. 2026.9.6 refuses an unknown id (AgentSelectionRequiredError),
    2026.3.2 falls back to its default agent."""
    trimmed = js_trim(agent_id)
    normalized = normalize_agent_id(trimmed)
    if not cfg.target.agent_selection:
        if not cfg.agents:
            return normalize_agent_id(trimmed)
        return normalized if normalized in cfg.agents else _first_marked_agent(cfg)
    if normalized in cfg.agents:
        return normalized
    if normalized == DEFAULT_AGENT_ID:
        return DEFAULT_AGENT_ID
    if not cfg.agents:
        return normalize_agent_id(trimmed)
    raise AgentSelectionRequiredError(
        f"the agent id {agent_id!r} names no declared agent", agent_ids=cfg.agents,
        hint=f"pass one of {', '.join(cfg.agents)} as default_agent_id")


# -- session keys (buildAgentPeerSessionKey) -------------------------------------------------
def _lower(value: str | None) -> str:
    """``normalizeLowercaseStringOrEmpty``."""
    return js_trim(value).lower() if value else ""


def _session_peer_id(channel: str, kind: str, peer_id: str) -> str:
    """``normalizeSessionPeerId``: lowercased, except Signal group ids and Matrix rooms
    (``casePreservingPeerSpan``)."""
    pid = js_trim(peer_id)
    if (channel == "signal" and kind == "group") or (channel == "matrix"
                                                     and kind in ("channel", "group")):
        return pid
    return pid.lower()


def _linked_peer(cfg: Routing, channel: str, peer_id: str) -> str | None:
    """``resolveLinkedDirectPeerId``: the canonical name whose ids include ``id`` or
    ``channel:id`` (case-insensitively), in the order the links are written."""
    if cfg.identity_links is None or not js_trim(peer_id):
        return None
    candidates = {_lower(peer_id)}
    if _lower(channel):
        candidates.add(_lower(f"{_lower(channel)}:{js_trim(peer_id)}"))
    candidates.discard("")
    for canonical, ids in cfg.identity_links:
        name = js_trim(canonical)
        if name and any(_lower(i) and _lower(i) in candidates for i in ids):
            return name
    return None


def main_session_key(agent: str) -> str:
    """``buildAgentMainSessionKey`` with the forced main key."""
    return f"agent:{normalize_agent_id(agent)}:{MAIN_KEY}"


def session_key(cfg: Routing, *, agent: str, channel: str, account: str,
                peer: tuple[str, str] | None, dm_scope: str, group_scope: str) -> str:
    """``buildAgentSessionKey`` -> ``buildAgentPeerSessionKey``: a DM by ``dm_scope``
    (linked identities apply unless it is ``main``), a group or channel as
    ``agent:<agent>:<channel>:<kind>:<id>`` (no account), or the main key under
    ``group_scope: main`` (2026.9.6; 2026.3.2 has no group scope and lowercases the key)."""
    channel = _lower(channel) or "unknown"
    kind = peer[0] if peer is not None else "direct"
    peer_id = (js_trim(peer[1]) or "unknown") if peer is not None else None
    agent_id = normalize_agent_id(agent)
    if kind == "direct":
        pid = js_trim(peer_id or "")
        linked = _linked_peer(cfg, channel, pid) if dm_scope != "main" else None
        pid = _lower(linked or pid)
        if dm_scope == "per-account-channel-peer" and pid:
            key = f"agent:{agent_id}:{channel}:{normalize_account_id(account)}:direct:{pid}"
        elif dm_scope == "per-channel-peer" and pid:
            key = f"agent:{agent_id}:{channel}:direct:{pid}"
        elif dm_scope == "per-peer" and pid:
            key = f"agent:{agent_id}:direct:{pid}"
        else:
            key = main_session_key(agent)
    elif group_scope == "main" and cfg.target.route_binding_session:
        key = main_session_key(agent)
    else:
        pid = (_session_peer_id(channel, kind, peer_id or "")
               if not cfg.target.route_lowercase_key else js_trim(peer_id or "").lower())
        key = f"agent:{agent_id}:{channel}:{kind}:{pid or 'unknown'}"
    return key.lower() if cfg.target.route_lowercase_key else key


# -- the message ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """``resolveAgentRoute``'s inputs, normalized as it normalizes them."""

    channel: str
    account: str
    peer: tuple[str, str] | None
    parent: tuple[str, str] | None
    guild: str
    team: str
    roles: tuple[str, ...]
    default_agent: str
    dm_scope: str | None
    group_scope: str | None


def _text(value: object, keyword: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"{keyword} must be a str or None, got {type(value).__name__}")


def _peer_input(value: object, keyword: str) -> tuple[str, str] | None:
    """A ``(kind, id)`` pair: the kind by ``normalizeChatType`` (toolc refuses one it does
    not know; OpenClaw would keep it and match nothing), the id trimmed."""
    if value is None:
        return None
    if not (isinstance(value, tuple) and len(value) == 2
            and all(isinstance(v, str) for v in value)):
        raise TypeError(f"{keyword} must be a (kind, id) pair of str or None, got {value!r}")
    kind = _lower(value[0])
    kind = "direct" if kind == "dm" else kind
    if kind not in PEER_KINDS:
        raise ValueError(f"{keyword}: kind {value[0]!r} is not direct, group or channel")
    return kind, js_trim(value[1])


def _scope_input(value: object, keyword: str, allowed: Sequence[str]) -> str | None:
    text = _text(value, keyword)
    if text is not None and text not in allowed:
        raise ValueError(f"{keyword} must be one of {', '.join(sorted(allowed))}, got {text!r}")
    return text


def message(cfg: Routing, channel: object, *, account_id: object = None,
            peer: object = None, parent_peer: object = None, guild_id: object = None,
            team_id: object = None, member_role_ids: Iterable[object] = (),
            default_agent_id: object = None, dm_scope: object = None,
            group_scope: object = None) -> Message:
    """The message as ``resolveAgentRoute`` reads it. TypeError / ValueError for what
    toolc's ``route`` refuses (a malformed value; under 2026.3 a default agent or scope the
    release takes no input for)."""
    roles: list[str] = []
    for role in member_role_ids:
        if not isinstance(role, str):
            raise TypeError(f"member_role_ids must hold str, got {type(role).__name__}")
        roles.append(role)
    if not cfg.target.route_binding_session:
        for keyword, value in (("default_agent_id", default_agent_id), ("dm_scope", dm_scope),
                               ("group_scope", group_scope)):
            if value is not None:
                raise ValueError(f"{keyword}: OpenClaw 2026.3 routes take no {keyword}")
    return Message(
        channel=_lower(_text(channel, "channel")),
        account=normalize_account_id(_text(account_id, "account_id")),
        peer=_peer_input(peer, "peer"), parent=_peer_input(parent_peer, "parent_peer"),
        guild=js_trim(_text(guild_id, "guild_id") or ""),
        team=js_trim(_text(team_id, "team_id") or ""), roles=tuple(roles),
        default_agent=_lower(_text(default_agent_id, "default_agent_id")),
        dm_scope=_scope_input(dm_scope, "dm_scope", DM_SCOPES),
        group_scope=_scope_input(group_scope, "group_scope", GROUP_SCOPES))


# -- the bindings a message can match ----------------------------------------------------------
def _peer_state(b: LoadedBinding, cfg: Routing) -> str:
    """``normalizePeerConstraint``: none, invalid (no kind or id), wildcard (2026.9.6: id
    ``*``) or valid."""
    if b.peer is None:
        return "none"
    kind, pid = _lower(b.peer[0]), js_trim(b.peer[1])
    if kind not in (*PEER_KINDS, "dm") or not pid:
        return "invalid"
    return "wildcard" if pid == "*" and cfg.target.route_peer_wildcard else "valid"


def _binding_peer(b: LoadedBinding) -> tuple[str, str]:
    assert b.peer is not None
    kind = _lower(b.peer[0])
    return ("direct" if kind == "dm" else kind), js_trim(b.peer[1])


def _account_pattern(b: LoadedBinding) -> str:
    return js_trim(b.account or "")


def evaluated(cfg: Routing, channel: str, account: str) -> list[LoadedBinding]:
    """``getEvaluatedBindingsForChannelAccount``: the bindings of the channel (lowercased,
    none for a blank one) whose account pattern is ``*`` or names ``account`` (an absent or
    blank one names ``default``), in loaded order. 2026.9.6 drops a binding whose peer has
    no kind or id; 2026.3.2 keeps it, and it never matches."""
    out = []
    for b in cfg.bindings:
        if not _lower(b.channel) or _lower(b.channel) != channel:
            continue
        if cfg.target.route_peer_wildcard and _peer_state(b, cfg) == "invalid":
            continue
        pattern = _account_pattern(b)
        if pattern == "*" or normalize_account_id(pattern) == account:
            out.append(b)
    return out


def _tier(b: LoadedBinding, cfg: Routing) -> tuple[str, str]:
    """``buildEvaluatedBindingsIndex``: the one tier a binding can match in, with its key (a
    group and a channel peer share ``group:<id>``: ``peerLookupKey``; 2026.3.2 indexes both
    under both keys, the same thing)."""
    state = _peer_state(b, cfg)
    if state == "valid":
        kind, pid = _binding_peer(b)
        return "binding.peer", _lookup_key(kind, pid)
    if state == "wildcard":
        return "binding.peer.wildcard", ""
    if state == "invalid":
        return "invalid", ""
    guild, team = js_trim(b.guild_id or ""), js_trim(b.team_id or "")
    if guild and b.roles:
        return "binding.guild+roles", guild
    if guild:
        return "binding.guild", guild
    if team:
        return "binding.team", team
    return ("binding.channel" if _account_pattern(b) == "*" else "binding.account"), ""


def _lookup_key(kind: str, pid: str) -> str:
    return f"{'group' if kind == 'channel' else kind}:{pid}"


def _peer_kind_matches(binding_kind: str, kind: str) -> bool:
    """``peerKindMatches``: a group binding matches a channel peer and the reverse."""
    return binding_kind == kind or {binding_kind, kind} == {"group", "channel"}


def matches(b: LoadedBinding, cfg: Routing, *, peer: tuple[str, str] | None, guild: str,
            team: str, roles: Sequence[str]) -> bool:
    """``matchesBindingScope`` with ``routeBindingScopeMatches``: the binding's peer (its kind
    and id; a wildcard its kind), guild, team and any one of its roles."""
    state = _peer_state(b, cfg)
    if state == "invalid":
        return False
    if state in ("valid", "wildcard"):
        kind, pid = _binding_peer(b)
        if peer is None or not _peer_kind_matches(kind, peer[0]):
            return False
        if state == "valid" and peer[1] != pid:
            return False
    bguild, bteam = js_trim(b.guild_id or ""), js_trim(b.team_id or "")
    if bguild and bguild != guild:
        return False
    if bteam and bteam != team:
        return False
    return not b.roles or any(r in roles for r in b.roles)


# -- resolveAgentRoute --------------------------------------------------------------------------
def route(cfg: Routing, msg: Message) -> Route:
    """``resolveAgentRoute``: the first binding of the first tier that matches (the peer,
    the thread's parent peer, a peer wildcard, guild with roles, guild, team, account,
    channel), else the default agent: the caller's (2026.9.6), the legacy compatibility agent
    or ``resolveDefaultAgentId`` (AgentSelectionRequiredError when none can be chosen)."""
    bindings = evaluated(cfg, msg.channel, msg.account)
    guild, team, roles = msg.guild, msg.team, msg.roles

    def first(tier: str, key: str, peer: tuple[str, str] | None) -> LoadedBinding | None:
        return next((b for b in bindings if _tier(b, cfg) == (tier, key)
                     and matches(b, cfg, peer=peer, guild=guild, team=team, roles=roles)), None)

    tiers: list[tuple[bool, str, str, tuple[str, str] | None]] = [
        (msg.peer is not None, "binding.peer",
         _lookup_key(*msg.peer) if msg.peer else "", msg.peer),
        (msg.parent is not None and bool(msg.parent[1]), "binding.peer.parent",
         _lookup_key(*msg.parent) if msg.parent else "", msg.parent),
        (msg.peer is not None and cfg.target.route_peer_wildcard, "binding.peer.wildcard", "",
         msg.peer),
        (bool(guild) and bool(roles), "binding.guild+roles", guild, msg.peer),
        (bool(guild), "binding.guild", guild, msg.peer),
        (bool(team), "binding.team", team, msg.peer),
        (True, "binding.account", "", msg.peer),
        (True, "binding.channel", "", msg.peer),
    ]
    for enabled, matched_by, key, peer in tiers:
        # the parent tier looks the parent up among the peer bindings
        tier = "binding.peer" if matched_by == "binding.peer.parent" else matched_by
        found = first(tier, key, peer) if enabled else None
        if found is not None:
            return _choose(cfg, msg, found.agent_id, matched_by, found)
    if not cfg.target.agent_selection:
        return _choose(cfg, msg, _first_marked_agent(cfg), "default", None)
    fallback = (msg.default_agent or _compatibility_agent(cfg)
                or _default_agent(cfg, msg.channel, msg.account))
    return _choose(cfg, msg, fallback, "default", None)


def _choose(cfg: Routing, msg: Message, agent_id: str, matched_by: str,
            b: LoadedBinding | None) -> Route:
    """``choose``: the agent as the roster has it, the session scopes (a binding's own
    ``session`` first, 2026.9.6), the session key and the main key."""
    agent = _pick_agent(cfg, agent_id)
    override = b is not None and cfg.target.route_binding_session
    dm = ((b.dm_scope if override and b is not None else None) or msg.dm_scope
          or cfg.dm_scope or "main")
    group = ((b.group_scope if override and b is not None else None) or msg.group_scope
             or cfg.group_scope or "per-group")
    if not cfg.target.route_binding_session:
        dm, group = cfg.dm_scope or "main", "per-group"
    key = session_key(cfg, agent=agent, channel=msg.channel, account=msg.account,
                      peer=msg.peer, dm_scope=dm, group_scope=group)
    return Route(agent_id=agent, session_key=key, main_session_key=main_session_key(agent),
                 matched_by=matched_by, channel=msg.channel, account_id=msg.account,
                 binding=None if b is None else b.order,
                 source=None if b is None else b.source)
