"""Stage 4c, routing: the definitions' ``bindings`` and ``session`` settings as the runtime's
``routes.json`` (read by ``toolc_runtime.route`` on first use).

OpenClaw 2026.9.6 routes an inbound message with ``resolveAgentRoute`` over the bindings of
the config its loader made, and that loader adds to the bindings as written: where a roster
of several agents has one legacy ``default: true`` agent (and ``agents.ownership`` is not
``explicit``), every configured channel without a channel-wide binding (``accountId: "*"``,
no other constraint) gets one to that agent, after the written ones, in channel order
(``materializeLegacyDefaultAgentRoles``). The loader also forces ``session.mainKey`` to
``main``. This stage writes both kinds, the added ones without a source position.

A row is ``[channel, account, peer kind, peer id, guild, team, roles, agent, dmScope,
groupScope, file:line:col]``: the account ``*`` for every account and the normalized id of
one otherwise (an absent account is the channel's ``default`` one); absent values are null.
"""

from __future__ import annotations

import json
from typing import Any

from ..diagnostics import Pos
from ..rules.names import normalize_account_id, normalize_channel
from ..targets import Target
from .analyze import Resolved
from .model import BindingDef, Definitions
from .policy import default_agent
from .provenance import _file_name

ROUTES = "routes.json"
ROUTES_FORMAT = 1


def legacy_default_agent(defs: Definitions) -> str | None:
    """The agent of the roster's one ``default: true`` marker, where the loader migrates it
    (``migratePersistedImplicitMainRoster``: a roster of more than one agent, exactly one
    marked, and ``agents.ownership`` not ``explicit``; a sole agent's marker is dropped
    without adding anything), else None."""
    if defs.agents_ownership == "explicit" or len(defs.agents) <= 1:
        return None
    marked = [a for a in defs.agents if a.default]
    return marked[0].id if len(marked) == 1 else None


def _channel_wide(b: BindingDef) -> bool:
    """``isChannelWideBinding``: every account, and no peer, guild, team or roles."""
    return (b.account == "*" and b.peer_kind is None and not b.guild_id and not b.team_id
            and not b.roles)


def implicit_bindings(defs: Definitions, target: Target) -> list[tuple[str, str]]:
    """``(channel, agent)`` of each channel-wide binding the release's loader adds (2026.9.6:
    one per configured channel without a channel-wide binding, to the legacy default agent,
    in channel order; 2026.3.2: none)."""
    agent = legacy_default_agent(defs) if target.route_implicit_channel_bindings else None
    if agent is None:
        return []
    # normalizeRouteBindingChannelId: a binding written with a channel's alias (imsg) binds
    # the channel (imessage) here, though resolveAgentRoute then files it under the alias
    wide = {_channel_id(b.channel, target) for b in defs.bindings if _channel_wide(b)}
    channels = {_channel_id(name, target)
                for name in (*(c.name for c in defs.channels), *defs.streamed_channels)}
    return [(channel, agent) for channel in sorted(c for c in channels if c is not None)
            if channel not in wide]


def _channel_id(raw: str, target: Target) -> str | None:
    """``normalizeRouteBindingChannelId``: a known channel's id (aliases resolved), else the
    name lowercased."""
    channel = normalize_channel(raw)
    return target.request_channel_aliases.get(channel or "", channel)


def _account(raw: str | None) -> str:
    return "*" if raw == "*" else normalize_account_id(raw)


def route_default_agent(defs: Definitions, target: Target) -> str | None:
    """The agent of a message no binding matches: 2026.9.6 the legacy compatibility agent or
    ``resolveDefaultAgentId`` (``policy.default_agent``; None: refused); 2026.3.2
    ``resolveDefaultAgentId``: the first ``default: true`` agent, else the first, else
    ``main``."""
    if target.agent_selection:
        return default_agent(defs)
    chosen = next((a for a in defs.agents if a.default), defs.agents[0] if defs.agents else None)
    return chosen.id if chosen else "main"


def _binding_agents(defs: Definitions, target: Target) -> dict[str, str]:
    """The agent each binding routes to, where it is not the one written
    (``pickFirstExistingAgentId``): TC170 holds a binding to the roster or ``main``, and
    2026.3.2 routes a binding to an undeclared ``main`` to its default agent."""
    declared = {a.id for a in defs.agents}
    if target.agent_selection or not declared or "main" in declared:
        return {}
    return {"main": route_default_agent(defs, target) or "main"}


def route_roster(defs: Definitions, target: Target) -> tuple[str, ...]:
    """The roster's ids as the release's loader leaves them: as declared, or (2026.9.6,
    ``Target.route_main_roster``) ``main`` alone for a config without one, unless
    ``agents.ownership`` is ``explicit``."""
    ids = tuple(dict.fromkeys(a.id for a in defs.agents))
    if not ids and target.route_main_roster and defs.agents_ownership != "explicit":
        return ("main",)
    return ids


def routes_json(resolved: Resolved) -> dict[str, Any]:
    """What ``toolc_runtime.route`` reads: the release's routing switches, the bindings
    (written, then added), the session settings, the default agent (None: a message no
    binding matches is refused) and the roster's ids."""
    defs, target = resolved.defs, resolved.target
    files = tuple(sorted(defs.files, key=len, reverse=True))
    agents = _binding_agents(defs, target)
    names: dict[str, str] = {}  # a file's name as sources/ has it (tens of thousands of rows)

    def source(pos: Pos) -> str:
        name = names.get(pos.file)
        if name is None:
            name = names[pos.file] = _file_name(pos.file, files)
        return f"{name}:{pos.line}:{pos.col}"

    rows: list[list[Any]] = [
        [b.channel, _account(b.account), b.peer_kind, b.peer_id, b.guild_id, b.team_id,
         list(b.roles) if b.roles else None, agents.get(b.agent_id, b.agent_id),
         b.dm_scope, b.group_scope, source(b.pos)]
        for b in defs.bindings]
    rows += [[channel, "*", None, None, None, None, None, agent, None, None, None]
             for channel, agent in implicit_bindings(defs, target)]
    session = defs.session
    return {
        "format": ROUTES_FORMAT,
        "bindings": rows,
        "session": {
            "dm_scope": session.dm_scope or "main",
            "group_scope": session.group_scope or "per-group",
            "identity_links": None if session.identity_links is None else [
                [name, list(ids)] for name, ids in session.identity_links],
            "main_key": "main",
        },
        "default_agent": route_default_agent(defs, target),
        # the roster's ids as the loader leaves them; empty: no roster (a default agent id
        # then routes as given)
        "agents": list(route_roster(defs, target)),
        "rules": target.routing_rules(),
    }


def dump_routes(routes: dict[str, Any]) -> str:
    """``routes.json``'s text: sorted keys and compact JSON, one binding a line (a build may
    hold tens of thousands: indented, each would take eleven)."""
    compact = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    rest = {k: v for k, v in routes.items() if k != "bindings"}
    head = compact.encode({**rest, "bindings": []})
    rows = ",\n".join(compact.encode(row) for row in routes["bindings"])
    listed = f'"bindings":[\n{rows}\n]' if rows else '"bindings":[]'
    return head.replace('"bindings":[]', listed, 1) + "\n"
