"""Context classes: the finite partition of requests that the tables distinguish, evaluated
exactly and factored (``toolc diff``, assertions, lints and ``build/ACCESS.md``).

A request's tool set depends on six effective inputs, each with finitely many classes:

* **agent**: each declared agent, plus "no declared agent" (no agent, or an undeclared one:
  the global policy only);
* **provider**: the (provider, model) pairs that some byProvider key, availability gate or
  ``applyPatch.allowModels`` entry tells apart, plus "any other provider";
* **channel**: where the group layer lands (channel, account, group, sender rule), or "no
  group"; and, where availability depends on the message channel, whether the channel was
  given explicitly or only came from the session key or ``spawned_by``;
* **owner** (or not), **sandboxed** (or not), **subagent** (none, not a leaf, leaf).

Every request falls into exactly one class and every class has a representative request
(``Klass.flags``) that reproduces it. Classes are never enumerated as a product: the
evaluation groups (agent, provider) pairs and group locations into kinds by the table
entries they select, evaluates kind pairs, and multiplies counts.

The engine reads ``tables.json`` (one side, or two sides in a shared tool index for a diff).
Its lookups port the generated runtime's; the brute-force tests hold both to the reference
interpreter.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .names import group_candidates, normalize_account_id

DIMS = ("agent", "provider", "channel", "owner", "sandbox", "subagent")
OTHER = "toolc-other"  # the stem of fresh values that no definition declares


class Stack(NamedTuple):
    mention: int
    fixed: int
    layers: tuple[tuple[int, int, int], ...]


NO_LAYER = Stack(0, -1, ())


class Record(NamedTuple):
    stack: int
    bp: dict[str, list[int]]
    sandbox: int
    ap: int


class TablesView:
    """One build's tables with every bitset mapped into a shared tool index."""

    def __init__(self, data: Mapping[str, Any], tools: Sequence[str]) -> None:
        own = list(data["tools"])
        self.tools = own
        index = {n: i for i, n in enumerate(tools)}
        self._pos = None if own == list(tools[:len(own)]) else [index[n] for n in own]
        self._raw_bits: list[str] = data["bitsets"]
        self._raw_layers: list[str] = data["layers"]
        self._raw_stacks: list[str] = data["stacks"]
        self._bits: dict[int, int] = {}
        self._stacks: dict[int, Stack] = {}
        masks = data["masks"]
        self.non_optional = self.bits(masks["non_optional"])
        self.non_owner = self.bits(masks["non_owner"])
        self.always = self.bits(masks["always"])
        self.agents: dict[str, int] = dict(data["agents"])
        self.records = [Record(r["stack"], r["bp"], r["sandbox"], int(r["ap"]))
                        for r in data["agent_records"]]
        self.global_bp: dict[str, list[int]] = dict(data["global_bp"])
        self.provider_profiles: list[list[int]] = data["provider_profiles"]
        self.gates = [(self.bits(g["bits"]), _keyset(g["providers"]), _keyset(g["models"]),
                       _keyset(g["channels"]), _keyset(g["exclude_channels"]))
                      for g in data["gates"]]
        ap = data["apply_patch"]
        self.ap_bit = 0 if ap["bit"] < 0 else self._map(1 << int(ap["bit"]))
        self.ap_variants = [(bool(e), None if m is None else tuple(m))
                            for e, m in ap["variants"]]
        self.channels: dict[str, dict[str, Any]] = {
            name: json.loads(raw) for name, raw in data["channels"].items()}
        sub = data["subagent"]
        self.subagent: tuple[int, int] = (int(sub["stacks"][0]), int(sub["stacks"][1]))
        self.leaf_depth = max(1, int(sub["max_spawn_depth"]))
        self._present: dict[tuple[Any, ...], int] = {}

    # -- decoding ----------------------------------------------------------------------------
    def _map(self, bits: int) -> int:
        if self._pos is None:
            return bits
        out, i = 0, 0
        while bits:
            if bits & 1:
                out |= 1 << self._pos[i]
            bits >>= 1
            i += 1
        return out

    def bits(self, index: int) -> int:
        bits = self._bits.get(index)
        if bits is None:
            raw = self._raw_bits[index]
            runs = [int(x) for x in raw.split(".")] if raw else []
            bits = 0
            for k in range(0, len(runs), 2):
                bits |= ((1 << runs[k + 1]) - 1) << runs[k]
            bits = self._bits[index] = self._map(bits)
        return bits

    def stack(self, index: int) -> Stack:
        """A stack by index; -1 is a configured block without lists (no layer)."""
        if index < 0:
            return NO_LAYER
        stack = self._stacks.get(index)
        if stack is None:
            raw = [int(x) for x in self._raw_stacks[index].split(".")]
            layers = []
            for i in raw[2:]:
                w, a, d = (int(x) for x in self._raw_layers[i].split("."))
                layers.append((-1 if w < 0 else self.bits(w), self.bits(a), self.bits(d)))
            stack = self._stacks[index] = Stack(self.bits(raw[0]), self.bits(raw[1]),
                                                tuple(layers))
        return stack

    # -- the runtime's lookups (same rules as the generated runtime) -------------------------
    def record(self, agent: str | None) -> tuple[int, Record]:
        index = self.agents.get(agent, 0) if agent is not None else 0
        return index, self.records[index]

    def present(self, variant: int, provider: str | None, model: str | None,
                channel: str | None) -> int:
        key = (variant, provider, model, channel)
        cached = self._present.get(key)
        if cached is not None:
            return cached
        present = self.always
        for bits, providers, models, channels, excluded in self.gates:
            if providers is not None and provider not in providers:
                continue
            if channels is not None and channel not in channels:
                continue
            if excluded is not None and channel in excluded:
                continue
            if models is None or _model_in(models, provider, model):
                present |= bits
        if present & self.ap_bit and not self.apply_patch_ok(variant, provider, model):
            present &= ~self.ap_bit
        self._present[key] = present
        return present

    def apply_patch_ok(self, variant: int, provider: str | None, model: str | None) -> bool:
        if not self.ap_variants:
            return False
        enabled, models = self.ap_variants[variant]
        if not enabled:
            return False
        if not models:
            return True
        if not model:
            return False
        full = model if "/" in model or not provider else f"{provider}/{model}"
        return any(m and m in (model, full) for m in models)

    def provider_entries(self, record: Record, provider: str | None, model: str | None
                         ) -> tuple[str | None, str | None]:
        """The (agent, global) byProvider keys a provider and model select."""
        if provider is None:
            return None, None
        full = (model if "/" in model else f"{provider}/{model}") if model else None
        ge = full if full is not None and full in self.global_bp else (
            provider if provider in self.global_bp else None)
        bp = record.bp
        ae = full if full is not None and full in bp else (provider if provider in bp else None)
        return ae, ge

    def provider_stacks(self, record: Record, ae: str | None, ge: str | None) -> tuple[int, ...]:
        out: list[int] = []
        profile = also = -1
        if ae is not None:
            entry = record.bp[ae]
            out.append(entry[0])
            profile, also = entry[1], entry[2]
        if ge is not None:
            entry = self.global_bp[ge]
            out.append(entry[0])
            profile = entry[1] if profile < 0 else profile
            also = entry[2] if also < 0 else also
        if profile >= 0:
            chosen = self.provider_profiles[profile][also + 1]
            if chosen >= 0:
                out.append(chosen)
        return tuple(out)

    def group(self, channel: str, group: str, account: str | None,
              sender: tuple[str, str] | None) -> tuple[Any, int | None]:
        """(decision, stack index or None) of the group layer: which map, entry and rule."""
        ch = self.channels.get(channel)
        if ch is None:
            return None, None
        gmap, where = ch["groups"], "channel"
        acc_id = normalize_account_id(account)
        acc = ch["accounts"].get(acc_id, _MISSING)
        if acc is _MISSING:
            acc = ch["accounts_folded"].get(acc_id, _MISSING)
            key = next((k for k in ch["accounts"] if k.lower() == acc_id), None)
        else:
            key = acc_id
        if acc is not _MISSING and acc is not None:
            gmap, where = acc, f"account:{key}"
        if gmap is None:
            return None, None
        if sender is not None and sender[0] == "e164" and not ch["e164"]:
            sender = None
        exact = gmap["exact"]
        for gid in group_candidates(channel, group):
            specific, sid = exact.get(gid), gid
            if specific is None and gmap["folded"]:
                specific = gmap["folded"].get(gid.lower())
                sid = next((k for k in exact if k != "*" and k.lower() == gid.lower()), gid)
            for entry, eid in ((specific, sid), (exact.get("*"), "*")):
                if entry is None:
                    continue
                if len(entry) > 1:
                    hit = _sender_hit(entry, sender)
                    if hit is not None:
                        return (where, eid, hit[0]), hit[1]
                if entry[0] is not None:
                    return (where, eid, None), entry[0]
        return None, None

    def subagent_stack(self, depth: int) -> int | None:
        if depth <= 0:
            return None
        return self.subagent[1] if depth >= self.leaf_depth else self.subagent[0]


_MISSING: Any = object()
_BUCKETS = {"id": 1, "e164": 2, "username": 3, "name": 4}


def _sender_hit(entry: list[Any], sender: tuple[str, str] | None
                ) -> tuple[tuple[str, str] | str, int] | None:
    if sender is not None:
        kind, value = sender
        hit = entry[_BUCKETS[kind]].get(value)
        if hit is not None:
            return (kind, value), hit
    return None if entry[5] is None else ("*", entry[5])


def _keyset(values: list[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(values)


def _model_in(models: frozenset[str], provider: str | None, model: str | None) -> bool:
    if not model:
        return False
    return model in models or ("/" not in model and f"{provider}/{model}" in models)


def eval_stack(view: TablesView, index: int, present: int) -> int:
    stack = view.stack(index)
    bits = stack.fixed
    for witness, allow_pass, deny_pass in stack.layers:
        bits &= allow_pass if witness & present else deny_pass
    return bits


# -- classes ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class Klass:
    """One value of one dimension: its words, and the request flags that reproduce it."""

    label: str
    flags: tuple[tuple[str, Any], ...] = ()
    key: tuple[Any, ...] = ()  # what the dimension's engine needs (agent id, provider, ...)
    group: tuple[str, ...] = ()  # hierarchy used to fold labels (channel, account, group)
    stacks: tuple[int | None, ...] = ()  # channel classes: the group-layer stack per side


def _fresh(taken: Iterable[str], stem: str = OTHER) -> str:
    taken = set(taken)
    value, n = stem, 1
    while value in taken:
        n += 1
        value = f"{stem}-{n}"
    return value


class ClassSpace:
    """The classes of one build, or the common refinement of two (a diff)."""

    def __init__(self, views: Sequence[TablesView]) -> None:
        self.views = list(views)
        self.agents = self._agents()
        self.providers = self._providers()
        self.gate_classes, self.gate_of = self._gate_classes()
        self.channels = self._channels()
        self.owner = [Klass(label="non-owner", key=(False,)),
                      Klass(label="owner", flags=(("sender_is_owner", True),), key=(True,))]
        self.sandbox = [Klass(label="not sandboxed", key=(False,)),
                        Klass(label="sandboxed", flags=(("sandboxed", True),), key=(True,))]
        self.subagent = self._subagents()

    def dims(self) -> tuple[list[Klass], ...]:
        return (self.agents, self.providers, self.channels, self.owner, self.sandbox,
                self.subagent)

    def size(self) -> int:
        n = 1
        for d in self.dims():
            n *= len(d)
        return n

    def flags(self, point: Sequence[int]) -> dict[str, Any]:
        """The representative request of a class (``resolve`` keywords)."""
        out: dict[str, Any] = {}
        for dim, i in zip(self.dims(), point, strict=True):
            out.update(dim[i].flags)
        return out

    # agents ---------------------------------------------------------------------------------
    def _agents(self) -> list[Klass]:
        ids = sorted({a for v in self.views for a in v.agents})
        out = [Klass(label=f"agent {a}", flags=(("agent_id", a),), key=(a,)) for a in ids]
        out.append(Klass(label="no declared agent", key=(None,)))
        return out

    # providers ------------------------------------------------------------------------------
    def _providers(self) -> list[Klass]:
        keys: set[str] = set()
        gate_models: set[str] = set()
        gate_providers: set[str] = set()
        for v in self.views:
            keys.update(v.global_bp)
            for r in v.records:
                keys.update(r.bp)
            for _, gate_p, gate_m, _, _ in v.gates:
                gate_providers.update(gate_p or ())
                gate_models.update(gate_m or ())
            for _, allow_models in v.ap_variants:
                gate_models.update(m for m in allow_models or () if m)
        providers: set[str] = set(gate_providers)
        models: set[str] = set()
        for k in keys | gate_models:
            if "/" in k:
                p, m = k.split("/", 1)
                providers.add(p)
                models.update((k, m))
            elif k in keys:
                providers.add(k)
            else:
                models.add(k)
        other = _fresh(providers)
        candidates: list[tuple[str | None, str | None]] = [(None, None), (other, None)]
        candidates += [(p, None) for p in sorted(providers)]
        for prov in [*sorted(providers), other, None]:
            candidates += [(prov, m) for m in sorted(models)]
        seen: dict[Any, int] = {}
        out: list[Klass] = []
        for provider, model in candidates:
            sig = tuple(self._provider_sig(v, provider, model) for v in self.views)
            if sig in seen:
                continue
            seen[sig] = len(out)
            flags: list[tuple[str, Any]] = []
            if provider is not None:
                flags.append(("model_provider", provider))
            if model is not None:
                flags.append(("model_id", model))
            if provider in (None, other):
                label = "any other provider" if model is None else \
                    f"any other provider with model {model}"
                group = ("any other provider",)
            else:
                label = f"provider {provider}" + (f" model {model}" if model else "")
                group = (f"provider {provider}",)
            out.append(Klass(label=label, flags=tuple(flags), key=(provider, model),
                             group=group))
        return out

    @staticmethod
    def _provider_sig(v: TablesView, provider: str | None, model: str | None) -> Any:
        gates = tuple(
            (providers is None or provider in providers)
            and (models is None or _model_in(models, provider, model))
            for _, providers, models, _, _ in v.gates)
        # apply_patch also needs a gate that carries it: the allowModels verdict matters only
        # where that gate passes
        ap_gate = any(g and bits & v.ap_bit for g, (bits, *_) in zip(gates, v.gates, strict=True))
        ap = tuple(ap_gate and v.apply_patch_ok(i, provider, model)
                   for i in range(len(v.ap_variants)))
        entries = tuple(v.provider_entries(r, provider, model) for r in _bp_records(v))
        return gates, ap, entries, v.provider_entries(v.records[0], provider, model)[1]

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
        out: list[Klass] = []
        for gi, rep in enumerate(self.gate_classes):
            label = "no group" if rep is None else f"no group, channel {rep}"
            flags = () if rep is None else (("message_provider", rep),)
            out.append(Klass(label=label, flags=flags, key=(gi, None), group=("no group",),
                             stacks=tuple(None for _ in self.views)))
        for name in sorted({c for v in self.views for c in v.channels}):
            out.extend(self._channel(name))
        return out

    def _channel(self, name: str) -> Iterator[Klass]:
        chans = [v.channels.get(name) for v in self.views]
        maps = [m for ch in chans if ch for m in (ch["groups"], *ch["accounts"].values()) if m]
        declared = sorted({a for ch in chans if ch for a in ch["accounts"]})
        accounts: list[str | None] = [None, *declared]
        if "default" in declared:
            accounts.append(_fresh(declared, OTHER))
        gids = sorted({g for m in maps for g in m["exact"] if g != "*"})
        other_group = _fresh(gids)
        acc_sigs: dict[Any, str | None] = {}
        for acc in accounts:
            acc_sigs.setdefault(tuple(self._map_key(v, name, acc) for v in self.views), acc)
        acc_classes = list(acc_sigs.values())
        gate_explicit = self.gate(name)
        gate_session = self.gate(None)
        gate_modes = [(gate_explicit, False)]
        if gate_session != gate_explicit:
            gate_modes.append((gate_session, True))
        for acc in acc_classes:
            for gid in [*gids, other_group]:
                senders = self._sender_candidates(maps, name, gid)
                seen: dict[Any, int] = {}
                rows: list[tuple[tuple[str, str] | None, Any]] = []
                for sender in [None, *senders]:
                    sig = tuple(v.group(name, gid, acc, sender) for v in self.views)
                    if sig in seen:
                        continue
                    seen[sig] = len(rows)
                    rows.append((sender, sig))
                group_label = "any other group" if gid == other_group else f"group {gid}"
                for gi, session_only in gate_modes:
                    for sender, sig in rows:
                        parts = [f"channel {name}"]
                        if session_only:
                            parts[0] += " (from the session key only)"
                        acc_label = self._account_label(acc, acc_classes)
                        if acc_label:
                            parts.append(acc_label)
                        parts.append(group_label)
                        if len(rows) > 1:
                            parts.append("any other sender" if sender is None
                                         else f"sender {sender[0]}:{sender[1]}")
                        flags: list[tuple[str, Any]] = []
                        if session_only:
                            flags.append(("spawned_by", f"{name}:group:{gid}"))
                        else:
                            flags.append(("message_provider", name))
                        if acc is not None:
                            flags.append(("account_id", acc))
                        flags.append(("group_id", gid))
                        if sender is not None:
                            flags.append((_SENDER_FLAGS[sender[0]], sender[1]))
                        yield Klass(label=", ".join(parts),
                                    flags=tuple(flags), key=(gi, (name, gid, acc, sender)),
                                    group=(parts[0], acc_label, group_label),
                                    stacks=tuple(stack for _, stack in sig))

    @staticmethod
    def _map_key(v: TablesView, name: str, acc: str | None) -> Any:
        ch = v.channels.get(name)
        if ch is None:
            return None
        acc_id = normalize_account_id(acc)
        if acc_id in ch["accounts"]:
            return None if ch["accounts"][acc_id] is None else acc_id
        folded = next((k for k in ch["accounts"] if k.lower() == acc_id), None)
        if folded is not None and ch["accounts"][folded] is not None:
            return folded
        return None

    @staticmethod
    def _account_label(acc: str | None, classes: list[str | None]) -> str:
        if len(classes) == 1:
            return ""
        if acc is None:
            return "any other account"
        return f"account {acc}"

    @staticmethod
    def _sender_candidates(maps: list[dict[str, Any]], channel: str, gid: str
                           ) -> list[tuple[str, str]]:
        ids = set(group_candidates(channel, gid)) | {"*"}
        found: set[tuple[str, str]] = set()
        for m in maps:
            entries = [m["exact"].get(i) for i in ids]
            entries += [m["folded"].get(i.lower()) for i in ids]
            for entry in entries:
                if entry is not None and len(entry) > 1:
                    for kind, bucket in _BUCKETS.items():
                        found.update((kind, value) for value in entry[bucket])
        return sorted(found)

    # subagents ------------------------------------------------------------------------------
    def _subagents(self) -> list[Klass]:
        top = max(v.leaf_depth for v in self.views)
        seen: dict[Any, int] = {}
        out: list[Klass] = []
        for depth in range(top + 1):
            sig = tuple(v.subagent_stack(depth) is not None and depth >= v.leaf_depth
                        if depth else None for v in self.views)
            if sig in seen:
                continue
            seen[sig] = len(out)
            out.append(Klass(label="", flags=(("spawn_depth", depth),) if depth else (),
                             key=(depth,)))
        labelled = []
        for i, k in enumerate(out):
            depth = k.key[0]
            if depth == 0:
                label = "not a subagent"
            elif len(self.views) == 1 or all(v.leaf_depth == self.views[0].leaf_depth
                                              for v in self.views):
                label = "leaf subagent" if depth >= self.views[0].leaf_depth else \
                    "subagent (not a leaf)"
            else:
                last = i == len(out) - 1
                label = f"subagent depth {depth}" + (" or more" if last else "")
            labelled.append(Klass(label=label, flags=k.flags, key=k.key))
        return labelled


_SENDER_FLAGS = {"id": "sender_id", "e164": "sender_e164", "username": "sender_username",
                 "name": "sender_name"}


def _bp_records(v: TablesView) -> list[Record]:
    return [r for r in v.records if r.bp]


# -- factored evaluation ---------------------------------------------------------------------
# A stack restricted to the tools of interest R: (mention, fixed, stripping layers), where a
# layer whose two passes agree on R has been folded into ``fixed``. Restricted contents are
# interned, so (agent, provider) pairs and group locations that treat R alike share a state.
Content = tuple[int, int, tuple[tuple[int, int, int], ...]]
_NEUTRAL: Content = (0, -1, ())


def restrict_stack(stack: Stack, r: int) -> Content:
    fixed = stack.fixed & r
    layers: list[tuple[int, int, int]] = []
    for w, allow_pass, deny_pass in stack.layers:
        a, d = allow_pass & r, deny_pass & r
        if w == -1 or a == d:
            fixed &= a
        else:
            layers.append((w, a, d))
    return (stack.mention & r, fixed, tuple(layers))


def combine(contents: Iterable[Content]) -> Content:
    mention, fixed = 0, -1
    layers: list[tuple[int, int, int]] = []
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


@dataclass(slots=True)
class APState:
    """(agent, provider) pairs whose agent, byProvider and provider-profile layers, sandbox
    layer and apply_patch verdict are alike on R, on every side."""

    inputs: tuple[tuple[Content, Content, bool, tuple[bool, ...]], ...]
    members: list[tuple[int, int]] = field(default_factory=list)  # (agent, provider)


@dataclass(slots=True)
class XState:
    """Per side (present, evaluated non-group layers on R, their mentions on R)."""

    values: tuple[tuple[int, int, int], ...]
    members: list[tuple[APState, int, int, int]] = field(default_factory=list)  # ap, o, s, k


@dataclass(slots=True)
class Block:
    """The classes x.members x channels, with one result (restricted to R) per side."""

    x: XState
    channels: list[int]
    results: tuple[int, ...]


class Analysis:
    """Evaluates every class of a ClassSpace on the tools ``restrict`` (default: all), state
    by state: never the product of the dimensions."""

    def __init__(self, space: ClassSpace, restrict: int | None = None) -> None:
        self.space = space
        self.views = space.views
        self.r = -1 if restrict is None else restrict
        self._contents: list[dict[tuple[int, ...], Content]] = [{} for _ in self.views]

    def content(self, side: int, stacks: tuple[int, ...]) -> Content:
        cache = self._contents[side]
        c = cache.get(stacks)
        if c is None:
            v = self.views[side]
            c = cache[stacks] = combine(restrict_stack(v.stack(i), self.r) for i in stacks)
        return c

    def blocks(self) -> Iterator[Block]:
        space = self.space
        ap_states = self._ap_states()
        by_gate: dict[int, list[int]] = defaultdict(list)
        for ci, k in enumerate(space.channels):
            by_gate[k.key[0]].append(ci)
        for gi in sorted(by_gate):
            lgroups: dict[tuple[Content, ...], list[int]] = {}
            for ci in by_gate[gi]:
                stacks = space.channels[ci].stacks
                key = tuple(_NEUTRAL if s is None else self.content(side, (s,))
                            for side, s in enumerate(stacks))
                lgroups.setdefault(key, []).append(ci)
            for xs in self._x_states(ap_states, gi):
                for lkey, members in lgroups.items():
                    yield Block(xs, members, self._final(xs, lkey))

    def _final(self, xs: XState, lkey: tuple[Content, ...]) -> tuple[int, ...]:
        out = []
        for v, (present, bits, mention), lc in zip(self.views, xs.values, lkey, strict=True):
            visible = v.non_optional | mention | lc[0]
            out.append(present & self.r & visible & bits & eval_content(lc, present))
        return tuple(out)

    def _ap_states(self) -> list[APState]:
        space, views = self.space, self.views
        sigs: list[list[tuple[bool, ...]]] = []
        for v in views:
            sigs.append([tuple((providers is None or k.key[0] in providers)
                               and (models is None or _model_in(models, *k.key))
                               for _, providers, models, _, _ in v.gates)
                         for k in space.providers])
        states: dict[Any, APState] = {}
        for ai, agent in enumerate(space.agents):
            recs = [v.record(agent.key[0])[1] for v in views]
            sandboxes = [self.content(side, (rec.sandbox,)) for side, rec in enumerate(recs)]
            for pi, prov in enumerate(space.providers):
                provider, model = prov.key
                key = []
                for side, (v, rec) in enumerate(zip(views, recs, strict=True)):
                    ae, ge = v.provider_entries(rec, provider, model)
                    stacks = (rec.stack, *v.provider_stacks(rec, ae, ge))
                    key.append((self.content(side, stacks), sandboxes[side],
                                v.apply_patch_ok(rec.ap, provider, model), sigs[side][pi]))
                tkey = tuple(key)
                state = states.get(tkey)
                if state is None:
                    state = states[tkey] = APState(tkey)
                state.members.append((ai, pi))
        return list(states.values())

    def _x_states(self, ap_states: list[APState], gi: int) -> list[XState]:
        views = self.views
        channel = self.space.gate_classes[gi]
        chan_ok = [[(channels is None or channel in channels)
                    and (excluded is None or channel not in excluded)
                    for _, _, _, channels, excluded in v.gates] for v in views]
        subs = [[None if (st := v.subagent_stack(k.key[0])) is None
                 else self.content(side, (st,)) for k in self.space.subagent]
                for side, v in enumerate(views)]
        out: dict[Any, XState] = {}
        for aps in ap_states:
            for o in (0, 1):
                presents = []
                for side, (v, (_, _, ap_ok, sig)) in enumerate(zip(views, aps.inputs,
                                                                  strict=True)):
                    present = v.always
                    for (bits, *_), ok, cok in zip(v.gates, sig, chan_ok[side], strict=True):
                        if ok and cok:
                            present |= bits
                    if not ap_ok:
                        present &= ~v.ap_bit
                    presents.append(present if o else present & v.non_owner)
                for s in (0, 1):
                    for k in range(len(self.space.subagent)):
                        values = []
                        for side, (main, sandbox, _, _) in enumerate(aps.inputs):
                            present = presents[side]
                            bits = eval_content(main, present)
                            mention = main[0]
                            if s:
                                bits &= eval_content(sandbox, present)
                                mention |= sandbox[0]
                            sub = subs[side][k]
                            if sub is not None:
                                bits &= eval_content(sub, present)
                                mention |= sub[0]
                            values.append((present, bits, mention))
                        tkey = tuple(values)
                        xs = out.get(tkey)
                        if xs is None:
                            xs = out[tkey] = XState(tkey)
                        xs.members.append((aps, o, s, k))
        return list(out.values())

    # -- cubes: blocks as products of per-dimension sets, for counting and words -------------
    def cubes(self, block: Block) -> list[Cube]:
        by_rest: dict[tuple[int, int, int], list[APState]] = defaultdict(list)
        for aps, o, s, k in block.x.members:
            by_rest[(o, s, k)].append(aps)
        channels = frozenset(block.channels)
        out: list[Cube] = []
        for (o, s, k), states in by_rest.items():
            by_agent: dict[int, set[int]] = defaultdict(set)
            for aps in states:
                for a, p in aps.members:
                    by_agent[a].add(p)
            by_pset: dict[frozenset[int], set[int]] = defaultdict(set)
            for a, ps in by_agent.items():
                by_pset[frozenset(ps)].add(a)
            for pset, agents in by_pset.items():
                out.append((frozenset(agents), pset, channels, frozenset((o,)), frozenset((s,)),
                            frozenset((k,))))
        return out


Cube = tuple[frozenset[int], ...]


def merge_cubes(cubes: Iterable[Cube]) -> list[Cube]:
    """Merge disjoint cubes that differ in one dimension only, until nothing merges."""
    current = list(cubes)
    changed = True
    while changed:
        changed = False
        for d in range(len(DIMS)):
            groups: dict[tuple[frozenset[int], ...], set[int]] = {}
            for c in current:
                groups.setdefault(c[:d] + c[d + 1:], set()).update(c[d])
            if len(groups) < len(current):
                changed = True
            current = [(*rest[:d], frozenset(values), *rest[d:])
                       for rest, values in groups.items()]
    return sorted(current, key=_cube_key)


def summarize(cubes: Sequence[Cube], filler: Sequence[Cube], sizes: Sequence[int]
              ) -> list[tuple[Cube, int]]:
    """Few cubes, in few words, covering exactly ``cubes`` (disjoint) with their class counts.

    Merged cubes are widened, one dimension at a time, to the whole dimension where the
    classes added are all in ``cubes`` or ``filler`` (classes where the answer does not
    matter), so that "agent viewer" stays one line; each count is only the classes of
    ``cubes`` a line covers (every class is counted once, on the first line that holds it).
    """
    merged = merge_cubes(cubes)
    pool = [*cubes, *filler]
    widened: list[Cube] = []
    for cube in sorted(merged, key=cube_size, reverse=True):
        c = cube
        for d in range(len(DIMS)):
            if len(c[d]) == sizes[d]:
                continue
            wide = (*c[:d], frozenset(range(sizes[d])), *c[d + 1:])
            if _covered(wide, pool):
                c = wide
        if c not in widened:
            widened.append(c)
    counts = [0] * len(widened)
    for c in cubes:
        for i, w in enumerate(widened):
            if all(a <= b for a, b in zip(c, w, strict=True)):
                counts[i] += cube_size(c)
                break
    return sorted(((w, n) for w, n in zip(widened, counts, strict=True) if n),
                  key=lambda wn: _cube_key(wn[0]))


def _covered(region: Cube, pool: Sequence[Cube]) -> bool:
    """Is every class of ``region`` in one of the (disjoint) ``pool`` cubes?"""
    total = 0
    for c in pool:
        n = 1
        for a, b in zip(region, c, strict=True):
            n *= len(a & b)
            if not n:
                break
        total += n
    return total == cube_size(region)


def _cube_key(c: Cube) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(sorted(s)) for s in c)


def cube_size(c: Cube) -> int:
    n = 1
    for s in c:
        n *= len(s)
    return n


# -- what can differ between two builds ------------------------------------------------------
def change_mask(space: ClassSpace) -> int:
    """Tools whose visibility can differ between the two sides in some class: an
    over-approximation from comparing every table entry a class can select, position by
    position (0: the two builds grant exactly the same everywhere). Evaluating on these tools
    only keeps the diff small when the change is."""
    vb, vh = space.views
    n = max(len(vb.tools), len(vh.tools), 1)
    everything = (1 << max(n, _joint_width(vb, vh))) - 1
    diff = 0
    own = [_tool_bits(vb), _tool_bits(vh)]
    diff |= own[0] ^ own[1]
    for a, b in ((vb.always, vh.always), (vb.non_optional, vh.non_optional),
                 (vb.non_owner, vh.non_owner)):
        diff |= (a ^ b) & everything
    if vb.gates != vh.gates:
        for v in (vb, vh):
            for bits, *_ in v.gates:
                diff |= bits
    if vb.ap_bit != vh.ap_bit or vb.ap_variants != vh.ap_variants:
        diff |= vb.ap_bit | vh.ap_bit
    present_diff = diff

    def touched(v: TablesView, index: int | None) -> int:
        if index is None or index < 0:
            return 0
        st = v.stack(index)
        bits = (~st.fixed & everything) | st.mention
        for _, a, d in st.layers:
            bits |= (~a | ~d) & everything
        return bits

    def stack_diff(ib: int | None, ih: int | None) -> int:
        sb = NO_LAYER if ib is None else vb.stack(ib)
        sh = NO_LAYER if ih is None else vh.stack(ih)
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

    def profiles(v: TablesView) -> list[list[Stack | None]]:
        return [[None if i < 0 else v.stack(i) for i in row] for row in v.provider_profiles]

    profiles_differ = profiles(vb) != profiles(vh)

    def profile_touched(v: TablesView, entry: list[int] | None) -> int:
        if entry is None or entry[1] < 0:
            return 0
        return sum_bits(touched(v, i) for i in v.provider_profiles[entry[1]])

    def bp_diff(eb: dict[str, list[int]], eh: dict[str, list[int]]) -> int:
        d = 0
        same_keys = set(eb) == set(eh)
        for key in sorted(set(eb) | set(eh)):
            b, h = eb.get(key), eh.get(key)
            if not same_keys or b is None or h is None:
                d |= touched(vb, None if b is None else b[0])
                d |= touched(vh, None if h is None else h[0])
                d |= profile_touched(vb, b) | profile_touched(vh, h)
                continue
            d |= stack_diff(b[0], h[0])
            if profiles_differ or b[1:] != h[1:]:
                d |= profile_touched(vb, b) | profile_touched(vh, h)
        return d

    if profiles_differ:
        d = 0
        for v, entries in ((vb, vb.global_bp), (vh, vh.global_bp)):
            for e in entries.values():
                d |= profile_touched(v, e)
        diff |= d
    diff |= bp_diff(vb.global_bp, vh.global_bp)
    for agent in space.agents:
        (_, rb), (_, rh) = vb.record(agent.key[0]), vh.record(agent.key[0])
        diff |= stack_diff(rb.stack, rh.stack) | stack_diff(rb.sandbox, rh.sandbox)
        ap_b = vb.ap_variants[rb.ap] if vb.ap_variants else None
        ap_h = vh.ap_variants[rh.ap] if vh.ap_variants else None
        if ap_b != ap_h:
            diff |= vb.ap_bit | vh.ap_bit
        diff |= bp_diff(rb.bp, rh.bp)
        if profiles_differ:
            diff |= bp_diff(rb.bp, {}) | bp_diff({}, rh.bp)
    if vb.leaf_depth != vh.leaf_depth:
        for v in (vb, vh):
            diff |= touched(v, v.subagent[0]) | touched(v, v.subagent[1])
    diff |= stack_diff(vb.subagent[0], vh.subagent[0])
    diff |= stack_diff(vb.subagent[1], vh.subagent[1])
    for k in space.channels:
        if k.key[1] is not None:
            diff |= stack_diff(*k.stacks)
    if present_diff:
        # a changed present set can flip any stripping layer whose witness it touches
        for v in (vb, vh):
            for i in range(len(v._raw_stacks)):
                for w, a, d in v.stack(i).layers:
                    if w & present_diff:
                        diff |= (a ^ d) & everything
    return diff & everything


def sum_bits(values: Iterable[int]) -> int:
    out = 0
    for v in values:
        out |= v
    return out


def _tool_bits(v: TablesView) -> int:
    return v._map((1 << len(v.tools)) - 1)


def _joint_width(vb: TablesView, vh: TablesView) -> int:
    return max(_tool_bits(vb).bit_length(), _tool_bits(vh).bit_length())
