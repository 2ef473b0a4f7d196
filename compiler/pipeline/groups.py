"""The group layer of a 2026.3 ``groups`` channel, read from its compiled maps: which entry and
sender rule a request reaches (``decide``), and the channel's context classes on one side
(``channel_rows``), one per distinct answer.

Two readers share it, so that they agree by construction: ``toolc.semantics.access`` (the
runtime's lookups, and the classes of a channel both sides of a diff hold alike) and
``split_tables``, which records in ``tables.json`` how many classes each channel has, so that
``toolc diff`` can count the classes of a channel whose shards did not change without reading
them (``channel_summary``).

A channel here is the one-dictionary form of ``tables.json``'s channel (``join_tables``):
``{"rule", "topics", "e164", "groups": GROUP_MAP | None, "accounts": {id: GROUP_MAP | None},
"accounts_folded": {...}}`` with ``GROUP_MAP = {"exact": {id: ENTRY}, "folded": {...}}``;
an entry's stacks (its leaves) may be of any kind, they are only passed along.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..rules.names import group_candidates, normalize_account_id

OTHER = "toolc-other"  # the stem of fresh values that no definition declares
BUCKETS = {"id": 1, "e164": 2, "username": 3, "name": 4}
MISSING: Any = object()

Senders = tuple[tuple[str, str], ...]
Answer = tuple[Any, Any]  # (which map, entry and rule, or None; the stack, or None)
Row = tuple[Senders, Answer]  # a representative sender and the answer it gets


def account_candidates(declared: list[str]) -> list[str | None]:
    """The accounts a channel's classes try, ``declared`` sorted: no account, each declared
    one, and, when ``default`` is among them, one that no definition names."""
    accounts: list[str | None] = [None, *declared]
    if "default" in declared:
        accounts.append(fresh(declared, OTHER))
    return accounts


def fresh(taken: Iterable[str], stem: str = OTHER) -> str:
    """A value none of ``taken``: ``stem``, else ``stem-2``, ``stem-3``, ..."""
    taken = set(taken)
    value, n = stem, 1
    while value in taken:
        n += 1
        value = f"{stem}-{n}"
    return value


def group_map(ch: Mapping[str, Any] | None, account: str | None) -> tuple[str, Any] | None:
    """The group map an account uses on a channel (the account's, else the channel's)."""
    if ch is None:
        return None
    gmap, where = ch["groups"], "channel"
    acc_id = normalize_account_id(account)
    acc = ch["accounts"].get(acc_id, MISSING)
    if acc is MISSING:
        acc = ch["accounts_folded"].get(acc_id, MISSING)
        key = next((k for k in ch["accounts"] if k.lower() == acc_id), None)
    else:
        key = acc_id
    if acc is not MISSING and acc is not None:
        gmap, where = acc, f"account:{key}"
    return None if gmap is None else (where, gmap)


def decide(channel: str, ch: Mapping[str, Any], found: tuple[str, Any] | None, group: str,
           senders: Sequence[tuple[str, str]]) -> Answer:
    """The answer of a ``groups`` channel's group layer: which map, entry and rule, and its
    stack (``found``: the account's map, ``group_map``)."""
    if found is None:
        return None, None
    where, gmap = found
    passes: list[tuple[tuple[str, ...], bool, Sequence[tuple[str, str]]]] = [
        (group_candidates(channel, group), True, senders)]
    if not ch["e164"]:
        # 2026.3.2 resolveGroupToolPolicy: IRC's dock (case folded, no e164), and when it
        # answers nothing, the generic resolver (exact id, e164 too)
        passes = [(passes[0][0], True, [s for s in senders if s[0] != "e164"]),
                  ((group.strip(),), False, senders)]
    exact = gmap["exact"]
    for gids, fold, keys in passes:
        found_pass = _decide_pass(where, exact, gmap["folded"] if fold else {}, gids, keys)
        if found_pass is not None:
            return found_pass
    return None, None


def _decide_pass(where: str, exact: dict[str, Any], folded: dict[str, Any],
                 gids: Sequence[str], senders: Sequence[tuple[str, str]]) -> Answer | None:
    for gid in gids:
        specific, sid = exact.get(gid), gid
        if specific is None and folded:
            specific = folded.get(gid.lower())
            sid = next((k for k in exact if k != "*" and k.lower() == gid.lower()), gid)
        for entry, eid in ((specific, sid), (exact.get("*"), "*")):
            if entry is None:
                continue
            if len(entry) > 1:
                hit = sender_hit(entry, senders)
                if hit is not None:
                    return (where, eid, hit[0]), hit[1]
            if entry[0] is not None:
                return (where, eid, None), entry[0]
    return None


def sender_hit(entry: Sequence[Any], senders: Sequence[tuple[str, str]]
               ) -> tuple[tuple[str, str] | str, Any] | None:
    """The ``toolsBySender`` rule of an entry a sender matches (its keys in order), else the
    entry's ``*`` rule; None when neither."""
    for kind, value in senders:
        hit = entry[BUCKETS[kind]].get(value)
        if hit is not None:
            return (kind, value), hit
    return None if entry[5] is None else ("*", entry[5])


def map_key(ch: Mapping[str, Any] | None, account: str | None) -> Any:
    """Which account map ``account`` reaches (None: the channel's own)."""
    if ch is None:
        return None
    acc_id = normalize_account_id(account)
    if acc_id in ch["accounts"]:
        return None if ch["accounts"][acc_id] is None else acc_id
    folded = next((k for k in ch["accounts"] if k.lower() == acc_id), None)
    if folded is not None and ch["accounts"][folded] is not None:
        return folded
    return None


def channel_maps(ch: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every group map of a channel: its own, then its accounts'."""
    if ch is None:
        return []
    return [m for m in (ch["groups"], *ch["accounts"].values()) if m]


def sender_keys(maps: Iterable[Mapping[str, Any]], ids: Iterable[str]
                ) -> set[tuple[str, str]]:
    """The ``toolsBySender`` keys of every entry the maps hold for ``ids``."""
    ids = list(ids)
    found: set[tuple[str, str]] = set()
    for m in maps:
        exact, folded = m["exact"], m["folded"]
        for i in ids:
            for entry in (exact.get(i), folded.get(i.lower())):
                if entry is not None and len(entry) > 1:
                    for kind, bucket in BUCKETS.items():
                        found.update((kind, value) for value in entry[bucket])
    return found


def sender_candidates(maps: Sequence[Mapping[str, Any]], channel: str, gid: str,
                      star: set[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """The sender keys of every entry the maps hold for ``gid`` (the ids its channel's
    resolver tries) and for ``*`` (``star``: those of ``*``, when known), sorted."""
    if star is None:
        star = sender_keys(maps, ("*",))
    ids = set(group_candidates(channel, gid)) - {"*"}
    return sorted(star | sender_keys(maps, ids))


def declared_ids(found: Iterable[tuple[str, Any] | None]) -> set[str]:
    """Group ids (and their lowercase forms) that the maps in use declare."""
    out: set[str] = set()
    for f in found:
        if f is not None:
            out.update(f[1]["exact"])
            out.update(k.lower() for k in f[1]["exact"])
    return out


# -- one side's classes --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelRows:
    """A ``groups`` channel's classes on one side (for one availability mode): per account
    class, per group id it tells apart (``other`` last: any other group), the rows."""

    accounts: list[str | None]  # every account tried (declared, and a fresh one)
    account_keys: dict[Any, str | None]  # map key -> the account class's representative
    gids: list[str]  # every group id some map declares (``*`` aside), sorted
    other: str  # a group id no map declares
    groups: list[tuple[str | None, list[tuple[str, list[Row]]]]]  # (account, [(gid, rows)])

    def count(self) -> int:
        return sum(len(rows) for _, per_gid in self.groups for _, rows in per_gid)

    def stacks(self) -> set[Any]:
        """Every stack some class's answer names."""
        return {answer[1] for _, per_gid in self.groups for _, rows in per_gid
                for _, answer in rows if answer[1] is not None}


def channel_rows(name: str, ch: Mapping[str, Any]) -> ChannelRows:
    """The classes of ``groups`` channel ``name`` on one side: account classes (accounts with
    their own map, the channel's map), per account every group id its map declares (or that
    its resolver reaches through a declared id) and "any other group", per group the senders
    that its entries (and ``*``'s) tell apart, one row per distinct answer."""
    maps = channel_maps(ch)
    accounts = account_candidates(sorted(ch["accounts"]))
    gids = sorted({g for m in maps for g in m["exact"] if g != "*"})
    other = fresh(gids)
    account_keys: dict[Any, str | None] = {}
    for acc in accounts:
        account_keys.setdefault(map_key(ch, acc), acc)
    star = sender_keys(maps, ("*",))

    def rows_of(found: Any, gid: str) -> list[Row]:
        entry = None if found is None else found[1]["exact"].get(gid)
        if (entry is not None and len(entry) == 1 and entry[0] is not None
                and group_candidates(name, gid)[0] == gid):
            # the group's own plain entry is the first one tried: every sender gets it
            return [((), ((found[0], gid, None), entry[0]))]
        seen: set[Any] = set()
        rows: list[Row] = []
        for senders in [(), *((k,) for k in sender_candidates(maps, name, gid, star))]:
            answer = decide(name, ch, found, gid, senders)
            if answer not in seen:
                seen.add(answer)
                rows.append((senders, answer))
        return rows

    groups = []
    for acc in account_keys.values():
        found = group_map(ch, acc)
        here = declared_ids([found])
        per_gid = []
        for gid in gids:
            # a group no id of which the account's map declares answers as any other group
            # does (by the map's "*" entry): "any other group" holds it
            if any(c in here or c.lower() in here for c in group_candidates(name, gid)):
                per_gid.append((gid, rows_of(found, gid)))
        per_gid.append((other, rows_of(found, other)))
        groups.append((acc, per_gid))
    return ChannelRows(accounts=accounts, account_keys=account_keys, gids=gids, other=other,
                       groups=groups)


def channel_summary(name: str, ch: Mapping[str, Any],
                    witnesses: Callable[[Any], int]) -> dict[str, Any]:
    """What ``toolc diff`` needs of a channel whose shards it leaves unread: its classes
    (per availability mode) and the tools the stripping layers of the stacks they reach test
    (``witnesses``: of one stack, as a bitset over the tables' tools)."""
    rows = channel_rows(name, ch)
    reached = 0
    for stack in rows.stacks():
        if not (isinstance(stack, int) and stack < 0):
            reached |= witnesses(stack)
    return {"classes": rows.count(), "witnesses": reached}
