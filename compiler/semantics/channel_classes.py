"""The channel dimension of the class space (``access.ClassSpace``): the message channels
availability tells apart, and the (channel, account, group, sender) classes, read from the group
layer's maps (``_channels``) or, where a side reads the trusted group id and the sender layer
(``trusted_channels``), from the distinct answers of representative requests."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from ..pipeline import groups
from ..rules.channels import athash_slug
from ..rules.context import (
    Context,
    SessionInfo,
    group_context,
    parse_session_key,
)
from ..rules.names import (
    group_candidates,
    normalize_channel,
    normalize_key,
)
from . import trusted_channels as tc
from .classes import Klass
from .tables_view import (
    _BUCKETS,
    _MISSING,
    OTHER,
    Record,
    TablesView,
    _guild_key,
    sender_keys,
)

_fresh = groups.fresh


class ChannelClasses:
    """The channel dimension's classes and lookups; :class:`access.ClassSpace` sets the state
    declared here."""

    views: list[TablesView]
    agents: list[Klass]
    owner: list[Klass]
    channels: list[Klass]
    gate_classes: list[str | None]
    gate_of: dict[str | None, int]
    selectors: list[tuple[bool, tuple[int, ...]]]
    _selector_index: dict[tuple[bool, tuple[int, ...]], int]
    _chan_stacks: list[list[tuple[tuple[int, ...], ...]]]
    _unread: dict[str, list[range]]
    _witnesses: int | None
    _sender_maps: list[list[Any]]
    _owner_matters: bool
    _trusted_index: dict[Any, int] | None

    @property
    def coupled(self) -> bool:
        """Whether a channel class's side depends on the agent or the owner (2026.9)."""
        return len(self.selectors) > 1

    def selector_stacks(self, sel: int = 0) -> list[tuple[tuple[int, ...], ...]]:
        """``channel_stacks(ci, sel)`` of every channel class, by class."""
        return [per_sel[sel] for per_sel in self._chan_stacks]

    def channel_stacks(self, ci: int, sel: int = 0) -> tuple[tuple[int, ...], ...]:
        """Per side, the stacks of channel class ``ci``'s channel side (group layer, and
        2026.9's sender layer) under selector ``sel``."""
        return self._chan_stacks[ci][sel]

    def group_witnesses(self) -> int:
        """Every tool a channel class's stripping layers test, on any side (computed once)."""
        if self._witnesses is None:
            out = 0
            for side, view in enumerate(self.views):
                for stack in self.side_stacks(side):
                    if stack >= 0:
                        out |= view.witnesses(stack)
                out |= self.unread_witnesses(side)
            self._witnesses = out
        return self._witnesses

    def side_stacks(self, side: int) -> set[int]:
        """Every stack some channel class reads on side ``side`` (under any selector)."""
        return {st for per_sel in self._chan_stacks for sides in per_sel for st in sides[side]}

    def selector_free(self, ci: int) -> bool:
        """Whether channel class ``ci``'s side is the same under every selector."""
        first = self._chan_stacks[ci][0]
        return all(st == first for st in self._chan_stacks[ci][1:])

    def selector(self, owner: int, maps: Sequence[int]) -> int:
        """The selector of an owner class and the per-side sender maps of an agent."""
        owner_true = bool(self._owner_matters) and self.owner[owner].key[0] is True
        return self._selector_index[(owner_true, tuple(maps))]

    def sender_map(self, side: int, rec: Record) -> int:
        """The index of an agent record's own toolsBySender map on one side (0: none)."""
        if not self._sender_maps:
            return 0
        return tc.map_id(self._sender_maps[side], rec.senders)

    def classify_channel(self, **context: Any) -> int:
        """The channel class of a request (``classify(...)[2]``) without choosing its agent:
        under 2026.9 a request that names no agent is refused where no agent is the default
        (``ownership: explicit``), yet its channel, account, group and sender still have a
        class."""
        ctx = Context.of(**context)
        return self._classify_channel(ctx, parse_session_key(ctx.session_key))

    def _classify_channel(self, ctx: Context, session: SessionInfo) -> int:
        if self._trusted_index is not None:
            found = self._trusted_index.get(self._trusted_signature(ctx))
            if found is None:
                raise LookupError(f"no class holds {ctx}: the class space is incomplete")
            return found
        spawned_channel, spawned_group = group_context(ctx.spawned_by)
        channel = normalize_channel(ctx.message_provider if ctx.message_provider is not None
                                    else session.channel or spawned_channel)
        group = ctx.group_id if ctx.group_id is not None else session.group or spawned_group
        if channel in self._unread and group is not None:
            raise LookupError(f"channel {channel} was not read: its classes are unknown")
        gi = self.gate(normalize_key(ctx.message_provider) or None)
        if channel is None or channel not in self._chan_index:
            return self._nogroup[("undeclared", gi)]
        if group is None:
            return self._nogroup[("declared", channel)]
        index = self._chan_index[channel]
        acc = index["accounts"][tuple(self._map_key(v, channel, ctx.account_id)
                                      for v in self.views)]
        senders = sender_keys(ctx.sender_id, ctx.sender_e164, ctx.sender_username,
                              ctx.sender_name)
        where = (ctx.group_space, ctx.group_channel)
        sig = tuple(v.group(channel, group, ctx.account_id, senders, where)
                    for v in self.views)
        if "keyed" in index:  # Slack, Discord: classes are the distinct group-layer answers
            found = index["keyed"].get((gi, acc), {}).get(sig)
            if found is None:
                raise LookupError(f"no class holds {ctx}: the class space is incomplete")
            return int(found)
        # the literal group, then the ids the channel's resolver tries, then any group
        candidates = [group.strip(), *group_candidates(channel, group)]
        gids = [g for g in candidates if g in index["gids"]] + [index["other"]]
        gids += sorted(g for g in index["gids"] if g not in gids)
        for gid in gids:
            rows = index["rows"].get((gi, acc, gid), {})
            if sig in rows:
                return int(rows[sig])
        raise LookupError(f"no class holds {ctx}: the class space is incomplete")

    # 2026.9's group and sender layers (toolc.semantics.trusted_channels) --------------------------
    def _trusted_signature(self, ctx: Context) -> tuple[Any, ...]:
        """(gate, per selector per side the channel side's stacks) of a request."""
        senders = sender_keys(ctx.sender_id, ctx.sender_e164, ctx.sender_username,
                              ctx.sender_name)
        parsed = [tc.parse_trusted(v, ctx, senders) if v.trusted
                  else tc.listed_side(v, ctx, senders) for v in self.views]
        per_sel = []
        for owner, maps in self.selectors:
            per_sel.append(tuple(
                tc.trusted_side(v, req, owner, self._sender_maps[side][maps[side]])
                if isinstance(req, tc.TrustedRequest) else req
                for side, (v, req) in enumerate(zip(self.views, parsed, strict=True))))
        return (self.gate(normalize_key(ctx.message_provider) or None), tuple(per_sel))

    def _trusted_channels(self) -> list[Klass]:
        """Channel classes when a side follows 2026.9: one per distinct signature of the
        representative requests (``trusted_channels``), labelled from its first representative."""
        views = self.views
        self._sender_maps = tc.sender_maps(views)
        entries = tc.has_sender_rules(views)  # the owner on webchat skips them
        self._owner_matters = entries and any(v.trusted for v in views)
        combos = sorted({tuple(self.sender_map(side, v.record(k.key[0])[1])
                               for side, v in enumerate(views)) for k in self.agents})
        default = (0,) * len(views)
        owners = [False, True] if self._owner_matters else [False]
        sels = [(o, m) for o in owners for m in [default, *[c for c in combos if c != default]]]
        self.selectors = sels
        self._selector_index = {sel: i for i, sel in enumerate(sels)}
        declared = sorted({c for v in views for c in v.channels})
        mixed = any(not v.trusted for v in views)
        gids = {ch: tc.group_ids(views, ch) for ch in declared}
        other = _fresh([g for ids in gids.values() for g in ids])
        messages: list[str | None] = [None, *(g for g in self.gate_classes if g is not None),
                                      *tc.typed_channels(views)]
        if self._owner_matters:
            messages.append("webchat")
        if mixed:
            messages += declared
        messages = list(dict.fromkeys(messages))
        spawned = [None, *(f"{ch}:group:{g}" for ch in declared for g in [*gids[ch], other])]
        callers: list[str | None] = [None]
        if mixed:
            callers += [*sorted({g for ids in gids.values() for g in ids}), other]
        senders = tc.sender_reps(views)
        fresh_acc = _fresh(declared, OTHER)
        bases: list[dict[str, Any]] = []
        for m in messages:
            for p in spawned:
                for g in callers:
                    chans = {p.partition(":group:")[0]} if p else set()
                    if mixed and m is not None and (g is not None or p is not None):
                        chans.add(normalize_channel(m) or "")
                    accs: list[str | None] = [None]
                    for ch in sorted(c for c in chans if c in declared):
                        accs += [a for a in tc.accounts(views, ch, fresh_acc) if a not in accs]
                    for acc in accs:
                        flags = {k: v for k, v in (("message_provider", m), ("spawned_by", p),
                                                   ("group_id", g), ("account_id", acc))
                                 if v is not None}
                        bases.append(flags)
        if mixed:  # 2026.3 Slack/Discord classes also read the group's space and name
            for k in self._channels():
                flags = dict(k.flags)
                if "group_space" in flags or "group_channel" in flags:
                    bases += [flags, *({**flags, "spawned_by": p} for p in spawned[1:]
                                       if "spawned_by" not in flags)]
        several = {ch: len(tc.accounts(views, ch, fresh_acc)) > 1 for ch in declared}
        out: list[Klass] = []
        index: dict[Any, int] = {}
        for base in bases:
            only = {k: v for k, v in base.items() if not k.startswith("sender_")}
            for sender in senders:
                flags = {**only, **dict(tc.sender_flags(sender))}
                sig = self._trusted_signature(Context.of(**flags))
                if sig in index:
                    continue
                index[sig] = len(out)
                pch = (flags.get("spawned_by") or "").partition(":group:")[0]
                label, group = tc.class_label(flags, other,
                                              several_accounts=several.get(pch, False),
                                              any_senders=entries)
                default_stacks = sig[1][0]
                out.append(Klass(label=label, flags=tuple(flags.items()), key=sig,
                                 group=group,
                                 stacks=tuple(st[0] if st else None for st in default_stacks)))
                self._chan_stacks.append(list(sig[1]))
        self._trusted_index = index
        return out

    # message channel for availability -------------------------------------------------------
    def _gate_classes(self) -> tuple[list[str | None], dict[str | None, int]]:
        """Message channels that availability tells apart: one representative each."""
        names: set[str] = set()
        for v in self.views:
            names.update(v.channels)
            for _, _, _, channels, excluded in v.gates:
                names.update(channels or ())
                names.update(excluded or ())
        reps: list[str | None] = []
        sigs: dict[Any, int] = {}
        of: dict[str | None, int] = {}
        for name in [None, *sorted(names)]:
            sig = tuple(tuple((channels is None or name in channels)
                              and (excluded is None or name not in excluded)
                              for _, _, _, channels, excluded in v.gates) for v in self.views)
            if sig not in sigs:
                sigs[sig] = len(reps)
                reps.append(name)
            of[name] = sigs[sig]
        return reps, of

    def gate(self, channel: str | None) -> int:
        return self.gate_of.get(channel, 0)

    # channel, account, group, sender --------------------------------------------------------
    def _channels(self) -> list[Klass]:
        """No-group classes, then each declared channel's (account, group, sender) classes.

        Without a group layer, classes differ only by availability: each declared channel
        has "channel X, no group"; requests on no channel or an undeclared one fall in one
        class per availability gate. Group classes exist per gate mode: the channel given
        explicitly, or (where availability tells them apart) only through the session key
        or ``spawned_by``, whose channel does not count for availability."""
        out: list[Klass] = []
        self._chan_index: dict[str, Any] = {}
        self._nogroup: dict[Any, int] = {}
        declared = sorted({c for v in self.views for c in v.channels})
        members: dict[int, list[str | None]] = defaultdict(list)
        for name, gi in sorted(self.gate_of.items(), key=lambda kv: (kv[0] is not None,
                                                                     kv[0] or "")):
            members[gi].append(name)
        for gi in range(len(self.gate_classes)):
            rep = next((n for n in members[gi] if n not in declared), _MISSING)
            if rep is _MISSING:
                continue
            label = "no declared channel" if rep is None else f"channel {rep} (not declared)"
            flags = () if rep is None else (("message_provider", rep),)
            self._nogroup[("undeclared", gi)] = len(out)
            out.append(Klass(label=label, flags=flags, key=(gi, None),
                             group=("no declared channel",),
                             stacks=tuple(None for _ in self.views)))
        for name in declared:
            self._nogroup[("declared", name)] = len(out)
            out.append(Klass(label=f"channel {name}, no group",
                             flags=(("message_provider", name),), key=(self.gate(name), None),
                             group=(f"channel {name}",),
                             stacks=tuple(None for _ in self.views)))
        for name in declared:
            if all(name in v.unread for v in self.views):
                self._unread_channel(name, out)
            else:
                self._channel(name, out)
        return out

    def _channel(self, name: str, out: list[Klass]) -> None:
        chans = [v.channels.get(name) for v in self.views]
        if any(ch is not None and ch["rule"]["kind"] != "groups" for ch in chans):
            self._keyed_channel(name, chans, out)
            return
        gate_modes = self._gate_modes(name)
        if chans[0] is not None and all(ch is chans[0] for ch in chans[1:]):
            self._shared_channel(name, chans[0], gate_modes, out)
            return
        per_view_maps = _maps_per_view(self, name)
        maps = [m for view_maps in per_view_maps for m in view_maps]
        accounts = groups.account_candidates(
            sorted({a for ch in chans if ch for a in ch["accounts"]}))
        gids = sorted({g for m in maps for g in m["exact"] if g != "*"})
        other_group = _fresh(gids)
        acc_sigs: dict[Any, str | None] = {}
        for acc in accounts:
            acc_sigs.setdefault(tuple(self._map_key(v, name, acc) for v in self.views), acc)
        acc_classes = list(acc_sigs.values())
        rows_index: dict[Any, dict[Any, int]] = {}
        self._chan_index[name] = {"accounts": acc_sigs, "gids": set(gids), "other": other_group,
                                  "rows": rows_index}
        candidates: dict[str, list[list[tuple[str, str]]]] = {}

        def rows_of(gid: str, found: list[Any]) -> list[tuple[tuple[tuple[str, str], ...], Any]]:
            keys = candidates.get(gid)
            if keys is None:
                keys = candidates[gid] = [groups.sender_candidates(m, name, gid)
                                          for m in per_view_maps]
            return self._sender_rows(keys, found, name, gid)

        for acc in acc_classes:
            acc_label = self._account_label(acc, acc_classes)
            found = [v.group_map(name, acc) for v in self.views]
            here = groups.declared_ids(found)
            other_rows = rows_of(other_group, found)
            other_sigs = {sig for _, sig in other_rows}
            for gid in [*gids, other_group]:
                rows = other_rows if gid == other_group else rows_of(gid, found)
                if gid != other_group and not any(
                        c in here or c.lower() in here for c in group_candidates(name, gid)) \
                        and {sig for _, sig in rows} <= other_sigs:
                    # a group the account's own map does not declare: "any other group"
                    # of this account holds it (classify falls back to it)
                    continue
                self._add_group(name, gate_modes, acc, acc_label, gid, gid == other_group,
                                rows, rows_index, out)

    def _unread_channel(self, name: str, out: list[Klass]) -> None:
        """A channel a diff left unread: as many classes as it has, each standing for one
        it cannot name; they are alike on both sides, so no change can be found in them."""
        unread = self.views[0].unread[name]
        for gi, session_only in self._gate_modes(name):
            head = f"channel {name}" + (" (from the session key only)" if session_only else "")
            k = Klass(label=f"{head}, one of its {unread.classes:,} classes (not read)",
                      key=(gi, None), stacks=tuple(None for _ in self.views))
            self._unread.setdefault(name, []).append(range(len(out), len(out) + unread.classes))
            out += [k] * unread.classes

    def read_classes(self) -> Iterator[int]:
        """The channel classes of channels that were read, ascending."""
        spans = sorted((span for spans in self._unread.values() for span in spans),
                       key=lambda span: span.start)
        at = 0
        for span in spans:
            yield from range(at, span.start)
            at = span.stop
        yield from range(at, len(self.channels))

    def unread_classes(self) -> int:
        """The channel classes of unread channels, as bits."""
        out = 0
        for spans in self._unread.values():
            for span in spans:
                out |= ((1 << len(span)) - 1) << span.start
        return out

    def unread_witnesses(self, side: int) -> int:
        """What the stripping layers of the stacks the unread channels' classes reach test."""
        out = 0
        for name in self._unread:
            out |= self.views[side].unread[name].witnesses
        return out

    def _gate_modes(self, name: str) -> list[tuple[int, bool]]:
        """A channel's availability modes: given explicitly, and (where availability tells
        them apart) reached only through the session key or ``spawned_by``."""
        modes = [(self.gate(name), False)]
        if self.gate(None) != self.gate(name):
            modes.append((self.gate(None), True))
        return modes

    def _shared_channel(self, name: str, ch: dict[str, Any], gate_modes: list[tuple[int, bool]],
                        out: list[Klass]) -> None:
        """A channel every side holds as one object (a diff's channel whose shards are the
        same on both sides): one side's classes (``pipeline.groups.channel_rows``), each
        answer standing for every side."""
        rows = groups.channel_rows(name, ch)
        n = len(self.views)
        acc_sigs = {(key,) * n: acc for key, acc in rows.account_keys.items()}
        acc_classes = list(acc_sigs.values())
        rows_index: dict[Any, dict[Any, int]] = {}
        self._chan_index[name] = {"accounts": acc_sigs, "gids": set(rows.gids),
                                  "other": rows.other, "rows": rows_index}
        for acc, per_gid in rows.groups:
            acc_label = self._account_label(acc, acc_classes)
            for gid, single in per_gid:
                every = [(senders, (answer,) * n) for senders, answer in single]
                self._add_group(name, gate_modes, acc, acc_label, gid, gid == rows.other,
                                every, rows_index, out)

    def _add_group(self, name: str, gate_modes: list[tuple[int, bool]], acc: str | None,
                   acc_label: str, gid: str, other: bool,
                   rows: list[tuple[tuple[tuple[str, str], ...], Any]],
                   rows_index: dict[Any, dict[Any, int]], out: list[Klass]) -> None:
        group_label = "any other group" if other else f"group {gid}"
        for gi, session_only in gate_modes:
            index = rows_index.setdefault((gi, acc, gid), {})
            for i, (_, sig) in enumerate(rows):
                index[sig] = len(out) + i
            out += self._group_classes(name, gi, session_only, acc, acc_label, gid,
                                       group_label, rows)

    def _keyed_channel(self, name: str, chans: list[dict[str, Any] | None],
                       out: list[Klass]) -> None:
        """A channel whose rule tries several keys (Slack, Discord): representative requests
        built from every declared key (and the names that reach it) plus fresh values; one
        class per distinct answer of the group layer on every side."""
        accounts = groups.account_candidates(
            sorted({a for ch in chans if ch for a in ch["accounts"]}))
        acc_sigs: dict[Any, str | None] = {}
        for acc in accounts:
            acc_sigs.setdefault(tuple(self._map_key(v, name, acc) for v in self.views), acc)
        acc_classes = list(acc_sigs.values())
        reps = _keyed_values([ch for ch in chans if ch is not None])
        gate_modes = [(self.gate(name), False)]
        if self.gate(None) != self.gate(name):
            gate_modes.append((self.gate(None), True))
        keyed: dict[Any, dict[Any, int]] = {}
        self._chan_index[name] = {"accounts": acc_sigs, "keyed": keyed}
        for acc in acc_classes:
            acc_label = self._account_label(acc, acc_classes)
            rows: dict[Any, tuple[str, str | None, str | None, tuple[tuple[str, str], ...]]] = {}
            maps = [v.group_map(name, acc) for v in self.views]
            for gid in reps["gids"]:
                for space in reps["spaces"]:
                    for gchan in self._names(name, chans, maps, reps, gid, space):
                        for senders in reps["senders"]:
                            sig = tuple(v.group(name, gid, acc, senders, (space, gchan))
                                        for v in self.views)
                            rows.setdefault(sig, (gid, space, gchan, senders))
            for gi, session_only in gate_modes:
                index = keyed.setdefault((gi, acc), {})
                for sig, rep in rows.items():
                    index[sig] = len(out)
                    out.append(self._keyed_class(name, gi, session_only, acc, acc_label, rep,
                                                 sig, reps["other"]))

    @staticmethod
    def _names(name: str, chans: list[dict[str, Any] | None], maps: list[Any],
               reps: dict[str, Any], gid: str, space: str | None) -> list[str | None]:
        """The channel names worth trying at one group id and space: none where every side
        finds the id itself (the id is tried first), else the names of the keys that every
        side's chosen map holds (a name reaching no key acts like any other name)."""
        if reps["spaces"] == [None]:  # Slack: the channel map is the account's or channel's
            inner = [m[1]["exact"] if m is not None else {} for m in maps]
            found = all(gid == gid.strip() and gid in m for m in inner)
        else:  # Discord: the chosen guild's channels
            inner = []
            for ch in chans:
                key = _guild_key(ch, ch["rule"], gid, space) if ch is not None else None
                guild = ch["spaces"]["entries"][key] if ch is not None and key else None
                inner.append(guild[2]["exact"] if guild and guild[2] else {})
            found = all(gid in m for m in inner)
        if found:
            return [None]
        keys = {k for m in inner for k in m}
        names = {k.removeprefix("#") for k in keys} | keys
        return [None, *sorted(names - {""}), reps["other"]]

    def _keyed_class(self, name: str, gi: int, session_only: bool, acc: str | None,
                     acc_label: str, rep: tuple[str, str | None, str | None,
                                                tuple[tuple[str, str], ...]],
                     sig: Any, other: str) -> Klass:
        gid, space, gchan, senders = rep
        head = f"channel {name}" + (" (from the session key only)" if session_only else "")
        where = [f"group {gid}" if gid != other else "any other group"]
        if space is not None:
            where.append(f"space {space}" if space != other else "any other space")
        if gchan is not None:
            where.append(f"channel name {gchan}" if gchan != other
                         else "any other channel name")
        group_label = ", ".join(where)
        parts = [head, *([acc_label] if acc_label else []), group_label]
        if senders:
            parts.append(" and ".join(f"sender {k}:{v}" for k, v in senders))
        flags: list[tuple[str, Any]] = [
            ("spawned_by", f"{name}:group:{gid}") if session_only
            else ("message_provider", name)]
        if acc is not None:
            flags.append(("account_id", acc))
        flags.append(("group_id", gid))
        if space is not None:
            flags.append(("group_space", space))
        if gchan is not None:
            flags.append(("group_channel", gchan))
        flags += [(SENDER_FLAGS[k], v) for k, v in senders]
        return Klass(label=", ".join(parts), flags=tuple(flags),
                     key=(gi, (name, gid, acc, senders, space, gchan)),
                     group=(head, acc_label, group_label),
                     stacks=tuple(stack for _, stack in sig))

    def _group_classes(self, name: str, gi: int, session_only: bool, acc: str | None,
                       acc_label: str, gid: str, group_label: str,
                       rows: list[tuple[tuple[tuple[str, str], ...], Any]]) -> list[Klass]:
        """The classes of one group of one account in one gate mode, one per row."""
        head = f"channel {name}" + (" (from the session key only)" if session_only else "")
        parts = [head, acc_label, group_label] if acc_label else [head, group_label]
        flags: list[tuple[str, Any]] = [
            ("spawned_by", f"{name}:group:{gid}") if session_only else ("message_provider", name)]
        if acc is not None:
            flags.append(("account_id", acc))
        flags.append(("group_id", gid))
        group = (head, acc_label, group_label)
        several = len(rows) > 1
        base, base_flags = ", ".join(parts), tuple(flags)
        out = []
        for senders, sig in rows:
            sender_label = ""
            label = base
            if several:
                sender_label = ("any other sender" if not senders else
                                " and ".join([f"sender {k}:{v}" for k, v in senders]))
                label = f"{label}, {sender_label}"
            # classes that reach the "*" entry on every side fold into one phrase
            fallback = None
            if all(d is not None and d[1] == "*" for d, _ in sig):
                fallback = (head, acc_label, sender_label)
            out.append(Klass(
                label=label,
                flags=(*base_flags, *[(SENDER_FLAGS[k], v) for k, v in senders]) if senders
                else base_flags,
                key=(gi, (name, gid, acc, senders)), group=group, fallback=fallback,
                stacks=tuple([stack for _, stack in sig])))
        return out

    def _sender_rows(self, per_view: list[list[tuple[str, str]]], found: list[Any], name: str,
                     gid: str) -> list[tuple[tuple[tuple[str, str], ...], Any]]:
        """Senders that the group layer tells apart at one location, one representative
        each: no sender, each rule's key and, comparing builds, each pair of keys of
        different kinds (one build may match a sender's id where the other matches its
        name)."""
        keys = sorted(set().union(*per_view))
        reps: list[tuple[tuple[str, str], ...]] = [(), *((k,) for k in keys)]
        if any(p != per_view[0] for p in per_view[1:]):
            # with the same keys everywhere every build matches a sender's first key
            order = list(_BUCKETS)
            reps += [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:]
                     if order.index(a[0]) < order.index(b[0])]
        seen: dict[Any, int] = {}
        rows: list[tuple[tuple[tuple[str, str], ...], Any]] = []
        for senders in reps:
            sig = tuple(v.decide(name, f, gid, senders)
                        for v, f in zip(self.views, found, strict=True))
            if sig not in seen:
                seen[sig] = len(rows)
                rows.append((senders, sig))
        return rows

    @staticmethod
    def _map_key(v: TablesView, name: str, acc: str | None) -> Any:
        return groups.map_key(v.channels.get(name), acc)

    @staticmethod
    def _account_label(acc: str | None, classes: list[str | None]) -> str:
        if len(classes) == 1:
            return ""
        if acc is None:
            return "any other account"
        return f"account {acc}"


def _keyed_values(chans: list[dict[str, Any]]) -> dict[str, Any]:
    """Representative group ids, spaces, channel names and senders of keyed channels: every
    declared key, the names and slugs that reach it, and a fresh value of each."""
    maps = [m for ch in chans for m in (ch["groups"], *ch["accounts"].values()) if m]
    outer: list[str] = []
    slugs: list[str] = []
    for ch in chans:
        if ch["spaces"]:
            outer += ch["spaces"]["entries"]
            slugs += [e[1] for e in ch["spaces"]["entries"].values() if e[1]]
            maps += [e[2] for e in ch["spaces"]["entries"].values() if e[2]]
    keys = sorted({k for m in maps for k in m["exact"]})  # "*" too: group id "*" is a Discord key
    other = _fresh([*keys, *outer, *slugs])
    names = {k.removeprefix("#") for k in keys} | set(keys)
    senders: set[tuple[str, str]] = set()
    entries = [e for m in maps for e in m["exact"].values()]
    entries += [e[0] for ch in chans if ch["spaces"] for e in ch["spaces"]["entries"].values()]
    for entry in entries:
        if len(entry) > 1:
            for kind, bucket in _BUCKETS.items():
                senders.update((kind, value) for value in entry[bucket])
    ordered = sorted(senders)
    order = list(_BUCKETS)
    pairs = [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1:]
             if order.index(a[0]) < order.index(b[0])] if len(chans) > 1 else []
    spaces: list[str | None] = [None]
    if any(ch["spaces"] is not None for ch in chans):
        spaces += sorted({*(k for k in outer if k != "*"), *(athash_slug(k) for k in outer),
                          *slugs, other} - {"", "*"})
    return {"gids": [*keys, other], "spaces": spaces, "other": other,
            "names": [None, *sorted(names - {""}), other],
            "senders": [(), *((k,) for k in ordered), *pairs]}


def _maps_per_view(space: ChannelClasses, name: str) -> list[list[dict[str, Any]]]:
    return [groups.channel_maps(v.channels.get(name)) for v in space.views]


SENDER_FLAGS = {"id": "sender_id", "e164": "sender_e164", "username": "sender_username",
                 "name": "sender_name"}

