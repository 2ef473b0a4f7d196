"""How each channel of OpenClaw 2026.3.2 finds its group-level tool block: one row per channel.

A channel is data, not a code path: which config key holds its entry map, whether accounts
have their own map, how a request's ``group_id`` / ``group_space`` / ``group_channel`` become
the keys tried (in order), whether ``"*"`` applies, and which sender fields count. Three rule
kinds cover the release's core channels:

* ``groups``: OpenClaw's generic resolver (``resolveChannelGroupToolsPolicy``): the group
  entry, then ``"*"``, each ``toolsBySender`` > ``tools``, falling through while a level has
  neither; Telegram first tries a forum topic's chat id; IRC then folds case.
* ``pick``: one entry is chosen (the first key tried that exists, else ``"*"``) and only its
  ``toolsBySender`` > ``tools`` count (Slack ``channels``).
* ``nested``: an outer entry (a Discord guild: by id, slug or ``*``) and an inner entry in its
  ``channels`` map (no ``*``): inner ``toolsBySender`` > inner ``tools`` > outer
  ``toolsBySender`` > outer ``tools``.

The reference interpreter and the generated runtime both read these rows (the runtime gets
them in ``tables.json``); the key generators are named here and implemented in both.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Literal

RuleKind = Literal["groups", "pick", "nested"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelRule:
    """One channel's group resolution (OpenClaw 2026.3.2)."""

    kind: RuleKind = "groups"
    map_key: str = "groups"  # the config key of the entry map (Discord: guilds)
    accounts: bool = True  # accounts.<id>.<map_key> replaces the channel's map
    topics: bool = False  # Telegram: "-100123:topic:7" tries chat "-100123" first
    fold_case: bool = False  # IRC: then the first key equal ignoring case (not "*")
    e164: bool = True  # e164: sender keys count
    keys: tuple[str, ...] = ("id",)  # key generators, in order (pick kind, outer of nested)
    inner_keys: tuple[str, ...] = ()  # nested kind: keys tried in the outer entry's channels
    inner_key: str = ""  # nested kind: the config key of the inner map


GENERIC = ChannelRule()
# Channels without a row use the generic rule on `groups` (zalo, mattermost, line, matrix,
# msteams, feishu, nextcloud-talk, zalouser, ...): with an empty plugin registry (and for
# Matrix, Nextcloud Talk and Zalouser always: they do not load in the published 2026.3.2)
# OpenClaw's generic fallback answers for them; see the channel table in the docs
# (docs/reference/semantics.md).
CHANNEL_RULES: dict[str, ChannelRule] = {
    # the generic resolver itself (resolve*GroupToolPolicy of each dock)
    "whatsapp": GENERIC, "imessage": GENERIC, "googlechat": GENERIC, "bluebubbles": GENERIC,
    "signal": GENERIC,  # no dock resolver: OpenClaw's generic fallback
    # resolveTelegramGroupToolPolicy: parseTelegramGroupId, then the generic resolver
    "telegram": ChannelRule(topics=True),
    # DOCKS.irc: groupIdCaseInsensitive, senderE164 not passed
    "irc": ChannelRule(fold_case=True, e164=False),
    # resolveSlackChannelPolicyEntry + resolveSenderToolsEntry (resolveSlackAccount merges)
    "slack": ChannelRule(kind="pick", map_key="channels",
                         keys=("id", "#name", "name", "hyphen(name)")),
    # resolveDiscordGuildEntry, resolveDiscordChannelEntry, resolveDiscordGroupToolPolicy
    "discord": ChannelRule(kind="nested", map_key="guilds", accounts=False,
                           keys=("space", "athash(space)", "slug=athash(space)"),
                           inner_key="channels",
                           inner_keys=("raw_id", "athash(channel)", "#athash(channel)")),
}


def rule_for(channel: str) -> ChannelRule:
    return CHANNEL_RULES.get(channel, GENERIC)


def rule_json(rule: ChannelRule) -> dict[str, Any]:
    """The row as the runtime reads it (tables.json)."""
    out = asdict(rule)
    out["keys"], out["inner_keys"] = list(rule.keys), list(rule.inner_keys)
    return out


_WS = re.compile(r"\s+")
_HYPHEN_BAD = re.compile(r"[^a-z0-9#@._+-]+")
_DASHES = re.compile(r"-{2,}")
_ATHASH_LEAD = re.compile(r"^[@#]+")
_ATHASH_SEP = re.compile(r"[\s_]+")
_ATHASH_BAD = re.compile(r"[^a-z0-9-]+")


def hyphen_slug(raw: str | None) -> str:
    """OpenClaw's ``normalizeHyphenSlug`` (Slack channel names)."""
    value = (raw or "").strip().lower()
    if not value:
        return ""
    value = _DASHES.sub("-", _HYPHEN_BAD.sub("-", _WS.sub("-", value)))
    return value.strip("-.")


def athash_slug(raw: str | None) -> str:
    """OpenClaw's ``normalizeAtHashSlug`` (Discord guild and channel names)."""
    value = (raw or "").strip().lower()
    if not value:
        return ""
    value = _ATHASH_BAD.sub("-", _ATHASH_SEP.sub("-", _ATHASH_LEAD.sub("", value)))
    return _DASHES.sub("-", value).strip("-")


def key_candidates(names: tuple[str, ...], group_id: str | None, space: str | None,
                   channel: str | None) -> list[str]:
    """The keys a row's generators produce for one request, in order, empty ones dropped.
    A ``slug=...`` generator is not a key: it matches entries by their ``slug`` field."""
    name = channel[1:] if channel is not None and channel.startswith("#") else channel
    values = {
        "id": (group_id or "").strip(),
        "raw_id": group_id or "",
        "#name": f"#{name}" if name else "",
        "name": name or "",
        "hyphen(name)": hyphen_slug(name),
        "space": (space or "").strip(),
        "athash(space)": athash_slug(space),
        "athash(channel)": athash_slug(channel),
        "#athash(channel)": f"#{athash_slug(channel)}" if athash_slug(channel) else "",
    }
    return [values[n] for n in names if not n.startswith("slug=") and values[n]]
