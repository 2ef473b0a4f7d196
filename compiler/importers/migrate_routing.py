"""Routing in ``toolc migrate --openclaw 2026.9``: the project's ``bindings`` and ``session``
settings carry over as written (2026.9 reads the same shape, and more), but 2026.9.6 routes
some of them differently from 2026.3.2. What this module says, and the one thing it writes:

- a peer id ``"*"``: 2026.3.2 compares it as an id (only a chat whose id is ``*``); 2026.9.6
  makes it a tier of its own, ``binding.peer.wildcard``, above guild, team, account and
  channel bindings: every chat of its kind there that no binding names by id moves to the
  binding's agent;
- (a binding to ``main`` where the roster has no ``main``, which 2026.3.2 routes to the
  default agent and 2026.9.6 to ``main`` itself, never reaches a migration: a 2026.3 project
  with one does not build, TC170);
- a legacy ``default: true`` agent: 2026.9.6's loader adds a channel-wide binding to it for
  each configured channel without one: the same agent and session key, matched by
  ``binding.channel`` instead of ``default``;
- a roster ``migrate`` gives ``ownership: explicit``: 2026.9.6 refuses a message no binding
  routes, where 2026.3.2 gave it the first agent. ``openclaw doctor --fix`` writes bindings
  that keep those routes (``repairUnownedChannelAccountBindings``: one per channel account);
  so does the migration, one channel-wide binding per configured channel that has none
  (the same routes: the lowest tier, for every account);
- session keys: 2026.3.2 lowercases the whole key, 2026.9.6 keeps the case of Signal group
  ids and Matrix room ids.

For each route that moves, the tools the chat gains or loses because of it: both routes
resolved under the migrated definitions (the reference interpreter), so that what the
release changes besides routing (the access diff's business) is not counted here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..pipeline.analyze import Resolved
from ..pipeline.model import BindingDef, Definitions
from ..pipeline.routing import _channel_wide, implicit_bindings, legacy_default_agent
from ..pipeline.yamlsrc import SourceFile
from ..rules.names import normalize_account_id
from ..semantics.reference import ReferenceInterpreter

# The id of a chat no binding names (OpenClaw's own route audit probes with such an id).
ANY_CHAT = "toolc-any-chat"
KEY_CASE_CHANNELS = ("signal", "matrix")


# -- what the migration writes: bindings that keep 2026.3's fallback to the first agent ---------
def fallback_bindings(defs: Definitions) -> list[tuple[str, str]]:
    """``(channel, agent)`` of each channel-wide binding that keeps 2026.3.2's fallback to the
    first agent once the roster is explicit: every configured channel without one."""
    first = defs.agents[0].id
    wide = {b.channel for b in defs.bindings if _channel_wide(b)}
    channels = {c.name for c in defs.channels} | set(defs.streamed_channels)
    return [(channel, first) for channel in sorted(channels) if channel not in wide]


def bindings_insert(added: list[tuple[str, str]], sources: Mapping[str, SourceFile],
                    texts: Mapping[str, str], home: str) -> tuple[str, int, str] | None:
    """Where and what to insert for ``added``: ``(file, line index to insert before, text)``
    appended to the project's block list of bindings, or a new ``bindings:`` at the end of
    ``home`` (the agents' file); None when the list is written in flow style (by hand)."""
    for rel, src in sorted(sources.items()):
        if "bindings" not in src.data:
            continue
        items = src.data["bindings"] or []
        key_line = src.kpos(("bindings",)).line
        if not items or src.pos(("bindings", 0)).line == key_line:
            return None  # `bindings: []` or `[...]`: a flow list
        first = src.pos(("bindings", 0))
        return (rel, _end_of(src, texts[rel], "bindings"),
                _items(added, " " * max(first.col - 3, 0)))
    lines = texts[home].splitlines(keepends=True)
    lead = "\n" if lines and lines[-1].endswith("\n") else "\n\n"
    return home, len(lines), lead + "bindings:\n" + _items(added, "  ")


def _end_of(src: SourceFile, text: str, key: str) -> int:
    """The line index just after the top-level ``key``'s last line (its block ends before
    the next top-level key, and before the blank and comment lines above that key)."""
    lines = text.splitlines(keepends=True)
    keys = list(src.data)
    after = keys[keys.index(key) + 1:]
    end = src.kpos((after[0],)).line - 1 if after else len(lines)
    while end > 0 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _items(added: list[tuple[str, str]], indent: str) -> str:
    return "".join(
        f"{indent}- agentId: {agent}\n"
        f'{indent}  match: {{channel: {channel}, accountId: "*"}}\n'
        f'{indent}  comment: "toolc migrate: 2026.3 gave this channel\'s other messages '
        f'the first agent"\n' for channel, agent in added)


# -- what the migration says ----------------------------------------------------------------------
def routing_notes(before: Definitions, after: Resolved) -> list[str]:
    """One line per routing change between the 2026.3 project and its 2026.9 form."""
    ref = ReferenceInterpreter(after)
    out = _wildcards(before, after, ref)
    implicit = implicit_bindings(after.defs, after.target)
    if implicit:
        agent = legacy_default_agent(after.defs)
        out.append(f"routing: OpenClaw 2026.9's loader adds a channel-wide binding to the "
                   f"default agent {agent} for {', '.join(c for c, _ in implicit)}: a message "
                   "there no other binding routes reports binding.channel instead of default "
                   "(the same agent and session key)")
    named = sorted({c.name for c in before.channels if c.name in KEY_CASE_CHANNELS}
                   | {b.channel for b in before.bindings if b.channel in KEY_CASE_CHANNELS})
    if named:
        out.append(f"routing: session keys of {' and '.join(named)} group chats keep the "
                   "case of their ids under OpenClaw 2026.9 (2026.3 lowercased the whole key): "
                   "those conversations are keyed anew; their tools do not change")
    return out


def _wildcards(before: Definitions, after: Resolved, ref: ReferenceInterpreter) -> list[str]:
    out = []
    for b in before.bindings:
        if b.peer_kind is None or (b.peer_id or "").strip() != "*":
            continue
        account = "default" if b.account in (None, "*") else normalize_account_id(b.account)
        roles = frozenset(b.roles[:1]) if b.roles else frozenset()
        where = (f"bindings[{b.index}] ({b.pos}): peer {{kind: {b.peer_kind}, id: \"*\"}} "
                 f"matched only a chat whose id is \"*\" under OpenClaw 2026.3; under 2026.9 "
                 f"it matches every {b.peer_kind} chat on {b.channel}"
                 + ("" if b.account == "*" else f" (account {account})")
                 + " that no binding names by id (binding.peer.wildcard)")
        first = next(w for w in before.bindings if _wildcard_takes(w, b, account, roles))
        if first is not b:
            out.append(f"{where}; an earlier one, bindings[{first.index}], takes those chats")
            continue
        old, tier = _route_2026_3(before, b, account, roles)
        moved = _moved(ref, after, b, account, old, b.agent_id)
        out.append(f"{where}: they move from agent {old} ({tier}) to agent "
                   f"{b.agent_id}{moved}")
    return out


def _moved(ref: ReferenceInterpreter, after: Resolved, b: BindingDef, account: str,
           old: str, new: str) -> str:
    """``: +tool, -tool`` for a chat the binding matches, routed to ``old`` and then to
    ``new``, both resolved under the migrated definitions."""
    if old == new:
        return " (the same agent)"
    chat = b.peer_id if b.peer_id and b.peer_id.strip() != "*" else ANY_CHAT
    kind = b.peer_kind or "group"
    space = b.guild_id or b.team_id
    tools = [set(ref.resolve(strict=False, **_context(after, agent, b.channel, account, kind,
                                                        chat, space)).names)
             for agent in (old, new)]
    change = [f"+{t}" for t in sorted(tools[1] - tools[0])] \
        + [f"-{t}" for t in sorted(tools[0] - tools[1])]
    return f"; their tools: {', '.join(change)}" if change else "; their tools do not change"


def _context(after: Resolved, agent: str, channel: str, account: str, kind: str, chat: str,
             space: str | None) -> dict[str, str | None]:
    """``resolve``'s keywords for a message routed to ``agent`` (as toolc_runtime's
    ``Request.context``: the chat is the group, the guild or team its space)."""
    return {"agent_id": agent, "session_key": _session_key(after, agent, channel, account,
                                                           kind, chat),
            "message_provider": channel, "account_id": account,
            "group_id": chat if kind != "direct" else None,
            "group_space": space if kind != "direct" else None}


def _session_key(after: Resolved, agent: str, channel: str, account: str, kind: str,
                 chat: str) -> str:
    """``buildAgentSessionKey`` for a chat no identity link names (the session settings of
    the migrated definitions; a 2026.3 binding has no session override)."""
    session = after.defs.session
    if kind != "direct":
        # normalizeSessionPeerId: Signal group ids and Matrix rooms keep their case
        kept = (channel, kind) in (("signal", "group"), ("matrix", "group"),
                                   ("matrix", "channel"))
        return (f"agent:{agent}:main" if session.group_scope == "main"
                else f"agent:{agent}:{channel}:{kind}:{chat if kept else chat.lower()}")
    scoped = {"per-peer": f"direct:{chat}", "per-channel-peer": f"{channel}:direct:{chat}",
              "per-account-channel-peer": f"{channel}:{account}:direct:{chat}"}
    return f"agent:{agent}:" + scoped.get(session.dm_scope or "main", "main").lower()


# -- 2026.3.2's resolveAgentRoute, for a chat no peer binding names -----------------------------
_TIERS = ("binding.guild+roles", "binding.guild", "binding.team", "binding.account",
          "binding.channel")


def _tier(b: BindingDef) -> str | None:
    """``buildEvaluatedBindingsIndex``'s tier of a binding without a peer."""
    if b.peer_kind is not None:
        return None
    if b.guild_id:
        return "binding.guild+roles" if b.roles else "binding.guild"
    if b.team_id:
        return "binding.team"
    return "binding.channel" if b.account == "*" else "binding.account"


def _applies(b: BindingDef, channel: str, account: str) -> bool:
    if b.channel != channel:
        return False
    return b.account == "*" or normalize_account_id(b.account) == account


def _scope(b: BindingDef, guild: str | None, team: str | None, roles: frozenset[str]) -> bool:
    """``matchesBindingScope`` of everything but the peer."""
    return ((not b.guild_id or b.guild_id == guild) and (not b.team_id or b.team_id == team)
            and (b.roles is None or bool(roles & set(b.roles))))


def _wildcard_takes(w: BindingDef, b: BindingDef, account: str, roles: frozenset[str]) -> bool:
    """2026.9.6: the wildcard binding ``w`` takes a chat of ``b``'s kind, guild and team."""
    kinds = {w.peer_kind, b.peer_kind}
    return ((w.peer_id or "").strip() == "*" and _applies(w, b.channel, account)
            and (w.peer_kind == b.peer_kind or kinds == {"group", "channel"})
            and _scope(w, b.guild_id, b.team_id, roles))


def _route_2026_3(defs: Definitions, b: BindingDef, account: str, roles: frozenset[str]
                  ) -> tuple[str, str]:
    """(agent, matched by) of a chat on ``b``'s channel, guild and team that no peer
    binding names, under 2026.3.2."""
    candidates = [c for c in defs.bindings if _applies(c, b.channel, account)]
    enabled = {"binding.guild+roles": bool(b.guild_id and roles),
               "binding.guild": bool(b.guild_id), "binding.team": bool(b.team_id),
               "binding.account": True, "binding.channel": True}
    for tier in _TIERS:
        if not enabled[tier]:
            continue
        found = _first(c for c in candidates if _tier(c) == tier
                       and _scope(c, b.guild_id, b.team_id, roles))
        if found is not None:
            return _agent_2026_3(defs, found.agent_id), tier
    return _default_2026_3(defs), "default"


def _first(found: Iterable[BindingDef]) -> BindingDef | None:
    return next(iter(found), None)


def _default_2026_3(defs: Definitions) -> str:
    """2026.3.2's ``resolveDefaultAgentId``: the first ``default: true`` agent, else the
    first, else main."""
    chosen = next((a for a in defs.agents if a.default), defs.agents[0] if defs.agents else None)
    return chosen.id if chosen else "main"


def _agent_2026_3(defs: Definitions, agent: str) -> str:
    """2026.3.2's ``pickFirstExistingAgentId``: an agent the roster lacks (``main`` too) is
    the default agent."""
    declared = {a.id for a in defs.agents}
    return agent if not declared or agent in declared else _default_2026_3(defs)
