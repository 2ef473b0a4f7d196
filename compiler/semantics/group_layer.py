"""The reference interpreter's group layer: which group entry and sender rule of the
definitions a request reaches (``channels.<ch>.groups``, Slack's channels, Discord's guilds, a
plugin resolver), as OpenClaw's resolvers find it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ..pipeline.analyze import Resolved
from ..pipeline.model import (
    AccountDef,
    ChannelDef,
    GroupConfig,
    Policy,
    SenderRule,
    SpaceConfig,
)
from ..pipeline.policy import (
    pick_policy,
)
from ..rules.channels import ChannelRule, athash_slug, key_candidates, rule_for
from ..rules.context import (
    Context,
)
from ..rules.names import (
    CASE_INSENSITIVE_GROUP_CHANNELS,
    NO_E164_CHANNELS,
    group_candidates,
    normalize_account_id,
)
from .trace import GroupMatch, Note, key_text


class GroupLayer:
    """Finds the group layer's block of a request (``ReferenceInterpreter`` sets the state
    declared here)."""

    r: Resolved
    channels: dict[str, ChannelDef]

    def group_block(self, ctx: Context, channel: str | None, group_id: str | None) -> Any:
        """The group layer's ``{allow, alsoAllow, deny}`` block, or None."""
        return self.group_match(ctx, channel, group_id).block

    def group_match(self, ctx: Context, channel: str | None, group_id: str | None,
                    more: tuple[str, ...] = (), *, senders: bool = True) -> GroupMatch:
        """Section 7: the channel's (or account's) group map, per-channel id rules, then the
        precedence group sender rule > group tools > ``*`` sender rule > ``*`` tools."""
        if channel is None:
            return GroupMatch(block=None, skip="no channel in the request")
        if group_id is None:
            return GroupMatch(block=None, skip="no group in the request")
        if channel not in self.channels:
            return GroupMatch(block=None, skip=f'channel "{channel}" is not declared')
        ch = self.channels[channel]
        row = rule_for(channel)
        generic = self.r.target.generic_group_resolver
        if generic and row.kind != "groups":
            return GroupMatch(block=None, skip=f"OpenClaw {self.r.target.key} reads only "
                              f"channels.{key_text(channel)}.groups for {channel} (its "
                              f"{row.map_key} map is not read)")
        if row.kind == "nested":
            return _nested_match(ch, row, ctx, group_id)
        groups, where = ch.groups, f"channels.{key_text(channel)}"
        account = _account(ch, ctx.account_id)
        inherits = (generic and account is not None and account.groups == ()
                    and len(ch.accounts) <= 1)  # resolveChannelGroups: {} inherits then
        if account is not None and account.groups is not None and not inherits:
            groups, where = account.groups, f"{where}.accounts.{key_text(account.id)}"
        else:
            account = None
        if row.kind == "pick":
            return _pick_match(groups, f"{where}.{row.map_key}", row, ctx, group_id)
        if groups is None:
            return GroupMatch(block=None, skip=f"{where} declares no groups")
        default = next((x for x in groups if x.id == "*"), None)
        if self.r.target.group_id_needs_session:
            return self._selected_match(ctx, channel, (group_id, *more), groups, where,
                                        account, default, senders=senders)
        # 2026.3.2 resolveGroupToolPolicy: `dock(...) ?? resolveChannelGroupToolsPolicy(...)`:
        # when IRC's dock (case folded, no e164) answers nothing, the generic resolver asks
        # again with the exact id and the sender's e164 too (the last pass)
        passes = [(gid, channel in CASE_INSENSITIVE_GROUP_CHANNELS,
                   channel not in NO_E164_CHANNELS)
                  for gid in group_candidates(channel, group_id)]
        if channel in NO_E164_CHANNELS:
            passes.append((group_id.strip(), False, True))
        for gid, fold, e164 in passes:
            specific = _entry(groups, gid, fold=fold)
            found = _answer((specific, default), partial(_sender_rule, ctx=ctx, e164=e164),
                            where, account, group_id.strip(), gid, specific)
            if found is not None:
                return found
        if default is None:
            return GroupMatch(block=None, skip=f"group {group_id} is not declared in "
                              f'{where}.groups, which has no "*" group')
        return GroupMatch(block=None, skip=f'neither group {group_id} nor the "*" group of '
                          f"{where}.groups has tools or a rule for this sender")

    def _selected_match(self, ctx: Context, channel: str, ids: tuple[str, ...],
                        groups: tuple[GroupConfig, ...], where: str,
                        account: AccountDef | None, default: GroupConfig | None,
                        *, senders: bool = True) -> GroupMatch:
        """2026.9.6 ``resolveChannelGroupToolsPolicy``: the first id (in the order the
        session key gives them) with an entry is the selected group (IRC: also ignoring
        case); then its sender rule > its tools > the ``*`` sender rule > ``*`` tools."""
        if channel in self.r.target.plugin_group_resolvers:
            found = self._plugin_match(ctx, channel, ids, groups, where, account, default,
                                       senders=senders)
            if found is not None:
                return found
        specific = None
        gid = ids[0]
        generic = self.r.target.generic_group_resolver
        for cand in ids:
            specific = _entry(groups, cand,
                              fold=channel in CASE_INSENSITIVE_GROUP_CHANNELS and not generic)
            if specific is not None:
                gid = cand
                break
        e164 = generic or channel not in NO_E164_CHANNELS
        keyed = channel if self.r.target.channel_sender_keys else None

        def rule_of(cfg: GroupConfig) -> SenderRule | None:
            return _sender_rule(cfg, ctx, e164=e164, channel=keyed) if senders else None

        found = _answer((specific, default), rule_of, where, account, ids[0], gid, specific)
        if found is not None:
            return found
        tried = ", ".join(ids)
        if default is None:
            return GroupMatch(block=None, skip=f"no group of {tried} is declared in "
                              f'{where}.groups, which has no "*" group')
        return GroupMatch(block=None, skip=f'neither group {tried} nor the "*" group of '
                          f"{where}.groups has tools or a rule for this sender")

    def _plugin_match(self, ctx: Context, channel: str, ids: tuple[str, ...],
                      groups: tuple[GroupConfig, ...], where: str,
                      account: AccountDef | None, default: GroupConfig | None,
                      *, senders: bool = True) -> GroupMatch | None:
        """2026.9.6 ``resolveGroupToolPolicyOutcome`` with the channel plugin's own resolver
        (Telegram's ``resolveTelegramGroupToolPolicy``), tried for each id in turn: the id's
        chat id (``parseTelegramGroupId``) selects an entry (exact), whose sender rule or
        tools answer, else the ``*`` entry's; the first answer with allow or deny lists wins.
        None: no id gave one, and the generic resolver decides."""
        for cand in ids:
            chat = group_candidates(channel, cand)[0]
            specific = next((x for x in groups if x.id == chat and x.id != "*"), None)
            for cfg in (specific, default):
                if cfg is None:
                    continue
                rule = _sender_rule(cfg, ctx, e164=True,
                                    channel=channel if self.r.target.channel_sender_keys
                                    else None) if senders else None
                if rule is None and cfg.tools is None:
                    continue
                block = rule.policy if rule is not None else cfg.tools
                if pick_policy(block) is None:
                    break  # the entry answered without lists: the next id
                gw = f"{where}.groups.{key_text(cfg.id)}"
                return GroupMatch(
                    block=block, map_where=where, account=account, group_id=ids[0],
                    where=(f"{gw}.toolsBySender.{key_text(rule.key)}" if rule is not None
                           else f"{gw}.tools"),
                    candidate=chat, entry=cfg, specific=specific, rule=rule)
        return None


def _entry_block(cfg: GroupConfig, ctx: Context, where: str, rule: ChannelRule
                 ) -> tuple[Policy | None, str, SenderRule | None]:
    """``toolsBySender`` > ``tools`` of one entry: (block, its path, the sender rule)."""
    sender = _sender_rule(cfg, ctx, e164=rule.e164)
    if sender is not None:
        return sender.policy, f"{where}.toolsBySender.{key_text(sender.key)}", sender
    return cfg.tools, f"{where}.tools", None


def _pick(entries: Sequence[GroupConfig], keys: Sequence[str]) -> GroupConfig | None:
    """The entry of the first key that exists, else ``"*"``."""
    by_id = {e.id: e for e in reversed(entries)}
    for key in keys:
        if key in by_id:
            return by_id[key]
    return by_id.get("*")


def _pick_match(entries: tuple[GroupConfig, ...] | None, where: str, rule: ChannelRule,
                ctx: Context, group_id: str) -> GroupMatch:
    """Slack: one entry (id, ``#name``, name, slug, then ``*``); its sender rule or tools."""
    keys = key_candidates(rule.keys, group_id, ctx.group_space, ctx.group_channel)
    chosen = _pick(entries or (), keys)
    if chosen is None:
        tried = ", ".join(json.dumps(k, ensure_ascii=False) for k in keys)
        return GroupMatch(block=None, skip=f'{where} has no entry for {tried} and no "*"')
    ew = f"{where}.{key_text(chosen.id)}"
    block, bw, sender = _entry_block(chosen, ctx, ew, rule)
    how = ("no entry matches the channel, so the \"*\" entry applies" if chosen.id == "*"
           else f"the channel matches key {json.dumps(chosen.id, ensure_ascii=False)}")
    found = [Note(text=f"{ew} applies: {how}", pos=chosen.pos)]
    if sender is not None:
        found.append(Note(text=f"{bw} matches this sender", pos=sender.pos))
    return GroupMatch(block=block, where=bw, entry=chosen, rule=sender, found=tuple(found),
                      skip="" if block is not None else
                      f"{ew} has neither tools nor a rule for this sender (no fallthrough)")


def _space(spaces: tuple[SpaceConfig, ...], raw: str | None) -> SpaceConfig | None:
    """Discord's guild: by id, by slug key, by ``slug`` field (key order), then ``*``."""
    by_id = {s.entry.id: s for s in reversed(spaces)}
    space = (raw or "").strip()
    slug = athash_slug(space)
    for key in (space, slug):
        if key and key in by_id:
            return by_id[key]
    if slug:
        for s in spaces:
            if athash_slug(s.slug) == slug:
                return s
    return by_id.get("*")


def _nested_match(ch: ChannelDef, rule: ChannelRule, ctx: Context, group_id: str
                  ) -> GroupMatch:
    """Discord: the guild, then a channel in it (no ``*`` channel); channel sender rule >
    channel tools > guild sender rule > guild tools."""
    where = f"channels.{key_text(ch.name)}.{rule.map_key}"
    guild = _space(ch.spaces or (), ctx.group_space)
    if guild is None:
        return GroupMatch(block=None, skip=f'{where} has no guild for the request and no "*"')
    gw = f"{where}.{key_text(guild.entry.id)}"
    found = [Note(text=f"{gw} is the guild", pos=guild.entry.pos)]
    keys = key_candidates(rule.inner_keys, group_id, ctx.group_space, ctx.group_channel)
    inner = None
    if guild.channels:
        by_id = {e.id: e for e in reversed(guild.channels)}
        inner = next((by_id[k] for k in keys if k in by_id), None)
    for cfg, ew in ((inner, f"{gw}.{rule.inner_key}.{key_text(inner.id)}" if inner else ""),
                    (guild.entry, gw)):
        if cfg is None:
            continue
        if cfg is inner:
            found.append(Note(text=f"{ew} is the channel", pos=cfg.pos))
        block, bw, sender = _entry_block(cfg, ctx, ew, rule)
        if block is not None:
            if sender is not None:
                found.append(Note(text=f"{bw} matches this sender", pos=sender.pos))
            return GroupMatch(block=block, where=bw, entry=cfg, rule=sender, found=tuple(found))
    return GroupMatch(block=None, skip=f"neither the guild {gw} nor its channel has tools or "
                      "a rule for this sender")


def _account(ch: ChannelDef, account_id: str | None) -> AccountDef | None:
    """``resolveAccountEntry``: the normalized id (``default`` when absent), exact first."""
    norm = normalize_account_id(account_id)
    return next((a for a in ch.accounts if a.id == norm), None) or next(
        (a for a in ch.accounts if a.id.lower() == norm), None)


def _sender_rule(cfg: GroupConfig, ctx: Context, *, e164: bool = True,
                 channel: str | None = None) -> SenderRule | None:
    """Section 7.3: id, e164, username, name, then the wildcard; first key wins per bucket."""
    return sender_match(cfg.senders, ctx, e164=e164, channel=channel)


def sender_match(senders: Sequence[SenderRule], ctx: Context, *, e164: bool = True,
                 channel: str | None = None) -> SenderRule | None:
    """The ``toolsBySender`` rule a request's sender matches (``matchToolsBySenderPolicy``):
    with ``channel`` (2026.9.6 typed keys) ``channel:<channel>:<id>`` first, then id (as
    given, then without a leading ``@``), e164, username, name, then the wildcard; the first
    key of each bucket wins."""
    buckets: dict[tuple[str, str], SenderRule] = {}
    wildcard = None
    for rule in senders:
        if rule.kind == "*":
            wildcard = rule
        elif rule.kind == "channel":
            if rule.value and rule.channel:
                buckets.setdefault(("channel", f"{rule.channel}:{rule.value}"), rule)
        else:
            buckets.setdefault((rule.kind, rule.value), rule)
    candidates: list[tuple[str, str]] = []
    if ctx.sender_id is not None and ctx.sender_id.strip():
        sid = ctx.sender_id.strip().lower()
        ids = [sid, sid[1:]] if sid.startswith("@") else [sid]
        if channel:
            candidates.extend(("channel", f"{channel}:{i}") for i in ids)
        candidates.extend(("id", i) for i in ids)
    if e164 and ctx.sender_e164 is not None and ctx.sender_e164.strip():
        candidates.append(("e164", ctx.sender_e164.strip().lower()))
    if ctx.sender_username is not None and ctx.sender_username.strip():
        candidates.append(("username", ctx.sender_username.strip().lower().removeprefix("@")))
    if ctx.sender_name is not None and ctx.sender_name.strip():
        candidates.append(("name", ctx.sender_name.strip().lower()))
    for cand in candidates:
        if cand in buckets:
            return buckets[cand]
    return wildcard


def _answer(cfgs: tuple[GroupConfig | None, ...],
            rule_of: Callable[[GroupConfig], SenderRule | None], where: str,
            account: AccountDef | None, group_id: str, gid: str,
            specific: GroupConfig | None) -> GroupMatch | None:
    """The first of a group's entries (the group's own, then ``*``) that answers: its
    sender rule for the request, else its tools; None when neither has either."""
    for cfg in cfgs:
        if cfg is None:
            continue
        rule = rule_of(cfg)
        if rule is None and cfg.tools is None:
            continue
        gw = f"{where}.groups.{key_text(cfg.id)}"
        block_where = (f"{gw}.toolsBySender.{key_text(rule.key)}" if rule is not None
                       else f"{gw}.tools")
        return GroupMatch(block=rule.policy if rule is not None else cfg.tools,
                          where=block_where, map_where=where, account=account,
                          group_id=group_id, candidate=gid, entry=cfg, specific=specific,
                          rule=rule)
    return None


def _entry(groups: Sequence[GroupConfig], gid: str, *, fold: bool) -> GroupConfig | None:
    """The group entry whose id is ``gid`` (with ``fold``, also one that differs only in
    case; never ``*``)."""
    found = next((x for x in groups if x.id == gid), None)
    if found is None and fold:
        found = next((x for x in groups if x.id != "*" and x.id.lower() == gid.lower()), None)
    return found
