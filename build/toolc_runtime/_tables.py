"""The compiled tables beside the runtime, decoded: the catalog, bitsets, stacks, agent
records, masks and gates of ``tables.json``, the target's switches (``TargetRules``) and the
ToolSet values a request resolves to.

Both data files are checked at import; everything else is decoded on first use and kept
(decoding is idempotent, so a race between threads only repeats work). Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from itertools import compress
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from . import read_verified

_CACHE_LIMIT: Final = 4096  # entries of each bounded cache of the request path


class ToolDefinition(NamedTuple):
    """One tool of the catalog, as the definitions declare it."""

    name: str
    label: str
    summary: str
    description: str
    parameters: Mapping[str, Any]
    owner_only: bool
    plugin: str | None
    optional: bool
    channel: str | None
    groups: tuple[str, ...]
    param_aliases: Mapping[str, str]
    wire_names: Mapping[str, str]
    model: str  # the pydantic model class in ``models.py`` (see validate_args)
    external_content: bool  # results are outside content, wrapped as untrusted


class ToolSet:
    """The tools one request sees, in catalog order."""

    __slots__ = ("_by_name", "bits", "names")

    def __init__(self, bits: int, names: tuple[str, ...]) -> None:
        self.bits: Final = bits
        self.names: Final = names
        self._by_name: dict[str, ToolDefinition] | None = None

    def _definitions(self) -> dict[str, ToolDefinition]:
        if self._by_name is None:
            every = catalog()
            self._by_name = {n: every[n] for n in self.names}
        return self._by_name

    def __contains__(self, name: object) -> bool:
        return name in self._definitions()

    def __getitem__(self, name: str) -> ToolDefinition:
        return self._definitions()[name]

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self._definitions().values())

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"ToolSet({self.names!r})"


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _definition(raw: Mapping[str, Any]) -> ToolDefinition:
    return ToolDefinition(
        name=raw["name"],
        label=raw["label"],
        summary=raw["summary"],
        description=raw["description"],
        parameters=_freeze(raw["parameters"]),
        owner_only=raw["ownerOnly"],
        plugin=raw["plugin"],
        optional=raw["optional"],
        channel=raw["channel"],
        groups=tuple(raw["groups"]),
        param_aliases=MappingProxyType(dict(raw["paramAliases"])),
        wire_names=MappingProxyType(dict(raw["wireNames"])),
        model=raw["model"],
        external_content=raw["externalContent"],
    )


# Both data files are checked at import; the catalog is parsed on first use (the hot path
# needs only names), so importing stays fast for large catalogs.
_CATALOG_BYTES: Final = read_verified("catalog.json")
_CATALOG: list[Mapping[str, ToolDefinition]] = []


def catalog() -> Mapping[str, ToolDefinition]:
    if not _CATALOG:
        tools = json.loads(_CATALOG_BYTES)["tools"]
        _CATALOG.append(MappingProxyType({raw["name"]: _definition(raw) for raw in tools}))
    return _CATALOG[0]


# -- tables ---------------------------------------------------------------------------------
# Bitsets are stored as "start.length.start.length..." runs, layers as "witness.allow.deny"
# and stacks as "mention.fixed.layer.layer..." (indices): strings parse far faster than lists.
# Bitsets, stacks and agent records are decoded on first use and kept (decoding is idempotent,
# so a race between threads only repeats work).
Layer = tuple[int, int, int]  # (witness, allow_pass, deny_pass); witness -1 never strips


class Stack(NamedTuple):
    mention: int  # optional plugin tools its allow lists name (2026.9: plugin tools they admit)
    fixed: int  # the AND of its layers that never strip
    layers: tuple[Layer, ...]  # layers that may strip
    flags: int = 0  # 2026.9 plugin admission: 1 its allow lists have entries, 2 alsoAllow-only
    preserve: int = 0  # 2026.9 localModelLean: the lean tools its (non-profile) lists keep


class ProviderEntry(NamedTuple):
    stack: Stack
    profile: int
    also: int


class AgentRecord(NamedTuple):
    stack: Stack
    by_provider: dict[str, ProviderEntry]
    sandbox: Stack
    apply_patch: int  # index into _AP_VARIANTS
    exec_policy: int  # index into _EXEC_VARIANTS
    senders: list[Any] | None  # 2026.9 tools.toolsBySender (an ENTRY), None: no rules
    lean: bool = False  # experimental.localModelLean (2026.9)
    row: int = 0  # its place in tables.json's agent_records (0: no declared agent)


_T: Final = json.loads(read_verified("tables.json"))
TOOL_NAMES: Final[tuple[str, ...]] = tuple(_T["tools"])
_RAW_BITS: Final[list[str]] = _T["bitsets"]
_RAW_LAYERS: Final[list[str]] = _T["layers"]
_RAW_STACKS: Final[list[str]] = _T["stacks"]
# per stack, its plugin-admission flags (builds for OpenClaw 2026.9 only)
_RAW_FLAGS: Final[list[int]] = _T.get("stack_flags") or []
# per stack, the bitset of the lean tools it keeps (builds with localModelLean tools only)
_RAW_PRESERVE: Final[list[int]] = _T.get("stack_preserve") or []
_RAW_AGENTS: Final[list[dict[str, Any]]] = _T["agent_records"]
_BITS: Final[list[int | None]] = [None] * len(_RAW_BITS)
_STACKS: Final[list[Stack | None]] = [None] * len(_RAW_STACKS)
_AGENT_RECORDS: Final[list[AgentRecord | None]] = [None] * len(_RAW_AGENTS)


def _bits(index: int) -> int:
    bits = _BITS[index]
    if bits is None:
        raw = _RAW_BITS[index]
        runs = [int(x) for x in raw.split(".")] if raw else []
        bits = 0
        for k in range(0, len(runs), 2):
            bits |= ((1 << runs[k + 1]) - 1) << runs[k]
        _BITS[index] = bits
    return bits


def _layer(index: int) -> Layer:
    witness, allow_pass, deny_pass = (int(x) for x in _RAW_LAYERS[index].split("."))
    return (-1 if witness < 0 else _bits(witness), _bits(allow_pass), _bits(deny_pass))


def _stack(index: int) -> Stack:
    stack = _STACKS[index]
    if stack is None:
        raw = [int(x) for x in _RAW_STACKS[index].split(".")]
        layers = tuple(_layer(i) for i in raw[2:])
        flags = _RAW_FLAGS[index] if _RAW_FLAGS else 0
        preserve = _bits(_RAW_PRESERVE[index]) if _RAW_PRESERVE else 0
        stack = _STACKS[index] = Stack(_bits(raw[0]), _bits(raw[1]), layers, flags, preserve)
    return stack


_NO_LAYER: Final = Stack(0, -1, ())
# Stacks of the shards (toolc.pipeline.shards) are written inline, by value, not by index:
# "mention/fixed/flags/preserve/witness,allow,deny/..." with bitsets as runs ("-": a witness
# that never strips). Decoded on first use and kept (bounded; decoding is idempotent).
_INLINE: dict[str, Stack] = {}


def _run_bits(raw: str) -> int:
    bits = 0
    if raw:
        runs = [int(x) for x in raw.split(".")]
        for k in range(0, len(runs), 2):
            bits |= ((1 << runs[k + 1]) - 1) << runs[k]
    return bits


def _inline_stack(text: str) -> Stack:
    stack = _INLINE.get(text)
    if stack is None:
        mention, fixed, flags, preserve, *raw = text.split("/")
        layers = []
        for layer in raw:
            w, a, d = layer.split(",")
            layers.append((-1 if w == "-" else _run_bits(w), _run_bits(a), _run_bits(d)))
        stack = Stack(
            _run_bits(mention), _run_bits(fixed), tuple(layers), int(flags), _run_bits(preserve)
        )
        if len(_INLINE) >= 4 * _CACHE_LIMIT:
            _INLINE.clear()
        _INLINE[text] = stack
    return stack


def _maybe_stack(index: int | str | None) -> Stack | None:
    """None: not configured; -1: configured without lists (no layer); a string: a shard's
    inline stack."""
    if index is None:
        return None
    if isinstance(index, str):
        return _inline_stack(index)
    return _NO_LAYER if index < 0 else _stack(index)


def _provider_entry(raw: list[int]) -> ProviderEntry:
    return ProviderEntry(_stack(raw[0]), raw[1], raw[2])


def _agent_at(index: int) -> AgentRecord:
    record = _AGENT_RECORDS[index]
    if record is None:
        raw = _RAW_AGENTS[index]
        by_provider = {k: _provider_entry(v) for k, v in raw["bp"].items()}
        record = AgentRecord(
            _stack(raw["stack"]),
            by_provider,
            _stack(raw["sandbox"]),
            int(raw["ap"]),
            int(raw["ex"]),
            raw.get("sd"),
            bool(raw.get("lean", False)),
            index,
        )
        _AGENT_RECORDS[index] = record
    return record


_ALWAYS: Final = _bits(_T["masks"]["always"])
_CORE: Final = _bits(_T["masks"]["core"]) if "core" in _T["masks"] else 0
_LEAN: Final = _bits(_T["masks"]["lean"]) if "lean" in _T["masks"] else 0
_CRON_DROP: Final = _bits(_T["masks"]["cron_drop"]) if "cron_drop" in _T["masks"] else 0
# createOpenClawTools (2026.9): not built for a sandboxed run (absent in older tables: none)
_HOST_ONLY: Final = _bits(_T["masks"]["host_only"]) if "host_only" in _T["masks"] else 0
# createOpenClawTools (2026.9): built only for a gateway message channel and a sender id
_CALLER_ONLY: Final = _bits(_T["masks"]["caller_only"]) if "caller_only" in _T["masks"] else 0
# the complements the request path masks with (computed once, not per request)
_NOT_HOST_ONLY: Final = ~_HOST_ONLY
_NOT_CALLER_ONLY: Final = ~_CALLER_ONLY
_NOT_CRON_DROP: Final = ~_CRON_DROP
_NON_OPTIONAL: Final = _bits(_T["masks"]["non_optional"])
_NON_OWNER: Final = _bits(_T["masks"]["non_owner"])
_AGENTS: Final[dict[str, int]] = _T["agents"]
_NO_AGENT: Final = _agent_at(0)  # no agent, or an undeclared one: the global policy only
_GLOBAL_BP: Final = {k: _provider_entry(v) for k, v in _T["global_bp"].items()}
# [profile][alsoAllow choice + 1] -> stack index, -1 for no step (decoded on use)
_PROVIDER_PROFILES: Final[list[list[int]]] = _T["provider_profiles"]
# (bits, providers, models, channels, excluded channels); None = no condition
_Keys = frozenset[str] | None
Gate = tuple[int, _Keys, _Keys, _Keys, _Keys]


def _keyset(values: list[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(values)


_GATES: Final[list[Gate]] = [
    (
        _bits(g["bits"]),
        _keyset(g["providers"]),
        _keyset(g["models"]),
        _keyset(g["channels"]),
        _keyset(g["exclude_channels"]),
    )
    for g in _T["gates"]
]
# apply_patch also needs its agent's tools.exec.applyPatch: [enabled, allowModels | None]
_AP_BIT: Final = 0 if _T["apply_patch"]["bit"] < 0 else 1 << int(_T["apply_patch"]["bit"])
_AP_VARIANTS: Final[list[tuple[bool, tuple[str, ...] | None]]] = [
    (bool(enabled), None if models is None else tuple(models))
    for enabled, models in _T["apply_patch"]["variants"]
]
# tools.exec approval policies: (host, security, ask, allowlist patterns)
ExecVariant = tuple[str, str, str, tuple[str, ...]]
_EXEC_VARIANTS: Final[list[ExecVariant]] = [
    (str(host), str(security), str(ask), tuple(patterns))
    for host, security, ask, patterns in _T["exec"]["variants"]
]
_MISSING: Final = object()
# Subagent stacks (toolc.rules.subagent): a leaf from max(1, maxSpawnDepth).
_SUBAGENT_NONLEAF: Final = _stack(_T["subagent"]["stacks"][0])
_SUBAGENT_LEAF: Final = _stack(_T["subagent"]["stacks"][1])
_LEAF_DEPTH: Final = max(1, int(_T["subagent"]["max_spawn_depth"]))
# Sandbox modes (toolc.rules.sandbox): which sessions OpenClaw sandboxes when the caller does
# not say. Modes by normalized agent id, the default agent, session.scope == "global".
_SB_DEFAULT_MODE: Final[str] = _T["sandbox"]["default_mode"]
_SB_MODES: Final[dict[str, str]] = _T["sandbox"]["agents"]
_SB_DEFAULT_AGENT: Final[str] = _T["sandbox"]["default_agent"]
_SB_SCOPE_GLOBAL: Final = bool(_T["sandbox"]["scope_global"])
_SB_ANY: Final = _SB_DEFAULT_MODE != "off" or any(m != "off" for m in _SB_MODES.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetRules:
    """The OpenClaw release's request-time switches (``toolc.targets.Target.runtime_rules``,
    tables.json's ``target``), decoded once (``_target_rules``) and read by name everywhere
    else. A build without them (before targets) follows the first release: every switch off.
    """

    # owner-only tools refuse only an explicit non-owner (else anyone but an exact owner)
    owner_unknown_keeps: bool
    # the session key's agent, else the explicit one, else the default; refusals where the
    # release refuses to build tools (AgentSelectionRequiredError)
    agent_selection: bool
    # a caller's group id counts only when the session key (or spawned_by) names it
    group_id_needs_session: bool
    # tools.toolsBySender per agent and globally: a sender layer of its own
    global_sender_layer: bool
    # sender keys may name their channel (``channel:<channel>:<id>``)
    channel_sender_keys: bool
    # a model id holding "/" is prefixed with its provider like any other (byProvider keys)
    slash_model_is_prefixed: bool
    # groups resolve through channels.<ch>.groups alone (no Slack/Discord maps)
    generic_group_resolver: bool
    # channels whose plugin resolves its groups first (Telegram's own resolver)
    plugin_group_resolvers: frozenset[str]
    # subagent keys as the shape-classifying reader counts them (an agent key's rest)
    subagent_key_rules: bool
    # the release's own request channel aliases (normalizeMessageChannel)
    request_channel_aliases: Mapping[str, str]
    # plugin tools are admitted as createPluginToolAllowlist decides
    plugin_admission: bool
    # getSubagentDepth counts a leading ``subagent:``, and depth 0 is no leaf
    subagent_depth_counts_leading: bool
    # the gateway message channels whose callers get the caller-only tools
    gateway_channels: frozenset[str]


def _target_rules(raw: Mapping[str, Any] | None) -> TargetRules:
    """The one reader of tables.json's ``target``: each switch by name, absent ones off."""
    given = raw or {}
    return TargetRules(
        owner_unknown_keeps=bool(given.get("owner_unknown_keeps", False)),
        agent_selection=bool(given.get("agent_selection", False)),
        group_id_needs_session=bool(given.get("group_id_needs_session", False)),
        global_sender_layer=bool(given.get("global_sender_layer", False)),
        channel_sender_keys=bool(given.get("channel_sender_keys", False)),
        slash_model_is_prefixed=bool(given.get("slash_model_is_prefixed", False)),
        generic_group_resolver=bool(given.get("generic_group_resolver", False)),
        plugin_group_resolvers=frozenset(given.get("plugin_group_resolvers") or ()),
        subagent_key_rules=bool(given.get("subagent_key_rules", False)),
        request_channel_aliases=MappingProxyType(dict(given.get("request_channel_aliases") or {})),
        plugin_admission=bool(given.get("plugin_admission", False)),
        subagent_depth_counts_leading=bool(given.get("subagent_depth_counts_leading", False)),
        gateway_channels=frozenset(given.get("gateway_channels") or ()),
    )


RULES: Final = _target_rules(_T.get("target"))
_SELECTION: Final[dict[str, Any]] = _T.get("selection") or {"default": "main", "ids": []}
_DEFAULT_AGENT: Final[str | None] = _SELECTION["default"]
_AGENT_IDS: Final[tuple[str, ...]] = tuple(_SELECTION["ids"]) or ("main",)
_GLOBAL_SENDERS: Final[list[Any] | None] = _T.get("senders")
# channel -> its index entry (read by ``_shards``, which describes it)
_RAW_CHANNELS: Final[dict[str, dict[str, Any]]] = _T["channels"]
del _T

_RESULTS: dict[int, ToolSet] = {}
_INDEX: Final = {name: i for i, name in enumerate(TOOL_NAMES)}


def owner_refuses(name: str, sender_is_owner: bool | None) -> bool:
    """Whether an owner-only tool (its ``ownerOnly`` flag or, 2026.9, a name of the release's
    owner-only set: what ``resolve`` removes) refuses this caller: 2026.3.2 anyone but an
    exact True, 2026.9.6 only an explicit False."""
    index = _INDEX.get(name)
    if index is None or _NON_OWNER >> index & 1:
        return False
    return sender_is_owner is False if RULES.owner_unknown_keeps else sender_is_owner is not True


def subset(toolset: ToolSet, names: Collection[str]) -> ToolSet:
    """The tools of ``toolset`` that ``names`` holds, as a ToolSet (catalog order)."""
    bits = 0
    for name in names:
        if name in toolset.names:
            bits |= 1 << _INDEX[name]
    return _toolset(bits)


_BINARY: Final = bytes.maketrans(b"01", b"\x00\x01")


def _toolset(bits: int) -> ToolSet:
    result = _RESULTS.get(bits)
    if result is None:
        # bit i is byte i, 1 or 0: compress picks the names in C (a set of hundreds of
        # tools is a new result in microseconds, not a Python loop over its bits)
        selectors = bin(bits)[:1:-1].encode("ascii").translate(_BINARY)
        result = ToolSet(bits, tuple(compress(TOOL_NAMES, selectors)))
        if len(_RESULTS) >= _CACHE_LIMIT:
            _RESULTS.clear()
        _RESULTS[bits] = result
    return result
