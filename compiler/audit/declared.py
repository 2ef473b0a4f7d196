"""What the definitions declare by name (agents, channels, accounts, groups), read from the
resolved definitions or from a build's tables, and the warnings for a request that names
something undeclared: a typo there silently means a different policy (``toolc resolve`` and
``toolc explain`` print them)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..diagnostics import did_you_mean
from ..pipeline.analyze import Resolved
from ..pipeline.model import GroupConfig
from ..rules.channels import rule_for
from ..rules.context import group_context, parse_session_key
from ..rules.names import (
    CASE_INSENSITIVE_GROUP_CHANNELS,
    group_candidates,
    normalize_account_id,
    normalize_agent_id,
    normalize_channel,
)
from ..semantics.reference import key_text

GroupIds = tuple[str, ...] | None  # a group map's ids ("*" included); None: no map


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelNames:
    groups: GroupIds
    accounts: Mapping[str, GroupIds]  # account id -> its own group ids (None: the channel's)


@dataclass(frozen=True, slots=True, kw_only=True)
class Declared:
    agents: tuple[str, ...]
    channels: Mapping[str, ChannelNames]

    @classmethod
    def of_resolved(cls, resolved: Resolved) -> Declared:
        def ids(groups: tuple[GroupConfig, ...] | None) -> GroupIds:
            return None if groups is None else tuple(g.id for g in groups)

        defs = resolved.defs
        return cls(agents=tuple(a.id for a in defs.agents),
                   channels={c.name: ChannelNames(groups=ids(c.groups),
                                                  accounts={a.id: ids(a.groups)
                                                            for a in c.accounts})
                             for c in defs.channels})

    @classmethod
    def of_tables(cls, tables: Mapping[str, Any]) -> Declared:
        """From a build's ``tables.json`` (no definitions needed)."""
        def ids(gmap: Mapping[str, Any] | None) -> GroupIds:
            return None if gmap is None else tuple(gmap["exact"])

        channels = {}
        for name, raw in tables["channels"].items():
            ch = json.loads(raw)
            channels[name] = ChannelNames(groups=ids(ch["groups"]),
                                          accounts={a: ids(g) for a, g in ch["accounts"].items()})
        return cls(agents=tuple(tables["agents"]), channels=channels)


def context_warnings(declared: Declared, context: Mapping[str, Any]) -> list[str]:
    """One warning per agent, channel, account or group given in ``context`` (the request
    keywords) that the definitions do not declare, naming the fallback that applies."""
    out: list[str] = []
    agent = context.get("agent_id")
    if agent is not None and normalize_agent_id(agent) not in declared.agents:
        out.append(f'agent "{agent}" is not declared{_hint(agent, declared.agents)}: only the '
                   "global policy applies")
    session = parse_session_key(context.get("session_key"))
    spawned_channel, _ = group_context(context.get("spawned_by"))
    given_channel = context.get("message_provider")
    channel = normalize_channel(given_channel if given_channel is not None
                                else session.channel or spawned_channel)
    group = context.get("group_id")
    if channel is None:
        if group is not None:
            out.append(f'group "{group}" is given without a channel (--channel or a group '
                       "session key): no group policy applies")
        return out
    names = declared.channels.get(channel)
    if names is None:
        if given_channel is not None:
            out.append(f'channel "{given_channel}" is not declared'
                       f"{_hint(channel, declared.channels)}: no group policy applies")
        return out
    rule = rule_for(channel)
    if not rule.accounts:
        return out  # Discord: no accounts, and the channel id is not the only key tried
    where, groups = f"channels.{key_text(channel)}", names.groups
    # The account's own groups replace the channel's (no account given: "default").
    account = context.get("account_id")
    norm = normalize_account_id(account)
    key = norm if norm in names.accounts else next(
        (a for a in names.accounts if a.lower() == norm), None)
    if key is None and account is not None:
        fallback = ("the channel's groups apply" if groups is not None
                    else "no group policy applies")
        out.append(f'account "{account}" is not declared in {where}'
                   f"{_hint(norm, names.accounts)}: {fallback}")
    elif key is not None and names.accounts[key] is not None:
        groups, where = names.accounts[key], f"{where}.accounts.{key_text(key)}"
    if group is not None and rule.kind == "groups":  # Slack also matches channel names
        out.extend(_group_warning(channel, group, groups, where))
    return out


def _group_warning(channel: str, group: str, groups: GroupIds, where: str) -> list[str]:
    if groups is None:
        return [f'group "{group}" is not declared: {where} declares no groups, so no group '
                "policy applies"]
    fold = channel in CASE_INSENSITIVE_GROUP_CHANNELS
    for gid in group_candidates(channel, group):
        if gid in groups or (fold and any(g != "*" and g.lower() == gid.lower()
                                          for g in groups)):
            return []
    fallback = 'the "*" group applies' if "*" in groups else "no group policy applies"
    hint = _hint(group.strip(), [g for g in groups if g != "*"])
    return [f'group "{group}" is not declared in {where}{hint}: {fallback}']


def _hint(word: str, candidates: Any) -> str:
    hint = did_you_mean(word, candidates)
    return f" ({hint})" if hint else ""
