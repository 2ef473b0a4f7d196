"""Routed messages: the classes of inbound messages that one build's bindings, or two builds'
(a diff), tell apart, and the access class of the run each starts.

OpenClaw routes a message (channel, account, chat, the thread's parent chat, guild, team, the
sender's roles) to an agent and a session key (``routes.route``), and the run it starts
resolves its tools with that agent and key: 2026.9 applies a group's policy only through the
key, so ``groupScope: main`` is a group without its policy, and a sandbox mode reads the key
too. The access classes (``access.ClassSpace``) take the agent and the key as given; this is
the tier above them, the one a gateway's message goes through.

**Classes.** Per side a message's route has a verdict (its agent, the deciding binding and its
tier, and the session key's recipe; or the refusal). Messages with the same verdicts on every
side form a class; the candidates are built from every value some binding names (channels,
accounts, peers of each kind, thread parents, guilds, teams, and the sender's roles as sets of
at most two named roles: a binding matches a role set when it holds one of its roles, so a
set's route is that of its "first" role on each side, and two builds need at most two roles to
reach every pair) plus fresh values. A value no binding names routes like a fresh one.

**Routed runs.** A class whose route changes (another agent, another session key, or a
refusal on one side only) is split further by the access class of its run on each side
(``ClassSpace.classify`` of the run's context), trying also the values the tool policies name
(channels, accounts, group ids and guilds with a policy of their own), so that each such
class has one tool set per side for every provider and owner class: a review can say which
tools a moved group gains or loses. The run is the default message a gateway passes: no
sender (a group's ``toolsBySender`` rules are its "any other sender"), not sandboxed unless
its session key is, not a subagent.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..pipeline.groups import fresh
from ..targets.grammar import js_trim
from . import trusted_channels as tc
from .access import ClassSpace
from .routes import KINDS, Binding, Message, Routed, RouteTable, peer_of, route

Point = tuple[int, ...]
# a route's verdict with what decided it: (refused?, agent, tier, binding, recipe)
Signature = tuple[Any, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageClass:
    """Messages routed alike on every side: a representative (``message``), its route on
    each side, and (where the route changes) the access class of its run on each side
    (``points``; None on a side that refuses it)."""

    message: Message
    words: str
    routes: tuple[Routed, ...]
    points: tuple[Point | None, ...] | None = None

    @property
    def changed(self) -> bool:
        """Whether the message runs elsewhere on some side: another agent, another session
        key, or a refusal on one side only."""
        first = self.routes[0].verdict()
        return any(r.verdict() != first for r in self.routes[1:])

    @property
    def agent_changed(self) -> bool:
        return len({(r.refused is not None, r.agent_id) for r in self.routes}) > 1


def context(message: Message, routed: Routed) -> dict[str, Any]:
    """``resolve``'s keywords for the run a routed message starts (the runtime's
    ``Request.context``): the route's agent, session key and account, the channel as the
    message provider, the chat as its group (2026.9 trusts it only where the key names it),
    the guild or team as its space."""
    peer = peer_of(message.peer)
    group = peer[1] if peer is not None and peer[0] != "direct" else None
    space = message.guild_id or message.team_id
    out: dict[str, Any] = {"agent_id": routed.agent_id, "session_key": routed.session_key,
                           "message_provider": message.channel,
                           "account_id": routed.account_id}
    if group is not None:
        out["group_id"] = group
        if space:
            out["group_space"] = space
    return out


def signature(r: Routed) -> Signature:
    """A route as a class key (a refusal's reason names the channel and account, so a
    refusal is one value)."""
    return (r.refused is not None, r.agent_id, r.matched_by, r.binding, r.recipe)


def _changed(sigs: Sequence[Signature]) -> bool:
    return len({(True,) if s[0] else (s[1], s[4]) for s in sigs}) > 1


class MessageSpace:
    """The message classes of one or two builds' routes (``tables``, one per side), and, with
    the sides' ``ClassSpace``, the access class of each changed class's routed run."""

    def __init__(self, tables: Sequence[RouteTable], space: ClassSpace | None = None) -> None:
        self.tables = list(tables)
        self.space = space
        self._named = _Named(self.tables)
        self._policy = _Policy(space) if space is not None else None
        taken = {*self._named.channels, *(self._policy.channels if self._policy else ())}
        self.other_channel = fresh(taken)
        self.other_account = fresh(self._named.all_accounts | (
            self._policy.all_accounts if self._policy else set()))
        self.other_peer = fresh(self._named.all_ids | (
            self._policy.all_ids if self._policy else set()))
        self.classes: list[MessageClass] = []
        self._index: dict[Any, int] = {}
        self._routes: dict[Message, tuple[Routed, ...]] = {}
        self._build()
        self._routes.clear()  # a build's worth of messages: not kept for classify

    # -- classes ---------------------------------------------------------------------------
    def classify(self, message: Message) -> int:
        """The class of ``message``: on every side its route is the class's (agent, tier,
        deciding binding, session key recipe), and where the route changes the run's access
        class too. LookupError if no class holds it (the space is incomplete)."""
        sigs = tuple(signature(route(t, message)) for t in self.tables)
        key: Any = sigs if not (_changed(sigs) and self.space) else (sigs, self._points(message))
        found = self._index.get(key)
        if found is None:
            raise LookupError(f"no message class holds {message}")
        return found

    def changed(self) -> list[MessageClass]:
        """The classes whose route changes, a thread's and a peerless message's last."""
        return sorted((k for k in self.classes if k.changed),
                      key=lambda k: (k.message.parent_peer is not None, k.message.peer is None))

    def _build(self) -> None:
        routed: dict[tuple[Signature, ...], list[Message]] = {}
        for message in self._candidates():
            routed.setdefault(self._signatures(message), []).append(message)
        for sigs, members in routed.items():
            if not (_changed(sigs) and self.space is not None):
                self._add(sigs, members[0], None)
                continue
            for message in self._expand(members):
                here = self._signatures(message)
                points = self._points(message) if _changed(here) else None
                self._add(here if points is None else (here, points), message, points)

    def _add(self, key: Any, message: Message, points: tuple[Point | None, ...] | None) -> None:
        if key in self._index:
            return
        self._index[key] = len(self.classes)
        self.classes.append(MessageClass(message=message, words=self.words(message),
                                         points=points, routes=self._route(message)))

    def _points(self, message: Message) -> tuple[Point | None, ...]:
        """Per side, the access class of the run ``message`` starts there (None: refused)."""
        assert self.space is not None
        out: list[Point | None] = []
        for r in (route(t, message) for t in self.tables):
            out.append(None if r.refused is not None
                       else self.space.classify(**context(message, r)))
        return tuple(out)

    # -- candidates ------------------------------------------------------------------------
    def _candidates(self) -> Iterator[Message]:
        """Messages from every value the bindings name, and fresh ones."""
        named = self._named
        for channel in [*sorted(named.channels), self.other_channel]:
            everything = named.of(channel)
            for account in [None, *sorted(everything.accounts - {"default"}),
                            self.other_account]:
                yield from self._messages(channel, account, named.of(channel, account,
                                                                     every=False))

    def _messages(self, channel: str, account: str | None, values: _Values
                  ) -> Iterator[Message]:
        """The candidates of one channel and account, from what its bindings name."""
        # a message without a peer last: a class's first message is its representative
        peers: list[tuple[str, str] | None] = [
            (kind, pid) for kind in KINDS for pid in [*sorted(values.ids[kind]),
                                                      self.other_peer]]
        peers.append(None)
        parents = sorted(values.parents)
        scopes = itertools.product([None, *sorted(values.guilds)],
                                   [None, *sorted(values.teams)], _role_sets(values.roles))
        for (guild, team, roles), peer in itertools.product(scopes, peers):
            message = Message(channel, account, peer, None, guild, team, roles)
            yield message
            if parents and not self._peer_decides(message):
                yield from (message._replace(parent_peer=p) for p in parents)

    def _peer_decides(self, message: Message) -> bool:
        """Whether the peer tier decides on every side (a thread's parent then cannot)."""
        return message.peer is not None and all(
            r.matched_by == "binding.peer" for r in self._route(message))

    def _route(self, message: Message) -> tuple[Routed, ...]:
        """``message``'s route on every side (kept: the candidates are routed once)."""
        found = self._routes.get(message)
        if found is None:
            found = self._routes[message] = tuple(route(t, message) for t in self.tables)
        return found

    def _signatures(self, message: Message) -> tuple[Signature, ...]:
        return tuple(signature(r) for r in self._route(message))

    def _expand(self, members: Sequence[Message]) -> Iterator[Message]:
        """A changed class's messages, with the fresh channel, account and group, and no
        guild, also as each value a tool policy names that the candidates of its channel and
        account do not (they route the same, and may resolve other tools)."""
        policy = self._policy
        assert policy is not None
        for m in members:
            yield m
            channels = [m.channel] + (sorted(policy.channels - self._named.channels)
                                      if m.channel == self.other_channel else [])
            for channel in channels:
                values = policy.of(channel)
                accounts = [m.account_id] + (
                    sorted(values.accounts - self._named.of(channel).accounts)
                    if m.account_id == self.other_account else [])
                for account in accounts:
                    yield from self._variants(m, channel, account, values)

    def _variants(self, m: Message, channel: str, account: str | None, values: _Values
                  ) -> Iterator[Message]:
        named = self._named.of(channel, account, every=False)  # the account's candidates
        peers = [m.peer]
        if m.peer is not None and m.peer[0] != "direct" and m.peer[1] == self.other_peer:
            peers += [(m.peer[0], g) for g in sorted(values.ids["group"] - named.ids[m.peer[0]])]
        guilds = [m.guild_id] + (sorted(values.guilds - named.guilds) if m.guild_id is None
                                 else [])
        for peer, guild in itertools.product(peers, guilds):
            variant = m._replace(channel=channel, account_id=account, peer=peer, guild_id=guild)
            if variant != m:
                yield variant

    # -- words -----------------------------------------------------------------------------
    def words(self, m: Message) -> str:
        """A class in words, from its representative: fresh values are "any other"."""
        parts = ["any other channel" if m.channel == self.other_channel
                 else f"channel {m.channel}"]
        if m.account_id is not None:
            parts.append("any other account" if m.account_id == self.other_account
                         else f"account {m.account_id}")
        parts.append(self._peer_words(m.peer, "no peer"))
        if m.parent_peer is not None:
            parts.append(f"in a thread of {self._peer_words(m.parent_peer, '')}")
        if m.guild_id is not None:
            parts.append(f"guild {m.guild_id}")
        if m.team_id is not None:
            parts.append(f"team {m.team_id}")
        if m.member_role_ids:
            parts.append(("role " if len(m.member_role_ids) == 1 else "roles ")
                         + " and ".join(m.member_role_ids))
        return ", ".join(parts)

    def _peer_words(self, peer: tuple[str, str] | None, none: str) -> str:
        if peer is None:
            return none
        kind, pid = peer
        noun = {"direct": "direct chat", "group": "group", "channel": "channel chat"}[kind]
        return f"any other {noun}" if pid == self.other_peer else f"{noun} {pid}"


def route_command(m: Message) -> str:
    """``toolc route``'s options for a message (its witness, as a reviewer retypes it)."""
    words = ["--channel", m.channel]
    if m.account_id is not None:
        words += ["--account", m.account_id]
    for option, peer in (("--peer", m.peer), ("--parent-peer", m.parent_peer)):
        if peer is not None:
            words += [option, f"{peer[0]}:{peer[1]}"]
    if m.guild_id is not None:
        words += ["--guild", m.guild_id]
    if m.team_id is not None:
        words += ["--team", m.team_id]
    for role in m.member_role_ids:
        words += ["--role", role]
    return " ".join(words)


def _role_sets(roles: set[str]) -> list[tuple[str, ...]]:
    """No role, each role, each pair: a binding's roles match when the sender holds any of
    them, so a set routes as its first-deciding role does on each side."""
    ordered = sorted(roles)
    return [(), *((r,) for r in ordered), *itertools.combinations(ordered, 2)]


@dataclass(slots=True)
class _Values:
    """What a channel's bindings (or policies) name."""

    accounts: set[str]
    ids: dict[str, set[str]]  # peer kind -> ids
    parents: set[tuple[str, str]]
    guilds: set[str]
    teams: set[str]
    roles: set[str]


def _values() -> _Values:
    return _Values(set(), {k: set() for k in KINDS}, set(), set(), set(), set())


class _Named:
    """The values the bindings of every side name, per channel and per account (a binding
    applies to the accounts it names: ``*`` every one, none the default one), and the
    direct peer ids ``identityLinks`` name, which shape a DM's session key."""

    def __init__(self, tables: Sequence[RouteTable]) -> None:
        self._bindings: dict[str, list[Binding]] = {}
        self._linked: dict[str | None, set[str]] = {None: set()}  # channel (None: every one)
        for table in tables:
            for b in table.bindings:
                self._bindings.setdefault(b.channel, []).append(b)
            for channel, pid in _linked_ids(table):
                self._linked.setdefault(channel, set()).add(pid)
        self.channels = set(self._bindings) | {c for c in self._linked if c is not None}
        self._of: dict[tuple[str, str | None], _Values] = {}
        self.all_accounts = {b.account for bs in self._bindings.values() for b in bs
                             if b.account != "*"}
        self.all_ids = {i for ids in self._linked.values() for i in ids} | {
            b.peer_id for bs in self._bindings.values() for b in bs if b.peer_id is not None}

    def of(self, channel: str, account: str | None = None, *, every: bool = True) -> _Values:
        """What ``channel``'s bindings name: those that apply to ``account`` (normalized;
        None: the default account), or with ``every`` all of them."""
        key = (channel, None if every else account or "default")
        found = self._of.get(key)
        if found is None:
            found = self._of[key] = _values()
            for b in self._bindings.get(channel, ()):
                if every or b.account in ("*", key[1]):
                    self._binding(found, b)
            found.ids["direct"] |= self._linked[None] | self._linked.get(channel, set())
        return found

    @staticmethod
    def _binding(v: _Values, b: Binding) -> None:
        if b.account != "*":
            v.accounts.add(b.account)
        if b.peer_state == "valid" and b.peer_kind is not None and b.peer_id is not None:
            # a group binding matches a channel peer and the reverse
            for kind in ["direct"] if b.peer_kind == "direct" else ["group", "channel"]:
                v.ids[kind].add(b.peer_id)
            v.parents.add(("direct" if b.peer_kind == "direct" else "group", b.peer_id))
        if b.guild:
            v.guilds.add(b.guild)
        if b.team:
            v.teams.add(b.team)
        v.roles.update(b.roles or ())


def _linked_ids(table: RouteTable) -> list[tuple[str | None, str]]:
    """The direct peer ids ``identityLinks`` name: ``(channel, id)`` of a ``channel:id``
    entry, ``(None, id)`` of a bare one (and of the whole entry, which a peer id may be)."""
    out: list[tuple[str | None, str]] = []
    for _, ids in table.identity_links or ():
        for raw in ids:
            text = js_trim(raw)
            channel, sep, pid = text.partition(":")
            out.append((None, text))
            if sep and pid:
                out.append((channel.lower(), pid))
    return out


class _Policy:
    """The values the sides' tool policies name (``tables.json``), per channel."""

    def __init__(self, space: ClassSpace) -> None:
        views = space.views
        self.channels = {c for v in views for c in v.channels} | {
            g for g in space.gate_classes if g is not None}
        self._by_channel: dict[str, _Values] = {}
        for channel in self.channels:
            v = self._by_channel[channel] = _values()
            v.ids["group"] = set(tc.group_ids(views, channel))
            for view in views:
                ch: Mapping[str, Any] | None = view.channels.get(channel)
                if ch is None:
                    continue
                v.accounts.update(ch.get("accounts") or ())
                spaces = ch.get("spaces")
                for gid, entry in (spaces or {}).get("entries", {}).items():
                    if gid != "*":
                        v.guilds.add(gid)
                    if entry[2]:
                        v.ids["group"].update(k for k in entry[2]["exact"] if k != "*")
        self.all_accounts = {a for v in self._by_channel.values() for a in v.accounts}
        self.all_ids = {i for v in self._by_channel.values() for i in v.ids["group"]}

    def of(self, channel: str) -> _Values:
        return self._by_channel.get(channel) or _values()
