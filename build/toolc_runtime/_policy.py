"""Which tools a request sees: the compiled tables beside the runtime, evaluated per request.

All policy layers were resolved at build time into ``tables.json``; a request only parses its
session key, matches the sender and intersects a few precomputed bitsets. Standard library
only; thread-safe (the only shared mutable state is caches whose entries are immutable and
recomputable).
"""

from __future__ import annotations

import json
import re
import threading
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from itertools import compress
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from . import read_verified
from ._errors import AgentSelectionRequiredError, UntrustedGroupError

_CACHE_LIMIT: Final = 4096


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
_GATEWAY_CHANNELS: Final = frozenset((_T.get("target") or {}).get("gateway_channels") or ())
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
# channel -> its index in tables.json: {"rule": the channel's row of ``toolc.rules.channels``
# (kind, key generators, ...), "topics": bool (Telegram chat:topic ids), "e164": bool (e164
# sender keys apply), "groups": shard | None, "spaces": shard | None, "accounts": {id: shard |
# None}, "accounts_folded": {lowercased id: shard | None}}; a shard (toolc.pipeline.shards) is
# a file of this build holding one GROUP_MAP (and, for the channel's own, Discord's spaces:
# {"order": [outer keys], "entries": {key: [ENTRY, slug, GROUP_MAP | None]}}).
# GROUP_MAP = {"exact": {id: ENTRY}, "folded": {lowercased id: ENTRY}} where "folded" is
# filled only for channels whose groups ignore case (IRC); ENTRY = [tools stack] or
# [tools stack, id bucket, e164 bucket, username bucket, name bucket, wildcard stack].
# The channel's dict below holds lazy maps: a shard is read, checked against this runtime's
# digests and split into lines when a request first reaches it; a shard whose bytes do not
# match raises DataMismatchError from that request (and every later one reaching it), while
# requests that never reach it keep working.
_RAW_CHANNELS: Final[dict[str, dict[str, Any]]] = _T["channels"]
_CHANNELS: Final[dict[str, dict[str, Any]]] = {}
_SHARDS: Final[dict[str, _Shard]] = {}
_SHARD_LOCK: Final = threading.Lock()


class _Lines(Mapping[str, Any]):
    """One section of a shard: sorted lines ``<key as JSON>\t<value as JSON>``, found by
    bisection and parsed on first use (lookups, hits and misses, are kept, bounded)."""

    def __init__(self, lines: list[str], lo: int, hi: int) -> None:
        self._lines = lines
        self._lo = lo
        self._hi = hi
        self._found: dict[object, Any] = {}

    def _find(self, key: object) -> Any:
        found = self._found.get(key, _MISSING)
        if found is _MISSING:
            found = None
            if key.__class__ is str:
                prefix = json.dumps(key, ensure_ascii=False) + "\t"
                i = bisect_left(self._lines, prefix, self._lo, self._hi)
                if i < self._hi and self._lines[i].startswith(prefix):
                    found = json.loads(self._lines[i][len(prefix) :])
            if len(self._found) >= _CACHE_LIMIT:
                self._found.clear()
            self._found[key] = found
        return found

    def __getitem__(self, key: str) -> Any:
        found = self._find(key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        found = self._find(key)
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return self._find(key) is not None

    def __len__(self) -> int:
        return self._hi - self._lo

    def __iter__(self) -> Iterator[str]:
        return (json.loads(line.partition("\t")[0]) for line in self._lines[self._lo : self._hi])


class _Folded(_Lines):
    """The case-folded ids of a shard: each names the exact id whose entry it reaches."""

    def __init__(self, lines: list[str], lo: int, hi: int, exact: _Lines) -> None:
        super().__init__(lines, lo, hi)
        self._exact = exact

    def _find(self, key: object) -> Any:
        target = super()._find(key)
        return None if target is None else self._exact.get(target)


class _Shard:
    """A shard's maps, from bytes checked against this runtime's digests."""

    __slots__ = ("gmap", "spaces")

    def __init__(self, raw: bytes) -> None:
        lines = raw.decode("utf-8").split("\n")
        head = json.loads(lines[0])
        n, m = int(head["exact"]), int(head["folded"])
        exact = _Lines(lines, 1, 1 + n)
        folded = _Folded(lines, 1 + n, 1 + n + m, exact)
        self.gmap = {"exact": exact, "folded": folded} if head["groups"] else None
        self.spaces: dict[str, Any] | None = head["spaces"]


def _shard(name: str) -> _Shard:
    """A shard, read and checked once (one lock: two threads never read it twice)."""
    shard = _SHARDS.get(name)
    if shard is None:
        with _SHARD_LOCK:
            shard = _SHARDS.get(name)
            if shard is None:
                shard = _SHARDS[name] = _Shard(read_verified(name))
    return shard


def _load_shards() -> None:
    """Read and check every shard now (a server that loads a build as a whole, so that a
    build replaced on disk later cannot fail its requests)."""
    for raw in _RAW_CHANNELS.values():
        for name in (raw["groups"], raw["spaces"], *raw["accounts"].values()):
            if name is not None:
                _shard(name)


class _Lazy(Mapping[str, Any]):
    """A shard's group map (``part`` "gmap") or spaces, read when first looked into."""

    __slots__ = ("_name", "_part", "_value")

    def __init__(self, name: str, part: str) -> None:
        self._name = name
        self._part = part
        self._value: Mapping[str, Any] | None = None

    def _get(self) -> Mapping[str, Any]:
        value = self._value
        if value is None:
            value = self._value = getattr(_shard(self._name), self._part) or {}
        return value

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())


def _lazy(name: str | None, part: str = "gmap") -> _Lazy | None:
    return None if name is None else _Lazy(name, part)


def _channel(name: str) -> dict[str, Any] | None:
    channel = _CHANNELS.get(name)
    if channel is None:
        raw = _RAW_CHANNELS.get(name)
        if raw is None:
            return None
        channel = _CHANNELS[name] = _lazy_channel(raw)
    return channel


def _lazy_channel(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A channel's index entry with its shards (tables or provenance) read when first used."""
    lazy = {a: _lazy(s) for a, s in raw["accounts"].items()}
    return {
        **raw,
        "groups": _lazy(raw["groups"]),
        "spaces": _lazy(raw["spaces"], "spaces"),
        "accounts": lazy,
        "accounts_folded": {
            k: next((lazy[a] for a, s in raw["accounts"].items() if s == v and v), None)
            for k, v in raw["accounts_folded"].items()
        },
    }


# The OpenClaw release's rule switches (toolc.targets; absent in older builds: 2026.3).
# plugin_admission: plugin tools are admitted as 2026.9's createPluginToolAllowlist decides;
# subagent_depth_counts_leading: 2026.9's getSubagentDepth, and depth 0 is no leaf.
_PLUGIN_ADMISSION: Final = bool((_T.get("target") or {}).get("plugin_admission", False))
_DEPTH_LEADING: Final = bool((_T.get("target") or {}).get("subagent_depth_counts_leading", False))
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
# The OpenClaw release's request-time switches (toolc.targets.Target.runtime_rules); a build
# without them (before targets) follows 2026.3.2.
_RULES: Final[dict[str, Any]] = _T.get("target") or {}
_OWNER_UNKNOWN_KEEPS: Final = bool(_RULES.get("owner_unknown_keeps", False))
_AGENT_SELECTION: Final = bool(_RULES.get("agent_selection", False))
_TRUSTED_GROUP: Final = bool(_RULES.get("group_id_needs_session", False))
_SENDER_LAYER: Final = bool(_RULES.get("global_sender_layer", False))
_CHANNEL_KEYS: Final = bool(_RULES.get("channel_sender_keys", False))
_SLASH_PREFIXED: Final = bool(_RULES.get("slash_model_is_prefixed", False))
_GENERIC_GROUPS: Final = bool(_RULES.get("generic_group_resolver", False))
_PLUGIN_RESOLVERS: Final = frozenset(_RULES.get("plugin_group_resolvers") or ())
_SUBAGENT_KEYS9: Final = bool(_RULES.get("subagent_key_rules", False))
_REQUEST_ALIASES: Final[dict[str, str]] = dict(_RULES.get("request_channel_aliases") or {})
_SELECTION: Final[dict[str, Any]] = _T.get("selection") or {"default": "main", "ids": []}
_DEFAULT_AGENT: Final[str | None] = _SELECTION["default"]
_AGENT_IDS: Final[tuple[str, ...]] = tuple(_SELECTION["ids"]) or ("main",)
_GLOBAL_SENDERS: Final[list[Any] | None] = _T.get("senders")
del _T

# -- request checking and parsing -----------------------------------------------------------
_ID_OK: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_ID_BAD_RUN: Final = re.compile(r"[^a-z0-9_-]+")
_TELEGRAM_CHAT: Final = re.compile(r"-?[0-9]+")
_TELEGRAM_TOPIC: Final = re.compile(r"[0-9]+")
_SUBAGENT_MARK: Final = re.compile(r"(?:^|:)subagent:")
_CHANNEL_ALIASES: Final = {
    "imsg": "imessage",
    "internet-relay-chat": "irc",
    "google-chat": "googlechat",
    "gchat": "googlechat",
}
_STRING_KEYS: Final = (
    "agent_id",
    "session_key",
    "spawned_by",
    "model_provider",
    "model_id",
    "message_provider",
    "account_id",
    "group_id",
    "group_space",
    "group_channel",
    "sender_id",
    "sender_e164",
    "sender_username",
    "sender_name",
)


def _check(values: Mapping[str, object]) -> None:
    """Refuse ill-typed context values (TypeError naming the keyword): a malformed value is
    never read as "allow more". Blank strings are treated as absent by the caller."""
    for key in _STRING_KEYS:
        value = values[key]
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{key} must be a str or None, got {type(value).__name__}")
    for key in ("sender_is_owner", "sandboxed"):
        value = values[key]
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{key} must be a bool or None, got {type(value).__name__}")
    depth = values["spawn_depth"]
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise TypeError(f"spawn_depth must be a non-negative int or None, got {depth!r}")


def _text(value: str | None) -> str | None:
    """A context string, or None when it is absent or blank."""
    return value if value is not None and value.strip() else None


# JavaScript's String.prototype.trim (OpenClaw trims session keys with it): Python's strip
# differs (strips \x1c-\x1f and \x85, keeps \ufeff).
_JS_SPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM: Final = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+$")
_JS_SPACES: Final = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
) | frozenset(chr(c) for c in range(0x2000, 0x200B))


def _js_trim(value: str) -> str:
    """``_JS_TRIM.sub("", value)``; a value with no space at either end is returned as is."""
    if value and value[0] not in _JS_SPACES and value[-1] not in _JS_SPACES:
        return value
    return _JS_TRIM.sub("", value)


_SANDBOXED: dict[tuple[str, str | None], bool] = {}


def _sandboxed_by_mode(session_key: str | None, selected: str | None = None) -> bool:
    """OpenClaw's ``resolveSandboxRuntimeStatus(...).sandboxed`` for a session key (cached):
    the mode of the key's agent (else ``selected``, 2026.9's selected agent: resolveSessionAgentId
    takes the request's agent id for a key without one; else the default agent's), ``off``
    never, ``all`` always, ``non-main`` unless the key is the agent's main session; no session
    key: False."""
    if not _SB_ANY or session_key is None:
        return False
    cached = _SANDBOXED.get((session_key, selected))
    if cached is None:
        raw = _JS_TRIM.sub("", session_key)
        parts = [p for p in _JS_TRIM.sub("", raw.lower()).split(":") if p]
        agent = _JS_TRIM.sub("", parts[1]) if len(parts) >= 3 and parts[0] == "agent" else ""
        agent = (_normalize_id(agent) or "main") if agent else selected or _SB_DEFAULT_AGENT
        mode = _SB_MODES.get(agent, _SB_DEFAULT_MODE)
        if not raw or mode == "off":
            cached = False
        elif mode == "all":
            cached = True
        else:  # non-main: a main alias is the main session ("global" under that scope)
            main = raw in ("main", f"agent:{agent}:main")
            cached = not main and not (_SB_SCOPE_GLOBAL and raw == "global")
        if len(_SANDBOXED) >= _CACHE_LIMIT:
            _SANDBOXED.clear()
        _SANDBOXED[(session_key, selected)] = cached
    return cached


class _Session(NamedTuple):
    agent: str | None  # the agent id of an ``agent:ID:...`` key, normalized
    channel: str | None
    group: str | None
    is_subagent: bool
    depth: int  # ``:subagent:`` markers (2026.9: ``(^|:)subagent:`` after ``agent:ID:``)
    cron: bool = False  # an ``agent:ID:cron:...`` key (2026.9 isCronSessionKey)


_NO_SESSION: Final = _Session(None, None, None, False, 0)
_SESSIONS: dict[str, _Session] = {}
_AGENT_CACHE: dict[str, AgentRecord] = {}


_NORMALIZED: dict[str, str] = {}


def _normalize_id(raw: str) -> str:
    value = _NORMALIZED.get(raw)
    if value is None:
        value = raw.strip().lower()
        if not _ID_OK.fullmatch(value):
            value = _ID_BAD_RUN.sub("-", value).strip("-")[:64]
        if len(_NORMALIZED) >= _CACHE_LIMIT:
            _NORMALIZED.clear()
        _NORMALIZED[raw] = value
    return value


def _agent_record(raw: str) -> AgentRecord:
    """The declared agent a normalized id names, else the no-agent record."""
    record = _AGENT_CACHE.get(raw)
    if record is None:
        index = _AGENTS.get(_normalize_id(raw) or "main")
        record = _NO_AGENT if index is None else _agent_at(index)
        if len(_AGENT_CACHE) >= _CACHE_LIMIT:
            _AGENT_CACHE.clear()
        _AGENT_CACHE[raw] = record
    return record


def _request_agent(agent_id: str | None, session_key: str | None, session: _Session) -> str | None:
    """The raw id of the request's agent: ``agent_id``, else the session key's agent (``main``
    when the key names none); None without either."""
    if agent_id is not None:
        return agent_id
    if session_key is not None:
        return session.agent or "main"
    return None


# (agent_id, session key) -> the request's agent record and whether the definitions' sandbox
# modes sandbox its session (bounded; an agent selection that raises is not kept)
_PICKED: dict[tuple[str | None, str | None], tuple[AgentRecord, bool]] = {}


def _pick_agent(
    agent_id: str | None, session_key: str | None, session: _Session
) -> tuple[AgentRecord, bool]:
    """The request's agent record (2026.9: AgentSelectionRequiredError where OpenClaw
    refuses to build tools) and whether its session is sandboxed by mode, cached;
    ``session_key`` is None or not blank, ``session`` its parse."""
    key = (agent_id, session_key)
    if agent_id is not None and not agent_id.strip():
        agent_id = None
    if _AGENT_SELECTION:
        raw: str | None = _select_agent(agent_id, session_key)
        by_mode = _sandboxed_by_mode(session_key, raw)
    else:
        raw = _request_agent(agent_id, session_key, session)
        by_mode = _sandboxed_by_mode(session_key)
    picked = (_NO_AGENT if raw is None else _agent_record(raw), by_mode)
    if len(_PICKED) >= _CACHE_LIMIT:
        _PICKED.clear()
    _PICKED[key] = picked
    return picked


class _Session9(NamedTuple):
    """What OpenClaw 2026.9.6 reads from a session key (toolc.rules.context)."""

    shape: str  # missing, agent, malformed_agent, legacy_or_alias
    agent: str | None  # the normalized agent id of an agent key
    channel: str | None  # resolveGroupContextFromSessionKey: the channel naming groups
    group_ids: tuple[str, ...]  # ... and the group ids, in the order they are tried
    delivery: str | None  # parseSessionDeliveryRoute(key)?.channel
    is_subagent: bool  # isSubagentSessionKey
    depth: int  # getSubagentDepth


_NO_SESSION9: Final = _Session9("missing", None, None, (), None, False, 0)
_SESSIONS9: dict[str, _Session9] = {}
_TOPIC_SENDER: Final = re.compile(r"^(.+):topic:([^:]+):sender:([^:]+)$", re.I | re.S)
_TOPIC: Final = re.compile(r"^(.+):topic:([^:]+)$", re.I | re.S)
_SENDER: Final = re.compile(r"^(.+):sender:([^:]+)$", re.I | re.S)
_DELIVERY_KINDS: Final = frozenset({"channel", "direct", "dm", "group"})


def _unique(values: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        v = _JS_TRIM.sub("", value)
        if v and v not in out:
            out.append(v)
    return tuple(out)


_SCOPED: dict[str, tuple[str, ...]] = {}


def _scoped_ids(group_id: str | None) -> tuple[str, ...]:
    """``buildScopedGroupIdCandidates`` (toolc.rules.context.scoped_group_ids), cached."""
    if not group_id:
        return ()
    ids = _SCOPED.get(group_id)
    if ids is None:
        ids = _scoped(group_id)
        if len(_SCOPED) >= _CACHE_LIMIT:
            _SCOPED.clear()
        _SCOPED[group_id] = ids
    return ids


def _scoped(group_id: str) -> tuple[str, ...]:
    raw = _JS_TRIM.sub("", group_id)
    if not raw:
        return ()
    m = _TOPIC_SENDER.match(raw)
    if m:
        return _unique([raw, f"{m.group(1)}:topic:{m.group(2)}", m.group(1)])
    m = _TOPIC.match(raw)
    if m:
        return _unique([f"{m.group(1)}:topic:{m.group(2)}", m.group(1)])
    m = _SENDER.match(raw)
    if m:
        return _unique([raw, m.group(1)])
    return (raw,)


def _agent_shape(key: str) -> tuple[str, str | None]:
    """``classifySessionKeyShape`` + ``parseAgentSessionKey`` (toolc.rules.context)."""
    raw = _JS_TRIM.sub("", key)  # JavaScript's trim: a BOM goes, \x1f stays
    if not raw:
        return "missing", None
    if raw[:6].lower() == "agent:":
        end = raw.find(":", 6)
        if end >= 0:
            agent = _JS_TRIM.sub("", raw[6:end])
            rest = raw[end + 1 :]
            if agent and rest and not rest.startswith(":"):
                return "agent", agent
        return "malformed_agent", None
    return "legacy_or_alias", None


def _group_ids9(key: str) -> tuple[str | None, tuple[str, ...]]:
    """``resolveGroupContextFromSessionKey`` (toolc.rules.context.session_group_ids)."""
    raw = _JS_TRIM.sub("", key)
    if not raw:
        return None, ()
    cut = raw.lower().rfind(":thread:")
    if cut >= 0 and _JS_TRIM.sub("", raw[cut + 8 :]):
        raw = raw[:cut]
    parts = raw.split(":")
    wrapped = _JS_TRIM.sub("", parts[0]).lower() == "agent"
    second = _JS_TRIM.sub("", parts[1]) if len(parts) > 1 else ""
    if not (wrapped and (not second or len(parts) < 3)):
        body = parts[2:] if wrapped else parts
        if (
            body
            and _JS_TRIM.sub("", body[0]).lower() != "agent"
            and len(body) >= 3
            and _JS_TRIM.sub("", body[2])
            and _JS_TRIM.sub("", body[0])
            and _JS_TRIM.sub("", body[1]).lower() in ("group", "channel")
        ):
            rid = _JS_TRIM.sub("", ":".join(body[2:]))
            if rid:
                return _JS_TRIM.sub("", body[0]).lower(), _scoped_ids(rid)
    split = [p for p in raw.split(":") if p]
    body = split[2:] if split and split[0] == "agent" else split
    if body and body[0] == "subagent":
        body = body[1:]
    if len(body) < 3 or body[1] not in ("group", "channel"):
        return None, ()
    gid = _JS_TRIM.sub("", ":".join(body[2:]))
    if not gid:
        return None, ()
    return body[0].strip().lower() or None, _scoped_ids(gid)


def _delivery(key: str) -> str | None:
    """``parseSessionDeliveryRoute(key)?.channel`` (toolc.rules.context.delivery_channel)."""
    raw = _JS_TRIM.sub("", key)
    cut = raw.lower().rfind(":thread:")
    if cut >= 0:
        raw = raw[:cut]
    if _agent_shape(raw)[0] != "agent":
        return None
    raw = _JS_TRIM.sub("", raw)
    parts = raw[raw.find(":", 6) + 1 :].lower().split(":")
    if parts[0] == "agent" or len(parts) < 3:
        return None
    channel = parts[0].strip()
    if not channel:
        return None
    if len(parts) >= 4 and parts[2] in ("direct", "dm"):
        ok = parts[1].strip() and parts[3].strip() and ":".join(parts[3:]).strip()
        return channel if ok else None
    if parts[1] not in _DELIVERY_KINDS or not parts[2].strip():
        return None
    return channel


def _session9(key: str | None) -> _Session9:
    if key is None:
        return _NO_SESSION9
    session = _SESSIONS9.get(key)
    if session is None:
        shape, agent = _agent_shape(key)
        channel, ids = _group_ids9(key)
        lower = _JS_TRIM.sub("", key).lower()
        rest = lower[lower.find(":", 6) + 1 :] if shape == "agent" else None
        session = _Session9(
            shape,
            (_normalize_id(agent.lower()) or "main") if agent is not None else None,
            channel,
            ids,
            _delivery(key),
            # isSubagentSessionKey trims REST (`agent:a: subagent:x` is one); the depth does not
            lower.startswith("subagent:")
            or (rest is not None and _JS_TRIM.sub("", rest).startswith("subagent:")),
            len(_SUBAGENT_MARK.findall(rest if rest is not None else lower)),
        )
        if len(_SESSIONS9) >= _CACHE_LIMIT:
            _SESSIONS9.clear()
        _SESSIONS9[key] = session
    return session


def _select_agent(agent_id: str | None, session_key: str | None) -> str:
    """2026.9.6 agent selection (toolc.pipeline.policy.select_agent): the session key's
    agent, else the explicit one, else the default; AgentSelectionRequiredError where
    OpenClaw refuses to build tools."""
    explicit = (_normalize_id(agent_id) or "main") if agent_id is not None else None
    session = _session9(session_key)
    if session.shape == "malformed_agent":
        raise AgentSelectionRequiredError(
            f"session key {session_key!r} starts with agent: but names no agent "
            "(OpenClaw: malformed agent session key)",
            code="MALFORMED_AGENT_SESSION_KEY",
            agent_ids=_AGENT_IDS,
        )
    if session.agent is not None and explicit is not None and session.agent != explicit:
        raise AgentSelectionRequiredError(
            f"the session key belongs to agent {session.agent!r}, not {explicit!r}",
            agent_ids=_AGENT_IDS,
        )
    if session.agent is None and session.is_subagent and _DEFAULT_AGENT is None:
        # resolveStoredSubagentCapabilities: an agentless subagent key ignores agent_id
        raise AgentSelectionRequiredError(
            f"session key {session_key!r} is a subagent key without an agent, and no default "
            "agent can be chosen (OpenClaw ignores agent_id there)",
            agent_ids=_AGENT_IDS,
        )
    chosen = session.agent or explicit or _DEFAULT_AGENT
    if chosen is None:
        raise AgentSelectionRequiredError(
            "several agents are declared, none is marked default: true, and the request names none",
            agent_ids=_AGENT_IDS,
        )
    return chosen


def exec_config(agent_id: str | None, session_key: str | None) -> tuple[str | None, ExecVariant]:
    """The request agent's ``tools.exec`` approval policy (the global one without a declared
    agent): (the agent's normalized id or None, (host, security, ask, allowlist))."""
    if agent_id is not None and not isinstance(agent_id, str):
        raise TypeError(f"agent_id must be a str or None, got {type(agent_id).__name__}")
    if session_key is not None and not isinstance(session_key, str):
        raise TypeError(f"session_key must be a str or None, got {type(session_key).__name__}")
    key = _text(session_key)
    if _AGENT_SELECTION:
        raw: str | None = _select_agent(_text(agent_id), key)
    else:
        raw = _request_agent(_text(agent_id), key, _session(key) if key else _NO_SESSION)
    if raw is None:
        return None, _EXEC_VARIANTS[_NO_AGENT.exec_policy]
    agent = _normalize_id(raw) or "main"
    return (agent if agent in _AGENTS else None), _EXEC_VARIANTS[_agent_record(raw).exec_policy]


def _group_context(raw: str) -> tuple[str | None, str | None]:
    """(channel, group id) of a group session key (OpenClaw's case rules)."""
    lower = raw.lower()
    cut = max(lower.rfind(":thread:"), lower.rfind(":topic:"))
    if cut > 0:
        raw = _JS_TRIM.sub("", raw[:cut]) or raw
    parts = [p for p in raw.split(":") if p]
    body = parts[2:] if parts and parts[0] == "agent" else parts
    if body and body[0] == "subagent":
        body = body[1:]
    if len(body) < 3 or body[1] not in ("group", "channel"):
        return None, None
    group = _JS_TRIM.sub("", ":".join(body[2:]))
    if not group:
        return None, None
    return _JS_TRIM.sub("", body[0]).lower(), group


def _parse_session(key: str) -> _Session:
    raw = _JS_TRIM.sub("", key)
    lower = raw.lower()
    parts = [p for p in lower.split(":") if p]
    agent = rest = None
    if len(parts) >= 3 and parts[0] == "agent" and _JS_TRIM.sub("", parts[1]):
        agent, rest = _JS_TRIM.sub("", parts[1]), ":".join(parts[2:])
    is_sub = lower.startswith("subagent:") or (rest is not None and rest.startswith("subagent:"))
    channel, group = _group_context(raw)
    if _DEPTH_LEADING:
        depth = len(_SUBAGENT_MARK.findall(rest if rest is not None else lower))
    else:
        depth = lower.count(":subagent:")
    return _Session(agent, channel, group, is_sub, depth, bool(rest and rest.startswith("cron:")))


def _session(key: str) -> _Session:
    session = _SESSIONS.get(key)
    if session is None:
        session = _parse_session(key)
        if len(_SESSIONS) >= _CACHE_LIMIT:
            _SESSIONS.clear()
        _SESSIONS[key] = session
    return session


_CHANNELS_OF: dict[str | None, str | None] = {}


def channel_of(raw: str | None) -> str | None:
    """A request channel as the target normalizes it: trimmed, lowercased, aliases resolved
    (2026.9 adds its own: ``normalizeMessageChannel``); cached."""
    try:
        return _CHANNELS_OF[raw]
    except KeyError:
        pass
    value = (raw or "").strip().lower()
    value = _CHANNEL_ALIASES.get(value, value)
    channel = _REQUEST_ALIASES.get(value, value) or None
    if len(_CHANNELS_OF) >= _CACHE_LIMIT:
        _CHANNELS_OF.clear()
    _CHANNELS_OF[raw] = channel
    return channel


def _model_in(models: frozenset[str], provider: str | None, model: str | None) -> bool:
    if not model:
        return False
    return model in models or ("/" not in model and f"{provider}/{model}" in models)


Sender = tuple[str | None, str | None, str | None, str | None]  # id, e164, username, name


def _sender_stack(
    entry: list[Any],
    sender: Sender,
    channel: str | None = None,
    leaf: Callable[[int | None], Any] = _maybe_stack,
) -> Stack | bool | None:
    """The matching toolsBySender rule (2026.9 with ``channel``: ``channel:<channel>:<id>``
    first; then id, e164, username, name, then ``*``), else False. ``leaf`` turns an entry's
    stack index into the result (``_decisions`` passes another, over provenance.json)."""
    sender_id, e164, username, name = sender
    # a value counts when it is not blank: trimmed, lowercased, it is then not empty
    sid = sender_id.strip().lower() if sender_id else None
    if sid:
        by_channel: dict[str, int] | None = entry[6] if len(entry) > 6 else None
        if channel and by_channel:
            hit = by_channel.get(f"{channel}:{sid}")
            if hit is None and sid.startswith("@"):
                hit = by_channel.get(f"{channel}:{sid[1:]}")
            if hit is not None:
                return leaf(hit)  # type: ignore[no-any-return]
        ids: dict[str, int] = entry[1]
        hit = ids.get(sid)
        if hit is None and sid.startswith("@"):
            hit = ids.get(sid[1:])
        if hit is not None:
            return leaf(hit)  # type: ignore[no-any-return]
    if e164 or username or name:
        for value, bucket, strip_at in (
            (e164, entry[2], False),
            (username, entry[3], True),
            (name, entry[4], False),
        ):
            norm = value.strip().lower() if value else None
            if norm:
                hit = bucket.get(norm.removeprefix("@") if strip_at else norm)
                if hit is not None:
                    return leaf(hit)  # type: ignore[no-any-return]
    return False if entry[5] is None else leaf(entry[5])


def _group_ids(group: str, topics: bool) -> tuple[str, ...]:
    """The ids a channel's resolver tries: a Telegram topic's chat id, then the id itself."""
    gid = group.strip()
    if topics:
        parts = [p for p in gid.split(":") if p]
        chat = None
        if (
            len(parts) >= 3
            and parts[1] == "topic"
            and _TELEGRAM_CHAT.fullmatch(parts[0])
            and _TELEGRAM_TOPIC.fullmatch(parts[2])
        ) or (
            len(parts) >= 2
            and _TELEGRAM_CHAT.fullmatch(parts[0])
            and _TELEGRAM_TOPIC.fullmatch(parts[1])
        ):
            chat = parts[0]
        if chat is not None and chat != gid:
            return (chat, gid)
    return (gid,)


def _account_id(raw: str | None) -> str:
    """OpenClaw's account id normalization; absent or blank is ``default``."""
    if raw is None:
        return "default"
    value = _normalize_id(raw) if raw is not None and raw.strip() else ""
    if not value or value in ("__proto__", "prototype", "constructor"):
        return "default"
    return value


# A group layer is two halves: the entries its resolver tries, in order (a function of the
# tables and the group's channel, ids, account and names: cached for the request path), and
# the walk over them that the sender decides.
Found = tuple[list[Any], bool]  # an ENTRY, and whether e164 sender keys apply to it
# A step of the walk: an entry's sender rules (None: it has none), whether e164 sender keys
# apply to them, and its own tools decoded by the leaf (None: it has none)
GroupStep = tuple[list[Any] | None, bool, Any]
_GroupKey = tuple[str, str, tuple[str, ...] | None, str | None, tuple[str | None, str | None]]
_STEPS: dict[_GroupKey, tuple[GroupStep, ...]] = {}


def _group_stack(  # noqa: PLR0913, PLR0917 - one argument per request input it reads
    channel: str,
    group: str,
    account_id: str | None,
    sender: Sender,
    where: tuple[str | None, str | None],
    more: tuple[str, ...] | None = None,
    senders: bool = True,
    channels: Callable[[str], dict[str, Any] | None] = _channel,
    leaf: Callable[[int | None], Any] = _maybe_stack,
) -> Stack | None:
    """The group layer's stack; ``more`` (2026.9: not None) holds the further ids tried
    after ``group`` by the generic resolver, ``senders`` False ignores toolsBySender.
    ``channels`` and ``leaf``: see _sender_stack (the steps are cached for the defaults)."""
    if _GENERIC_GROUPS and channel in _PLUGIN_RESOLVERS:  # 2026.9: the plugin resolver first
        ch = channels(channel)
        if ch is None:
            return None
        ids = (group, *(more or ()))
        found = _plugin_stack(ch, ids, account_id, sender, senders, channel)
        if found is not None:
            return leaf(found)  # type: ignore[no-any-return, arg-type]
    if channels is _channel and leaf is _maybe_stack:
        key = (channel, group, more, account_id, where)
        steps = _STEPS.get(key)
        if steps is None:
            steps = _cached_steps(key)
    else:
        ch = channels(channel)
        entries = () if ch is None else _group_entries(ch, group, more, account_id, where)
        steps = _steps(entries, leaf)
    keyed = channel if _CHANNEL_KEYS and _GENERIC_GROUPS else None
    for rules, e164, tools in steps:
        if rules is not None and senders:
            who = sender if e164 else (sender[0], None, sender[2], sender[3])
            hit = _sender_stack(rules, who, keyed, leaf)
            if hit is not False:
                return hit  # type: ignore[return-value]
        if tools is not None:
            return tools  # type: ignore[no-any-return]
    return None


def _steps(found: Iterable[Found], leaf: Callable[[int | None], Any]) -> tuple[GroupStep, ...]:
    """The walk's steps over the entries found, up to the first with tools (the walk never
    goes further); its tools decoded once here."""
    steps: list[GroupStep] = []
    for entry, e164 in found:
        tools = None if entry[0] is None else leaf(entry[0])
        steps.append((entry if len(entry) > 1 else None, e164, tools))
        if tools is not None:
            break
    return tuple(steps)


def _cached_steps(key: _GroupKey) -> tuple[GroupStep, ...]:
    channel, group, more, account_id, where = key
    ch = _channel(channel)
    entries = () if ch is None else _group_entries(ch, group, more, account_id, where)
    steps = _steps(entries, _maybe_stack)
    if len(_STEPS) >= _CACHE_LIMIT:
        _STEPS.clear()
    _STEPS[key] = steps
    return steps


def _group_entries(
    ch: dict[str, Any],
    group: str,
    more: tuple[str, ...] | None,
    account_id: str | None,
    where: tuple[str | None, str | None],
) -> tuple[Found, ...]:
    """The entries the channel's resolver tries for this group, in order: the walk takes
    the first sender rule that matches, else the first entry with tools (a sender rule of
    an entry before it wins over its tools)."""
    rule: dict[str, Any] = ch["rule"]
    if _GENERIC_GROUPS:  # 2026.9: channels.<ch>.groups alone (no Slack/Discord maps)
        return _generic_entries(ch, (group, *(more or ())), account_id)
    e164: bool = rule["e164"]
    if rule["kind"] == "nested":
        return tuple((entry, e164) for entry in _nested_entries(ch, rule, group, where))
    gmap = ch["groups"]
    account = _account_id(account_id)
    acc = ch["accounts"].get(account, _MISSING)
    if acc is _MISSING:
        acc = ch["accounts_folded"].get(account, _MISSING)
    if acc is not _MISSING and acc is not None:
        gmap = acc
    if gmap is None:
        return ()
    exact: Mapping[str, list[Any]] = gmap["exact"]
    if rule["kind"] == "pick":
        keys = _keys(rule["keys"], group, where)
        entry = next((exact[k] for k in keys if k in exact), exact.get("*"))
        return () if entry is None else ((entry, e164),)
    steps = _groups_entries(gmap, ch["topics"], group, e164)
    if not e164:
        # 2026.3.2 resolveGroupToolPolicy: `dock(...) ?? resolveChannelGroupToolsPolicy(...)`;
        # when IRC's dock (case folded, no e164) answers nothing, the generic resolver asks
        # again with the exact id and the sender's e164 too
        steps += _groups_entries({"exact": exact, "folded": {}}, False, group, True)
    return steps


def _generic_map(ch: dict[str, Any], account_id: str | None) -> dict[str, Any] | None:
    """2026.9.6 ``resolveChannelGroups``: the account's groups replace the channel's (an
    empty map inherits them with at most one account)."""
    if ch["rule"]["kind"] != "groups":
        return None
    gmap: dict[str, Any] | None = ch["groups"]
    account = _account_id(account_id)
    acc = ch["accounts"].get(account, _MISSING)
    if acc is _MISSING:
        acc = ch["accounts_folded"].get(account, _MISSING)
    if acc is not _MISSING and acc is not None:
        if acc["exact"] or len(ch["accounts"]) > 1:
            gmap = acc
    return gmap


def _index(x: int | str | None) -> int | str | None:
    return x


def _answer(entry: list[Any], sender: Sender, senders: bool, keyed: str | None) -> int | str | None:
    """One entry's answer as a stack index or a shard's inline stack: its sender rule, else
    its tools (None: neither, -1: a block without lists)."""
    if senders and len(entry) > 1:
        hit = _sender_stack(entry, sender, keyed, _index)
        if hit is not False:
            return hit  # type: ignore[return-value]
    return entry[0]  # type: ignore[no-any-return]


def _plugin_stack(  # noqa: PLR0913, PLR0917 - one argument per request input it reads
    ch: dict[str, Any],
    ids: tuple[str, ...],
    account_id: str | None,
    sender: Sender,
    senders: bool,
    channel: str,
) -> int | str | None:
    """2026.9.6 ``resolveGroupToolPolicyOutcome`` with a channel plugin's own resolver
    (Telegram's ``resolveTelegramGroupToolPolicy``), tried for each id in turn: the id's chat
    id (``parseTelegramGroupId``) selects an entry (exact) whose sender rule or tools answer,
    else ``*``'s; the first answer with lists wins (the stack index), None: the generic
    resolver decides."""
    gmap = _generic_map(ch, account_id)
    if gmap is None:
        return None
    exact: dict[str, list[Any]] = gmap["exact"]
    default = exact.get("*")
    keyed = channel if _CHANNEL_KEYS else None
    for gid in ids:
        chat = _group_ids(gid, True)[0]
        entry = exact.get(chat) if chat != "*" else None
        found = None
        for node in (entry, default):
            if node is not None:
                found = _answer(node, sender, senders, keyed)
                if found is not None:
                    break
        if isinstance(found, str) or (found is not None and found >= 0):
            return found
    return None


def _generic_entries(
    ch: dict[str, Any], ids: tuple[str, ...], account_id: str | None
) -> tuple[Found, ...]:
    """2026.9.6 ``resolveChannelGroupToolsPolicy`` on ``resolveChannelGroups`` (after a
    channel plugin's own resolver, _plugin_stack): the first id with an entry (exact) is the
    selected group; its sender rule > its tools > the ``*`` sender rule > ``*`` tools."""
    gmap = _generic_map(ch, account_id)
    if gmap is None:
        return ()
    exact: Mapping[str, list[Any]] = gmap["exact"]
    specific = next((exact[gid] for gid in ids if gid in exact), None)
    return tuple((entry, True) for entry in (specific, exact.get("*")) if entry is not None)


def _groups_entries(
    gmap: Mapping[str, Any], topics: bool, group: str, e164: bool
) -> tuple[Found, ...]:
    """OpenClaw's generic resolver: the group, then ``*``; sender rule > tools at each."""
    exact: Mapping[str, list[Any]] = gmap["exact"]
    default = exact.get("*")
    steps: list[Found] = []
    for gid in _group_ids(group, topics):
        specific = exact.get(gid)
        if specific is None and gmap["folded"]:
            specific = gmap["folded"].get(gid.lower())
        steps.extend((entry, e164) for entry in (specific, default) if entry is not None)
    return tuple(steps)


def _nested_entries(
    ch: dict[str, Any], rule: dict[str, Any], group: str, where: tuple[str | None, str | None]
) -> list[list[Any]]:
    """Discord: the guild (id, slug key, slug field, ``*``), then a channel in it; channel
    sender rule > channel tools > guild sender rule > guild tools."""
    spaces = ch["spaces"]
    if not spaces:
        return []
    entries: Mapping[str, list[Any]] = spaces["entries"]
    keys = _keys(rule["keys"], group, where)
    guild = next((entries[k] for k in keys if k in entries), None)
    slug = _athash(where[0])
    if guild is None and slug:
        guild = next((entries[k] for k in spaces["order"] if entries[k][1] == slug), None)
    if guild is None:
        guild = entries.get("*")
    if guild is None:
        return []
    found: list[list[Any]] = []
    inner = guild[2]["exact"] if guild[2] else None
    if inner:
        keys = _keys(rule["inner_keys"], group, where)
        channel_entry = next((inner[k] for k in keys if k in inner), None)
        if channel_entry is not None:
            found.append(channel_entry)
    if guild[0] is not None:
        found.append(guild[0])
    return found


_WS: Final = re.compile(r"\s+")
_HYPHEN_BAD: Final = re.compile(r"[^a-z0-9#@._+-]+")
_DASHES: Final = re.compile(r"-{2,}")
_ATHASH_LEAD: Final = re.compile(r"^[@#]+")
_ATHASH_SEP: Final = re.compile(r"[\s_]+")
_ATHASH_BAD: Final = re.compile(r"[^a-z0-9-]+")


def _hyphen(raw: str | None) -> str:
    """OpenClaw's ``normalizeHyphenSlug`` (Slack channel names)."""
    value = (raw or "").strip().lower()
    if not value:
        return ""
    return _DASHES.sub("-", _HYPHEN_BAD.sub("-", _WS.sub("-", value))).strip("-.")


def _athash(raw: str | None) -> str:
    """OpenClaw's ``normalizeAtHashSlug`` (Discord guild and channel names)."""
    value = (raw or "").strip().lower()
    if not value:
        return ""
    value = _ATHASH_BAD.sub("-", _ATHASH_SEP.sub("-", _ATHASH_LEAD.sub("", value)))
    return _DASHES.sub("-", value).strip("-")


def _keys(names: list[str], group: str, where: tuple[str | None, str | None]) -> list[str]:
    """The keys a channel's row tries, in order (the generators of ``toolc.rules.channels``)."""
    space, channel = where
    name = channel[1:] if channel is not None and channel.startswith("#") else channel
    out = []
    for generator in names:
        if generator == "id":
            key = group.strip()
        elif generator == "raw_id":
            key = group
        elif generator == "#name":
            key = f"#{name}" if name else ""
        elif generator == "name":
            key = name or ""
        elif generator == "hyphen(name)":
            key = _hyphen(name)
        elif generator == "space":
            key = (space or "").strip()
        elif generator == "athash(space)":
            key = _athash(space)
        elif generator == "athash(channel)":
            key = _athash(channel)
        elif generator == "#athash(channel)":
            slug = _athash(channel)
            key = f"#{slug}" if slug else ""
        else:  # "slug=...": matched against entries' slug fields, not a key
            continue
        if key:
            out.append(key)
    return out


_RESULTS: dict[int, ToolSet] = {}
_NO_WHERE: Final[tuple[str | None, str | None]] = (None, None)
_INDEX: Final = {name: i for i, name in enumerate(TOOL_NAMES)}


def owner_refuses(name: str, sender_is_owner: bool | None) -> bool:
    """Whether an owner-only tool (its ``ownerOnly`` flag or, 2026.9, a name of the release's
    owner-only set: what ``resolve`` removes) refuses this caller: 2026.3.2 anyone but an
    exact True, 2026.9.6 only an explicit False."""
    index = _INDEX.get(name)
    if index is None or _NON_OWNER >> index & 1:
        return False
    return sender_is_owner is False if _OWNER_UNKNOWN_KEEPS else sender_is_owner is not True


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


# (apply_patch variant, provider, model, message channel) -> the tools present (bounded)
_PRESENT: dict[tuple[int, str | None, str | None, str | None], int] = {}


def _present(variant: int, provider: str | None, model: str | None, channel: str | None) -> int:
    """Tools that exist for this apply_patch config, provider, model and message channel
    (cached: one tuple hash, the strings' hashes are cached)."""
    key = (variant, provider, model, channel)
    present = _PRESENT.get(key)
    if present is None:
        present = _gates(provider, model, channel)
        if present & _AP_BIT and not _apply_patch_ok(variant, provider, model):
            present &= ~_AP_BIT
        if len(_PRESENT) >= _CACHE_LIMIT:
            _PRESENT.clear()
        _PRESENT[key] = present
    return present


class _Base(NamedTuple):
    """What a request's agent, provider, model, message channel and flags decide before its
    other layers (group, sender, sandbox, subagent): every step of the tables is an AND,
    so the agent's and provider stacks are applied once here for all such requests."""

    present: int  # the tools present, masked by the flags
    kept: int  # of those, what the base stacks' fixed parts and layers keep
    admitted: int  # kept, admitted by the base stacks' allow lists alone (no more stacks)
    mention: int  # the base stacks' admission inputs (_admission)
    flags: int
    preserve: int


# (agent record index, provider, model, message channel, flags) -> _Base (bounded). Flags:
# 1 host-only tools removed (a sandboxed run), 2 caller-only tools removed (not a channel
# caller), 4 owner-only tools removed (not the owner).
_BASES: dict[tuple[int, str | None, str | None, str | None, int], _Base] = {}


def _base(
    record: AgentRecord, provider: str | None, model: str | None, channel: str | None, flags: int
) -> _Base:
    present = _present(record.apply_patch, provider, model, channel)
    if flags & 1:
        present &= _NOT_HOST_ONLY
    if flags & 2:
        present &= _NOT_CALLER_ONLY
    if flags & 4:
        present &= _NON_OWNER
    stacks = [record.stack]
    if provider is not None:
        stacks.extend(_provider_stacks(record, provider, model))
    kept, mention, stack_flags, preserve = present, 0, 0, 0
    for stack in stacks:
        mention |= stack.mention
        stack_flags |= stack.flags
        preserve |= stack.preserve
        kept = _kept(kept, stack, present)
    admitted = kept & _admission(mention, stack_flags)
    if record.lean:
        admitted &= _lean_keep(preserve)
    base = _Base(present, kept, admitted, mention, stack_flags, preserve)
    if len(_BASES) >= _CACHE_LIMIT:
        _BASES.clear()
    _BASES[(record.row, provider, model, channel, flags)] = base
    return base


def _widened(base: _Base, stacks: list[Stack], lean: bool) -> int:
    """The tools of a request whose own stacks change what the allow lists admit: the
    base's kept tools through those stacks, then the admission of all stacks."""
    bits, mention, flags, preserve = base.kept, base.mention, base.flags, base.preserve
    for stack in stacks:
        mention |= stack.mention
        flags |= stack.flags
        preserve |= stack.preserve
        bits = _kept(bits, stack, base.present)
    bits &= _admission(mention, flags)
    return bits & _lean_keep(preserve) if lean else bits


def _kept(bits: int, stack: Stack, present: int) -> int:
    """``bits`` less what one stack strips: its fixed part, and each layer's allow or deny
    pass (a layer's witness present: its allow list applies)."""
    bits &= stack.fixed
    for witness, allow_pass, deny_pass in stack.layers:
        bits &= allow_pass if witness & present else deny_pass
    return bits


def _apply_patch_ok(variant: int, provider: str | None, model: str | None) -> bool:
    """``applyPatch.enabled`` is true and the model passes ``allowModels`` (if any)."""
    enabled, models = _AP_VARIANTS[variant]
    if not enabled:
        return False
    if not models:
        return True
    if not model:
        return False
    full = model if "/" in model or not provider else f"{provider}/{model}"
    return any(m and m in (model, full) for m in models)


def _gates(provider: str | None, model: str | None, channel: str | None) -> int:
    present: int = _ALWAYS
    for bits, providers, models, channels, excluded in _GATES:
        if providers is not None and provider not in providers:
            continue
        if channels is not None and channel not in channels:
            continue
        if excluded is not None and channel in excluded:
            continue
        if models is None or _model_in(models, provider, model):
            present |= bits
    return present


def _full_model_key(provider: str, model: str | None) -> str | None:
    """The byProvider key a model names: ``provider/model``; a model id that holds "/" is the
    whole key in 2026.3.2 and is prefixed like any other in 2026.9.6."""
    if not model:
        return None
    return f"{provider}/{model}" if _SLASH_PREFIXED or "/" not in model else model


def _provider_stacks(record: AgentRecord, provider: str, model: str | None) -> tuple[Stack, ...]:
    """Global and agent byProvider layers plus the provider-profile step."""
    full = _full_model_key(provider, model)
    ge = (_GLOBAL_BP.get(full) if full else None) or _GLOBAL_BP.get(provider)
    bp = record.by_provider
    ae = ((bp.get(full) if full else None) or bp.get(provider)) if bp else None
    stacks: list[Stack] = []
    profile = also = -1
    if ae is not None:
        stacks.append(ae.stack)
        profile, also = ae.profile, ae.also
    if ge is not None:
        stacks.append(ge.stack)
        profile = ge.profile if profile < 0 else profile
        also = ge.also if also < 0 else also
    if profile >= 0:
        chosen = _PROVIDER_PROFILES[profile][also + 1]
        if chosen >= 0:
            stacks.append(_stack(chosen))
    return tuple(stacks)


def _admitted(present: int, stacks: list[Stack], lean: bool) -> int:
    """The present tools the request's allow lists let exist before any layer filters:
    optional plugin tools only when mentioned (2026.9: plugin tools as
    createPluginToolAllowlist admits them), minus the localModelLean drops."""
    mention = flags = preserve = 0
    for stack in stacks:
        mention |= stack.mention
        flags |= stack.flags
        preserve |= stack.preserve
    bits = present & _admission(mention, flags)
    return bits & _lean_keep(preserve) if lean else bits


def _admission(mention: int, flags: int) -> int:
    """The tools the allow lists let exist (``mention``, ``flags``: the OR of the stacks')."""
    if _PLUGIN_ADMISSION:
        # createPluginToolAllowlist: the plugin tools some allow list admits; the other
        # non-optional ones too while no list has entries or one is alsoAllow-only
        defaults = not flags & 1 or bool(flags & 2)
        return mention | (_NON_OPTIONAL if defaults else _CORE)
    return _NON_OPTIONAL | mention


def _lean_keep(preserve: int) -> int:
    """filterLocalModelLeanTools: all but the lean tools no allow list outside the profiles
    keeps (``preserve``: the OR of the stacks')."""
    return ~(_LEAN & ~preserve)


def _built(present: int, sandboxed: bool, sender_id: str | None, message: str | None) -> int:
    """createOpenClawTools (2026.9): terminal and portal only outside the sandbox, transcripts
    only for a channel caller."""
    if sandboxed:
        present &= _NOT_HOST_ONLY
    if _CALLER_ONLY and not _channel_caller(sender_id, message):
        present &= _NOT_CALLER_ONLY
    return present


def _channel_caller(sender_id: str | None, message: str | None) -> bool:
    """A gateway message channel and a sender id (2026.9's caller-only tools)."""
    return bool(sender_id and sender_id.strip() and channel_of(message) in _GATEWAY_CHANNELS)


def resolve_uncached(  # noqa: PLR0913, PLR0915 - the same keywords as resolve()
    *,
    agent_id: str | None = None,
    session_key: str | None = None,
    spawned_by: str | None = None,
    model_provider: str | None = None,
    model_id: str | None = None,
    message_provider: str | None = None,
    account_id: str | None = None,
    group_id: str | None = None,
    group_space: str | None = None,
    group_channel: str | None = None,
    sender_id: str | None = None,
    sender_e164: str | None = None,
    sender_username: str | None = None,
    sender_name: str | None = None,
    sender_is_owner: bool | None = None,
    sandboxed: bool | None = None,
    spawn_depth: int | None = None,
    strict: bool = True,
) -> ToolSet:
    """Evaluate the precomputed tables for one request (no memo). Raises TypeError for an
    ill-typed value; blank strings count as absent; UntrustedGroupError (2026.9) for a group
    the session key does not name, unless ``strict`` is False."""
    # The first request of a context runs all of this: the steps are inlined (a Python call
    # costs as much as several of them) and every type check is one comparison; anything
    # but an exact str, bool or int takes _check, which names the keyword or lets it pass.
    if not (
        (agent_id is None or type(agent_id) is str)
        and (session_key is None or type(session_key) is str)
        and (spawned_by is None or type(spawned_by) is str)
        and (model_provider is None or type(model_provider) is str)
        and (model_id is None or type(model_id) is str)
        and (message_provider is None or type(message_provider) is str)
        and (account_id is None or type(account_id) is str)
        and (group_id is None or type(group_id) is str)
        and (group_space is None or type(group_space) is str)
        and (group_channel is None or type(group_channel) is str)
        and (sender_id is None or type(sender_id) is str)
        and (sender_e164 is None or type(sender_e164) is str)
        and (sender_username is None or type(sender_username) is str)
        and (sender_name is None or type(sender_name) is str)
        and (sender_is_owner is None or sender_is_owner is True or sender_is_owner is False)
        and (sandboxed is None or sandboxed is True or sandboxed is False)
        and (spawn_depth is None or (type(spawn_depth) is int and spawn_depth >= 0))
    ):
        _check(locals())
    if session_key is not None and not session_key.strip():
        session_key = None
    if _TRUSTED_GROUP and strict is not False and (group_id or group_space or group_channel):
        _refuse_ignored_group(session_key, spawned_by, group_id, group_space, group_channel)
    if session_key is None:
        session = _NO_SESSION
    else:
        session = _SESSIONS.get(session_key) or _session(session_key)
    picked = _PICKED.get((agent_id, session_key))
    if picked is None:
        picked = _pick_agent(agent_id, session_key, session)
    record, by_mode = picked
    # An explicit True stays; False or None never lifts a sandbox the definitions impose.
    sandboxed = sandboxed is True or by_mode
    provider = model_provider.strip().lower() or None if model_provider else None
    model = model_id.strip().lower() or None if model_id else None
    if message_provider is not None and message_provider.strip():
        message: str | None = message_provider.strip().lower()
    else:
        message_provider = message = None
    # host-only tools (2026.9) are not built for a sandboxed run, caller-only ones only for
    # a channel caller (a gateway message channel and a sender id); owner-only tools: only
    # an explicit True keeps them (2026.3.2), only an explicit False removes them (2026.9.6)
    flags = 1 if sandboxed and _HOST_ONLY else 0
    if _CALLER_ONLY and not _channel_caller(sender_id, message):
        flags |= 2
    if sender_is_owner is False if _OWNER_UNKNOWN_KEEPS else sender_is_owner is not True:
        flags |= 4
    base = _BASES.get((record.row, provider, model, message, flags))
    if base is None:
        base = _base(record, provider, model, message, flags)
    present = base.present

    if spawned_by is not None and not spawned_by.strip():
        spawned_by = None
    sender = (sender_id, sender_e164, sender_username, sender_name)
    if group_space is None and group_channel is None:
        where: tuple[str | None, str | None] = _NO_WHERE
    else:
        where = (_text(group_space), _text(group_channel))
    if _TRUSTED_GROUP:
        request = (session_key, spawned_by, group_id, message, account_id)
        stacks = _requester_stacks(request, where, sender, sender_is_owner is True, record)
    else:
        stacks = []
        group = group_id if group_id is not None and group_id.strip() else None
        channel = message if message_provider is not None else session.channel
        if spawned_by is not None and not (group and channel):
            spawned = _SESSIONS.get(spawned_by) or _session(spawned_by)
            group = group or session.group or spawned.group
            channel = channel or spawned.channel
        else:
            group = group or session.group
        if channel and group:
            channel = _CHANNEL_ALIASES.get(channel, channel)
            found = _group_stack(channel, group, account_id, sender, where)
            if found is not None:
                stacks.append(found)
    if sandboxed:
        stacks.append(record.sandbox)
    if _SUBAGENT_KEYS9:
        keyed_subagent = session_key is not None and _session9(session_key).is_subagent
    else:
        keyed_subagent = session.is_subagent
    if keyed_subagent or (spawn_depth or 0) >= 1:
        subagent = _subagent_stack(session, session_key, spawn_depth)
        if subagent is not None:
            stacks.append(subagent)

    bits = base.admitted
    if stacks:
        # the same ANDs as _admitted and _kept, in another order: while these stacks admit
        # nothing the base's do not (no mention, preserve or new flag), its admitted set
        # needs only their fixed parts and layers
        wider = False
        for stack in stacks:
            bits &= stack.fixed
            for witness, allow_pass, deny_pass in stack.layers:
                bits &= allow_pass if witness & present else deny_pass
            if stack.mention or stack.preserve or (stack.flags | base.flags) != base.flags:
                wider = True
        if wider:
            bits = _widened(base, stacks, record.lean)
    if session.cron:
        bits &= _NOT_CRON_DROP  # filterRequesterYieldTools (2026.9; empty mask elsewhere)
    result = _RESULTS.get(bits)
    return result if result is not None else _toolset(bits)


def _refuse_ignored_group(
    session_key: str | None,
    spawned_by: str | None,
    group_id: str | None,
    group_space: str | None,
    group_channel: str | None,
) -> None:
    """UntrustedGroupError for the first of ``group_id``, ``group_space``, ``group_channel``
    that 2026.9.6 would ignore (``resolveTrustedGroupId``): a group id neither the session
    key nor ``spawned_by`` names, and the space and channel beside a group that is not
    trusted (an ignored id, or a session that names no group)."""
    own = _NO_SESSION9 if session_key is None else _session9(session_key)
    spawned = None if spawned_by is None or not spawned_by.strip() else spawned_by
    parent = _NO_SESSION9 if spawned is None else _session9(spawned)
    trusted = (*own.group_ids, *parent.group_ids)
    caller = _js_trim(group_id) if group_id else ""
    if caller and caller not in trusted:
        raise UntrustedGroupError("group_id", group_id or "", session_key=session_key)
    if not trusted:
        for field, value in (("group_space", group_space), ("group_channel", group_channel)):
            if value is not None and value.strip():
                raise UntrustedGroupError(field, value, session_key=session_key)


def _subagent_stack(
    session: _Session, session_key: str | None, spawn_depth: int | None
) -> Stack | None:
    """The subagent layer: a subagent key (2026.9: an agent key's REST starts with
    ``subagent:``, depth counted there) or ``spawn_depth >= 1``; a leaf from the max depth."""
    key_sub, key_depth = session.is_subagent, session.depth
    if _SUBAGENT_KEYS9:
        own = _session9(session_key)
        key_sub, key_depth = own.is_subagent, own.depth
    if not (key_sub or (spawn_depth or 0) >= 1):
        return None
    depth = spawn_depth if spawn_depth is not None else key_depth
    # both releases: a leaf at max(1, maxSpawnDepth); depth 0 (2026.3.2: a `subagent:` key
    # without `:subagent:`, 2026.9.6: the main role) is never one
    return _SUBAGENT_LEAF if depth >= _LEAF_DEPTH else _SUBAGENT_NONLEAF


def _requester_stacks(  # noqa: PLR0913, PLR0917 - the request's parts, provenance hooks
    request: tuple[str | None, str | None, str | None, str | None, str | None],
    where: tuple[str | None, str | None],
    sender: Sender,
    owner: bool,
    record: AgentRecord,
    hooks: tuple[Any, ...] | None = None,
) -> list[Any]:
    """2026.9.6's group and sender layers (``resolveRequesterToolPolicies``). ``request``:
    (session key, spawned_by, group id, message channel, account id), blanks as None.

    The group layer's channel and ids come from the session key (else spawned_by); a
    caller's group id counts only when one of them names it (else group_space and
    group_channel are dropped with it). The owner on webchat gets no sender policies
    (``isOwnerInternalSession``). The sender layer: the agent's tools.toolsBySender rule,
    else the global one."""
    session_key, spawned_key, group_id, message, account_id = request
    out: list[Any] = []
    own = _NO_SESSION9 if session_key is None else _session9(session_key)
    parent = _NO_SESSION9 if spawned_key is None else _session9(spawned_key)
    # a session's ids are already unique and trimmed (_scoped_ids): joined only with others
    trusted = _unique([*own.group_ids, *parent.group_ids]) if parent.group_ids else own.group_ids
    caller = _js_trim(group_id) if group_id else ""
    dropped = bool(caller) and caller not in trusted
    ids = _unique([*trusted, *_scoped_ids(caller)]) if caller and not dropped else trusted
    named = channel_of(message)
    channel = channel_of(own.channel or parent.channel) if own.channel or parent.channel else named
    senders = not (owner and named == "webchat")
    # hooks (``_decisions``): (channel lookup, leaf, the agent's and the global sender
    # entries), so the same path yields provenance records instead of stacks
    lookup, leaf, mine, every = hooks or (_channel, _maybe_stack, record.senders, _GLOBAL_SENDERS)
    if channel and ids:
        at = (None, None) if dropped else where
        found = _group_stack(
            channel, ids[0], account_id, sender, at, ids[1:], senders, lookup, leaf
        )
        if found is not None:
            out.append(found)
    if _SENDER_LAYER and senders:
        keyed = (channel_of(own.delivery) if own.delivery else named) if _CHANNEL_KEYS else None
        hit = _sender_stack(mine, sender, keyed, leaf) if mine else False
        if hit is False and every:
            hit = _sender_stack(every, sender, keyed, leaf)
        if hit is not False and hit is not None:
            out.append(hit)  # a Stack, or (hooks) a provenance record index
    return out


_MEMO: dict[tuple[object, ...], ToolSet] = {}
_MEMO_LIMIT: Final = 65536


def resolve(  # noqa: PLR0913 - one keyword per context input: the stable interface
    *,
    agent_id: str | None = None,
    session_key: str | None = None,
    spawned_by: str | None = None,
    model_provider: str | None = None,
    model_id: str | None = None,
    message_provider: str | None = None,
    account_id: str | None = None,
    group_id: str | None = None,
    group_space: str | None = None,
    group_channel: str | None = None,
    sender_id: str | None = None,
    sender_e164: str | None = None,
    sender_username: str | None = None,
    sender_name: str | None = None,
    sender_is_owner: bool | None = None,
    sandboxed: bool | None = None,
    spawn_depth: int | None = None,
    strict: bool = True,
) -> ToolSet:
    """The tools a request sees, exactly as the layered policy semantics decide.

    Under OpenClaw 2026.9 a group the session key does not name is refused
    (UntrustedGroupError, a ValueError): the release would ignore it, and with it the
    group's and its senders' restrictions. ``strict=False`` ignores it as the release does.
    A gateway that has the message rather than OpenClaw's session key uses
    ``resolve_message``, which routes it first.

    Results are memoized per request (bounded); values are checked on a memo miss, so an
    ill-typed value raises TypeError and is never stored. The key holds ``sender_is_owner`` as
    True, None or False (anything else may only ever hit the False entry, which has the
    fewest tools under every target: 2026.9 keeps owner-only tools for None) and
    ``sandboxed not in (None, False)`` (anything but absent or ``False`` may only hit a
    sandboxed entry): a malformed value can never reach a wider cached result. One tuple hash
    (strings cache their hashes) is cheaper than fifteen nested lookups.
    """
    key = (
        agent_id,
        session_key,
        spawned_by,
        model_provider,
        model_id,
        message_provider,
        account_id,
        group_id,
        group_space,
        group_channel,
        sender_id,
        sender_e164,
        sender_username,
        sender_name,
        # True, None or False: anything else (malformed) keys as False, the narrowest
        True if sender_is_owner is True else None if sender_is_owner is None else False,
        sandboxed is not None and sandboxed is not False,
        spawn_depth,
        strict is not False,
    )
    try:
        result = _MEMO.get(key)
    except TypeError:  # an unhashable value: let the checks name the keyword
        result = None
    if result is None:
        result = resolve_uncached(
            agent_id=agent_id,
            session_key=session_key,
            spawned_by=spawned_by,
            model_provider=model_provider,
            model_id=model_id,
            message_provider=message_provider,
            account_id=account_id,
            group_id=group_id,
            group_space=group_space,
            group_channel=group_channel,
            sender_id=sender_id,
            sender_e164=sender_e164,
            sender_username=sender_username,
            sender_name=sender_name,
            sender_is_owner=sender_is_owner,
            sandboxed=sandboxed,
            spawn_depth=spawn_depth,
            strict=strict is not False,
        )
        if len(_MEMO) >= _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO[key] = result
    return result
