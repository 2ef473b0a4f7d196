"""Stage 4, resolve layers into tables: factored bitset tables, never the product of contexts.

A request's tool set is the intersection of per-layer pass sets. Each layer depends on few
inputs, so it is compiled once per distinct input: per agent (profile, global, agent layers and
sandbox), per byProvider entry, per provider-profile choice, per channel group and sender rule,
per subagent depth class. Tool sets are bitsets (bit i = i-th tool in catalog order), interned.

The plugin-only allowlist rule makes a layer depend on which core tools are present, which
varies with availability (apply_patch by provider/model, channel-only tools, owner-only tools).
So a stripping layer compiles to (witness, allow_pass, deny_pass): at run time it applies
``allow_pass`` when ``witness & present`` is non-zero, else ``deny_pass``. A witness of -1
means the layer never strips.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..diagnostics import Diagnostics
from ..rules.channels import athash_slug, rule_for, rule_json
from ..rules.names import (
    CASE_INSENSITIVE_GROUP_CHANNELS,
    NO_E164_CHANNELS,
    TOPIC_GROUP_CHANNELS,
    normalize_tool_name,
)
from .analyze import PLUGINS_GROUP, Resolved, pattern_matches
from .model import (
    AgentDef,
    ChannelDef,
    Entry,
    EntryList,
    GroupConfig,
    ProfileDef,
    ProviderPolicy,
    SenderRule,
    SpaceConfig,
    ToolDef,
    ToolsConfig,
)
from .policy import (
    LayerPolicy,
    admission_names,
    agent_ids,
    apply_patch_config,
    default_agent,
    exec_config,
    is_owner_only,
    lean_patterns,
    local_model_lean,
    mentioned_names,
    pick_policy,
    policy_name,
    policy_names,
    profile_policy,
    sandbox_modes,
    sandbox_policy,
    subagent_policy,
)
from .recording import ChannelUnit, Recorder, StackArgs, resolve_refs
from .shards import _split_channel, channel_summary, run_list, text_witnesses
from .yamlsrc import paused_gc

NEVER = -1  # witness for layers that never strip
# A stack's plugin-admission flags (2026.9 createPluginToolAllowlist): its allow lists have
# entries; one of them is an alsoAllow-only list (which includes the default plugin tools).
ADMIT_ENTRIES = 1
ADMIT_DEFAULTS = 2
Layer = tuple[int, int, int]  # (witness, allow_pass, deny_pass) as bitsets
# one step compiled: (layer or None, mention, ADMIT_* flags, lean tools it keeps)
Part = tuple[Layer | None, int, int, int]
TABLES_FORMAT = 6  # 6: channels sharded (toolc.pipeline.shards)


class AgentProfile(NamedTuple):
    """``TableBuilder.agent_profile``: an agent's (or the global) profile step's inputs."""

    tools: ToolsConfig | None
    ref: Entry | None
    also: EntryList | None
    profile: ProfileDef | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Tables:
    """The compiled, JSON-ready tables plus counts for reports."""

    data: dict[str, Any]
    counts: dict[str, int]


class _Interner:
    def __init__(self) -> None:
        self.bitsets: list[int] = []
        self._bitset_ids: dict[int, int] = {}
        self.layers: list[tuple[int, int, int]] = []
        self._layer_ids: dict[tuple[int, int, int], int] = {}
        self.stacks: list[tuple[int, ...]] = []
        self._stack_ids: dict[tuple[int, ...], int] = {}
        self.stack_flags: list[int] = []  # per stack: ADMIT_* bits (2026.9 plugin admission)
        self.stack_preserve: list[int] = []  # per stack: bitset id of lean tools it keeps

    def bitset(self, bits: int) -> int:
        if bits not in self._bitset_ids:
            self._bitset_ids[bits] = len(self.bitsets)
            self.bitsets.append(bits)
        return self._bitset_ids[bits]

    def layer(self, layer: Layer) -> int:
        witness, allow_pass, deny_pass = layer
        key = (NEVER if witness == NEVER else self.bitset(witness), self.bitset(allow_pass),
               self.bitset(deny_pass))
        if key not in self._layer_ids:
            self._layer_ids[key] = len(self.layers)
            self.layers.append(key)
        return self._layer_ids[key]

    def stack(self, mention: int, layers: Iterable[Layer], all_bits: int, flags: int = 0,
              preserve: int = 0) -> int:
        """A stack folds its never-stripping layers into one mask at build time."""
        fixed = all_bits
        stripping = []
        for layer in layers:
            if layer[0] == NEVER:
                fixed &= layer[1]
            else:
                stripping.append(self.layer(layer))
        key = (self.bitset(mention), self.bitset(fixed), *stripping)
        # flags and preserve travel beside the stack string, but stacks differing in them
        # are different stacks
        full = (*key, -1 - flags, -1 - self.bitset(preserve))
        if full not in self._stack_ids:
            self._stack_ids[full] = len(self.stacks)
            self.stacks.append(key)
            self.stack_flags.append(flags)
            self.stack_preserve.append(self.bitset(preserve))
        return self._stack_ids[full]


class TableBuilder:
    def __init__(self, resolved: Resolved, diags: Diagnostics) -> None:
        self.r = resolved
        self.diags = diags
        self.tools = resolved.tools
        self.index = {t.name: i for i, t in enumerate(self.tools)}
        self.all = (1 << len(self.tools)) - 1
        self.core = self.mask(t for t in self.tools if not t.plugin)
        self.optional = self.mask(t for t in self.tools if t.optional)
        self.plugin_bits = {pid: self.names_mask(names)
                            for pid, names in resolved.plugin_tools.items()}
        self.all_plugins = self.mask(t for t in self.tools if t.plugin)
        self.target = resolved.target
        lean_names = set(self.target.local_model_lean_tools)
        self.lean = self.mask(t for t in self.tools
                              if policy_name(resolved, normalize_tool_name(t.name)) in lean_names)
        self.intern = _Interner()
        self._pattern_cache: dict[str, int] = {}
        self._entry_bits: dict[str, tuple[int, bool]] = {}
        self._entry_blocks: dict[str, int] = {}
        self._mentions: dict[str, int] = {}  # ``mention_bits`` per name
        self.gates, self.always = self.compile_gates()
        # Core tools present in every context for every sender: a witness holding one of
        # them can never come out empty, so such a layer never strips.
        self.always_core = self.always & self.core & self.mask(
            t for t in self.tools if not is_owner_only(resolved, t))

    @contextmanager
    def recording(self, recorder: Recorder) -> Iterator[None]:
        """Intern into ``recorder`` for the block (the incremental cache's channel tape)."""
        intern, self.intern = self.intern, recorder  # type: ignore[assignment]
        try:
            yield
        finally:
            self.intern = intern

    # -- bit helpers -------------------------------------------------------------------------
    def mask(self, tools: Iterable[ToolDef]) -> int:
        return self.names_mask(t.name for t in tools)

    def names_mask(self, names: Iterable[str]) -> int:
        bits = 0
        for n in names:
            if n in self.index:
                bits |= 1 << self.index[n]
        return bits

    def pattern_bits(self, pattern: str) -> int:
        if pattern not in self._pattern_cache:
            if "*" in pattern:
                bits = self.names_mask(n for n in self.index if pattern_matches(pattern, n))
            else:
                bits = self.names_mask([pattern])
            self._pattern_cache[pattern] = bits
        return self._pattern_cache[pattern]

    def expanded(self, name: str) -> tuple[str, ...]:
        return self.r.groups.get(name, (name,))

    def list_bits(self, names: Sequence[str]) -> tuple[int, bool]:
        """Bits matched by normalized entries (plugin groups, then core groups); exec hit?"""
        bits, exec_hit = 0, False
        for raw in names:
            found = self._entry_bits.get(raw)
            if found is None:
                found = self._entry_bits[raw] = self.entry_bits(raw)
            bits |= found[0]
            exec_hit = exec_hit or found[1]
        return bits, exec_hit

    def entry_bits(self, raw: str) -> tuple[int, bool]:
        """``list_bits`` of one entry (kept per entry: lists repeat their entries)."""
        bits, exec_hit = 0, False
        implied_by = self.target.apply_patch_implied_by
        for name in policy_names(self.r, raw):
            if name == PLUGINS_GROUP and self.all_plugins:
                bits |= self.all_plugins
                continue
            if name in self.plugin_bits:
                bits |= self.plugin_bits[name]
                continue
            for raw_member in self.expanded(name):
                member = policy_name(self.r, raw_member)
                bits |= self.pattern_bits(member)
                exec_hit = exec_hit or pattern_matches(member, implied_by)
        return bits, exec_hit

    def blocked_plugins(self, names: Sequence[str]) -> int:
        """2026.9 denylistBlocksPlugin: the tools of every plugin whose id (or the literal
        group:plugins) a deny entry matches are never loaded."""
        return _union(names, self._entry_blocks, self.entry_blocks)

    def entry_blocks(self, raw: str) -> int:
        bits = 0
        name = policy_name(self.r, raw)
        for pid, pbits in self.plugin_bits.items():
            if (pattern_matches(name, normalize_tool_name(pid))
                    or pattern_matches(name, PLUGINS_GROUP)):
                bits |= pbits
        return bits

    # -- gates (availability) ----------------------------------------------------------------
    def compile_gates(self) -> tuple[list[dict[str, Any]], int]:
        """Availability gates: tools that exist only for some providers, models or message
        channels. apply_patch is always gated: its ``tools.exec.applyPatch`` config is
        per agent, so the runtime checks that separately (``apply_patch`` in the tables)."""
        specs: dict[tuple[Any, ...], int] = {}
        channels = self.r.channels
        always = 0
        for i, t in enumerate(self.tools):
            av = t.availability
            providers = av.providers if av else None
            models = av.models if av else None
            chans = av.channels if av else None
            excluded = self.message_provider_excluded(t, av.exclude_channels if av else None)
            if t.channel and t.channel not in channels:
                providers = frozenset()
            if (providers is None and models is None and chans is None and excluded is None
                    and t.name != "apply_patch"):
                always |= 1 << i
                continue
            key = (providers, models, chans, excluded)
            specs[key] = specs.get(key, 0) | 1 << i
        gates: list[dict[str, Any]] = []
        for (providers, models, chans, excluded), bits in specs.items():
            gates.append({"bits": self.intern.bitset(bits),
                          "providers": None if providers is None else sorted(providers),
                          "models": None if models is None else sorted(models),
                          "channels": None if chans is None else sorted(chans),
                          "exclude_channels": None if excluded is None else sorted(excluded)})
        gates.sort(key=lambda g: int(g["bits"]))
        return gates, always

    def message_provider_excluded(self, t: ToolDef, excluded: frozenset[str] | None
                                  ) -> frozenset[str] | None:
        """2026.9 filterToolsByMessageProvider as availability: the message channels whose
        allow table lacks the tool or whose deny table has it exclude it, beside the
        catalog's own ``excludeChannels``."""
        target = self.target
        extra = {ch for ch, names in target.message_provider_allow.items()
                 if t.name not in names}
        extra |= {ch for ch, names in target.message_provider_deny.items() if t.name in names}
        if not extra:
            return excluded
        return frozenset(extra | (excluded or frozenset()))

    def apply_patch_variant(self, agent: AgentDef | None) -> int:
        """Index of the agent's ``applyPatch`` choice in ``apply_patch.variants``."""
        enabled, models = apply_patch_config(self.r, agent.tools if agent else None)
        variant = [enabled, None if models is None else list(models)]
        if variant not in self.ap_variants:
            self.ap_variants.append(variant)
        return self.ap_variants.index(variant)

    def exec_variant(self, agent: AgentDef | None) -> int:
        """Index of the agent's ``tools.exec`` approval policy in ``exec.variants``."""
        config = exec_config(self.r, agent.tools if agent else None)
        key = (config.host, config.security, config.ask, config.allowlist)
        if key not in self.exec_ids:
            self.exec_ids[key] = len(self.exec_variants)
            self.exec_variants.append([*key[:3], list(config.allowlist)])
        return self.exec_ids[key]

    # -- layers ------------------------------------------------------------------------------
    def layer(self, policy: LayerPolicy | None, *, strips: bool, label: str,
              profile: bool = False) -> Part:
        """Compile one step's policy into a layer id (None: no step), its optional mentions,
        its plugin-admission flags and the lean tools it keeps (``profile``: a profile step,
        which keeps none)."""
        if policy is None:
            return None, 0, 0, 0
        preserve = 0
        if self.lean and not profile:
            keep = lean_patterns(self.r, [policy])
            preserve = self.names_mask(
                t.name for i, t in enumerate(self.tools) if self.lean >> i & 1 and any(
                    pattern_matches(p, policy_name(self.r, normalize_tool_name(t.name)))
                    for p in keep))
        admission = self.target.optional_admitted_by_wildcard
        mention, flags = self.admission_bits(policy) if admission else (
            self.mention_bits(policy), 0)
        deny_names = [e.name for e in policy.deny or () if e.name]
        deny_bits, _ = self.list_bits(deny_names)
        if admission:
            deny_bits |= self.blocked_plugins(admission_names(
                self.r, policy.deny or (), expands=policy.expands_groups))
        deny_pass = self.all & ~deny_bits
        allow_names = [e.name for e in policy.allow or () if e.name]
        if not allow_names:
            return (NEVER, deny_pass, deny_pass), mention, flags, preserve
        allow_bits, exec_hit = self.list_bits(allow_names)
        if exec_hit:
            allow_bits |= self.names_mask(["apply_patch"])
        allow_pass = allow_bits & deny_pass
        witness = NEVER
        if admission:
            self.warn_group_only_plugins(policy, mention)
        if strips and self.target.plugin_only_allowlist_restricts:
            # 2026.9: the list restricts as written; say so when it keeps no core tool
            if "*" not in allow_names and not allow_bits & self.core:
                self.warn_restricts(policy, label)
            return (NEVER, allow_pass, deny_pass), mention, flags, preserve
        if strips and "*" not in allow_names:
            witness = self.core & self.names_mask(
                m for n in allow_names for m in self.expanded(n))
            if witness & self.always_core:
                witness = NEVER
            else:
                self.warn_strip(policy, label, witness)
            if witness == 0:
                return (NEVER, deny_pass, deny_pass), mention, flags, preserve
        return (witness, allow_pass, deny_pass), mention, flags, preserve

    def warn_restricts(self, policy: LayerPolicy, label: str) -> None:
        assert policy.allow
        self.diags.warning(policy.allow[0].pos, "TC140", f"{label} allowlist names no core "
                           f"tool, so it removes every core tool wherever it applies (OpenClaw "
                           f"{self.target.key} applies such a list as written)",
                           hint="name the core tools it should keep, or use alsoAllow to add "
                                "plugin tools without restricting")

    def warn_group_only_plugins(self, policy: LayerPolicy, admitted: int) -> None:
        """TC142: a group entry whose members include non-optional plugin tools that this
        list does not admit by itself (2026.9 loads a plugin tool only when an allow entry
        names it, its plugin, group:plugins, `*` or a matching glob)."""
        non_optional_plugins = self.all_plugins & ~self.optional
        for e in policy.allow or ():
            name = policy_name(self.r, e.name)
            if name not in self.r.groups:
                continue
            bits, _ = self.list_bits([name])
            missed = bits & non_optional_plugins & ~admitted
            if missed:
                tools = ", ".join(t.name for i, t in enumerate(self.tools) if missed >> i & 1)
                self.diags.warning(e.pos, "TC142", f'"{e.text}" names plugin tools ({tools}) '
                                   "that OpenClaw 2026.9 does not load through a group: this "
                                   "list keeps them only where another allow list names them",
                                   hint="name the tools (or their plugin) in this list too")

    def admission_bits(self, policy: LayerPolicy) -> tuple[int, int]:
        """2026.9: the plugin tools this step's allow list admits at load time
        (createPluginToolAllowlist().allowsTool: ``*``, group:plugins, the plugin id, the
        name or a glob matching it; no core groups) and its ADMIT_* flags."""
        entries = set(admission_names(self.r, policy.allow or (),
                                      expands=policy.expands_groups))
        if policy.implicit_star:
            entries.discard("*")
        flags = (ADMIT_ENTRIES if entries else 0) | (
            ADMIT_DEFAULTS if policy.implicit_star else 0)
        if not entries:
            return 0, flags
        if "*" in entries or PLUGINS_GROUP in entries:
            return self.all_plugins, flags
        bits = 0
        for t in self.tools:
            if t.plugin and (normalize_tool_name(t.plugin) in entries or any(
                    pattern_matches(e, t.name) for e in entries)):
                bits |= 1 << self.index[t.name]
        return bits, flags

    def warn_strip(self, policy: LayerPolicy, label: str, witness: int) -> None:
        assert policy.allow
        pos = policy.allow[0].pos
        if witness == 0:
            self.diags.warning(pos, "TC140", f"{label} allowlist names no core tool, so it is "
                               "ignored (core tools remain available)",
                               hint="use alsoAllow to add plugin tools without restricting")
        else:
            names = ", ".join(t.name for i, t in enumerate(self.tools) if witness >> i & 1)
            self.diags.warning(pos, "TC141", f"{label} allowlist is ignored in contexts where "
                               f"none of its core tools ({names}) is present",
                               hint="availability or owner-only gating can remove them")

    def mention_bits(self, policy: LayerPolicy) -> int:
        return _union(mentioned_names(policy), self._mentions, self.name_mention_bits)

    def name_mention_bits(self, name: str) -> int:
        """``mention_bits`` of one name (kept per name by ``mention_bits``: allow lists
        repeat their names, and the optional tools a name materializes depend on it alone)."""
        if name == PLUGINS_GROUP:
            return self.optional
        if name in self.plugin_bits:
            return self.plugin_bits[name] & self.optional
        return self.names_mask([name]) & self.optional

    def stack(self, parts: Sequence[Part]) -> int:
        return self.intern.stack(*self.stack_args(parts))

    def stack_args(self, parts: Sequence[Part]) -> StackArgs:
        """The arguments ``stack`` passes its interner for ``parts``."""
        mention = flags = preserve = 0
        layers = []
        for layer_id, m, f, p in parts:
            mention |= m
            flags |= f
            preserve |= p
            if layer_id is not None:
                layers.append(layer_id)
        return mention, tuple(layers), self.all, flags, preserve

    # -- factors -----------------------------------------------------------------------------
    def agent_profile(self, agent: AgentDef | None) -> AgentProfile:
        """The agent's tools config, the profile it names (its own, else the global one),
        that profile's alsoAllow (the agent's, else the global one) and its definition."""
        g = self.r.defs.tools_config
        a = agent.tools if agent else None
        ref = a.profile if a and a.profile else g.profile
        also = (a.policy.also_allow if a and a.policy.also_allow is not None
                else g.policy.also_allow)
        return AgentProfile(a, ref, also, self.r.defs.profiles.get(ref.text) if ref else None)

    def agent_record(self, agent: AgentDef | None) -> dict[str, Any]:
        g = self.r.defs.tools_config
        a, profile_ref, profile_also, profile = self.agent_profile(agent)
        aid = agent.id if agent else None
        label = f"agents.{aid}.tools.allow" if aid else "agent tools.allow"
        plabel = f"tools.profile ({profile_ref.text})" if profile_ref else "tools.profile"
        return {
            "stack": self.stack([
                self.layer(profile_policy(profile, profile_also,
                                          full_allows_all=self.r.target.full_profile_allows_all),
                           strips=True, label=plabel, profile=True),
                self.layer(pick_policy(g.policy), strips=True, label="tools.allow"),
                self.layer(pick_policy(a.policy if a else None), strips=True, label=label)]),
            "bp": {bp.key: self.bp_record(bp, f"agents.{aid}.tools.byProvider.allow")
                   for bp in (a.by_provider if a else ())},
            "sandbox": self.stack([self.layer(sandbox_policy(self.r, a), strips=False,
                                              label="sandbox tools.allow")]),
            "ap": self.apply_patch_variant(agent),
            "ex": self.exec_variant(agent),
            # 2026.9 tools.toolsBySender of the agent (ENTRY without tools; None: no rules)
            "sd": self.sender_entry(a.by_sender) if a else None,
            **({"lean": True} if local_model_lean(self.r, agent) else {}),
        }

    def bp_record(self, bp: ProviderPolicy, label: str) -> list[int]:
        layer = self.layer(pick_policy(bp.policy), strips=True, label=label)
        profile_id = self.profile_ids.index(bp.profile.text) if bp.profile else -1
        also = bp.policy.also_allow
        also_id = -1 if also is None else self.also_ids.index(_texts(also))
        return [self.stack([layer]), profile_id, also_id]

    def provider_profiles(self) -> list[list[int]]:
        """Provider-profile step for every (profile, alsoAllow) choice a request can make."""
        out = []
        for name in self.profile_ids:
            profile = self.r.defs.profiles.get(name)
            row = []
            for also in [None, *self.also_lists]:
                policy = profile_policy(profile, also,
                                        full_allows_all=self.r.target.full_profile_allows_all)
                layer = self.layer(policy, strips=True, profile=True,
                                   label=f"tools.byProvider.profile ({name})")
                row.append(-1 if layer[0] is None else self.stack([layer]))
            out.append(row)
        return out

    def group_entry(self, cfg: GroupConfig, where: str = "") -> list[Any]:
        """``where``: the entry map's path in the definitions (``channels.telegram.groups``),
        for the labels of the decision provenance (``toolc.pipeline.provenance``)."""
        at = f'{where}."{cfg.id}"'
        # None: no `tools` key (fall through to the next candidate); -1: a block without lists
        tools = None if cfg.tools is None else self.group_stack(cfg.tools, path=f"{at}.tools")
        if not cfg.senders:
            return [tools]
        return [tools, *self.sender_buckets(cfg.senders, "group tools.allow",
                                            f"{at}.toolsBySender")]

    def sender_buckets(self, senders: Sequence[SenderRule], label: str,
                       where: str = "") -> list[Any]:
        """[id, e164, username, name buckets, wildcard] and, when a ``channel:`` key exists
        (2026.9), the channel bucket keyed ``<channel>:<id>``: first key per bucket wins."""
        buckets: dict[str, dict[str, int]] = {"id": {}, "e164": {}, "username": {}, "name": {},
                                              "channel": {}}
        wildcard = None  # None: no `*` rule; -1: a `*` rule without lists
        for rule in senders:
            # the provenance's label: the rule's position, never its key (a sender id)
            stack = self.group_stack(rule.policy, label, path=f"{where}[{rule.index}]")
            if rule.kind == "*":
                wildcard = stack
            elif rule.kind == "channel":
                if rule.value and rule.channel:
                    buckets["channel"].setdefault(f"{rule.channel}:{rule.value}", stack)
            else:
                buckets[rule.kind].setdefault(rule.value, stack)
        out: list[Any] = [buckets["id"], buckets["e164"], buckets["username"], buckets["name"],
                          wildcard]
        if buckets["channel"]:
            out.append(buckets["channel"])
        return out

    def sender_entry(self, senders: Sequence[SenderRule],
                     where: str = "tools.toolsBySender") -> list[Any] | None:
        """A ``tools.toolsBySender`` scope (2026.9): an ENTRY without tools, None if empty."""
        if not senders:
            return None
        return [None, *self.sender_buckets(senders, "tools.toolsBySender", where)]

    def group_stack(self, block: Any, label: str = "group tools.allow", *,
                    path: str = "") -> int:
        """``label``: the layer in warnings; ``path``: where the block is (provenance)."""
        policy = pick_policy(block)
        if policy is None:
            return -1
        return self.stack([self.layer(policy, strips=True, label=label)])

    def group_map(self, groups: tuple[GroupConfig, ...], *, fold: bool,
                  where: str = "") -> dict[str, Any]:
        exact: dict[str, Any] = {}
        for g in groups:
            exact.setdefault(g.id, self.group_entry(g, where))
        # Channels whose resolver ignores case (IRC): the first group (definition order)
        # whose id folds to the requested one, after the exact id.
        folded: dict[str, Any] = {}
        if fold:
            for g in groups:
                if g.id != "*":
                    folded.setdefault(g.id.lower(), exact[g.id])
        return {"exact": exact, "folded": folded}

    def channel(self, ch: ChannelDef) -> dict[str, Any]:
        fold = ch.name in CASE_INSENSITIVE_GROUP_CHANNELS
        rule = rule_for(ch.name)
        at = f"channels.{ch.name}"
        accounts: dict[str, Any] = {}
        for acc in ch.accounts:
            accounts.setdefault(acc.id, None if acc.groups is None else self.group_map(
                acc.groups, fold=fold, where=f'{at}.accounts."{acc.id}".{rule.map_key}'))
        folded: dict[str, Any] = {}
        for acc in ch.accounts:  # the first account in definition order wins
            folded.setdefault(acc.id.lower(), accounts[acc.id])
        return {
            "groups": None if ch.groups is None else self.group_map(
                ch.groups, fold=fold, where=f"{at}.{rule.map_key}"),
            "accounts": accounts, "accounts_folded": folded,
            "topics": ch.name in TOPIC_GROUP_CHANNELS,
            "e164": ch.name not in NO_E164_CHANNELS,
            "rule": rule_json(rule),
            "spaces": None if ch.spaces is None else self.spaces(ch.spaces,
                                                                 f"{at}.{rule.map_key}")}

    def spaces(self, spaces: tuple[SpaceConfig, ...], where: str = "") -> dict[str, Any]:
        """A nested rule's outer map: ``order`` (JS key order, for the slug scan) and per
        key [ENTRY, the slug field's slug, inner GROUP_MAP or None]."""
        entries: dict[str, Any] = {}
        for sp in spaces:
            inner = f'{where}."{sp.entry.id}".channels'
            entries.setdefault(sp.entry.id, [
                self.group_entry(sp.entry, where), athash_slug(sp.slug),
                None if sp.channels is None else self.group_map(sp.channels, fold=False,
                                                                where=inner)])
        return {"order": [sp.entry.id for sp in spaces], "entries": entries}

    # -- all together ------------------------------------------------------------------------
    def build(self) -> Tables:
        defs = self.r.defs
        configs = [defs.tools_config, *(a.tools for a in defs.agents if a.tools)]
        bps = [bp for c in configs for bp in c.by_provider]
        self.profile_ids = sorted({bp.profile.text for bp in bps if bp.profile})
        self.also_lists = []
        seen: list[tuple[str, ...]] = []
        for bp in bps:
            also = bp.policy.also_allow
            if also is not None and _texts(also) not in seen:
                seen.append(_texts(also))
                self.also_lists.append(also)
        self.also_ids = seen
        self.ap_variants: list[list[Any]] = []
        self.exec_variants: list[list[Any]] = []
        self.exec_ids: dict[tuple[str, str, str, tuple[str, ...]], int] = {}
        agents: dict[str, int] = {}
        records = [self.agent_record(None)]  # record 0: no agent layer
        for agent in defs.agents:
            if agent.id not in agents:
                agents[agent.id] = len(records)
                records.append(self.agent_record(agent))
        global_bp = {bp.key: self.bp_record(bp, "tools.byProvider.allow")
                     for bp in defs.tools_config.by_provider}
        subagent = [self.stack([self.layer(subagent_policy(self.r, leaf=leaf), strips=False,
                                           label="subagent tools.allow")])
                    for leaf in (False, True)]
        data = {
            "format": TABLES_FORMAT,
            "tools": [t.name for t in self.tools],
            "masks": {"all": self.intern.bitset(self.all),
                      "always": self.intern.bitset(self.always),
                      "non_optional": self.intern.bitset(self.all & ~self.optional),
                      "non_owner": self.intern.bitset(
                          self.all & ~self.mask(t for t in self.tools
                                                if is_owner_only(self.r, t))),
                      "core": self.intern.bitset(self.core),
                      "lean": self.intern.bitset(self.lean),
                      # filterRequesterYieldTools (2026.9): never in a cron session
                      "cron_drop": self.intern.bitset(
                          self.names_mask(self.target.cron_session_drop)),
                      # createOpenClawTools (2026.9): never built for a sandboxed run
                      "host_only": self.intern.bitset(
                          self.names_mask(self.target.host_only_tools)),
                      # createOpenClawTools (2026.9): only for a channel caller
                      "caller_only": self.intern.bitset(
                          self.names_mask(self.target.caller_only_tools))},
            "gates": self.gates,
            "agents": agents, "agent_records": records,
            "apply_patch": {"bit": self.index.get("apply_patch", -1),
                            "variants": self.ap_variants},
            # [host, security, ask, [allowlist patterns]] per distinct agent policy
            "exec": {"variants": self.exec_variants},
            "global_bp": global_bp, "provider_profiles": self.provider_profiles(),
            # Per channel, one JSON string in the one-dictionary form (``shards.join_tables``):
            # each channel is compiled on its own, straight into its shards
            # (``channel_shards``), and the build adds their index (``toolc.builds.compile``).
            "channels": {},
            "subagent": {"stacks": subagent, "max_spawn_depth": self.r.max_spawn_depth},
            # which sessions are sandboxed when the caller does not say (rules.sandbox)
            "sandbox": sandbox_modes(defs).to_json(),
            # the OpenClaw release's request-time rule switches (toolc.targets)
            "target": self.r.target.runtime_rules(),
            # 2026.9 agent selection: the agent of a request without one (None: refused,
            # AgentSelectionRequiredError) and the roster's ids (the error names them)
            "selection": {"default": default_agent(defs), "ids": list(agent_ids(defs))},
            # 2026.9 global tools.toolsBySender (ENTRY without tools; None: no rules)
            "senders": self.sender_entry(defs.tools_config.by_sender),
        }
        # Dotted strings, not nested lists: the runtime parses them lazily (fast imports).
        data["layers"] = [".".join(map(str, x)) for x in self.intern.layers]
        data["stacks"] = [".".join(map(str, x)) for x in self.intern.stacks]
        if self.target.optional_admitted_by_wildcard:
            data["stack_flags"] = self.intern.stack_flags
        if self.lean:
            data["stack_preserve"] = self.intern.stack_preserve
        data["bitsets"] = [".".join(map(str, _runs(b))) for b in self.intern.bitsets]
        counts = {"tools": len(self.tools), "bitsets": len(self.intern.bitsets),
                  "layers": len(self.intern.layers), "stacks": len(self.intern.stacks),
                  "agent_records": len(records), "gates": len(self.gates),
                  "byprovider_entries": len(bps),
                  "groups": 0}  # the channels' (added with them)
        return Tables(data=data, counts=counts)


# Bitsets repeat (a deny list's pass set, "all but these tools"): their runs are kept, by
# value, for a build (bounded; recomputing one is always right).
_RUN_TEXTS: dict[int, str] = {}
_RUN_LISTS: dict[int, list[int]] = {}
_RUN_CACHE_LIMIT = 1 << 16


def run_text(bits: int) -> str:
    """A bitset as the dotted runs ``tables.json`` and the shards write."""
    text = _RUN_TEXTS.get(bits)
    if text is None:
        if len(_RUN_TEXTS) >= _RUN_CACHE_LIMIT:
            _RUN_TEXTS.clear()
        text = _RUN_TEXTS[bits] = ".".join(map(str, _runs(bits)))
    return text


def _union(names: Iterable[str], memo: dict[str, int], bits_of: Callable[[str], int]) -> int:
    """The union of ``bits_of(name)`` over ``names``, each kept in ``memo`` (a function of
    the name alone: lists repeat their names across groups)."""
    bits = 0
    for name in names:
        found = memo.get(name)
        if found is None:
            found = memo[name] = bits_of(name)
        bits |= found
    return bits


def inline_stack(args: StackArgs) -> str:
    """The inline text (``toolc.pipeline.shards``) of the stack the build's interner makes of
    ``stack(*args)``: never-stripping layers folded into the fixed mask, as ``_Interner``."""
    mention, layers, all_bits, flags, preserve = args
    fixed = all_bits
    stripping = []
    for witness, allow_pass, deny_pass in layers:
        if witness == NEVER:
            fixed &= allow_pass
        else:
            stripping.append(f"{run_text(witness)},{run_text(allow_pass)},{run_text(deny_pass)}")
    return "/".join([run_text(mention), run_text(fixed), str(flags), run_text(preserve),
                     *stripping])


def channel_shards(name: str, unit: ChannelUnit, *, summarize: bool
                   ) -> tuple[dict[str, Any], dict[str, str]]:
    """A recorded channel (``units.record_channel``) as ``split_tables`` writes it: its entry
    in ``tables.json`` (with ``toolc diff``'s summary of a groups channel when
    ``summarize``) and its shard files, with no interning shared with other channels.
    Stacks the build's interner would make one (their inline text is the same) get one
    index here too, so the shards compare entries exactly as ``split_tables`` does."""
    with paused_gc():  # many small objects, no cycles (``yamlsrc.paused_gc``)
        return _channel_shards(name, unit, summarize=summarize)


def _channel_shards(name: str, unit: ChannelUnit, *, summarize: bool
                    ) -> tuple[dict[str, Any], dict[str, str]]:
    tape, entry, _ = unit
    texts: list[str] = []
    first: dict[str, int] = {}
    ids = []
    for args in tape:
        text = inline_stack(args)
        ids.append(first.setdefault(text, len(texts)))
        if ids[-1] == len(texts):
            texts.append(text)
    shards: dict[str, str] = {}
    ch = resolve_refs(entry, ids)
    index = _split_channel(name, ch, texts.__getitem__, shards)
    if summarize and ch["rule"]["kind"] == "groups":
        witnesses: dict[int, int] = {}  # per stack (the summary asks for most twice)

        def witness(i: int) -> int:
            found = witnesses.get(i)
            if found is None:
                found = witnesses[i] = text_witnesses(texts[i])
            return found

        index["summary"] = channel_summary(name, ch, witness)
    return index, shards


def _runs(bits: int) -> list[int]:
    """A bitset as runs of set bits ``[start, length, ...]``: short for sparse and dense sets
    (a list shared by every caller of the same bits: never changed)."""
    found = _RUN_LISTS.get(bits)
    if found is None:
        if len(_RUN_LISTS) >= _RUN_CACHE_LIMIT:
            _RUN_LISTS.clear()
        found = _RUN_LISTS[bits] = run_list(bits)
    return found



def _texts(lst: EntryList) -> tuple[str, ...]:
    return tuple(e.text for e in lst.items)
