"""Factored evaluation of context classes: every class's tool set without the product.

A class is (agent, provider, channel, owner, sandbox, subagent). Its tool set splits into an
*agent side* (present tools and the profile, global, agent, provider, sandbox and subagent
layers) and a *channel side* (the group layer). The two meet only through the present set
(stripping layers test it) and through mentions (an optional tool is visible when some layer
names it). So:

* (agent, provider-group) pairs whose stacks are alike on the tools of interest R share an
  ``APState``; with owner, sandbox and subagent they give ``XState``s, per gate (the message
  channel's availability class), each holding per side ``(present, full, part)``: the tools
  the agent side lets through and makes visible by itself (``full``), and those it lets
  through that only a group mention makes visible (``part``);
* channel classes whose group stacks are alike on R share one restricted ``Content``;
* a class's tools are ``e & (full | part & mention(L))`` with ``e`` the group layer's pass set
  under the present set.

Restricting to R (the tools a question is about) is what keeps states few. Sets of classes
are ``Cube``s: one int bitset per dimension, so unions, intersections and sizes are cheap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .access import DIMS, ClassSpace, Record, Stack, TablesView, owner_removes

Layer = tuple[int, int, int]
# A stack restricted to R: (mention, fixed, stripping layers), where a layer whose two passes
# agree on R has been folded into ``fixed``.
Content = tuple[int, int, tuple[Layer, ...]]
NEUTRAL: Content = (0, -1, ())
Cube = tuple[int, ...]  # one bitset of class indices per dimension, in DIMS order
Values = tuple[int, int, int]  # (present, full, part)


def restrict_stack(stack: Stack, r: int) -> Content:
    fixed = stack.fixed & r
    layers: list[Layer] = []
    for w, allow_pass, deny_pass in stack.layers:
        a, d = allow_pass & r, deny_pass & r
        if w == -1 or a == d:
            fixed &= a
        else:
            layers.append((w, a, d))
    return (stack.mention & r, fixed, tuple(layers))


def combine(contents: Iterable[Content]) -> Content:
    mention, fixed = 0, -1
    layers: list[Layer] = []
    for m, f, ls in contents:
        mention |= m
        fixed &= f
        layers.extend(ls)
    return (mention, fixed, tuple(layers))


def eval_content(c: Content, present: int) -> int:
    bits = c[1]
    for w, a, d in c[2]:
        bits &= a if w & present else d
    return bits


def index_bits(indices: Sequence[int]) -> int:
    """The bitset of ``indices``, built once: OR-ing bits one at a time into a wide int
    copies it each time, quadratic over hundreds of thousands of channel classes."""
    if len(indices) < 64:
        out = 0
        for i in indices:
            out |= 1 << i
        return out
    buf = bytearray((max(indices) >> 3) + 1)
    for i in indices:
        buf[i >> 3] |= 1 << (i & 7)
    return int.from_bytes(buf, "little")


def bit_indices(bits: int) -> list[int]:
    """The set bits of ``bits``, ascending."""
    if bits.bit_count() <= 8:  # a few bits: lowest first, without spelling out every digit
        few = []
        while bits:
            low = bits & -bits
            few.append(low.bit_length() - 1)
            bits ^= low
        return few
    out = []
    digits = bin(bits)[:1:-1]
    i = digits.find("1")
    while i >= 0:
        out.append(i)
        i = digits.find("1", i + 1)
    return out


@dataclass(slots=True)
class APState:
    """(agent, provider-group) pairs alike on R on every side: per side (agent and provider
    layers, sandbox layer, apply_patch verdict, availability-gate verdicts)."""

    inputs: tuple[tuple[Content, Content, bool, tuple[bool, ...]], ...]
    members: list[tuple[int, int]] = field(default_factory=list)  # (agent, provider bits)
    lean: tuple[bool, ...] = ()  # per side: the agents' experimental.localModelLean (2026.9)
    maps: tuple[int, ...] = ()  # per side: the agents' own toolsBySender map (2026.9)
    depth0: int = -1  # the sandbox classes a subagent at depth 0 reaches (ClassSpace.holds)
    _by_agent: tuple[int, dict[int, int]] | None = None

    @property
    def alike(self) -> bool:
        """Both sides' agent-side inputs are equal (only meaningful with two sides)."""
        return (all(i == self.inputs[0] for i in self.inputs[1:])
                and all(x == self.lean[0] for x in self.lean[1:]))

    def by_agent(self) -> dict[int, int]:
        """Per agent, its provider classes here (read once the state is complete)."""
        if self._by_agent is None or self._by_agent[0] != len(self.members):
            out: dict[int, int] = {}
            for a, pbits in self.members:
                out[a] = out.get(a, 0) | pbits
            self._by_agent = (len(self.members), out)
        return self._by_agent[1]


@dataclass(slots=True)
class XState:
    """Agent-side classes of one gate with equal values on every side."""

    values: tuple[Values, ...]
    members: list[tuple[APState, int, int, int]] = field(default_factory=list)  # ap, o, s, k
    _weights: dict[int, int] | None = None
    sel: int = 0  # the selector its channel sides are read with (ClassSpace.selectors)
    _rests: tuple[int, list[tuple[int, int, int, int, int]]] | None = None

    def cubes(self, channels: int) -> list[Cube]:
        """The classes of this state in the channel classes ``channels``, as few cubes."""
        if self._rests is None or self._rests[0] != len(self.members):
            # the agent-side cubes do not depend on ``channels``: computed once (a diff asks
            # for them per tool and per channel group); (owner, sandbox, subagent) classes
            # holding the same agent states share their agent x provider cubes
            by_rest: dict[tuple[int, int, int], list[APState]] = defaultdict(list)
            for aps, o, s, k in self.members:
                by_rest[(o, s, k)].append(aps)
            shared: dict[tuple[int, ...], list[tuple[int, int]]] = {}
            rests: list[tuple[int, int, int, int, int]] = []
            for (o, s, k), states in by_rest.items():
                key = tuple(map(id, states))
                pairs = shared.get(key)
                if pairs is None:
                    pairs = shared[key] = _agent_cubes(states)
                rests.extend((abits, pbits, 1 << o, 1 << s, 1 << k) for abits, pbits in pairs)
            self._rests = (len(self.members), rests)
        return [(a, p, channels, o, s, k) for a, p, o, s, k in self._rests[1]]

    def agent_weights(self) -> dict[int, int]:
        """Agent-side classes (provider x owner x sandbox x subagent) per agent."""
        if self._weights is None:
            times: dict[int, tuple[APState, int]] = {}
            for aps, _, _, _ in self.members:
                seen = times.get(id(aps))
                times[id(aps)] = (aps, 1 if seen is None else seen[1] + 1)
            out: dict[int, int] = defaultdict(int)
            for aps, n in times.values():
                for a, pbits in aps.members:
                    out[a] += pbits.bit_count() * n
            self._weights = dict(out)
        return self._weights

    def weight(self) -> int:
        """How many agent-side classes (agent x provider x owner x sandbox x subagent)."""
        return sum(pbits.bit_count() for aps, _, _, _ in self.members for _, pbits in aps.members)


def _agent_cubes(states: Sequence[APState]) -> list[tuple[int, int]]:
    """(agent bits, provider bits) covering the agent and provider classes of ``states``."""
    agents: dict[int, int] = {}
    for aps in states:
        for a, pbits in aps.by_agent().items():
            agents[a] = agents.get(a, 0) | pbits
    by_pbits: dict[int, int] = defaultdict(int)
    for a, pbits in agents.items():
        by_pbits[pbits] |= 1 << a
    return [(abits, pbits) for pbits, abits in by_pbits.items()]


class Evaluator:
    """Evaluates the classes of a ClassSpace on the tools ``r``, state by state."""

    def __init__(self, space: ClassSpace, r: int, *, agents: int | None = None) -> None:
        self.space = space
        self.views = space.views
        self.r = r
        self.agent_filter = agents  # a bitset of agent classes, or None for all
        self._contents: list[dict[tuple[int, ...], Content]] = [{} for _ in self.views]
        self._canon: dict[Content, Content] = {}
        self._selector_stacks: dict[int, list[tuple[tuple[int, ...], ...]]] = {}
        self._default_list: list[tuple[tuple[Any, ...], int]] = []
        # A state's present set matters only to the group layers' stripping tests; keeping
        # just those bits lets states that differ elsewhere share a state.
        self.wmask = group_witnesses(space)
        # Availability gates and apply_patch matter only where they touch R or a witness.
        self.relevant = r
        for v in self.views:
            self.relevant |= v.witness_bits()
        self._provider_info = [self._providers_of(side, v) for side, v in enumerate(self.views)]
        self._defaults: tuple[list[tuple[Any, ...]], dict[tuple[Any, ...], int],
                              list[dict[str, list[int]]]] | None = None
        self.subs = [[None if (st := v.subagent_stack(k.key[0])) is None
                      else self.content(side, (st,)) for k in space.subagent]
                     for side, v in enumerate(self.views)]

    # -- contents ----------------------------------------------------------------------------
    def content(self, side: int, stacks: tuple[int, ...]) -> Content:
        cache = self._contents[side]
        c = cache.get(stacks)
        if c is None:
            v = self.views[side]
            c = (restrict_stack(v.stack(stacks[0]), self.r) if len(stacks) == 1
                 else combine(restrict_stack(v.stack(i), self.r) for i in stacks))
            # one object per distinct content: equal contents are then told by identity
            c = cache[stacks] = self._canon.setdefault(c, c)
        return c

    def group_content(self, side: int, stack: int | None) -> Content:
        return NEUTRAL if stack is None else self.content(side, (stack,))

    # -- the agent side ----------------------------------------------------------------------
    def _providers_of(self, side: int, v: TablesView
                      ) -> tuple[list[tuple[Any, ...]], list[Any]]:
        """Per provider class: (provider, full model key, id of its global signature), and
        the signatures: (global byProvider key, gate verdicts, apply_patch verdict per
        variant), what the agent side needs besides the agent's own byProvider keys. Global
        keys whose entries read the same on R (their stack's content, profile and
        alsoAllow) share a signature, under the first such key."""
        out = []
        sigs: dict[Any, int] = {}
        firsts: list[Any] = []
        for k in self.space.providers:
            provider, model = k.key
            # the side's own byProvider key rule (2026.9: a model id with `/` is prefixed too)
            full = v.model_key(provider, model) if provider is not None else None
            _, ge = v.provider_entries(v.records[0], provider, model)
            gates = tuple(bool(bits & self.relevant)
                          and (providers is None or provider in providers)
                          and (models is None or _model_in(models, provider, model))
                          for bits, providers, models, _, _ in v.gates)
            ap = tuple(v.apply_patch_ok(i, provider, model) or not v.ap_bit & self.relevant
                       for i in range(len(v.ap_variants)))
            entry = None if ge is None else v.global_bp[ge]
            part = None if entry is None else (self.content(side, (entry[0],)), *entry[1:])
            sig = sigs.get((part, gates, ap))
            if sig is None:
                sig = sigs[(part, gates, ap)] = len(firsts)
                firsts.append((ge, gates, ap))
            out.append((provider, full, sig))
        return out, firsts

    def _default_groups(self) -> tuple[list[tuple[Any, ...]], dict[tuple[Any, ...], int],
                                       list[dict[str, list[int]]]]:
        """Per provider class its key for an agent without byProvider entries, those keys'
        groups (key -> class bits), and per side the classes each entry key can select."""
        if self._defaults is None:
            infos = [info for info, _ in self._provider_info]
            keys = [tuple(x for info in infos for x in (None, info[pi][2]))
                    for pi in range(len(self.space.providers))]
            groups: dict[tuple[Any, ...], int] = {}
            for pi, key in enumerate(keys):
                groups[key] = groups.get(key, 0) | 1 << pi
            by_key: list[dict[str, list[int]]] = []
            for info in infos:
                index: dict[str, list[int]] = defaultdict(list)
                for pi, (provider, full, _) in enumerate(info):
                    if provider is not None:
                        index[provider].append(pi)
                        if full is not None:
                            index[full].append(pi)
                by_key.append(dict(index))
            self._defaults = (keys, groups, by_key)
            self._default_list = list(groups.items())
        return self._defaults

    def provider_groups(self, recs: Sequence[Record]) -> list[tuple[tuple[Any, ...], int]]:
        """The provider classes grouped by what they select for agents with records ``recs``
        (one per side): ``[(per-side (agent key, global key, gates, ap verdict), bits)]``.
        Only the classes an agent's own byProvider keys can select leave the default
        grouping, so an agent costs its few keys, not every provider class."""
        return [(self._per_side(small, recs), bits) for small, bits in self._small_groups(recs)]

    def _small_groups(self, recs: Sequence[Record]) -> list[tuple[tuple[Any, ...], int]]:
        """The provider classes grouped by what they select for agents with records ``recs``,
        each group by its small key: per side (agent byProvider key, global signature id).
        Only the classes an agent's own keys can select leave the default grouping (in
        order), and come after it."""
        keys, defaults, by_key = self._default_groups()
        if not any(rec.bp for rec in recs):
            return self._default_list
        infos = [info for info, _ in self._provider_info]
        affected: set[int] = set()
        for rec, index in zip(recs, by_key, strict=True):
            for k in rec.bp:
                affected.update(index.get(k, ()))
        taken: dict[tuple[Any, ...], int] = {}
        moved: dict[tuple[Any, ...], int] = {}
        for pi in sorted(affected):
            key: list[Any] = []
            for rec, info in zip(recs, infos, strict=True):
                provider, full, gid = info[pi]
                bp = rec.bp
                ae = None
                if bp and provider is not None:
                    ae = full if full is not None and full in bp else (
                        provider if provider in bp else None)
                key += (ae, gid)
            tkey = tuple(key)
            if tkey != keys[pi]:  # else the class stays in its default group
                taken[keys[pi]] = taken.get(keys[pi], 0) | 1 << pi
                moved[tkey] = moved.get(tkey, 0) | 1 << pi
        out = [(k, bits & ~taken[k] if k in taken else bits) for k, bits in defaults.items()]
        return [(k, bits) for k, bits in out if bits] + list(moved.items())

    def _per_side(self, small: tuple[Any, ...], recs: Sequence[Record]) -> tuple[Any, ...]:
        """A small key read out: per side (agent key, global key, gates, ap verdict)."""
        per_side = []
        for side, rec in enumerate(recs):
            ge, gates, ap = self._provider_info[side][1][small[2 * side + 1]]
            per_side.append((small[2 * side], ge, gates, ap[rec.ap] if ap else False))
        return tuple(per_side)

    def ap_states(self) -> list[APState]:
        """(agent, provider group) pairs alike on R, deduplicated. Agents whose own entries
        are alike on R (record, sandbox, apply_patch choice, byProvider keys and stacks) are
        grouped first: they make the same states, so each group is evaluated once."""
        space, views = self.space, self.views
        agents: dict[tuple[Any, int], tuple[list[Record], list[int]]] = {}
        for ai, agent in enumerate(space.agents):
            if self.agent_filter is not None and not self.agent_filter >> ai & 1:
                continue
            recs = [self._effective(side, v.record(agent.key[0])[1])
                    for side, v in enumerate(views)]
            sig = tuple((self.content(side, (rec.stack,)), self.content(side, (rec.sandbox,)),
                         rec.ap, tuple(sorted((k, self.content(side, (e[0],)), e[1], e[2])
                                              for k, e in rec.bp.items())), rec.lean,
                         space.sender_map(side, rec))
                        for side, rec in enumerate(recs))
            agents.setdefault((sig, space.depth0_sandboxes(ai)), (recs, []))[1].append(ai)
        states: dict[Any, APState] = {}
        # a provider group without the agent's own entries gives the same state to every
        # agent whose own stack, sandbox and apply_patch choice read the same on R
        known: dict[tuple[Any, ...], APState] = {}
        for (_, depth0), (recs, members) in agents.items():
            maps = tuple(space.sender_map(side, rec) for side, rec in enumerate(recs))
            sandboxes = [self.content(side, (rec.sandbox,)) for side, rec in enumerate(recs)]
            lean = tuple(rec.lean for rec in recs)
            mine = (tuple((id(self.content(side, (rec.stack,))), id(sandboxes[side]), rec.ap)
                          for side, rec in enumerate(recs)), lean, maps, depth0)
            for small, pbits in self._small_groups(recs):
                own = any(small[2 * side] is not None for side in range(len(recs)))
                state = None if own else known.get((mine, small))
                if state is None:
                    key = self._per_side(small, recs)
                    inputs = []
                    for side, (v, rec, (ae, ge, gates, ap_ok)) in enumerate(
                            zip(views, recs, key, strict=True)):
                        stacks = (rec.stack, *v.provider_stacks(rec, ae, ge))
                        inputs.append((self.content(side, stacks), sandboxes[side], ap_ok,
                                       gates))
                    tkey = tuple(inputs)
                    state = states.get((tkey, lean, maps, depth0))
                    if state is None:
                        state = states[(tkey, lean, maps, depth0)] = APState(
                            tkey, lean=lean, maps=maps, depth0=depth0)
                    if not own:
                        known[(mine, small)] = state
                state.members.extend((ai, pbits) for ai in members)
        return list(states.values())

    def _effective(self, side: int, rec: Record) -> Record:
        """A record without what cannot matter on R: byProvider entries that change nothing
        there (no profile or alsoAllow of their own, a neutral stack), and the apply_patch
        choice when apply_patch is irrelevant."""
        v = self.views[side]
        kept = {k for k, e in rec.bp.items()
                if e[1] >= 0 or e[2] >= 0 or not _neutral(self.content(side, (e[0],)), self.r)}
        if any("/" not in k for k in kept):
            # a model key shadows a provider key even when its own entry is neutral
            kept |= {k for k in rec.bp if "/" in k}
        bp = {k: e for k, e in rec.bp.items() if k in kept}
        ap = rec.ap if v.ap_bit & self.relevant else 0
        if len(bp) == len(rec.bp) and ap == rec.ap:
            return rec
        return rec._replace(bp=bp, ap=ap)

    def present(self, side: int, gi: int, gates: tuple[bool, ...], ap_ok: bool,
                owner: int) -> int:
        v = self.views[side]
        channel = self.space.gate_classes[gi]
        present = v.always
        for (bits, _, _, channels, excluded), ok in zip(v.gates, gates, strict=True):
            if ok and (channels is None or channel in channels) and (
                    excluded is None or channel not in excluded):
                present |= bits
        if not ap_ok:
            present &= ~v.ap_bit
        value = self.space.owner[owner].key[0]
        return present & v.non_owner if owner_removes(v, value) else present

    def x_states(self, gi: int, ap_states: Iterable[APState], *,
                 changed_only: bool = False) -> list[XState]:
        """The agent-side states of gate ``gi``. ``changed_only``: only states whose values
        differ between the sides (needs two sides); alike ones are skipped cheaply."""
        views, r = self.views, self.r
        nonopt = [v.non_optional & r for v in views]
        presence_same = len(views) > 1 and all(
            (v.always, v.gates, v.ap_bit, v.non_owner) == (views[0].always, views[0].gates,
                                                           views[0].ap_bit, views[0].non_owner)
            for v in views[1:]) and all(n == nonopt[0] for n in nonopt)
        subs_same = len(views) > 1 and all(s == self.subs[0] for s in self.subs[1:])
        pcache: dict[Any, int] = {}
        out: dict[Any, XState] = {}
        for aps in ap_states:
            if changed_only and presence_same and subs_same and aps.alike:
                continue
            for o in range(len(self.space.owner)):
                sel = self.space.selector(o, aps.maps) if self.space.coupled else 0
                presents = []
                for side, (_, _, ap_ok, gates) in enumerate(aps.inputs):
                    pkey = (side, gates, ap_ok, o)
                    p = pcache.get(pkey)
                    if p is None:
                        p = pcache[pkey] = self.present(side, gi, gates, ap_ok, o)
                    presents.append(p)
                # a lean agent's lean tools are visible only where a layer keeps them
                visible = [n & ~views[side].lean if aps.lean and aps.lean[side] else n
                           for side, n in enumerate(nonopt)]
                for s, sb in enumerate(self.space.sandbox):
                    for k in range(len(self.space.subagent)):
                        if k == self.space.depth0 and not aps.depth0 >> s & 1:
                            continue  # no request there (ClassSpace.holds)
                        values = tuple(
                            self._values(presents[side], main,
                                         sandbox if sb.key[side] else None,
                                         self.subs[side][k], visible[side])
                            for side, (main, sandbox, _, _) in enumerate(aps.inputs))
                        if changed_only and all(x == values[0] for x in values[1:]):
                            continue
                        xs = out.get((values, sel))
                        if xs is None:
                            xs = out[(values, sel)] = XState(values, sel=sel)
                        xs.members.append((aps, o, s, k))
        return list(out.values())

    def _values(self, present: int, main: Content, sandbox: Content | None,
                sub: Content | None, nonopt: int) -> Values:
        bits = eval_content(main, present)
        mention = main[0]
        for c in (sandbox, sub):
            if c is not None:
                bits &= eval_content(c, present)
                mention |= c[0]
        bits &= present & self.r
        visible = nonopt | mention
        return present & self.wmask, bits & visible, bits & ~visible

    # -- the channel side --------------------------------------------------------------------
    def channel_groups(self, classes: Iterable[int], side: int | None = None, sel: int = 0
                       ) -> list[tuple[tuple[Content, ...], int]]:
        """Channel classes grouped by their channel side's content on R (the group layer,
        and 2026.9's sender layer, read with selector ``sel``): ``[(per side content, class
        bits)]`` (``side``: use that side's content for every side)."""
        return [(key, index_bits(members))
                for key, members in self.channel_members(classes, side, sel)]

    def channel_members(self, classes: Iterable[int], side: int | None = None, sel: int = 0
                        ) -> list[tuple[tuple[Content, ...], list[int]]]:
        """``channel_groups`` with each group's classes as a list of indices."""
        # contents are one object per value (``content``): grouped by identity, unhashed
        groups: dict[tuple[int, ...], tuple[tuple[Content, ...], list[int]]] = {}
        n = len(self.views)
        by_stacks: dict[tuple[tuple[int, ...], ...], list[int]] = {}
        every = self._selector_stacks.get(sel)
        if every is None:
            every = self._selector_stacks[sel] = self.space.selector_stacks(sel)
        for ci in classes:
            stacks = every[ci]
            found = by_stacks.get(stacks)
            if found is None:
                if side is not None:
                    key = (self.stacks_content(side, stacks[side]),) * n
                else:
                    key = tuple(self.stacks_content(s, st) for s, st in enumerate(stacks))
                ids = tuple(map(id, key))
                group = groups.get(ids)
                if group is None:
                    group = groups[ids] = (key, [])
                found = by_stacks[stacks] = group[1]
            found.append(ci)
        return list(groups.values())

    def stacks_content(self, side: int, stacks: tuple[int, ...]) -> Content:
        return NEUTRAL if not stacks else self.content(side, stacks)


def _neutral(c: Content, r: int) -> bool:
    return not c[0] and not c[2] and c[1] & r == r


def group_witnesses(space: ClassSpace) -> int:
    """Every tool a group layer's stripping test looks at, on any side."""
    return space.group_witnesses()


def result(values: Values, group: Content) -> int:
    """A class's tools (restricted to R) from its agent-side values and group content."""
    present, full, part = values
    return eval_content(group, present) & (full | part & group[0])


def _model_in(models: frozenset[str], provider: str | None, model: str | None) -> bool:
    if not model:
        return False
    return model in models or ("/" not in model and f"{provider}/{model}" in models)


# -- cubes -----------------------------------------------------------------------------------
def cube_size(c: Cube) -> int:
    n = 1
    for s in c:
        n *= s.bit_count()
    return n


_ORDER = (2, 0, 1, 3, 4, 5)  # the channel dimension first: it is the most often disjoint


def _overlap(a: Cube, b: Cube) -> int:
    n = 1
    for d in _ORDER:
        n *= (a[d] & b[d]).bit_count()
        if not n:
            return 0
    return n


def contains(outer: Cube, inner: Cube) -> bool:
    return all(i & ~o == 0 for o, i in zip(outer, inner, strict=True))


def merge_cubes(cubes: Iterable[Cube]) -> list[Cube]:
    """Merge cubes that differ in one dimension only, until nothing merges. Disjoint cubes
    stay disjoint: two merged cubes sharing a class would need two input cubes sharing it."""
    current = list(dict.fromkeys(cubes))
    changed = True
    while changed:
        changed = False
        for d in range(len(DIMS)):
            groups: dict[Cube, int] = {}
            for c in current:
                rest = (*c[:d], *c[d + 1:])
                groups[rest] = groups.get(rest, 0) | c[d]
            if len(groups) < len(current):
                changed = True
                current = [(*rest[:d], bits, *rest[d:]) for rest, bits in groups.items()]
    return sorted(current, key=_cube_key)


def widen(cubes: Sequence[Cube], pool: Sequence[Cube], full: Sequence[int]) -> list[Cube]:
    """Merge ``cubes`` (pairwise disjoint) and widen each merged cube, one dimension at a
    time, to the whole dimension where every class it adds is in ``pool`` (disjoint cubes:
    ``cubes`` and the classes where the answer does not matter), so that "agent viewer"
    stays one line. Widened lines may overlap; ``assign`` counts each class once."""
    out: list[Cube] = []
    # coverage is monotone: a region inside one found covered is covered, one holding a
    # region found uncovered is not (most cubes widen into a line found before)
    yes: list[Cube] = []
    no: list[Cube] = []
    for cube in sorted(merge_cubes(cubes), key=cube_size, reverse=True):
        c = cube
        for d in range(len(DIMS)):
            if c[d] == full[d]:
                continue
            wide = (*c[:d], full[d], *c[d + 1:])
            if any(contains(y, wide) for y in yes):
                c = wide
            elif any(contains(wide, n) for n in no):
                continue
            elif covered(wide, pool):
                yes.append(wide)
                c = wide
            else:
                no.append(wide)
        if c not in out:
            out.append(c)
    return sorted(out, key=_cube_key)


def covered(region: Cube, pool: Sequence[Cube]) -> bool:
    """Is every class of ``region`` in one of the ``pool`` cubes? The pool cubes are pairwise
    disjoint (they come from a partition of the classes), so summing overlaps is exact."""
    total = cube_size(region)
    r0, r1, r2, r3, r4, r5 = region
    for c0, c1, c2, c3, c4, c5 in pool:  # inlined _overlap: this loop is the diff's hottest
        x = r2 & c2
        if not x:
            continue
        a = r0 & c0
        if not a:
            continue
        p = r1 & c1
        if not p:
            continue
        n = (x.bit_count() * a.bit_count() * p.bit_count() * (r3 & c3).bit_count()
             * (r4 & c4).bit_count() * (r5 & c5).bit_count())
        total -= n
        if total <= 0:
            return True
    return total <= 0


class Atoms:
    """The sets one dimension of some cubes takes, recoded over their atoms: the coarsest
    partition of the dimension that each set is a union of. Merging cubes and testing
    coverage only ask which classes a cube holds, so they come out the same over atoms, with
    ints a few atoms wide instead of as wide as hundreds of thousands of channel classes."""

    def __init__(self, dim: int, full: int, cubes: Iterable[Cube]) -> None:
        self.dim = dim
        self.full = full
        distinct: dict[int, None] = {}
        seen: set[int] = set()
        for c in cubes:
            if id(c[dim]) not in seen:  # most cubes share a few set objects
                seen.add(id(c[dim]))
                distinct[c[dim]] = None
        atoms = [full]
        for bits in distinct:
            refined: list[int] = []
            for atom in atoms:
                inside = atom & bits
                if inside and inside != atom:
                    refined += (inside, atom ^ inside)
                else:
                    refined.append(atom)
            atoms = refined
        self.atoms = atoms
        self._by_id: dict[int, tuple[int, int]] = {}  # id -> (the set, its atom mask)

    def code(self, bits: int) -> int:
        """The atom mask of ``bits`` (a union of atoms)."""
        found = self._by_id.get(id(bits))
        if found is not None and found[0] is bits:
            return found[1]
        mask = 0
        for i, atom in enumerate(self.atoms):
            if atom & bits:
                mask |= 1 << i
        self._by_id[id(bits)] = (bits, mask)
        return mask

    def cube(self, c: Cube) -> Cube:
        d = self.dim
        return (*c[:d], self.code(c[d]), *c[d + 1:])

    def decode(self, c: Cube) -> Cube:
        d = self.dim
        bits = 0
        for i in bit_indices(c[d]):
            bits |= self.atoms[i]
        return (*c[:d], bits, *c[d + 1:])


def widen_exact(cubes: Sequence[Cube], pool: Sequence[Cube], full: Sequence[int],
                dim: int) -> list[Cube]:
    """``widen(cubes, merge_cubes(pool), full)`` with dimension ``dim`` recoded over its atoms
    (``Atoms``) while merging and widening: the same lines, in the same order."""
    atoms = Atoms(dim, full[dim], [*cubes, *pool])
    coded = [atoms.cube(c) for c in cubes]
    wide = widen(coded, merge_cubes(atoms.cube(c) for c in pool), atoms.cube(tuple(full)))
    return sorted((atoms.decode(c) for c in wide), key=_cube_key)


def assign(lines: Sequence[Cube], pieces: Iterable[tuple[Cube, int]]) -> list[int]:
    """Counts per line: each piece (a cube inside some line, with its class count) goes to
    the first line that contains it."""
    counts = [0] * len(lines)
    for cube, n in pieces:
        for i, line in enumerate(lines):
            if contains(line, cube):
                counts[i] += n
                break
        else:  # pragma: no cover - every piece lies in the merged cubes by construction
            raise AssertionError("a piece outside every line")
    return counts


def _cube_key(c: Cube) -> tuple[Any, ...]:
    return tuple(-b.bit_count() if i == 0 else b for i, b in enumerate(c))


def full_cube(space: ClassSpace) -> Cube:
    return tuple((1 << len(d)) - 1 for d in space.dims())


def gate_channels(space: ClassSpace) -> dict[int, list[int]]:
    """Channel class indices per gate class."""
    out: dict[int, list[int]] = defaultdict(list)
    for ci, k in enumerate(space.channels):
        out[k.key[0]].append(ci)
    return dict(out)


def blocks(ev: Evaluator, gi: int, xstates: Sequence[XState], channels: Sequence[int]
           ) -> Iterator[tuple[XState, int, tuple[int, ...]]]:
    """Every (state, channel-class bits, per-side result) of gate ``gi`` on the classes
    ``channels``."""
    cache: dict[int, list[tuple[tuple[Content, ...], int]]] = {}
    for xs in xstates:
        groups = cache.get(xs.sel)
        if groups is None:
            groups = cache[xs.sel] = ev.channel_groups(channels, sel=xs.sel)
        for contents, cbits in groups:
            yield xs, cbits, tuple(result(v, c) for v, c in zip(xs.values, contents,
                                                                strict=True))


def class_tools(space: ClassSpace, points: Iterable[Sequence[int]]
                ) -> dict[tuple[int, ...], tuple[int, ...]]:
    """The tools of a few classes (bits over the space's tools), per side: the factored
    evaluation of their agents and gates only, each class looked up in its state (a
    review's routed messages, whose run is a different class on each side)."""
    wanted = {tuple(p) for p in points}
    if not wanted:
        return {}
    agents = 0
    by_gate: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    for p in wanted:
        agents |= 1 << p[0]
        by_gate[space.channels[p[2]].key[0]].append(p)
    ev = Evaluator(space, (1 << len(space.tool_names)) - 1, agents=agents)
    states = ev.ap_states()
    out: dict[tuple[int, ...], tuple[int, ...]] = {}
    for gi, found in sorted(by_gate.items()):
        # (agent, owner, sandbox, subagent) -> the states holding it, by provider classes
        held: dict[tuple[int, int, int, int], list[tuple[int, XState]]] = defaultdict(list)
        for xs in ev.x_states(gi, states):
            for aps, o, s, k in xs.members:
                for a, pbits in aps.members:
                    held[(a, o, s, k)].append((pbits, xs))
        for p in sorted(found):
            state = next((x for pbits, x in held.get((p[0], p[3], p[4], p[5]), ())
                          if pbits >> p[1] & 1), None)
            if state is None:
                raise LookupError(f"class {p} holds no request (ClassSpace.holds)")
            contents = ev.channel_groups([p[2]], sel=state.sel)[0][0]
            out[p] = tuple(result(v, c) for v, c in zip(state.values, contents, strict=True))
    return out
