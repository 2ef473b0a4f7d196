"""The exact access delta between two builds: per tool, the classes that gain and lose it.

Both builds' tables are read into one shared tool index and one class space (the common
refinement of both sides' classes); nothing is enumerated as a product. ``R`` is every tool
that can change anywhere (from comparing the tables entry by entry), ``R_C`` what the group
layers that differ can change. A class can only change where one of its parts changed:

* agents whose agent side differs (**touched** agents) are evaluated in full, on ``R``: at
  channel classes whose group layer is alike, from per-tool marginals over the channel side
  (the two sides meet only through the present set and mentions, see ``factored``); at the
  others, pairwise;
* every agent is evaluated at channel classes whose group layer differs, on ``R_C``.

Everything is accumulated bit-parallel over tools, per agent: where each tool is gained,
lost or visible on both sides, and (bit-sliced) how many classes each holds. A tool gained
everywhere it changes in an agent, and nowhere visible on both sides there, is "gained by
agent X" in one line; other cases fall back to merging the agent's pieces. Changes that come
from group layers are described by channel class, widened over agents where nothing
contradicts it.
"""

from __future__ import annotations

import sys
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..semantics.access import DIMS, NO_LAYER, ClassSpace, Stack, TablesView
from ..semantics.factored import (
    Content,
    Cube,
    Evaluator,
    XState,
    assign,
    bit_indices,
    cube_size,
    eval_content,
    full_cube,
    gate_channels,
    index_bits,
    merge_cubes,
    result,
    widen_exact,
)


@dataclass(slots=True)
class ToolChange:
    """Where one tool is gained and lost: lines (cubes) with the classes each one holds.

    A line may also cover classes where neither side shows the tool (so that one line can
    say "agent viewer"); its count is only the classes that changed."""

    tool: str
    gained: list[tuple[Cube, int]] = field(default_factory=list)
    lost: list[tuple[Cube, int]] = field(default_factory=list)

    @property
    def gained_count(self) -> int:
        return sum(n for _, n in self.gained)

    @property
    def lost_count(self) -> int:
        return sum(n for _, n in self.lost)


Piece = tuple[Cube, int]


class BitCounter:
    """Weighted per-bit counts of many bitsets, bit-sliced: plane j holds bit j of every
    tool's count, so adding a bitset costs a few big-integer operations, not one per tool."""

    __slots__ = ("planes",)

    def __init__(self) -> None:
        self.planes: list[int] = []

    def add(self, bits: int, weight: int) -> None:
        j = 0
        while weight:
            if weight & 1:
                self._add_at(bits, j)
            weight >>= 1
            j += 1

    def _add_at(self, bits: int, j: int) -> None:
        carry, planes = bits, self.planes
        while carry:
            while j >= len(planes):
                planes.append(0)
            p = planes[j]
            planes[j] = p ^ carry
            carry &= p
            j += 1

    def merge(self, other: BitCounter) -> None:
        for j, plane in enumerate(other.planes):
            self._add_at(plane, j)

    def counts(self) -> dict[int, int]:
        """Every nonzero count, by bit."""
        if len(self.planes) > _LANE_BITS:  # counts past a lane: one bit at a time
            out: dict[int, int] = defaultdict(int)
            for j, plane in enumerate(self.planes):
                for i in bit_indices(plane):
                    out[i] += 1 << j
            return dict(out)
        # every plane spread to one 64-bit lane per bit (a byte at a time, by table), the
        # lanes summed as one integer and read back as an array: C loops, not one per bit
        size = max((p.bit_length() + 7) // 8 for p in self.planes) if self.planes else 0
        total = 0
        for j, plane in enumerate(self.planes):
            if plane:
                lanes = b"".join([_SPREAD[b] for b in plane.to_bytes(size, "little")])
                total += int.from_bytes(lanes, "little") << j
        values = array("Q", total.to_bytes(size * 8 * 8, "little"))
        if sys.byteorder != "little":
            values.byteswap()
        return {i: n for i, n in enumerate(values) if n}


_LANE_BITS = 64
# byte -> its eight bits as eight little-endian 64-bit lanes
_SPREAD = [b"".join((b >> i & 1).to_bytes(8, "little") for i in range(8)) for b in range(256)]


# -- what can differ -------------------------------------------------------------------------
class Changes:
    """Tools whose visibility can differ between two builds, entry by entry: an
    over-approximation (0: the builds grant exactly the same everywhere)."""

    def __init__(self, space: ClassSpace) -> None:
        self.space = space
        vb, vh = self.vb, self.vh = space.views
        width = max(len(vb.tools), len(vh.tools), _own(vb).bit_length(),
                    _own(vh).bit_length(), 1)
        self.everything = (1 << width) - 1
        self._stack_diffs: dict[tuple[int | None, int | None], int] = {}
        self.same_inline = vb.same_inline(vh)
        self.present = self._presence()
        self.profiles_differ = self._profiles_differ()

    def stack_diff(self, ib: int | None, ih: int | None) -> int:
        """Tools on which stack ``ib`` (base) and ``ih`` (head) can decide differently."""
        if ib == ih and self.same_inline and ib is not None and self.vb.is_inline(ib):
            return 0  # one shard stack both sides hold
        key = (ib, ih)
        d = self._stack_diffs.get(key)
        if d is None:
            sb = NO_LAYER if ib is None or ib < 0 else self.vb.stack(ib)
            sh = NO_LAYER if ih is None or ih < 0 else self.vh.stack(ih)
            d = self._stack_diffs[key] = _stack_diff(sb, sh, self.everything)
        return d

    def _presence(self) -> int:
        vb, vh, every = self.vb, self.vh, self.everything
        diff = _own(vb) ^ _own(vh)
        for a, b in ((vb.always, vh.always), (vb.non_optional, vh.non_optional),
                     (vb.non_owner, vh.non_owner)):
            diff |= (a ^ b) & every
        if vb.owner_unknown_keeps != vh.owner_unknown_keeps:  # unset changes class (2026.9)
            diff |= ~(vb.non_owner & vh.non_owner) & every
        if vb.gates != vh.gates:
            for v in (vb, vh):
                for bits, *_ in v.gates:
                    diff |= bits
        if vb.ap_bit != vh.ap_bit or vb.ap_variants != vh.ap_variants:
            diff |= vb.ap_bit | vh.ap_bit
        return diff

    def agent_diff(self, agent: str | None) -> int:
        """What an agent's own entries (record stack, sandbox, apply_patch choice, its
        byProvider entries) can change."""
        vb, vh = self.vb, self.vh
        (_, rb), (_, rh) = vb.record(agent), vh.record(agent)
        diff = self.stack_diff(rb.stack, rh.stack) | self.stack_diff(rb.sandbox, rh.sandbox)
        if vb.sandbox_modes != vh.sandbox_modes:
            # a session sandboxed on one side only meets the sandbox layer on that side
            diff |= self._touched(vb, rb.sandbox) | self._touched(vh, rh.sandbox)
        ap_b = vb.ap_variants[rb.ap] if vb.ap_variants else None
        ap_h = vh.ap_variants[rh.ap] if vh.ap_variants else None
        if ap_b != ap_h:
            diff |= vb.ap_bit | vh.ap_bit
        diff |= self._bp_diff(rb.bp, rh.bp)
        if self.profiles_differ:
            for v, rec in ((vb, rb), (vh, rh)):
                for e in rec.bp.values():
                    diff |= self._profile_touched(v, e)
        return diff & self.everything

    def shared_diff(self) -> int:
        """What changes every agent alike: presence, global byProvider entries and provider
        profiles, subagent layers."""
        vb, vh = self.vb, self.vh
        diff = self.present
        if self.profiles_differ:
            for v in (vb, vh):
                for e in v.global_bp.values():
                    diff |= self._profile_touched(v, e)
        diff |= self._bp_diff(vb.global_bp, vh.global_bp)
        if vb.leaf_depth != vh.leaf_depth:
            for v, (a, b) in ((vb, vb.subagent), (vh, vh.subagent)):
                diff |= self._touched(v, a) | self._touched(v, b)
        diff |= self.stack_diff(vb.subagent[0], vh.subagent[0])
        diff |= self.stack_diff(vb.subagent[1], vh.subagent[1])
        if self.present:
            # a changed present set can flip any stripping layer whose witness it touches
            for v in (vb, vh):
                for i in v.stack_ids():
                    for w, a, d in v.stack(i).layers:
                        if w & self.present:
                            diff |= (a ^ d) & self.everything
        return diff & self.everything

    def _touched(self, v: TablesView, index: int | None) -> int:
        if index is None or index < 0:
            return 0
        st = v.stack(index)
        bits = (~st.fixed & self.everything) | st.mention
        for _, a, d in st.layers:
            bits |= (~a | ~d) & self.everything
        return bits

    def _profiles_differ(self) -> bool:
        def rows(v: TablesView) -> list[list[Stack | None]]:
            return [[None if i < 0 else v.stack(i) for i in row] for row in v.provider_profiles]
        return rows(self.vb) != rows(self.vh)

    def _profile_touched(self, v: TablesView, entry: list[int] | None) -> int:
        if entry is None or entry[1] < 0:
            return 0
        out = 0
        for i in v.provider_profiles[entry[1]]:
            out |= self._touched(v, i)
        return out

    def _bp_diff(self, eb: dict[str, list[int]], eh: dict[str, list[int]]) -> int:
        vb, vh = self.vb, self.vh
        d = 0
        same_keys = set(eb) == set(eh)
        for key in sorted(set(eb) | set(eh)):
            b, h = eb.get(key), eh.get(key)
            if not same_keys or b is None or h is None:
                d |= self._touched(vb, None if b is None else b[0])
                d |= self._touched(vh, None if h is None else h[0])
                d |= self._profile_touched(vb, b) | self._profile_touched(vh, h)
                continue
            d |= self.stack_diff(b[0], h[0])
            if b[1:] != h[1:]:
                d |= self._profile_touched(vb, b) | self._profile_touched(vh, h)
        return d


def _stack_diff(sb: Stack, sh: Stack, everything: int) -> int:
    if sb == sh:
        return 0
    d = ((sb.mention ^ sh.mention) | (sb.fixed ^ sh.fixed)) & everything
    pad = (-1, everything, everything)
    lb, lh = list(sb.layers), list(sh.layers)
    width = max(len(lb), len(lh))
    for (wb, ab, db), (wh, ah, dh) in zip(lb + [pad] * (width - len(lb)),
                                          lh + [pad] * (width - len(lh)), strict=True):
        d |= ((ab ^ ah) | (db ^ dh)) & everything
        if wb != wh:
            d |= ((ab ^ db) | (ah ^ dh)) & everything
    return d


def _own(v: TablesView) -> int:
    return v.map_bits((1 << len(v.tools)) - 1)


# -- the channel side of a gate --------------------------------------------------------------
class ChannelSide:
    """The channel classes of one gate whose group layer is alike on both sides, grouped by
    content: per present set, which tools some class passes (with and without a mention of
    the tool by the group layer), and how many classes pass each tool. Contents without
    stripping layers do not depend on the present set and are counted once."""

    def __init__(self, groups: Sequence[tuple[tuple[Content, ...], list[int]]], r: int) -> None:
        self.r = r
        self.groups = [(contents[0], members, len(members)) for contents, members in groups]
        self.cbits = index_bits([ci for _, members, _ in self.groups for ci in members])
        self.varying = [g for g in self.groups if g[0][2]]
        # the varying contents read the present set only through their layers' witnesses:
        # present sets alike on those are evaluated (and counted) once
        self._witnesses = sorted({w for c, _, _ in self.varying for w, _, _ in c[2]})
        self._fixed_masks: tuple[int, int, int] | None = None
        self._fixed_counts: tuple[dict[int, int], dict[int, int]] | None = None
        self._masks: dict[tuple[bool, ...], tuple[int, int, int]] = {}
        self._counts: dict[tuple[bool, ...], tuple[dict[int, int], dict[int, int]]] = {}

    def key(self, present: int) -> tuple[bool, ...]:
        """What of ``present`` the contents see: present sets with one key are alike here."""
        return tuple(bool(w & present) for w in self._witnesses)

    def _evaluate(self, groups: Iterable[tuple[Content, list[int], int]], present: int
                  ) -> tuple[tuple[int, int, int], tuple[dict[int, int], dict[int, int]]]:
        e = m = n = 0
        ce, cm = BitCounter(), BitCounter()
        for c, _, count in groups:
            bits = eval_content(c, present) & self.r
            e |= bits
            m |= bits & c[0]
            n |= bits & ~c[0]
            ce.add(bits, count)
            if bits & c[0]:
                cm.add(bits & c[0], count)
        return (e, m, n), (ce.counts(), cm.counts())

    def _fixed(self) -> None:
        if self._fixed_masks is None:
            fixed = [g for g in self.groups if not g[0][2]]
            self._fixed_masks, self._fixed_counts = self._evaluate(fixed, 0)

    def masks(self, present: int) -> tuple[int, int, int]:
        """(tools some class passes, ... passes and mentions, ... passes without a mention)."""
        key = self.key(present)
        hit = self._masks.get(key)
        if hit is None:
            self._fixed()
            assert self._fixed_masks is not None
            (e, m, n), _ = self._evaluate(self.varying, present)
            fe, fm, fn = self._fixed_masks
            hit = self._masks[key] = (e | fe, m | fm, n | fn)
        return hit

    def fixed_counts(self) -> tuple[dict[int, int], dict[int, int]]:
        """Per tool, classes of the present-independent contents passing (and mentioning) it."""
        self._fixed()
        assert self._fixed_counts is not None
        return self._fixed_counts

    def varying_counts(self, present: int) -> tuple[dict[int, int], dict[int, int]]:
        """The same for the contents whose stripping layers test the present set."""
        key = self.key(present)
        hit = self._counts.get(key)
        if hit is None:
            _, hit = self._evaluate(self.varying, present)
            self._counts[key] = hit
        return hit

    def counts(self, present: int) -> tuple[dict[int, int], dict[int, int]]:
        (fe, fm), (ve, vm) = self.fixed_counts(), self.varying_counts(present)
        if not ve and not vm:
            return fe, fm
        return ({t: fe.get(t, 0) + ve.get(t, 0) for t in fe.keys() | ve.keys()},
                {t: fm.get(t, 0) + vm.get(t, 0) for t in fm.keys() | vm.keys()})

    def mentioning(self, present: int, t: int) -> int:
        """The classes that pass and mention ``t``."""
        out: list[int] = []
        for c, members, _ in self.groups:
            if c[0] >> t & 1 and eval_content(c, present) >> t & 1:
                out += members
        return index_bits(out)


# -- per-agent accumulation ------------------------------------------------------------------
@dataclass(slots=True)
class _Unit:
    """Some of an agent's classes: a state at some channel classes, with per tool whether it
    is gained, lost, visible on both sides or absent on both somewhere in it."""

    xs: XState
    cbits: int
    gained: int
    lost: int
    both: int
    tools: int  # the tools the unit speaks for (outside them, another unit does)
    side: ChannelSide | None = None  # marginal units: the alike channel classes
    kinds: tuple[int, ...] = ()  # marginal units: the six kind bitsets (see _kinds)
    present: int = 0


@dataclass(slots=True)
class _AgentAcc:
    gained: int = 0
    lost: int = 0
    bad_gained: int = 0  # tools lost or visible on both sides somewhere: no "agent X" line
    bad_lost: int = 0
    direct_gained: BitCounter = field(default_factory=BitCounter)
    direct_lost: BitCounter = field(default_factory=BitCounter)
    # (gate side, what its contents see of the present set) -> a present set with that key
    # and six counters, weighted by agent-side classes, one per kind
    marginal: dict[tuple[int, tuple[bool, ...]], tuple[int, list[BitCounter]]] = field(
        default_factory=dict)
    units: list[_Unit] = field(default_factory=list)
    tables: list[Any] | None = None  # the counters extracted (see _Delta._counter_tables)
    direct: tuple[dict[int, int], dict[int, int]] | None = None
    totals: tuple[dict[int, int], dict[int, int]] | None = None  # gained, lost per tool

    def note(self, gained: int, lost: int, both: int) -> None:
        """A unit's tools: gained, lost, and visible on both sides (which keeps a tool out
        of the agent's one-line summary, as a loss elsewhere does)."""
        self.gained |= gained
        self.lost |= lost
        self.bad_gained |= lost | both
        self.bad_lost |= gained | both


def _kinds(values: tuple[Any, ...], r: int) -> tuple[int, ...]:
    """Per tool, how a differing state changes it where the group layer passes it: gained
    everywhere, only where the group mentions it, only where it does not; lost likewise.
    ``full``: visible by itself; ``part``: visible only with a group mention."""
    (_, fb, qb), (_, fh, qh) = values
    absent_b, absent_h = r & ~(fb | qb), r & ~(fh | qh)
    return (absent_b & fh, absent_b & qh, qb & fh,
            fb & absent_h, qb & absent_h, fb & qh)


class _Delta:
    def __init__(self, space: ClassSpace, changes: Changes, r: int) -> None:
        self.space = space
        self.changes = changes
        self.r = r
        self.full = full_cube(space)
        self.acc: dict[int, _AgentAcc] = {}
        self.channel_units: list[tuple[list[Cube], int, int, int]] = []  # cubes, g, l, absent
        self._units_by_tool: dict[tuple[int, int], list[list[Cube]]] | None = None

    # accumulation ---------------------------------------------------------------------------
    def _agent_weights(self, xs: XState) -> dict[int, int]:
        return xs.agent_weights()

    def _acc(self, a: int) -> _AgentAcc:
        acc = self.acc.get(a)
        if acc is None:
            acc = self.acc[a] = _AgentAcc()
        return acc

    def add_direct(self, xs: XState, cbits: int, rb: int, rh: int, tools: int) -> None:
        gained, lost, both = rh & ~rb & tools, rb & ~rh & tools, rb & rh & tools
        unit = _Unit(xs, cbits, gained, lost, both, tools)
        nc = cbits.bit_count()
        for a, w in self._agent_weights(xs).items():
            acc = self._acc(a)
            acc.note(gained, lost, both)
            if gained:
                acc.direct_gained.add(gained, w * nc)
            if lost:
                acc.direct_lost.add(lost, w * nc)
            acc.units.append(unit)

    def add_marginal(self, xs: XState, side: ChannelSide, gi: int) -> None:
        present = xs.values[0][0]
        pass_e, pass_m, pass_n = side.masks(present)
        kinds = _kinds(xs.values, self.r)
        passes = (pass_e, pass_m, pass_n) * 2
        live = tuple(k & p for k, p in zip(kinds, passes, strict=True))
        gained, lost = live[0] | live[1] | live[2], live[3] | live[4] | live[5]
        (_, fb, qb), (_, fh, qh) = xs.values
        both = (fb & fh & pass_e) | ((fb & qh | qb & fh | qb & qh) & pass_m)
        unit = _Unit(xs, side.cbits, gained, lost, both, self.r, side, live, present)
        for a, w in self._agent_weights(xs).items():
            acc = self._acc(a)
            acc.note(gained, lost, both)
            if gained | lost:
                key = (gi, side.key(present))
                found = acc.marginal.get(key)
                if found is None:
                    found = acc.marginal[key] = (present, [BitCounter() for _ in range(6)])
                counters = found[1]
                for counter, bits in zip(counters, live, strict=True):
                    if bits:
                        counter.add(bits, w)
            acc.units.append(unit)

    def add_stable(self, xs: XState, side: ChannelSide) -> None:
        """An unchanged state of a touched agent at alike classes: what it shows on both."""
        present, full, part = xs.values[0]
        pass_e, pass_m, _ = side.masks(present)
        both = (full & pass_e) | (part & pass_m)
        unit = _Unit(xs, side.cbits, 0, 0, both, self.r, side, (0,) * 6, present)
        for a in self._agent_weights(xs):
            acc = self._acc(a)
            acc.bad_gained |= both
            acc.bad_lost |= both
            acc.units.append(unit)

    def add_channel(self, xs: XState, cbits: int, rb: int, rh: int, tools: int,
                    touched: int) -> None:
        """A state at channel classes whose group layer differs (every agent, on R_C)."""
        gained, lost = rh & ~rb & tools, rb & ~rh & tools
        if touched and any(touched >> a & 1 for a in self._agent_weights(xs)):
            self.add_direct(_restrict_agents(xs, touched), cbits, rb, rh, tools)
        cubes = [(c[0] & ~touched, *c[1:]) for c in xs.cubes(cbits)]
        cubes = [c for c in cubes if c[0]]
        if cubes:
            self.channel_units.append((cubes, gained, lost, tools & ~(rb | rh)))

    # counts ---------------------------------------------------------------------------------
    def _counter_tables(self, acc: _AgentAcc, gates: dict[int, ChannelSide]) -> list[Any]:
        """An agent's marginal counters, extracted once for every tool: per gate the six
        kind counts summed over present sets (for the present-independent channel
        contents), and per (gate, present) those of the contents that depend on it."""
        if acc.tables is None:
            per_gate: dict[int, list[BitCounter]] = {}
            varying = []
            for (gi, _), (present, counters) in acc.marginal.items():
                total = per_gate.setdefault(gi, [BitCounter() for _ in range(6)])
                for into, counter in zip(total, counters, strict=True):
                    into.merge(counter)
                ve, vm = gates[gi].varying_counts(present)
                if ve or vm:
                    varying.append(([c.counts() for c in counters], ve, vm))
            acc.tables = [([c.counts() for c in total], *gates[gi].fixed_counts())
                          for gi, total in per_gate.items()] + varying
            acc.direct = (acc.direct_gained.counts(), acc.direct_lost.counts())
        return acc.tables

    def _count(self, acc: _AgentAcc, t: int, gained: bool, gates: dict[int, ChannelSide]
               ) -> int:
        """How many of an agent's classes gain (or lose) ``t``."""
        if acc.totals is None:
            acc.totals = self._totals(acc, gates)
        return acc.totals[0 if gained else 1].get(t, 0)

    def _totals(self, acc: _AgentAcc, gates: dict[int, ChannelSide]
                ) -> tuple[dict[int, int], dict[int, int]]:
        """Per tool, how many of an agent's classes gain it and lose it: every table at
        once, so each counter entry is read once, not once per tool."""
        tables = self._counter_tables(acc, gates)
        assert acc.direct is not None
        out = (dict(acc.direct[0]), dict(acc.direct[1]))
        for kinds, e, m in tables:
            for offset, into in ((0, out[0]), (3, out[1])):
                for kind in range(3):
                    for t, w in kinds[offset + kind].items():
                        ce = e.get(t, 0)
                        per = ce if kind == 0 else m.get(t, 0) if kind == 1 else ce - m.get(t, 0)
                        if per:
                            into[t] = into.get(t, 0) + w * per
        return out

    # lines ----------------------------------------------------------------------------------
    def changes_for(self, tools: Sequence[str], gates: dict[int, ChannelSide]) -> list[ToolChange]:
        changed = 0
        for acc in self.acc.values():
            changed |= acc.gained | acc.lost
        for _, g, lo, _ in self.channel_units:
            changed |= g | lo
        out = []
        for t in bit_indices(changed):
            change = ToolChange(tool=tools[t])
            for gained, into in ((True, change.gained), (False, change.lost)):
                into.extend(self._lines(t, gained, gates))
            if change.gained or change.lost:
                out.append(change)
        return out

    def _lines(self, t: int, gained: bool, gates: dict[int, ChannelSide]) -> list[Piece]:
        whole: list[Piece] = []  # agents where the change holds everywhere it is visible
        pieces: list[Piece] = []
        pool: list[Cube] = []
        lined = 0  # agents whose classes a line or their own filler already holds
        for a, acc in sorted(self.acc.items()):
            hit = (acc.gained if gained else acc.lost) >> t & 1
            bad = (acc.bad_gained if gained else acc.bad_lost) >> t & 1
            if not hit:
                continue
            lined |= 1 << a
            if not bad:
                cube = (1 << a, *self.full[1:])
                whole.append((cube, self._count(acc, t, gained, gates)))
            else:
                p, f = self._agent_pieces(a, acc, t, gained)
                pieces += p
                pool += f
        channel_led = False
        changing, absent = self._channel_units_of(t, gained)
        for cubes in changing:
            channel_led = True
            pieces += ((c, cube_size(c)) for c in cubes)
        for cubes in absent:
            pool += cubes
        if channel_led:  # touched agents' classes there can let the lines cover every agent
            pool += self._touched_filler(t, lined)
        # classes no request falls in may be covered too (not where a whole line holds them)
        whole_agents = 0
        for c, _ in whole:
            whole_agents |= c[0]
        pool += [(c[0] & ~whole_agents, *c[1:]) for c in self.space.empty_cubes()
                 if c[0] & ~whole_agents]
        lines: list[Piece] = []
        if whole:
            merged = merge_cubes(c for c, _ in whole) if len(whole) > 1 else [whole[0][0]]
            lines += zip(merged, assign(merged, whole), strict=True)
        if pieces:
            pcubes = [c for c, _ in pieces]
            # merging keeps the (disjoint) pool disjoint and makes coverage checks cheap
            wide = widen_exact(pcubes, [*pcubes, *pool, *(c for c, _ in whole)], self.full,
                               DIMS.index("channel"))
            lines += [(c, n) for c, n in zip(wide, assign(wide, pieces), strict=True) if n]
        return lines

    def _channel_units_of(self, t: int, gained: bool
                          ) -> tuple[list[list[Cube]], list[list[Cube]]]:
        """The cubes of the channel units where ``t`` is gained (or lost), and of those where
        it is absent on both sides and not so (indexed by tool once: the units are many)."""
        if self._units_by_tool is None:
            index: dict[tuple[int, int], list[list[Cube]]] = defaultdict(list)
            for cubes, g, lo, absent in self.channel_units:
                for tool in bit_indices(g):
                    index[(tool, 0)].append(cubes)
                for tool in bit_indices(lo):
                    index[(tool, 1)].append(cubes)
                for tool in bit_indices(absent & ~g):
                    index[(tool, 2)].append(cubes)
                for tool in bit_indices(absent & ~lo):
                    index[(tool, 3)].append(cubes)
            self._units_by_tool = dict(index)
        kind = 0 if gained else 1
        return (self._units_by_tool.get((t, kind), []),
                self._units_by_tool.get((t, kind + 2), []))

    def _touched_filler(self, t: int, lined: int) -> list[Cube]:
        """Touched agents' classes at differing channel classes where ``t`` is absent on
        both sides, but for the agents in ``lined``: those whose change in ``t`` is whole are
        covered by their line, the others' filler is already in the pool (coverage sums
        overlaps, so the pool must not hold a class twice)."""
        out: list[Cube] = []
        for a, acc in self.acc.items():
            mine = 1 << a
            if lined & mine:
                continue
            for unit in acc.units:
                if unit.side is not None or not unit.tools >> t & 1:
                    continue
                if (unit.gained | unit.lost | unit.both) >> t & 1:
                    continue
                out += ((mine, *c[1:]) for c in unit.xs.cubes(unit.cbits) if c[0] & mine)
        return out

    def _agent_pieces(self, a: int, acc: _AgentAcc, t: int, gained: bool
                      ) -> tuple[list[Piece], list[Cube]]:
        """One agent's classes where ``t`` changes (pieces with counts), and where it is
        absent on both sides (filler), from its units."""
        pieces: list[Piece] = []
        filler: list[Cube] = []
        mine = 1 << a
        for unit in acc.units:
            if not unit.tools >> t & 1:
                continue
            cubes = [c for c in unit.xs.cubes(unit.cbits) if c[0] & mine]
            cubes = [(mine, *c[1:]) for c in cubes]
            change = (unit.gained if gained else unit.lost) >> t & 1
            other = (unit.lost if gained else unit.gained) >> t & 1
            if unit.side is None:
                if change:
                    pieces += ((c, cube_size(c)) for c in cubes)
                elif not other and not unit.both >> t & 1:
                    filler += cubes
                continue
            if not (change or other or unit.both >> t & 1):
                filler += cubes  # absent on both sides at every class of the unit
                continue
            if not change:
                continue
            e, m = unit.side.counts(unit.present)
            ce, cm = e.get(t, 0), m.get(t, 0)
            offset = 0 if gained else 3
            for kind in range(3):
                if not unit.kinds[offset + kind] >> t & 1:
                    continue
                per = (ce, cm, ce - cm)[kind]
                n = unit.cbits.bit_count()
                if kind == 2:  # where the group mentions t, both sides show it
                    keep = unit.cbits & ~unit.side.mentioning(unit.present, t)
                    pieces += (((*c[:2], keep, *c[3:]), cube_size(c) // n * per)
                               for c in cubes)
                else:
                    pieces += ((c, cube_size(c) // n * per) for c in cubes)
        return pieces, filler


def _restrict_agents(xs: XState, agents: int) -> XState:
    out = XState(xs.values, sel=xs.sel)
    for aps, o, s, k in xs.members:
        members = [(a, p) for a, p in aps.members if agents >> a & 1]
        if members:
            sub = type(aps)(aps.inputs, members, aps.lean, aps.maps, aps.depth0)
            out.members.append((sub, o, s, k))
    return out


def compute_delta(space: ClassSpace) -> list[ToolChange]:
    """Per tool, the classes that gain and lose it (exact), summarized in lines."""
    changes = Changes(space)
    shared = changes.shared_diff()
    per_agent = [changes.agent_diff(k.key[0]) for k in space.agents]
    channel_diffs = _channel_diffs(changes, space)
    # 2026.9: where a channel side depends on the agent or the owner (selectors), every
    # channel class is evaluated pairwise, with the selector of each agent-side state
    coupled = space.coupled
    r_c = 0
    for d in channel_diffs:
        r_c |= d
    r = shared | r_c
    touched = 0
    for ai, d in enumerate(per_agent):
        r |= d
        if d or shared:
            touched |= 1 << ai
    if not r:
        return []
    delta = _Delta(space, changes, r)
    gates = gate_channels(space)
    sides: dict[int, ChannelSide] = {}
    ev = Evaluator(space, r, agents=touched) if touched else None
    ap_states = ev.ap_states() if ev else []
    for gi in sorted(gates):
        alike = [ci for ci in gates[gi] if not channel_diffs[ci]]
        differ = [ci for ci in gates[gi] if channel_diffs[ci]]
        # coupled: alike classes whose channel side depends on the selector are evaluated
        # pairwise (on R), with each state's selector; the others as usual
        pairwise = [ci for ci in alike if not space.selector_free(ci)] if coupled else []
        alike = [ci for ci in alike if space.selector_free(ci)] if coupled else alike
        if ev is None:
            continue
        side = sides[gi] = ChannelSide(ev.channel_members(alike, side=0), r)
        by_sel: dict[int, tuple[list[tuple[tuple[Content, ...], int]], ...]] = {}
        for xs in ev.x_states(gi, ap_states):
            cached = by_sel.get(xs.sel)
            if cached is None:
                cached = by_sel[xs.sel] = (ev.channel_groups(differ, sel=xs.sel),
                                           ev.channel_groups(pairwise, sel=xs.sel))
            groups_differ, groups_pairwise = cached
            for contents, cbits in groups_pairwise:
                rb, rh = (result(v, c) for v, c in zip(xs.values, contents, strict=True))
                delta.add_direct(xs, cbits, rb, rh, r)
            changed = any(v != xs.values[0] for v in xs.values[1:])
            if changed and xs.values[0][0] == xs.values[1][0]:
                if alike:
                    delta.add_marginal(xs, side, gi)
            elif changed:  # the present set differs: pairwise at alike classes
                for contents, cbits in ev.channel_groups(alike):
                    rb, rh = (result(v, c) for v, c in zip(xs.values, contents, strict=True))
                    delta.add_direct(xs, cbits, rb, rh, r)
            elif alike:
                delta.add_stable(xs, side)
            for contents, cbits in groups_differ:
                rb, rh = (result(v, c) for v, c in zip(xs.values, contents, strict=True))
                delta.add_direct(xs, cbits, rb, rh, r & ~r_c)
    if r_c:
        ev_c = Evaluator(space, r_c)
        ap_c = ev_c.ap_states()
        for gi in sorted(gates):
            differ = [ci for ci in gates[gi] if channel_diffs[ci]]
            if not differ:
                continue
            per_sel: dict[int, list[tuple[tuple[Content, ...], int]]] = {}
            for xs in ev_c.x_states(gi, ap_c):
                groups = per_sel.get(xs.sel)
                if groups is None:
                    groups = per_sel[xs.sel] = ev_c.channel_groups(differ, sel=xs.sel)
                for contents, cbits in groups:
                    rb, rh = (result(v, c) for v, c in zip(xs.values, contents, strict=True))
                    delta.add_channel(xs, cbits, rb, rh, r_c, touched)
    return delta.changes_for(space.tool_names, sides)


def _channel_diffs(changes: Changes, space: ClassSpace) -> list[int]:
    """Per channel class, the tools its sides can see differently: its channel side's stacks
    (group layer, 2026.9's sender layer) compared in place, under every selector (classes
    with the same stacks are compared once)."""
    selectors = range(len(space.selectors))
    seen: dict[Any, int] = {}
    out = [0] * len(space.channels)  # channels left unread are alike by construction
    for ci in space.read_classes():
        key = tuple(space.channel_stacks(ci, sel) for sel in selectors)
        found = seen.get(key)
        if found is None:
            found = seen[key] = _stacks_diff(changes, key)
        out[ci] = found
    return out


def _stacks_diff(changes: Changes, per_selector: Iterable[tuple[tuple[int, ...], ...]]) -> int:
    out = 0
    for sb, sh in per_selector:
        for i in range(max(len(sb), len(sh), 1)):
            out |= changes.stack_diff(sb[i] if i < len(sb) else None,
                                      sh[i] if i < len(sh) else None)
    return out
