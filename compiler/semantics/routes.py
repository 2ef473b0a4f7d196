"""Routing as review reads it: OpenClaw's ``resolveAgentRoute`` over one build's
``routes.json`` (``toolc.pipeline.routing``), for ``toolc diff``, ``ACCESS.md`` and the report.

The generated runtime routes with ``toolc_runtime.route``, which reads its own build's routes
only (and whose module needs the rest of that build); a review compares two builds side by
side, so it needs a route function over any ``routes.json``. This is that function, ported
rule for rule from the runtime's ``_route`` (the tests hold the two equal on every message of
random binding sets), with one addition: each route carries its session key's **recipe**,
what the key is made of besides the message's own channel, account and peer id. Two builds
give a message the same session key exactly when they give it the same agent and recipe
(up to the letter case of a Signal group or Matrix room id, which only 2026.3.2 lowercases),
so a review can tell "the session key changes" for a whole class of messages at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..targets.grammar import js_trim

KINDS = ("direct", "group", "channel")
_KIND_ALIASES = {"direct": "direct", "dm": "direct", "group": "group", "channel": "channel"}
_BLOCKED_KEYS = frozenset({"__proto__", "constructor", "prototype"})
_ID_OK = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_ID_BAD_RUN = re.compile(r"[^a-z0-9_-]+")


class Binding(NamedTuple):
    """One row of ``routes.json`` (``toolc.pipeline.routing``), as the runtime decodes it."""

    order: int
    channel: str
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
    source: str | None  # file:line:col; None: added by OpenClaw's loader


class Message(NamedTuple):
    """An inbound message as ``route`` takes it (its keywords; ``peer`` and ``parent_peer``
    as ``(kind, id)``)."""

    channel: str
    account_id: str | None = None
    peer: tuple[str, str] | None = None
    parent_peer: tuple[str, str] | None = None
    guild_id: str | None = None
    team_id: str | None = None
    member_role_ids: tuple[str, ...] = ()

    def keywords(self) -> dict[str, Any]:
        """``toolc_runtime.route``'s keywords (only those given)."""
        out: dict[str, Any] = {}
        for name, value in zip(self._fields[1:], self[1:], strict=True):
            if value is not None and value != ():
                out[name] = value
        return out


class Routed(NamedTuple):
    """A message's route (``toolc_runtime.Route``'s values), or its refusal (``refused``:
    OpenClaw's reason; the other values empty). ``recipe`` is what the session key is
    made of besides the message's channel, account and peer id (see the module docstring)."""

    agent_id: str
    session_key: str
    matched_by: str
    account_id: str
    binding: int | None
    recipe: tuple[Any, ...]
    refused: str | None = None

    def verdict(self) -> tuple[Any, ...]:
        """What a message's run depends on: refused (whatever the reason names), or the
        agent and the key's recipe."""
        return (True,) if self.refused is not None else (self.agent_id, self.recipe)


@dataclass(frozen=True, slots=True)
class _Index:
    by_peer: dict[str, list[Binding]] = field(default_factory=dict)
    wildcard: list[Binding] = field(default_factory=list)
    guild_roles: dict[str, list[Binding]] = field(default_factory=dict)
    guild: dict[str, list[Binding]] = field(default_factory=dict)
    team: dict[str, list[Binding]] = field(default_factory=dict)
    account: list[Binding] = field(default_factory=list)
    channel: list[Binding] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteTable:
    """One build's ``routes.json``, decoded as ``toolc_runtime`` decodes it."""

    bindings: tuple[Binding, ...]
    by_channel: Mapping[str, tuple[Binding, ...]]
    dm_scope: str
    group_scope: str
    identity_links: tuple[tuple[str, tuple[str, ...]], ...] | None
    main_key: str
    default_agent: str | None
    agents: tuple[str, ...]
    peer_wildcard: bool
    binding_session: bool
    lowercase_key: bool
    _indexes: dict[tuple[str, str], _Index] = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> RouteTable:
        rules = raw["rules"]
        wildcards = bool(rules["peer_wildcard"])
        rows: list[Binding] = []
        by_channel: dict[str, list[Binding]] = {}
        for order, row in enumerate(raw["bindings"]):
            channel, account, kind, pid, guild, team, roles, agent, dm, group, source = row
            state = ("none" if kind is None else
                     "wildcard" if pid == "*" and wildcards else "valid")
            b = Binding(order, channel, account, state, kind, pid, guild, team,
                        tuple(roles) if roles else None, agent, dm, group, source)
            rows.append(b)
            by_channel.setdefault(channel, []).append(b)
        session = raw["session"]
        links = session.get("identity_links")
        return cls(
            bindings=tuple(rows), by_channel={k: tuple(v) for k, v in by_channel.items()},
            dm_scope=session.get("dm_scope") or "main",
            group_scope=session.get("group_scope") or "per-group",
            identity_links=None if links is None else tuple((k, tuple(v)) for k, v in links),
            main_key=session.get("main_key") or "main",
            default_agent=raw.get("default_agent"),
            agents=tuple(raw["agents"]) or ("main",),
            peer_wildcard=wildcards, binding_session=bool(rules["binding_session"]),
            lowercase_key=bool(rules["lowercase_key"]))

    def implicit(self) -> list[Binding]:
        """The bindings OpenClaw's loader adds (no source position)."""
        return [b for b in self.bindings if b.source is None]

    def index(self, channel: str, account: str) -> _Index:
        """The bindings of ``channel`` that apply to ``account``, by tier (cached)."""
        key = (channel, account)
        found = self._indexes.get(key)
        if found is None:
            found = self._indexes[key] = _index(
                b for b in self.by_channel.get(channel, ()) if b.account in ("*", account))
        return found


def _index(bindings: Iterable[Binding]) -> _Index:
    out = _Index()
    for b in bindings:
        if b.peer_state == "valid":
            out.by_peer.setdefault(_lookup_key(b.peer_kind or "", b.peer_id or ""), []).append(b)
        elif b.peer_state == "wildcard":
            out.wildcard.append(b)
        elif b.guild and b.roles:
            out.guild_roles.setdefault(b.guild, []).append(b)
        elif b.guild:
            out.guild.setdefault(b.guild, []).append(b)
        elif b.team:
            out.team.setdefault(b.team, []).append(b)
        elif b.account != "*":
            out.account.append(b)
        else:
            out.channel.append(b)
    return out


def _lookup_key(kind: str, pid: str) -> str:
    return f"{'group' if kind == 'channel' else kind}:{pid}"


# -- normalization (the runtime's, OpenClaw's) ------------------------------------------------
def _lower(value: str | None) -> str:
    return js_trim(value).lower() if value else ""


def _normalize_id(raw: str) -> str:
    """The runtime's id rule (agents, accounts): lowercased, runs outside ``[a-z0-9_-]``
    turned into ``-``, at most 64 characters (possibly empty)."""
    value = raw.strip().lower()
    if not _ID_OK.fullmatch(value):
        value = _ID_BAD_RUN.sub("-", value).strip("-")[:64]
    return value


def account_id(value: str | None) -> str:
    """``normalizeAccountId`` as the runtime applies it (``default`` when blank)."""
    trimmed = js_trim(value) if value else ""
    if not trimmed:
        return "default"
    canonical = _normalize_id(trimmed)
    return canonical if canonical and canonical not in _BLOCKED_KEYS else "default"


def peer_of(value: tuple[str, str] | None) -> tuple[str, str] | None:
    """A ``(kind, id)`` peer as ``route`` reads it (``dm`` is ``direct``); ValueError for
    another kind."""
    if value is None:
        return None
    kind, pid = value
    normalized = _KIND_ALIASES.get(_lower(kind))
    if normalized is None:
        raise ValueError(f"peer kind {kind!r} is not direct, group or channel")
    return normalized, js_trim(pid)


# -- the tiers -------------------------------------------------------------------------------
class _Scope(NamedTuple):
    peer: tuple[str, str] | None
    guild: str
    team: str
    roles: frozenset[str]


def _matches(b: Binding, scope: _Scope) -> bool:
    if b.peer_state != "none":
        peer = scope.peer
        if peer is None or not (
                b.peer_kind == peer[0]
                or (b.peer_kind in ("group", "channel") and peer[0] in ("group", "channel"))):
            return False
        if b.peer_state == "valid" and peer[1] != b.peer_id:
            return False
    if b.guild and b.guild != scope.guild:
        return False
    if b.team and b.team != scope.team:
        return False
    return b.roles is None or any(r in scope.roles for r in b.roles)


def _first(candidates: Sequence[Binding] | None, scope: _Scope) -> Binding | None:
    for b in candidates or ():
        if _matches(b, scope):
            return b
    return None


def _tiers(table: RouteTable, index: _Index, peer: tuple[str, str] | None,
           parent: tuple[str, str] | None, scope: _Scope
           ) -> tuple[Binding, str] | None:
    """The deciding binding and OpenClaw's words for its tier (``resolveAgentRoute``)."""
    guild, team, roles = scope.guild, scope.team, scope.roles
    tiers: tuple[tuple[bool, Sequence[Binding] | None, str, _Scope], ...] = (
        (peer is not None, index.by_peer.get(_lookup_key(*peer)) if peer else None,
         "binding.peer", scope),
        (parent is not None and bool(parent[1]),
         index.by_peer.get(_lookup_key(*parent)) if parent else None, "binding.peer.parent",
         scope._replace(peer=parent)),
        (peer is not None, index.wildcard, "binding.peer.wildcard", scope),
        (bool(guild and roles), index.guild_roles.get(guild), "binding.guild+roles", scope),
        (bool(guild), index.guild.get(guild), "binding.guild", scope),
        (bool(team), index.team.get(team), "binding.team", scope),
        (True, index.account, "binding.account", scope),
        (True, index.channel, "binding.channel", scope),
    )
    for applies, candidates, words, tier_scope in tiers:
        if applies:
            found = _first(candidates, tier_scope)
            if found is not None:
                return found, words
    return None


def route(table: RouteTable, message: Message) -> Routed:
    """The route OpenClaw gives ``message`` under ``table`` (the runtime's ``route`` without
    the caller's overrides), with its session key's recipe; a refusal (no binding matches
    and no default agent can be chosen) as ``Routed.refused``."""
    channel = _lower(message.channel)
    account = account_id(message.account_id)
    peer, parent = peer_of(message.peer), peer_of(message.parent_peer)
    guild = js_trim(message.guild_id) if message.guild_id else ""
    team = js_trim(message.team_id) if message.team_id else ""
    roles = message.member_role_ids
    scope = _Scope(peer, guild, team, frozenset(roles))
    decided = _tiers(table, table.index(channel, account), peer, parent, scope)
    if decided is not None:
        b, by = decided
        agent, dm, group = b.agent, b.dm_scope or table.dm_scope, \
            b.group_scope or table.group_scope
    else:
        fallback = table.default_agent
        if fallback is None:
            return Routed("", "", "default", account, None, (),
                          refused=f"no binding routes a message on {channel or '(no channel)'} "
                                  f"account {account}, and no default agent can be chosen")
        agent, dm, group, by, b = (_normalize_id(fallback) or "main", table.dm_scope,
                                   table.group_scope, "default", None)
    key, recipe = _session_key(table, agent, channel, account, peer, dm, group)
    return Routed(agent, key.lower() if table.lowercase_key else key, by, account,
                  None if b is None else b.order, recipe)


# -- session keys (buildAgentSessionKey) -----------------------------------------------------
def keeps_case(channel: str, kind: str) -> bool:
    """``normalizeSessionPeerId`` keeps the case of Signal group ids and Matrix rooms."""
    return (channel == "signal" and kind == "group") or (
        channel == "matrix" and kind in ("channel", "group"))


def _linked(table: RouteTable, channel: str, pid: str) -> str | None:
    if table.identity_links is None or not pid:
        return None
    candidates = {pid.lower()}
    if channel:
        candidates.add(f"{channel}:{pid}".lower())
    for canonical, ids in table.identity_links:
        name = js_trim(canonical)
        if name and any(_lower(i) in candidates for i in ids):
            return name
    return None


def _session_key(table: RouteTable, agent: str, channel: str, account: str,
                 peer: tuple[str, str] | None, dm_scope: str, group_scope: str
                 ) -> tuple[str, tuple[Any, ...]]:
    """The session key and its recipe: ``("main",)``, ``("direct", dmScope, linked name)``
    or ``(kind, keeps the id's case)``."""
    channel = channel or "unknown"
    main = (f"agent:{agent}:{table.main_key}", ("main",))
    if peer is None or peer[0] == "direct":
        pid = (peer[1] or "unknown") if peer is not None else ""
        linked = _linked(table, channel, pid) if dm_scope != "main" else None
        pid = (linked or pid).lower()
        recipe = ("direct", dm_scope, linked)
        if pid and dm_scope == "per-account-channel-peer":
            return f"agent:{agent}:{channel}:{account}:direct:{pid}", recipe
        if pid and dm_scope == "per-channel-peer":
            return f"agent:{agent}:{channel}:direct:{pid}", recipe
        if pid and dm_scope == "per-peer":
            return f"agent:{agent}:direct:{pid}", recipe
        return main
    if group_scope == "main":
        return main
    kind, raw = peer
    keep = keeps_case(channel, kind) and not table.lowercase_key
    pid = (raw or "unknown") if keep else (raw or "unknown").lower()
    return f"agent:{agent}:{channel}:{kind}:{pid or 'unknown'}", (kind, keep)
