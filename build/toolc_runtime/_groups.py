"""Group and sender stacks: the group layer (each channel's resolver over its group map: the
entries it tries, cached, and the walk over them that the sender decides) and the sender
layer (tools.toolsBySender), with the trusted-group rules of releases that read the group
from the session key (``TargetRules.group_id_needs_session``).

``_decisions`` walks the same paths with its own channel lookup and leaf (provenance records
instead of stacks). Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ._errors import UntrustedGroupError
from ._sessions import (
    _NO_SHAPED_SESSION,
    _js_trim,
    _normalize_id,
    _scoped_ids,
    _shaped_session,
    _unique,
    channel_of,
)
from ._shards import _channel
from ._tables import (
    _CACHE_LIMIT,
    _GLOBAL_SENDERS,
    _MISSING,
    RULES,
    AgentRecord,
    Stack,
    _maybe_stack,
)

_TELEGRAM_CHAT: Final = re.compile(r"-?[0-9]+")
_TELEGRAM_TOPIC: Final = re.compile(r"[0-9]+")


Sender = tuple[str | None, str | None, str | None, str | None]  # id, e164, username, name


def _sender_stack(
    entry: list[Any],
    sender: Sender,
    channel: str | None = None,
    leaf: Callable[[int | None], Any] = _maybe_stack,
) -> Stack | bool | None:
    """The matching toolsBySender rule (2026.9 with ``channel``: ``channel:<channel>:<id>``
    first; then id, e164, username, name, then ``*``), else False. ``leaf`` turns an entry's
    stack index into the result (``_decisions`` passes another, over provenance.json)."""
    sender_id, e164, username, name = sender
    # a value counts when it is not blank: trimmed, lowercased, it is then not empty
    sid = sender_id.strip().lower() if sender_id else None
    if sid:
        by_channel: dict[str, int] | None = entry[6] if len(entry) > 6 else None
        if channel and by_channel:
            hit = by_channel.get(f"{channel}:{sid}")
            if hit is None and sid.startswith("@"):
                hit = by_channel.get(f"{channel}:{sid[1:]}")
            if hit is not None:
                return leaf(hit)  # type: ignore[no-any-return]
        ids: dict[str, int] = entry[1]
        hit = ids.get(sid)
        if hit is None and sid.startswith("@"):
            hit = ids.get(sid[1:])
        if hit is not None:
            return leaf(hit)  # type: ignore[no-any-return]
    if e164 or username or name:
        for value, bucket, strip_at in (
            (e164, entry[2], False),
            (username, entry[3], True),
            (name, entry[4], False),
        ):
            norm = value.strip().lower() if value else None
            if norm:
                hit = bucket.get(norm.removeprefix("@") if strip_at else norm)
                if hit is not None:
                    return leaf(hit)  # type: ignore[no-any-return]
    return False if entry[5] is None else leaf(entry[5])


def _group_ids(group: str, topics: bool) -> tuple[str, ...]:
    """The ids a channel's resolver tries: a Telegram topic's chat id, then the id itself."""
    gid = group.strip()
    if topics:
        parts = [p for p in gid.split(":") if p]
        chat = None
        if (
            len(parts) >= 3
            and parts[1] == "topic"
            and _TELEGRAM_CHAT.fullmatch(parts[0])
            and _TELEGRAM_TOPIC.fullmatch(parts[2])
        ) or (
            len(parts) >= 2
            and _TELEGRAM_CHAT.fullmatch(parts[0])
            and _TELEGRAM_TOPIC.fullmatch(parts[1])
        ):
            chat = parts[0]
        if chat is not None and chat != gid:
            return (chat, gid)
    return (gid,)


def _account_id(raw: str | None) -> str:
    """OpenClaw's account id normalization; absent or blank is ``default``."""
    if raw is None:
        return "default"
    value = _normalize_id(raw) if raw is not None and raw.strip() else ""
    if not value or value in ("__proto__", "prototype", "constructor"):
        return "default"
    return value


# A group layer is two halves: the entries its resolver tries, in order (a function of the
# tables and the group's channel, ids, account and names: cached for the request path), and
# the walk over them that the sender decides.
Found = tuple[list[Any], bool]  # an ENTRY, and whether e164 sender keys apply to it
# A step of the walk: an entry's sender rules (None: it has none), whether e164 sender keys
# apply to them, and its own tools decoded by the leaf (None: it has none)
GroupStep = tuple[list[Any] | None, bool, Any]
_GroupKey = tuple[str, str, tuple[str, ...] | None, str | None, tuple[str | None, str | None]]
_STEPS: dict[_GroupKey, tuple[GroupStep, ...]] = {}


def _group_stack(  # noqa: PLR0913, PLR0917 - one argument per request input it reads
    channel: str,
    group: str,
    account_id: str | None,
    sender: Sender,
    where: tuple[str | None, str | None],
    more: tuple[str, ...] | None = None,
    senders: bool = True,
    channels: Callable[[str], dict[str, Any] | None] = _channel,
    leaf: Callable[[int | None], Any] = _maybe_stack,
) -> Stack | None:
    """The group layer's stack; ``more`` (2026.9: not None) holds the further ids tried
    after ``group`` by the generic resolver, ``senders`` False ignores toolsBySender.
    ``channels`` and ``leaf``: see _sender_stack (the steps are cached for the defaults)."""
    # the channel plugin's own resolver first (TargetRules.plugin_group_resolvers)
    if RULES.generic_group_resolver and channel in RULES.plugin_group_resolvers:
        ch = channels(channel)
        if ch is None:
            return None
        ids = (group, *(more or ()))
        found = _plugin_stack(ch, ids, account_id, sender, senders, channel)
        if found is not None:
            return leaf(found)  # type: ignore[no-any-return, arg-type]
    if channels is _channel and leaf is _maybe_stack:
        key = (channel, group, more, account_id, where)
        steps = _STEPS.get(key)
        if steps is None:
            steps = _cached_steps(key)
    else:
        ch = channels(channel)
        entries = () if ch is None else _group_entries(ch, group, more, account_id, where)
        steps = _steps(entries, leaf)
    keyed = channel if RULES.channel_sender_keys and RULES.generic_group_resolver else None
    for rules, e164, tools in steps:
        if rules is not None and senders:
            who = sender if e164 else (sender[0], None, sender[2], sender[3])
            hit = _sender_stack(rules, who, keyed, leaf)
            if hit is not False:
                return hit  # type: ignore[return-value]
        if tools is not None:
            return tools  # type: ignore[no-any-return]
    return None


def _steps(found: Iterable[Found], leaf: Callable[[int | None], Any]) -> tuple[GroupStep, ...]:
    """The walk's steps over the entries found, up to the first with tools (the walk never
    goes further); its tools decoded once here."""
    steps: list[GroupStep] = []
    for entry, e164 in found:
        tools = None if entry[0] is None else leaf(entry[0])
        steps.append((entry if len(entry) > 1 else None, e164, tools))
        if tools is not None:
            break
    return tuple(steps)


def _cached_steps(key: _GroupKey) -> tuple[GroupStep, ...]:
    channel, group, more, account_id, where = key
    ch = _channel(channel)
    entries = () if ch is None else _group_entries(ch, group, more, account_id, where)
    steps = _steps(entries, _maybe_stack)
    if len(_STEPS) >= _CACHE_LIMIT:
        _STEPS.clear()
    _STEPS[key] = steps
    return steps


def _group_entries(
    ch: dict[str, Any],
    group: str,
    more: tuple[str, ...] | None,
    account_id: str | None,
    where: tuple[str | None, str | None],
) -> tuple[Found, ...]:
    """The entries the channel's resolver tries for this group, in order: the walk takes
    the first sender rule that matches, else the first entry with tools (a sender rule of
    an entry before it wins over its tools)."""
    rule: dict[str, Any] = ch["rule"]
    if RULES.generic_group_resolver:  # 2026.9: channels.<ch>.groups alone (no Slack/Discord maps)
        return _generic_entries(ch, (group, *(more or ())), account_id)
    e164: bool = rule["e164"]
    if rule["kind"] == "nested":
        return tuple((entry, e164) for entry in _nested_entries(ch, rule, group, where))
    gmap = ch["groups"]
    account = _account_id(account_id)
    acc = ch["accounts"].get(account, _MISSING)
    if acc is _MISSING:
        acc = ch["accounts_folded"].get(account, _MISSING)
    if acc is not _MISSING and acc is not None:
        gmap = acc
    if gmap is None:
        return ()
    exact: Mapping[str, list[Any]] = gmap["exact"]
    if rule["kind"] == "pick":
        keys = _keys(rule["keys"], group, where)
        entry = next((exact[k] for k in keys if k in exact), exact.get("*"))
        return () if entry is None else ((entry, e164),)
    steps = _groups_entries(gmap, ch["topics"], group, e164)
    if not e164:
        # 2026.3.2 resolveGroupToolPolicy: `dock(...) ?? resolveChannelGroupToolsPolicy(...)`;
        # when IRC's dock (case folded, no e164) answers nothing, the generic resolver asks
        # again with the exact id and the sender's e164 too
        steps += _groups_entries({"exact": exact, "folded": {}}, False, group, True)
    return steps


def _generic_map(ch: dict[str, Any], account_id: str | None) -> dict[str, Any] | None:
    """2026.9.6 ``resolveChannelGroups``: the account's groups replace the channel's (an
    empty map inherits them with at most one account)."""
    if ch["rule"]["kind"] != "groups":
        return None
    gmap: dict[str, Any] | None = ch["groups"]
    account = _account_id(account_id)
    acc = ch["accounts"].get(account, _MISSING)
    if acc is _MISSING:
        acc = ch["accounts_folded"].get(account, _MISSING)
    if acc is not _MISSING and acc is not None:
        if acc["exact"] or len(ch["accounts"]) > 1:
            gmap = acc
    return gmap


def _index(x: int | str | None) -> int | str | None:
    return x


def _answer(entry: list[Any], sender: Sender, senders: bool, keyed: str | None) -> int | str | None:
    """One entry's answer as a stack index or a shard's inline stack: its sender rule, else
    its tools (None: neither, -1: a block without lists)."""
    if senders and len(entry) > 1:
        hit = _sender_stack(entry, sender, keyed, _index)
        if hit is not False:
            return hit  # type: ignore[return-value]
    return entry[0]  # type: ignore[no-any-return]


def _plugin_stack(  # noqa: PLR0913, PLR0917 - one argument per request input it reads
    ch: dict[str, Any],
    ids: tuple[str, ...],
    account_id: str | None,
    sender: Sender,
    senders: bool,
    channel: str,
) -> int | str | None:
    """2026.9.6 ``resolveGroupToolPolicyOutcome`` with a channel plugin's own resolver
    (Telegram's ``resolveTelegramGroupToolPolicy``), tried for each id in turn: the id's chat
    id (``parseTelegramGroupId``) selects an entry (exact) whose sender rule or tools answer,
    else ``*``'s; the first answer with lists wins (the stack index), None: the generic
    resolver decides."""
    gmap = _generic_map(ch, account_id)
    if gmap is None:
        return None
    exact: dict[str, list[Any]] = gmap["exact"]
    default = exact.get("*")
    keyed = channel if RULES.channel_sender_keys else None
    for gid in ids:
        chat = _group_ids(gid, True)[0]
        entry = exact.get(chat) if chat != "*" else None
        found = None
        for node in (entry, default):
            if node is not None:
                found = _answer(node, sender, senders, keyed)
                if found is not None:
                    break
        if isinstance(found, str) or (found is not None and found >= 0):
            return found
    return None


def _generic_entries(
    ch: dict[str, Any], ids: tuple[str, ...], account_id: str | None
) -> tuple[Found, ...]:
    """2026.9.6 ``resolveChannelGroupToolsPolicy`` on ``resolveChannelGroups`` (after a
    channel plugin's own resolver, _plugin_stack): the first id with an entry (exact) is the
    selected group; its sender rule > its tools > the ``*`` sender rule > ``*`` tools."""
    gmap = _generic_map(ch, account_id)
    if gmap is None:
        return ()
    exact: Mapping[str, list[Any]] = gmap["exact"]
    specific = next((exact[gid] for gid in ids if gid in exact), None)
    return tuple((entry, True) for entry in (specific, exact.get("*")) if entry is not None)


def _groups_entries(
    gmap: Mapping[str, Any], topics: bool, group: str, e164: bool
) -> tuple[Found, ...]:
    """OpenClaw's generic resolver: the group, then ``*``; sender rule > tools at each."""
    exact: Mapping[str, list[Any]] = gmap["exact"]
    default = exact.get("*")
    steps: list[Found] = []
    for gid in _group_ids(group, topics):
        specific = exact.get(gid)
        if specific is None and gmap["folded"]:
            specific = gmap["folded"].get(gid.lower())
        steps.extend((entry, e164) for entry in (specific, default) if entry is not None)
    return tuple(steps)


def _nested_entries(
    ch: dict[str, Any], rule: dict[str, Any], group: str, where: tuple[str | None, str | None]
) -> list[list[Any]]:
    """Discord: the guild (id, slug key, slug field, ``*``), then a channel in it; channel
    sender rule > channel tools > guild sender rule > guild tools."""
    spaces = ch["spaces"]
    if not spaces:
        return []
    entries: Mapping[str, list[Any]] = spaces["entries"]
    keys = _keys(rule["keys"], group, where)
    guild = next((entries[k] for k in keys if k in entries), None)
    slug = _athash(where[0])
    if guild is None and slug:
        guild = next((entries[k] for k in spaces["order"] if entries[k][1] == slug), None)
    if guild is None:
        guild = entries.get("*")
    if guild is None:
        return []
    found: list[list[Any]] = []
    inner = guild[2]["exact"] if guild[2] else None
    if inner:
        keys = _keys(rule["inner_keys"], group, where)
        channel_entry = next((inner[k] for k in keys if k in inner), None)
        if channel_entry is not None:
            found.append(channel_entry)
    if guild[0] is not None:
        found.append(guild[0])
    return found


_WS: Final = re.compile(r"\s+")
_HYPHEN_BAD: Final = re.compile(r"[^a-z0-9#@._+-]+")
_DASHES: Final = re.compile(r"-{2,}")
_ATHASH_LEAD: Final = re.compile(r"^[@#]+")
_ATHASH_SEP: Final = re.compile(r"[\s_]+")
_ATHASH_BAD: Final = re.compile(r"[^a-z0-9-]+")


def _hyphen(raw: str | None) -> str:
    """OpenClaw's ``normalizeHyphenSlug`` (Slack channel names)."""
    value = (raw or "").strip().lower()
    if not value:
        return ""
    return _DASHES.sub("-", _HYPHEN_BAD.sub("-", _WS.sub("-", value))).strip("-.")


def _athash(raw: str | None) -> str:
    """OpenClaw's ``normalizeAtHashSlug`` (Discord guild and channel names)."""
    value = (raw or "").strip().lower()
    if not value:
        return ""
    value = _ATHASH_BAD.sub("-", _ATHASH_SEP.sub("-", _ATHASH_LEAD.sub("", value)))
    return _DASHES.sub("-", value).strip("-")


def _keys(names: list[str], group: str, where: tuple[str | None, str | None]) -> list[str]:
    """The keys a channel's row tries, in order (the generators of ``toolc.rules.channels``)."""
    space, channel = where
    name = channel[1:] if channel is not None and channel.startswith("#") else channel
    out = []
    for generator in names:
        if generator == "id":
            key = group.strip()
        elif generator == "raw_id":
            key = group
        elif generator == "#name":
            key = f"#{name}" if name else ""
        elif generator == "name":
            key = name or ""
        elif generator == "hyphen(name)":
            key = _hyphen(name)
        elif generator == "space":
            key = (space or "").strip()
        elif generator == "athash(space)":
            key = _athash(space)
        elif generator == "athash(channel)":
            key = _athash(channel)
        elif generator == "#athash(channel)":
            slug = _athash(channel)
            key = f"#{slug}" if slug else ""
        else:  # "slug=...": matched against entries' slug fields, not a key
            continue
        if key:
            out.append(key)
    return out


def _refuse_ignored_group(
    session_key: str | None,
    spawned_by: str | None,
    group_id: str | None,
    group_space: str | None,
    group_channel: str | None,
) -> None:
    """UntrustedGroupError for the first of ``group_id``, ``group_space``, ``group_channel``
    that 2026.9.6 would ignore (``resolveTrustedGroupId``): a group id neither the session
    key nor ``spawned_by`` names, and the space and channel beside a group that is not
    trusted (an ignored id, or a session that names no group)."""
    own = _NO_SHAPED_SESSION if session_key is None else _shaped_session(session_key)
    spawned = None if spawned_by is None or not spawned_by.strip() else spawned_by
    parent = _NO_SHAPED_SESSION if spawned is None else _shaped_session(spawned)
    trusted = (*own.group_ids, *parent.group_ids)
    caller = _js_trim(group_id) if group_id else ""
    if caller and caller not in trusted:
        raise UntrustedGroupError("group_id", group_id or "", session_key=session_key)
    if not trusted:
        for field, value in (("group_space", group_space), ("group_channel", group_channel)):
            if value is not None and value.strip():
                raise UntrustedGroupError(field, value, session_key=session_key)


def _requester_stacks(  # noqa: PLR0913, PLR0917 - the request's parts, provenance hooks
    request: tuple[str | None, str | None, str | None, str | None, str | None],
    where: tuple[str | None, str | None],
    sender: Sender,
    owner: bool,
    record: AgentRecord,
    hooks: tuple[Any, ...] | None = None,
) -> list[Any]:
    """2026.9.6's group and sender layers (``resolveRequesterToolPolicies``). ``request``:
    (session key, spawned_by, group id, message channel, account id), blanks as None.

    The group layer's channel and ids come from the session key (else spawned_by); a
    caller's group id counts only when one of them names it (else group_space and
    group_channel are dropped with it). The owner on webchat gets no sender policies
    (``isOwnerInternalSession``). The sender layer: the agent's tools.toolsBySender rule,
    else the global one."""
    session_key, spawned_key, group_id, message, account_id = request
    out: list[Any] = []
    own = _NO_SHAPED_SESSION if session_key is None else _shaped_session(session_key)
    parent = _NO_SHAPED_SESSION if spawned_key is None else _shaped_session(spawned_key)
    # a session's ids are already unique and trimmed (_scoped_ids): joined only with others
    trusted = _unique([*own.group_ids, *parent.group_ids]) if parent.group_ids else own.group_ids
    caller = _js_trim(group_id) if group_id else ""
    dropped = bool(caller) and caller not in trusted
    ids = _unique([*trusted, *_scoped_ids(caller)]) if caller and not dropped else trusted
    named = channel_of(message)
    channel = channel_of(own.channel or parent.channel) if own.channel or parent.channel else named
    senders = not (owner and named == "webchat")
    # hooks (``_decisions``): (channel lookup, leaf, the agent's and the global sender
    # entries), so the same path yields provenance records instead of stacks
    lookup, leaf, mine, every = hooks or (_channel, _maybe_stack, record.senders, _GLOBAL_SENDERS)
    if channel and ids:
        at = (None, None) if dropped else where
        found = _group_stack(
            channel, ids[0], account_id, sender, at, ids[1:], senders, lookup, leaf
        )
        if found is not None:
            out.append(found)
    if RULES.global_sender_layer and senders:
        keyed = None
        if RULES.channel_sender_keys:
            keyed = channel_of(own.delivery) if own.delivery else named
        hit = _sender_stack(mine, sender, keyed, leaf) if mine else False
        if hit is False and every:
            hit = _sender_stack(every, sender, keyed, leaf)
        if hit is not False and hit is not None:
            out.append(hit)  # a Stack, or (hooks) a provenance record index
    return out
