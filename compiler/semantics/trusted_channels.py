"""The channel dimension under OpenClaw 2026.9's request-time rules (``access.ClassSpace``).

2026.9.6 reads a request's group and sender layers differently from 2026.3.2
(``resolveRequesterToolPolicies``, ported by the runtime's ``_requester_stacks``):

* **trusted group id**: the group layer's channel and group ids come from the session key,
  then ``spawned_by`` (``resolveGroupContextFromSessionKey``); a caller's ``group_id`` counts
  only when one of them names it;
* **generic resolver**: only ``channels.<ch>.groups`` (no Slack ``channels``, Discord
  ``guilds``, IRC case folding), the first id with an entry is the selected group;
* **sender layer**: after the group layer, the agent's ``tools.toolsBySender`` rule for the
  sender, else the global one; typed keys ``channel:<channel>:<id>`` match the group layer's
  channel (group rules) or the session's delivery channel, else the message channel (sender
  layer). The owner on webchat gets no sender policy at all.

So the channel side of a class also depends on the agent (its own ``toolsBySender``) and on
whether the sender is the owner. The class space names those couplings **selectors**
``(owner is True, per side the agent's sender map)``; a channel class holds, per selector,
the stacks of its channel side on every side. Classes are the distinct answers (per gate,
per selector, per side) of representative requests built from every key the definitions
declare plus fresh values: the channel dimension's common refinement, also across a
2026.3 side (``toolc migrate``'s diff), whose own answers are part of the signature.

What this does not reproduce: a typed sender key whose channel only the session key's
delivery route gives while the explicit message channel has another availability gate (a
class representative cannot carry a session key: the sandbox classes own it); ``classify``
then raises LookupError.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..rules.context import (
    Context,
    delivery_channel,
    group_context,
    parse_session_key,
    trusted_group,
)
from ..rules.names import (
    group_candidates,
    normalize_account_id,
    normalize_channel,
    normalize_key,
)

MISS: Any = object()  # no sender rule matched (the runtime's False)
_BUCKETS = {"id": 1, "e164": 2, "username": 3, "name": 4}
_MISSING: Any = object()
# above this many sender combinations, only single keys and pairs of keys are tried
MAX_SENDER_COMBOS = 256


class View(Protocol):
    """What this module reads of an ``access.TablesView``."""

    channels: dict[str, dict[str, Any]]
    trusted: bool
    typed_keys: bool
    sender_layer: bool
    request_aliases: dict[str, str]
    plugin_resolvers: frozenset[str]
    global_senders: list[Any] | None

    def group(self, channel: str, group: str, account: str | None,
              senders: Sequence[tuple[str, str]] = (),
              where: tuple[str | None, str | None] = (None, None)) -> tuple[Any, int | None]:
        ...


@dataclass(frozen=True, slots=True)
class TrustedRequest:
    """The inputs of 2026.9's group and sender layers, parsed once per request."""

    gch: str | None  # the group layer's channel (session key, spawned_by, message channel)
    ids: tuple[str, ...]  # the group ids tried, in order (empty: no group layer)
    account: str | None
    senders: tuple[tuple[str, str], ...]  # the sender's keys in the runtime's order
    keyed: str | None  # the sender layer's channel for typed keys
    webchat: bool  # the message channel is webchat (the owner there skips sender rules)


def request_channel(view: View, raw: str | None) -> str | None:
    """``normalizeMessageChannel``: the definitions' aliases, then the release's own."""
    channel = normalize_channel(raw)
    return view.request_aliases.get(channel or "", channel) if channel else None


def parse_trusted(view: View, ctx: Context, senders: Sequence[tuple[str, str]]) -> TrustedRequest:
    trusted = trusted_group(ctx.session_key, ctx.spawned_by, ctx.group_id,
                            ctx.message_provider)
    message = request_channel(view, ctx.message_provider)
    keyed = request_channel(view, delivery_channel(ctx.session_key) or ctx.message_provider)
    return TrustedRequest(gch=request_channel(view, trusted.channel), ids=trusted.group_ids,
                    account=ctx.account_id, senders=tuple(senders), keyed=keyed,
                    webchat=message == "webchat")


def sender_hit(entry: Sequence[Any], senders: Sequence[tuple[str, str]],
               channel: str | None) -> Any:
    """The stack of the ``toolsBySender`` rule a sender matches (``_sender_stack``): typed
    ``<channel>:<id>`` keys first, then id, e164, username, name, then ``*``; MISS if none."""
    typed = entry[6] if len(entry) > 6 else None
    if channel and typed:
        for kind, value in senders:
            if kind == "id" and f"{channel}:{value}" in typed:
                return typed[f"{channel}:{value}"]
    for kind, value in senders:
        bucket = entry[_BUCKETS[kind]]
        if value in bucket:
            return bucket[value]
    return MISS if entry[5] is None else entry[5]


def group_answer(view: View, req: TrustedRequest, senders_on: bool) -> int | None:
    """``resolveChannelGroupToolsPolicy`` on ``resolveChannelGroups`` (``_generic_stack``):
    the group layer's stack, or None."""
    if not req.gch or not req.ids:
        return None
    ch = view.channels.get(req.gch)
    if ch is None or ch["rule"]["kind"] != "groups":
        return None
    gmap = ch["groups"]
    account = normalize_account_id(req.account)
    acc = ch["accounts"].get(account, _MISSING)
    if acc is _MISSING:
        acc = ch["accounts_folded"].get(account, _MISSING)
    if acc is not _MISSING and acc is not None and (acc["exact"] or len(ch["accounts"]) > 1):
        gmap = acc  # an empty account map inherits the channel's with at most one account
    if gmap is None:
        return None
    exact = gmap["exact"]
    keyed = req.gch if view.typed_keys else None
    if req.gch in view.plugin_resolvers:
        # the channel plugin's own resolver first (Telegram's, per id: the id's chat id
        # selects an entry, else `*`); the first answer with lists wins (``_plugin_stack``)
        for gid in req.ids:
            chat = group_candidates(req.gch, gid)[0]
            found = None
            for node in (exact.get(chat) if chat != "*" else None, exact.get("*")):
                if node is not None:
                    found = _answer(node, req, senders_on, keyed)
                    if found is not None:
                        break
            if found is not None and found >= 0:
                return found
    specific = next((exact[gid] for gid in req.ids if gid in exact), None)
    for entry in (specific, exact.get("*")):
        if entry is not None:
            found = _answer(entry, req, senders_on, keyed)
            if found is not None:
                return found
    return None


def _answer(entry: Sequence[Any], req: TrustedRequest, senders_on: bool, keyed: str | None
            ) -> int | None:
    """One entry's answer: its sender rule, else its tools (None: neither; -1: a block
    without lists)."""
    if senders_on and len(entry) > 1:
        hit = sender_hit(entry, req.senders, keyed)
        if hit is not MISS:
            return int(hit) if hit is not None else None
    return None if entry[0] is None else int(entry[0])


def sender_answer(view: View, req: TrustedRequest, senders_on: bool,
                  mine: list[Any] | None) -> int | None:
    """The sender layer (``resolveSenderToolPolicy``): the agent's rule, else the global
    one; None for no layer."""
    if not view.sender_layer or not senders_on:
        return None
    keyed = req.keyed if view.typed_keys else None
    hit = sender_hit(mine, req.senders, keyed) if mine else MISS
    if hit is MISS and view.global_senders:
        hit = sender_hit(view.global_senders, req.senders, keyed)
    return None if hit is MISS or hit is None else int(hit)


def trusted_side(view: View, req: TrustedRequest, owner: bool,
                 mine: list[Any] | None) -> tuple[int, ...]:
    """The channel side's stacks of one 2026.9 side for one selector."""
    senders_on = not (owner and req.webchat)
    answers = (group_answer(view, req, senders_on), sender_answer(view, req, senders_on, mine))
    return tuple(s for s in answers if s is not None)


def listed_side(view: View, ctx: Context, senders: Sequence[tuple[str, str]]) -> tuple[int, ...]:
    """The group layer of a 2026.3 side (the request's channel and group as 2026.3 reads
    them: explicit, else the session key's, else spawned_by's)."""
    session = parse_session_key(ctx.session_key)
    spawned_channel, spawned_group = group_context(ctx.spawned_by)
    channel = normalize_channel(ctx.message_provider if ctx.message_provider is not None
                                else session.channel or spawned_channel)
    group = ctx.group_id if ctx.group_id is not None else session.group or spawned_group
    if channel is None or group is None or channel not in view.channels:
        return ()
    _, stack = view.group(channel, group, ctx.account_id, senders,
                          (ctx.group_space, ctx.group_channel))
    return () if stack is None else (stack,)


# -- representatives --------------------------------------------------------------------------
def sender_maps(views: Sequence[Any]) -> list[list[Any]]:
    """Per side the distinct agent sender maps (index 0: an agent without one)."""
    out = []
    for v in views:
        seen: dict[str, int] = {}
        maps: list[Any] = [None]
        for rec in v.records:
            if rec.senders:
                key = json.dumps(rec.senders, sort_keys=True)
                if key not in seen:
                    seen[key] = len(maps)
                    maps.append(rec.senders)
        out.append(maps)
    return out


def map_id(maps: list[Any], senders: list[Any] | None) -> int:
    if not senders:
        return 0
    key = json.dumps(senders, sort_keys=True)
    return next(i for i, m in enumerate(maps) if i and json.dumps(m, sort_keys=True) == key)


def _entries(views: Sequence[Any]) -> list[Sequence[Any]]:
    """Every sender-bearing entry: group entries of every map, agent and global maps."""
    out: list[Sequence[Any]] = []
    for v in views:
        for ch in v.channels.values():
            maps = [m for m in (ch["groups"], *ch["accounts"].values()) if m]
            if ch.get("spaces"):
                for e in ch["spaces"]["entries"].values():
                    out.append(e[0])
                    if e[2]:
                        maps.append(e[2])
            out += [e for m in maps for e in m["exact"].values()]
        out += [r.senders for r in v.records if r.senders]
        if v.global_senders:
            out.append(v.global_senders)
    return [e for e in out if len(e) > 1]


def has_sender_rules(views: Sequence[Any]) -> bool:
    """Whether any group entry, agent or global map has a toolsBySender rule (``*`` too)."""
    return bool(_entries(views))


def typed_channels(views: Sequence[Any]) -> list[str]:
    """The channels typed sender keys name (``channel:<channel>:<id>``)."""
    out: set[str] = set()
    for entry in _entries(views):
        if len(entry) > 6 and entry[6]:
            out.update(k.split(":", 1)[0] for k in entry[6])
    return sorted(out)


def sender_reps(views: Sequence[Any]) -> list[tuple[tuple[str, str], ...]]:
    """Representative senders: every combination of one declared value per kind (ids with
    and without a leading ``@``), or singles and pairs when that would be too many."""
    values: dict[str, set[str]] = {k: set() for k in _BUCKETS}
    for entry in _entries(views):
        for kind, bucket in _BUCKETS.items():
            values[kind].update(entry[bucket])
        if len(entry) > 6 and entry[6]:
            values["id"].update(k.split(":", 1)[1] for k in entry[6])
    values["id"] |= {f"@{v}" for v in values["id"] if not v.startswith("@")}
    kinds = [[None, *sorted(values[k])] for k in _BUCKETS]
    size = 1
    for k in kinds:
        size *= len(k)
    if size <= MAX_SENDER_COMBOS:
        combos = itertools.product(*kinds)
        return [tuple((k, v) for k, v in zip(_BUCKETS, c, strict=True) if v is not None)
                for c in combos]
    singles: list[tuple[tuple[str, str], ...]] = [
        ((kind, v),) for kind, vs in zip(_BUCKETS, kinds, strict=True) for v in vs[1:] if v]
    pairs = [a + b for i, a in enumerate(singles) for b in singles[i + 1:]
             if a[0][0] != b[0][0]]
    return [(), *singles, *pairs]


def sender_flags(senders: Sequence[tuple[str, str]]) -> list[tuple[str, Any]]:
    flags = {"id": "sender_id", "e164": "sender_e164", "username": "sender_username",
             "name": "sender_name"}
    return [(flags[k], v) for k, v in senders]


def group_ids(views: Sequence[Any], channel: str) -> list[str]:
    """The group ids a channel's maps declare on any side (``*`` excluded)."""
    out: set[str] = set()
    for v in views:
        ch = v.channels.get(channel)
        if ch is None:
            continue
        for m in (ch["groups"], *ch["accounts"].values()):
            if m:
                out.update(k for k in m["exact"] if k != "*")
    return sorted(out)


def accounts(views: Sequence[Any], channel: str, fresh: str) -> list[str | None]:
    declared = sorted({a for v in views if channel in v.channels
                       for a in v.channels[channel]["accounts"]})
    out: list[str | None] = [None, *declared]
    if "default" in declared:
        out.append(fresh)
    return out


def class_label(flags: Mapping[str, Any], other: str, *, several_accounts: bool,
                any_senders: bool) -> tuple[str, tuple[str, ...]]:
    """A 2026.9 channel class in words, and its fold hierarchy (channel, account, group)."""
    spawned = flags.get("spawned_by")
    message = flags.get("message_provider")
    if spawned is not None:
        channel, _, gid = spawned.partition(":group:")
        head = f"channel {channel}"
        group = ("any other group" if gid == other else f"group {gid}") + \
            " named by the session key"
        if message is not None and normalize_key(message) != channel:
            head += f" (message channel {message})"
    else:
        head = f"channel {message}" if message is not None else "no channel"
        group = "no group named by the session key"
    if "group_id" in flags:  # a 2026.3 side reads the caller's group id (a diff across)
        caller = flags["group_id"]
        same = spawned is not None and spawned.partition(":group:")[2] == caller
        group += " and by group_id" if same else \
            f", group_id {'of any other group' if caller == other else caller}"
    account = ""
    if several_accounts and spawned is not None:
        account = "any other account" if "account_id" not in flags else \
            f"account {flags['account_id']}"
    senders = [f"sender {k.removeprefix('sender_')}:{v}" for k, v in flags.items()
               if k.startswith("sender_")]
    sender = " and ".join(senders) or ("any other sender" if any_senders else "")
    label = ", ".join(p for p in (head, account, group, sender) if p)
    return label, (head, account, group)
