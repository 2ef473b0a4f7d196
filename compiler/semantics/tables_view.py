"""One build's tables as the access analysis reads them (``access.ClassSpace``): every
bitset mapped into a tool index shared by the sides of a diff, stacks decoded on demand, and the
lookups of the generated runtime (providers, groups, subagent depth) ported over them."""

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
from ..rules.sandbox import SandboxModes
from ..targets import request_rules

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
        # the release's request-time switches (toolc.targets.RequestRules)
        self.rules = rules = request_rules(data)
        self.owner_unknown_keeps = rules.owner_unknown_keeps
        self.agent_selection = rules.agent_selection
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
        # 2026.9 getSubagentDepth (subagent_depth_counts_leading); the session-key grammar
        # is ``rules.sessions``
        self.depth_leading = rules.subagent_depth_counts_leading
        # the trusted group id and the sender layer (toolc.semantics.trusted_channels): the
        # generic resolver, tools.toolsBySender globally and per agent, typed keys
        self.trusted = rules.group_id_needs_session
        self.sender_layer = rules.global_sender_layer
        self.typed_keys = rules.channel_sender_keys
        self.request_aliases: dict[str, str] = dict(rules.request_channel_aliases)
        self.global_senders: list[Any] | None = data.get("senders")
        # channels whose plugin resolver runs before the generic one (2026.9: Telegram's)
        self.plugin_resolvers = frozenset(rules.plugin_group_resolvers)
        # 2026.9 normalizeToolProviderPolicyKey: a model id with `/` is provider-prefixed too
        self.slash_prefixed = rules.slash_model_is_prefixed
        self._present: dict[tuple[Any, ...], int] = {}
        self._witnesses: int | None = None
        self._bp_index: dict[str, frozenset[int]] | None = None

    def select_agent(self, agent_id: str | None, session_key: str | None) -> str:
        """2026.9's agent of a request (``toolc.pipeline.policy.choose_agent`` over the
        tables' ``selection``); raises AgentSelectionRequiredError where OpenClaw refuses."""
        return choose_agent(self.rules.sessions, self.default_agent, self.agent_ids, agent_id,
                            session_key)

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
