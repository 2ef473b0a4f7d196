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
* **owner** (or not; with OpenClaw 2026.9 three classes: unknown, the default request,
  which keeps owner-only tools, the owner, and known not to be: ``sender_is_owner=False``),
  **sandboxed** (or not), **subagent** (none, not a leaf, leaf; where maxSpawnDepth is 1, a
  subagent at depth 0, never a leaf).
  Sandboxed is ``sandboxed=True`` or what the sandbox mode derives from the session key
  (``rules.sandbox``); when two sides derive differently (a diff that changes a mode), the
  session keys that tell them apart add classes ("sandboxed on one side only").

Every request falls into exactly one class and every class has a representative request
(``ClassSpace.flags``) that reproduces it, but for the classes no request falls in
(``ClassSpace.holds``: a subagent at depth 0 whose session key's sandbox mode rules out the
class's sandbox verdict). Classes are never enumerated as a product: the
evaluation groups (agent, provider) pairs and group locations into kinds by the table
entries they select, evaluates kind pairs, and multiplies counts.

The engine reads ``tables.json`` (one side, or two sides in a shared tool index for a diff).
Its lookups port the generated runtime's; the brute-force tests hold both to the reference
interpreter.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..pipeline import groups
from ..pipeline.policy import apply_patch_model_ok, choose_agent
from ..rules.channels import athash_slug, key_candidates
from ..rules.context import (
    Context,
    SessionInfo,
    group_context,
    parse_session_key,
    subagent9,
)
from ..rules.names import (
    group_candidates,
    normalize_agent_id,
    normalize_channel,
    normalize_key,
)
from ..rules.sandbox import SandboxModes, derive_sandboxed
from . import channels9 as c9

DIMS = ("agent", "provider", "channel", "owner", "sandbox", "subagent")
# The key of the subagent class "subagent at depth 0" (never a leaf), there when no depth
# a ``spawn_depth`` can give behaves like it on every side (a side with maxSpawnDepth 1)
DEPTH0 = -1
OTHER = groups.OTHER  # the stem of fresh values that no definition declares


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
    lean: bool = False  # experimental.localModelLean (2026.9)
    senders: list[Any] | None = None  # the agent's tools.toolsBySender entry (2026.9)


@dataclass(frozen=True, slots=True, kw_only=True)
class Unread:
    """A channel whose shards a diff left unread (the same on both sides, with the same
    tables around them): what ``split_tables`` recorded of it, its bitsets in the shared
    tool index."""

    classes: int  # per availability mode
    witnesses: int  # what the stripping layers of the stacks its classes reach test
    all_witnesses: int  # ... of every stack its shards hold


class InlineStacks:
    """Stacks written inline in shards (``toolc.pipeline.shards``), numbered from ``offset``
    (past every global stack of the views that share it) in the order first met. A diff's
    two sides share one pool, so a shard both sides hold is parsed once and its entries name
    the same stack numbers on both sides."""

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.texts: list[str] = []
        self._ids: dict[str, int] = {}
        # decoded once for every view whose tools come first in the shared tool index
        self.plain: dict[int, Stack] = {}

    def id(self, text: str) -> int:
        found = self._ids.get(text)
        if found is None:
            found = self._ids[text] = self.offset + len(self.texts)
            self.texts.append(text)
        return found

    def text(self, index: int) -> str:
        return self.texts[index - self.offset]


class TablesView:
    """One build's tables with every bitset mapped into a shared tool index.

    ``data`` is the one-dictionary form (``toolc.pipeline.shards.join_tables``: channels as
    compact JSON), or ``tables.json``'s own with ``channels`` given already parsed, their
    entries naming stacks of ``inline`` (and ``inline_ids``: the numbers this side's
    channels use); ``unread``: channels left unread, known by their summary alone."""

    def __init__(self, data: Mapping[str, Any], tools: Sequence[str], *,
                 channels: dict[str, dict[str, Any]] | None = None,
                 inline: InlineStacks | None = None,
                 inline_ids: Iterable[int] = (),
                 unread: Mapping[str, Unread] | None = None) -> None:
        self.data = data
        own = list(data["tools"])
        self.tools = own
        index = {n: i for i, n in enumerate(tools)}
        self._pos = None if own == list(tools[:len(own)]) else [index[n] for n in own]
        self._raw_bits: list[str] = data["bitsets"]
        self._raw_layers: list[str] = data["layers"]
        self._raw_stacks: list[str] = data["stacks"]
        self._inline = inline
        self._inline_ids = sorted(set(inline_ids))
        # channels whose maps were not read: ``channels`` holds their index entry only
        self.unread: Mapping[str, Unread] = unread or {}
        self._bits: dict[int, int] = {}
        self._stacks: dict[int, Stack] = {}
        masks = data["masks"]
        self.non_optional = self.bits(masks["non_optional"])
        self.non_owner = self.bits(masks["non_owner"])
        # the release's request-time switches (toolc.targets; absent: 2026.3.2)
        rules = data.get("target") or {}
        self.owner_unknown_keeps = bool(rules.get("owner_unknown_keeps", False))
        self.agent_selection = bool(rules.get("agent_selection", False))
        selection = data.get("selection") or {"default": "main", "ids": []}
        self.default_agent: str | None = selection["default"]
        self.agent_ids = tuple(selection["ids"]) or ("main",)
        self.always = self.bits(masks["always"])
        self.agents: dict[str, int] = dict(data["agents"])
        self.records = [Record(r["stack"], r["bp"], r["sandbox"], int(r["ap"]),
                               bool(r.get("lean", False)), r.get("sd"))
                        for r in data["agent_records"]]
        # localModelLean (2026.9): the lean tools, and per stack those its lists keep. A
        # stack's kept lean tools join its mention: for a lean agent they are visible only
        # where some layer keeps them, as optional tools are where some layer names them
        self.lean = self.bits(masks["lean"]) if "lean" in masks else 0
        self._raw_preserve: list[int] = data.get("stack_preserve") or []
        self.global_bp: dict[str, list[int]] = dict(data["global_bp"])
        self.provider_profiles: list[list[int]] = data["provider_profiles"]
        self.gates = [(self.bits(g["bits"]), _keyset(g["providers"]), _keyset(g["models"]),
                       _keyset(g["channels"]), _keyset(g["exclude_channels"]))
                      for g in data["gates"]]
        ap = data["apply_patch"]
        self.ap_bit = 0 if ap["bit"] < 0 else self.map_bits(1 << int(ap["bit"]))
        self.ap_variants = [(bool(e), None if m is None else tuple(m))
                            for e, m in ap["variants"]]
        self.channels: dict[str, dict[str, Any]] = channels if channels is not None else {
            name: json.loads(raw) for name, raw in data["channels"].items()}
        self.sandbox_modes = SandboxModes.from_json(data.get("sandbox"))
        sub = data["subagent"]
        self.subagent: tuple[int, int] = (int(sub["stacks"][0]), int(sub["stacks"][1]))
        self.leaf_depth = max(1, int(sub["max_spawn_depth"]))
        # 2026.9 getSubagentDepth (toolc.targets: subagent_depth_counts_leading) and
        # isSubagentSessionKey (subagent_key_rules): toolc.rules.context.subagent9
        self.depth_leading = bool(rules.get("subagent_depth_counts_leading", False))
        self.key_rules9 = bool(rules.get("subagent_key_rules", False))
        # 2026.9's group and sender layers (toolc.semantics.channels9): the trusted group id,
        # the generic resolver, tools.toolsBySender globally and per agent, typed keys
        self.trusted = bool(rules.get("group_id_needs_session", False))
        self.sender_layer = bool(rules.get("global_sender_layer", False))
        self.typed_keys = bool(rules.get("channel_sender_keys", False))
        self.request_aliases: dict[str, str] = dict(rules.get("request_channel_aliases") or {})
        self.global_senders: list[Any] | None = data.get("senders")
        # channels whose plugin resolver runs before the generic one (2026.9: Telegram's)
        self.plugin_resolvers = frozenset(rules.get("plugin_group_resolvers") or ())
        # 2026.9 normalizeToolProviderPolicyKey: a model id with `/` is provider-prefixed too
        self.slash_prefixed = bool(rules.get("slash_model_is_prefixed", False))
        self._present: dict[tuple[Any, ...], int] = {}
        self._witnesses: int | None = None
        self._bp_index: dict[str, frozenset[int]] | None = None

    def select_agent(self, agent_id: str | None, session_key: str | None) -> str:
        """2026.9's agent of a request (``toolc.pipeline.policy.choose_agent`` over the
        tables' ``selection``); raises AgentSelectionRequiredError where OpenClaw refuses."""
        return choose_agent(self.default_agent, self.agent_ids, agent_id, session_key)

    # -- decoding ----------------------------------------------------------------------------
    def map_bits(self, bits: int) -> int:
        """A bitset over this build's tools, re-indexed into the shared tool index."""
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
            bits = self._bits[index] = self.map_bits(runs_bits(self._raw_bits[index]))
        return bits

    def stack(self, index: int) -> Stack:
        """A stack by index; -1 is a configured block without lists (no layer)."""
        if index < 0:
            return NO_LAYER
        stack = self._stacks.get(index)
        if stack is None and index >= len(self._raw_stacks):
            assert self._inline is not None, f"stack {index} of no table"
            if self._pos is None:
                stack = self._inline.plain.get(index)
                if stack is None:
                    stack = self._inline.plain[index] = self._inline_stack(
                        self._inline.text(index))
            else:
                stack = self._inline_stack(self._inline.text(index))
            self._stacks[index] = stack
        if stack is None:
            raw = [int(x) for x in self._raw_stacks[index].split(".")]
            layers = []
            for i in raw[2:]:
                w, a, d = (int(x) for x in self._raw_layers[i].split("."))
                layers.append((-1 if w < 0 else self.bits(w), self.bits(a), self.bits(d)))
            mention = self.bits(raw[0])
            if self._raw_preserve:
                mention |= self.bits(self._raw_preserve[index])
            stack = self._stacks[index] = Stack(mention, self.bits(raw[1]), tuple(layers))
        return stack

    def _inline_stack(self, text: str) -> Stack:
        """A shard's inline stack: ``mention/fixed/flags/preserve/layer...``, bitsets as
        runs, a layer ``witness,allow,deny`` (``-``: a witness that never strips)."""
        mention, fixed, _, preserve, *layers = text.split("/")
        decoded = []
        for layer in layers:
            w, a, d = layer.split(",")
            decoded.append((-1 if w == "-" else self._runs(w), self._runs(a), self._runs(d)))
        return Stack(self._runs(mention) | self._runs(preserve), self._runs(fixed),
                     tuple(decoded))

    def _runs(self, raw: str) -> int:
        return self.map_bits(runs_bits(raw))

    def witnesses(self, index: int) -> int:
        """The tools stack ``index``'s stripping layers test the present set on."""
        if self.is_inline(index) and index not in self._stacks:
            assert self._inline is not None
            layers = self._inline.text(index).split("/")[4:]  # most shard stacks have none
            if not layers:
                return 0
        out = 0
        for w, _, _ in self.stack(index).layers:
            if w > 0:
                out |= w
        return out

    def same_inline(self, other: TablesView) -> bool:
        """Whether a shard's stack number means the same stack here and in ``other`` (one
        pool, the same tool order)."""
        return (self._inline is not None and self._inline is other._inline
                and self._pos == other._pos)

    def is_inline(self, index: int) -> bool:
        return index >= len(self._raw_stacks)

    def stack_ids(self) -> Iterator[int]:
        """Every stack of this side: the global ones, then those its shards hold."""
        yield from range(len(self._raw_stacks))
        yield from self._inline_ids

    def bp_index(self) -> dict[str, frozenset[int]]:
        """byProvider key -> the agent records that have an entry for it."""
        if self._bp_index is None:
            index: dict[str, set[int]] = defaultdict(set)
            for i, rec in enumerate(self.records):
                for key in rec.bp:
                    index[key].add(i)
            self._bp_index = {k: frozenset(v) for k, v in index.items()}
        return self._bp_index

    def witness_bits(self) -> int:
        """Every tool some stripping layer's witness names (what a present set is tested on)."""
        if self._witnesses is None:
            self._witnesses = 0
            for w in {raw.split(".", 1)[0] for raw in self._raw_layers}:
                if int(w) >= 0:
                    self._witnesses |= self.bits(int(w))
            for i in self._inline_ids:
                self._witnesses |= self.witnesses(i)
            for skipped in self.unread.values():
                self._witnesses |= skipped.all_witnesses
        return self._witnesses

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
        return bool(enabled) and apply_patch_model_ok(models, provider, model)

    def provider_entries(self, record: Record, provider: str | None, model: str | None
                         ) -> tuple[str | None, str | None]:
        """The (agent, global) byProvider keys a provider and model select."""
        if provider is None:
            return None, None
        full = self.model_key(provider, model)
        ge = full if full is not None and full in self.global_bp else (
            provider if provider in self.global_bp else None)
        bp = record.bp
        ae = full if full is not None and full in bp else (provider if provider in bp else None)
        return ae, ge

    def model_key(self, provider: str, model: str | None) -> str | None:
        """The byProvider key of a provider and model (the runtime's ``_provider_stacks``)."""
        if not model:
            return None
        return f"{provider}/{model}" if self.slash_prefixed or "/" not in model else model

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
              senders: Sequence[tuple[str, str]] = (),
              where: tuple[str | None, str | None] = (None, None)) -> tuple[Any, int | None]:
        """(decision, stack index or None) of the group layer: which map, entry and rule.
        ``senders``: the sender's candidate keys in the runtime's order (``sender_keys``);
        ``where``: the request's (group_space, group_channel)."""
        ch = self.channels.get(channel)
        kind = ch["rule"]["kind"] if ch else "groups"
        if kind == "groups":
            return self.decide(channel, self.group_map(channel, account), group, senders)
        assert ch is not None
        rule = ch["rule"]
        if not rule["e164"]:
            senders = [s for s in senders if s[0] != "e164"]
        if kind == "pick":
            found = self.group_map(channel, account)
            if found is None:
                return None, None
            exact = found[1]["exact"]
            keys = key_candidates(tuple(rule["keys"]), group, *where)
            key = next((k for k in keys if k in exact), "*" if "*" in exact else None)
            return (None, None) if key is None else _entry_decision(
                (found[0], key), exact[key], senders)
        return self._nested(ch, rule, group, senders, where)

    @staticmethod
    def _nested(ch: dict[str, Any], rule: dict[str, Any], group: str,
                senders: Sequence[tuple[str, str]], where: tuple[str | None, str | None]
                ) -> tuple[Any, int | None]:
        key = _guild_key(ch, rule, group, where[0])
        if key is None:
            return None, None
        guild = ch["spaces"]["entries"][key]
        inner = guild[2]["exact"] if guild[2] else None
        if inner:
            ikeys = key_candidates(tuple(rule["inner_keys"]), group, *where)
            ikey = next((k for k in ikeys if k in inner), None)
            if ikey is not None:
                decision, stack = _entry_decision((key, ikey), inner[ikey], senders)
                if stack is not None:
                    return decision, stack
        return _entry_decision((key, None), guild[0], senders)

    def group_map(self, channel: str, account: str | None) -> tuple[str, Any] | None:
        """The group map an account uses on a channel (the account's, else the channel's)."""
        return groups.group_map(self.channels.get(channel), account)

    def decide(self, channel: str, found: tuple[str, Any] | None, group: str,
               senders: Sequence[tuple[str, str]]) -> tuple[Any, int | None]:
        return groups.decide(channel, self.channels[channel], found, group, senders)

    def subagent_stack(self, depth: int) -> int | None:
        """The subagent layer's stack at ``depth`` (0: no subagent; DEPTH0: a subagent at
        depth 0, which neither release makes a leaf)."""
        if depth == DEPTH0:
            return self.subagent[0]
        if depth <= 0:
            return None
        return self.subagent[1] if depth >= self.leaf_depth else self.subagent[0]


_MISSING: Any = groups.MISSING
_BUCKETS = groups.BUCKETS
_sender_hit = groups.sender_hit


def _guild_key(ch: dict[str, Any], rule: dict[str, Any], group: str, space: str | None
               ) -> str | None:
    """The outer key a nested rule chooses (Discord: guild id, slug key, slug field, ``*``)."""
    spaces = ch["spaces"]
    if not spaces:
        return None
    entries = spaces["entries"]
    keys = key_candidates(tuple(rule["keys"]), group, space, None)
    key = next((k for k in keys if k in entries), None)
    slug = athash_slug(space)
    if key is None and slug:
        key = next((k for k in spaces["order"] if entries[k][1] == slug), None)
    if key is None and "*" in entries:
        key = "*"
    return key


def _entry_decision(prefix: tuple[Any, ...], entry: list[Any],
                    senders: Sequence[tuple[str, str]]) -> tuple[Any, int | None]:
    """One chosen entry: its sender rule, else its tools (stack None: neither)."""
    if len(entry) > 1:
        hit = _sender_hit(entry, senders)
        if hit is not None:
            return (*prefix, hit[0]), hit[1]
    return (*prefix, None), entry[0]


def sender_keys(sender_id: str | None = None, sender_e164: str | None = None,
                sender_username: str | None = None, sender_name: str | None = None
                ) -> list[tuple[str, str]]:
    """A sender's candidate toolsBySender keys, in the order the runtime tries them."""
    out: list[tuple[str, str]] = []
    if sender_id is not None and sender_id.strip():
        sid = sender_id.strip().lower()
        out.append(("id", sid))
        if sid.startswith("@"):
            out.append(("id", sid[1:]))
    for kind, value in (("e164", sender_e164), ("username", sender_username),
                        ("name", sender_name)):
        if value is not None and value.strip():
            norm = value.strip().lower()
            out.append((kind, norm.removeprefix("@") if kind == "username" else norm))
    return out


# kept per text (a build's shards repeat the same few thousand bitsets); bounded: a
# long-lived process reads many builds
@functools.lru_cache(maxsize=1 << 16)
def runs_bits(raw: str) -> int:
    """A bitset written as runs, ``start.length.start.length`` (empty: no bit)."""
    bits = 0
    if raw:
        runs = map(int, raw.split("."))
        for start, length in zip(runs, runs, strict=True):
            bits |= ((1 << length) - 1) << start
    return bits


def _keyset(values: list[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(values)


def _model_in(models: frozenset[str], provider: str | None, model: str | None) -> bool:
    if not model:
        return False
    return model in models or ("/" not in model and f"{provider}/{model}" in models)


# -- classes ---------------------------------------------------------------------------------
# Not frozen (a frozen dataclass sets each field through ``object.__setattr__``: a diff at
# 100,000 groups makes 430,000 channel classes, and making them took 0.4 s more); hashed by
# its fields all the same, and never changed once made.
@dataclass(slots=True, kw_only=True, unsafe_hash=True)
class Klass:
    """One value of one dimension: its words, and the request flags that reproduce it."""

    label: str
    flags: tuple[tuple[str, Any], ...] = ()
    key: tuple[Any, ...] = ()  # what the dimension's engine needs (agent id, provider, ...)
    group: tuple[str, ...] = ()  # hierarchy used to fold labels (channel, account, group)
    fallback: tuple[str, ...] | None = None  # channel classes reaching the "*" group entry
    stacks: tuple[int | None, ...] = ()  # channel classes: the group-layer stack per side


def owner_classes(views: Sequence[TablesView]) -> list[Klass]:
    """The owner dimension: the default request first, the owner second. 2026.3.2 tells
    only the owner (``sender_is_owner=True``) from everyone else; when a side follows
    2026.9.6, where only a known non-owner (``False``) loses owner-only tools, unset is its
    own class and ``False`` a third."""
    owner = Klass(label="owner", flags=(("sender_is_owner", True),), key=(True,))
    if not any(v.owner_unknown_keeps for v in views):
        return [Klass(label="non-owner", key=(False,)), owner]
    return [Klass(label="owner unknown", key=(None,)), owner,
            Klass(label="known non-owner", flags=(("sender_is_owner", False),), key=(False,))]


def owner_index(classes: Sequence[Klass], value: bool | None) -> int:
    """The owner class of a request's ``sender_is_owner``."""
    if len(classes) == 2:
        return int(value is True)
    return next(i for i, k in enumerate(classes) if k.key[0] is value)


def owner_removes(view: TablesView, value: bool | None) -> bool:
    """Whether a side removes owner-only tools for this ``sender_is_owner`` (its target)."""
    return value is False if view.owner_unknown_keeps else value is not True


_fresh = groups.fresh


class ClassSpace:
    """The classes of one build, or the common refinement of two (a diff)."""

    def __init__(self, views: Sequence[TablesView],
                 tools: Sequence[str] | None = None) -> None:
        self.views = list(views)
        self.tool_names = list(tools if tools is not None else views[0].tools)
        self.agents = self._agents()
        self.providers = self._providers()
        self.gate_classes, self.gate_of = self._gate_classes()
        self.owner = owner_classes(self.views)
        # selectors: what a channel side may depend on besides the channel class (2026.9:
        # whether the sender is the owner, per side the agent's own toolsBySender map)
        self.selectors: list[tuple[bool, tuple[int, ...]]] = [(False, (0,) * len(self.views))]
        self._selector_index = {self.selectors[0]: 0}
        self._chan_stacks: list[list[tuple[tuple[int, ...], ...]]] = []
        self._unread: dict[str, list[range]] = {}  # channel -> its classes, per gate mode
        self._witnesses: int | None = None
        self._sender_maps: list[list[Any]] = []
        self._owner_matters = False
        self._index9: dict[Any, int] | None = None
        if any(v.trusted for v in self.views):
            self.channels = self._channels9()
        else:
            self.channels = self._channels()
            # classes with the same stacks share one (never mutated) list
            shared: dict[tuple[int | None, ...], list[tuple[tuple[int, ...], ...]]] = {}
            self._chan_stacks = [
                shared.get(k.stacks) or shared.setdefault(
                    k.stacks, [tuple(() if st is None else (st,) for st in k.stacks)])
                for k in self.channels]
        self.sandbox = self._sandboxes()
        self.subagent = self._subagents()

    def dims(self) -> tuple[list[Klass], ...]:
        return (self.agents, self.providers, self.channels, self.owner, self.sandbox,
                self.subagent)

    def size(self) -> int:
        n = 1
        for d in self.dims():
            n *= len(d)
        if self.depth0 is not None:  # less the empty classes (see depth0_sandboxes)
            rest = len(self.providers) * len(self.channels) * len(self.owner)
            n -= rest * sum(len(self.sandbox) - self.depth0_sandboxes(a).bit_count()
                            for a in range(len(self.agents)))
        return n

    def holds(self, point: Sequence[int]) -> bool:
        """Whether some request falls in the class: all do but a subagent at depth 0 in the
        sandbox classes its session key cannot reach (``depth0_sandboxes``)."""
        return point[5] != self.depth0 or bool(self.depth0_sandboxes(point[0]) >> point[4] & 1)

    def flags(self, point: Sequence[int]) -> dict[str, Any]:
        """The representative request of a class (``resolve`` keywords)."""
        out: dict[str, Any] = {}
        if any(point[2] in span for spans in self._unread.values() for span in spans):
            raise LookupError(f"channel class {point[2]} is one of a channel not read")
        for dim, i in zip(self.dims(), point, strict=True):
            out.update(dim[i].flags)
        if point[5] == self.depth0:
            out.update(self.depth0_flags(out, point[4]))
        if "agent_id" not in out and ("session_key" in out or any(
                v.agent_selection for v in self.views)):
            # a sandbox class's session key must not pick the policy agent, nor (2026.9) the
            # default agent a request without one gets: an undeclared agent id keeps "no
            # declared agent"
            out["agent_id"] = self._fresh_agent
        return out

    def classify(self, **context: Any) -> tuple[int, ...]:
        """The class of a request (``resolve`` keywords): every request falls into exactly
        one class, whose representative (``flags``) gets the same tools on every side."""
        ctx = Context.of(**context)
        session = parse_session_key(ctx.session_key)
        chooser = next((v for v in self.views if v.agent_selection), None)
        if chooser is not None:  # 2026.9 (AgentSelectionRequiredError: the request has none)
            aid: str | None = chooser.select_agent(ctx.agent_id, ctx.session_key)
        elif ctx.agent_id is not None:
            aid = normalize_agent_id(ctx.agent_id)
        elif ctx.session_key is not None:
            aid = normalize_agent_id(session.agent)
        else:
            aid = None
        agent = next((i for i, k in enumerate(self.agents) if k.key[0] == aid and aid),
                     len(self.agents) - 1)
        provider = normalize_key(ctx.model_provider) or None
        model = normalize_key(ctx.model_id) or None
        prov = self._provider_index[tuple(self._provider_sig(v, provider, model)
                                          for v in self.views)]
        key_sub, key_depth = (subagent9(ctx.session_key) if self.views[0].key_rules9
                              else (session.is_subagent, session.depth))
        is_sub = key_sub or (ctx.spawn_depth or 0) >= 1
        depth = ctx.spawn_depth if ctx.spawn_depth is not None else key_depth
        if is_sub and depth == 0 and self._main_role is not None:
            sub = self._main_role  # 2026.9: a subagent at depth 0 has the `main` role
        else:
            sub = self._depth_index[min(max(depth, 1), len(self._depth_index) - 1)] \
                if is_sub else self._depth_index[0]
        # 2026.9: a key without an agent is the selected agent's (resolveSessionAgentId)
        sandboxed = tuple(ctx.sandboxed is True or derive_sandboxed(
            v.sandbox_modes, ctx.session_key, aid if v.agent_selection else None)
            for v in self.views)
        found = self._sandbox_index.get(sandboxed)
        if found is None:
            raise LookupError(f"no sandbox class holds {ctx}: the class space is incomplete")
        return (agent, prov, self._classify_channel(ctx, session),
                owner_index(self.owner, ctx.sender_is_owner), found, sub)

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
        return c9.map_id(self._sender_maps[side], rec.senders)

    def classify_channel(self, **context: Any) -> int:
        """The channel class of a request (``classify(...)[2]``) without choosing its agent:
        under 2026.9 a request that names no agent is refused where no agent is the default
        (``ownership: explicit``), yet its channel, account, group and sender still have a
        class."""
        ctx = Context.of(**context)
        return self._classify_channel(ctx, parse_session_key(ctx.session_key))

    # sandbox --------------------------------------------------------------------------------
    def _sandboxes(self) -> list[Klass]:
        """Not sandboxed (no session key), sandboxed (``sandboxed=True``), then one class per
        other per-side verdict some session key gets (only when the sides' modes differ).
        A class's key is its per-side verdict."""
        n = len(self.views)
        out = [Klass(label="not sandboxed", key=(False,) * n),
               Klass(label="sandboxed", flags=(("sandboxed", True),), key=(True,) * n)]
        self._sandbox_index: dict[tuple[bool, ...], int] = {k.key: i for i, k in enumerate(out)}
        ids = {a for v in self.views for a in v.agents}
        for v in self.views:
            ids.update(v.sandbox_modes.agents)
            ids.add(v.sandbox_modes.default_agent)
        self._fresh_agent = _fresh(ids)
        if all(v.sandbox_modes.inert for v in self.views):
            return out
        # The verdict depends on the key's agent (its mode), and on whether the key is that
        # agent's main session or "global": these keys reach every combination.
        keys = [k for a in sorted(ids | {self._fresh_agent})
                for k in (f"agent:{a}:main", f"agent:{a}:{OTHER}")]
        for key in [*keys, "main", "global", OTHER]:
            verdict = tuple(derive_sandboxed(v.sandbox_modes, key) for v in self.views)
            if verdict not in self._sandbox_index:
                self._sandbox_index[verdict] = len(out)
                sides = ", ".join("sandboxed" if b else "not" for b in verdict)
                out.append(Klass(label=f"session {key} ({sides})",
                                 flags=(("session_key", key),), key=verdict))
        return out

    def _classify_channel(self, ctx: Context, session: SessionInfo) -> int:
        if self._index9 is not None:
            found = self._index9.get(self._signature9(ctx))
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

    # 2026.9's group and sender layers (toolc.semantics.channels9) --------------------------
    def _signature9(self, ctx: Context) -> tuple[Any, ...]:
        """(gate, per selector per side the channel side's stacks) of a request."""
        senders = sender_keys(ctx.sender_id, ctx.sender_e164, ctx.sender_username,
                              ctx.sender_name)
        parsed = [c9.parse9(v, ctx, senders) if v.trusted else c9.side3(v, ctx, senders)
                  for v in self.views]
        per_sel = []
        for owner, maps in self.selectors:
            per_sel.append(tuple(
                c9.side9(v, req, owner, self._sender_maps[side][maps[side]])
                if isinstance(req, c9.Request9) else req
                for side, (v, req) in enumerate(zip(self.views, parsed, strict=True))))
        return (self.gate(normalize_key(ctx.message_provider) or None), tuple(per_sel))

    def _channels9(self) -> list[Klass]:
        """Channel classes when a side follows 2026.9: one per distinct signature of the
        representative requests (``channels9``), labelled from its first representative."""
        views = self.views
        self._sender_maps = c9.sender_maps(views)
        entries = c9.has_sender_rules(views)  # the owner on webchat skips them
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
        gids = {ch: c9.group_ids(views, ch) for ch in declared}
        other = _fresh([g for ids in gids.values() for g in ids])
        messages: list[str | None] = [None, *(g for g in self.gate_classes if g is not None),
                                      *c9.typed_channels(views)]
        if self._owner_matters:
            messages.append("webchat")
        if mixed:
            messages += declared
        messages = list(dict.fromkeys(messages))
        spawned = [None, *(f"{ch}:group:{g}" for ch in declared for g in [*gids[ch], other])]
        callers: list[str | None] = [None]
        if mixed:
            callers += [*sorted({g for ids in gids.values() for g in ids}), other]
        senders = c9.sender_reps(views)
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
                        accs += [a for a in c9.accounts(views, ch, fresh_acc) if a not in accs]
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
        several = {ch: len(c9.accounts(views, ch, fresh_acc)) > 1 for ch in declared}
        out: list[Klass] = []
        index: dict[Any, int] = {}
        for base in bases:
            only = {k: v for k, v in base.items() if not k.startswith("sender_")}
            for sender in senders:
                flags = {**only, **dict(c9.sender_flags(sender))}
                sig = self._signature9(Context.of(**flags))
                if sig in index:
                    continue
                index[sig] = len(out)
                pch = (flags.get("spawned_by") or "").partition(":group:")[0]
                label, group = c9.label9(flags, other, several_accounts=several.get(pch, False),
                                         any_senders=entries)
                default_stacks = sig[1][0]
                out.append(Klass(label=label, flags=tuple(flags.items()), key=sig,
                                 group=group,
                                 stacks=tuple(st[0] if st else None for st in default_stacks)))
                self._chan_stacks.append(list(sig[1]))
        self._index9 = index
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
            else:  # a bare key is a provider to byProvider, a model to allowModels
                if k in keys:
                    providers.add(k)
                if k in gate_models:
                    models.add(k)
        other = _fresh(providers)
        candidates: list[tuple[str | None, str | None]] = [(None, None), (other, None)]
        candidates += [(p, None) for p in sorted(providers)]
        for prov in [*sorted(providers), other, None]:
            candidates += [(prov, m) for m in sorted(models)]
        seen: dict[Any, int] = {}
        out: list[Klass] = []
        self._provider_index = seen
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
        # which agents' byProvider entries the provider and model select (the full model key
        # shadows the provider key), without visiting every agent
        full = v.model_key(provider, model) if provider is not None else None
        index = v.bp_index()
        with_full = index.get(full, frozenset()) if full is not None else frozenset()
        with_provider = (index.get(provider, frozenset()) - with_full
                         if provider is not None else frozenset())
        entries = ((full, with_full) if with_full else None,
                   (provider, with_provider) if with_provider else None)
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

    # subagents ------------------------------------------------------------------------------
    def _subagents(self) -> list[Klass]:
        top = max(v.leaf_depth for v in self.views)
        seen: dict[Any, int] = {}
        out: list[Klass] = []
        self._depth_index: list[int] = []
        for depth in range(top + 1):
            sig = tuple(v.subagent_stack(depth) is not None and depth >= v.leaf_depth
                        if depth else None for v in self.views)
            self._depth_index.append(seen.setdefault(sig, len(out)))
            if seen[sig] != len(out):
                continue
            out.append(Klass(label="", flags=(("spawn_depth", depth),) if depth else (),
                             key=(depth,)))
        # a subagent at depth 0 (2026.9: a stored depth 0, the `main` role; 2026.3: a bare
        # `subagent:` key, or a subagent key with spawn_depth=0) is never a leaf: it shares
        # the class of a depth whose subagent layer is the same on every side, else (a side
        # with maxSpawnDepth 1) it is a class of its own, reached only through a session key
        nonleaf = [v.stack(v.subagent[0]) for v in self.views]
        self._main_role: int | None = next(
            (self._depth_index[d] for d in range(1, top + 1)
             if all(v.stack(v.subagent[1] if d >= v.leaf_depth else v.subagent[0]) == n
                    for v, n in zip(self.views, nonleaf, strict=True))), None)
        self.depth0: int | None = None
        self._depth0: dict[int, int] = {}
        if self._main_role is None:
            self.depth0 = self._main_role = len(out)
            out.append(Klass(label="", key=(DEPTH0,)))
        labelled = []
        for i, k in enumerate(out):
            depth = k.key[0]
            if depth == 0:
                label = "not a subagent"
            elif depth == DEPTH0:
                label = "subagent at depth 0 (never a leaf)"
            elif len(self.views) == 1 or all(v.leaf_depth == self.views[0].leaf_depth
                                              for v in self.views):
                label = "leaf subagent" if depth >= self.views[0].leaf_depth else \
                    "subagent (not a leaf)"
            else:
                last = i == len(out) - 1
                label = f"subagent depth {depth}" + (" or more" if last else "")
            labelled.append(Klass(label=label, flags=k.flags, key=k.key))
        return labelled

    def depth0_sandboxes(self, agent: int) -> int:
        """The sandbox classes (bits) a subagent at depth 0 reaches with agent class
        ``agent``: ``sandboxed=True``'s, and those whose verdict some subagent session key
        gets. Its key's sandbox mode is the key's agent's (2026.9: the request's agent), so
        a mode that sandboxes every other session leaves the rest empty."""
        if self.depth0 is None:
            return (1 << len(self.sandbox)) - 1
        found = self._depth0.get(agent)
        if found is None:
            found = 0
            aid = self.agents[agent].key[0] or self._fresh_agent
            for s in range(len(self.sandbox)):
                if self._depth0_key(aid, s) is not None:
                    found |= 1 << s
            self._depth0[agent] = found
        return found

    def empty_cubes(self) -> list[tuple[int, ...]]:
        """The classes no request falls in (see ``holds``), as cubes: one per set of
        agent classes whose depth-0 subagents reach the same sandbox classes."""
        if self.depth0 is None:
            return []
        by_mask: dict[int, int] = defaultdict(int)
        for a in range(len(self.agents)):
            by_mask[self.depth0_sandboxes(a)] |= 1 << a
        everything = [(1 << len(d)) - 1 for d in self.dims()]
        return [(agents, *everything[1:4], everything[4] & ~mask, 1 << self.depth0)
                for mask, agents in by_mask.items() if everything[4] & ~mask]

    def depth0_flags(self, flags: Mapping[str, Any], sandbox: int) -> dict[str, Any]:
        """What makes the request ``flags`` (of sandbox class ``sandbox``) a subagent at
        depth 0: a subagent session key and ``spawn_depth=0``; LookupError where no request
        of that agent and sandbox class is one (``holds``)."""
        raw = flags.get("agent_id")
        aid = normalize_agent_id(raw) if raw is not None else self._fresh_agent
        key = self._depth0_key(aid, sandbox)
        if key is None:
            raise LookupError(f"no subagent at depth 0 of agent {aid!r} gets the sandbox "
                              f"verdict of class {self.sandbox[sandbox].label!r}")
        out = {"session_key": key, "spawn_depth": 0}
        if raw is None:  # the key's agent must be the request's (2026.9)
            out["agent_id"] = aid
        return out

    def _depth0_key(self, aid: str, sandbox: int) -> str | None:
        """A subagent session key for the depth-0 representative of agent ``aid`` in sandbox
        class ``sandbox`` (its flags set ``spawn_depth=0``), or None: the class is empty.
        The key names an agent: 2026.9 requires it to be the request's, 2026.3 reads its
        agent only for the sandbox mode (the request names its agent)."""
        verdict = self.sandbox[sandbox].key
        forced = ("sandboxed", True) in self.sandbox[sandbox].flags  # any key will do
        if any(v.agent_selection for v in self.views) or forced:
            candidates = [aid]
        else:
            candidates = sorted({a for v in self.views for a in v.sandbox_modes.agents}
                                | {aid, self._fresh_agent})
        for owner in candidates:
            key = f"agent:{owner}:subagent:{OTHER}"
            got = tuple(derive_sandboxed(v.sandbox_modes, key, aid if v.agent_selection
                                         else None) for v in self.views)
            if forced or got == verdict:
                return key
        return None


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


def _maps_per_view(space: ClassSpace, name: str) -> list[list[dict[str, Any]]]:
    return [groups.channel_maps(v.channels.get(name)) for v in space.views]


SENDER_FLAGS = {"id": "sender_id", "e164": "sender_e164", "username": "sender_username",
                 "name": "sender_name"}
