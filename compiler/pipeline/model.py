"""Stage 2, the document model: what the YAML says, typed, each piece with its source position."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from ..diagnostics import Pos
from ..rules.names import normalize_tool_name
from ..targets.grammar import SenderKind

# entries repeat the same few thousand names over millions of groups
_tool_name = functools.lru_cache(maxsize=1 << 16)(normalize_tool_name)

# "channel": 2026.9's ``channel:<channel>:<id>`` keys (SenderRule.channel names the channel)


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One entry of an allow/deny/alsoAllow list or a group, as written."""

    text: str
    pos: Pos

    @property
    def name(self) -> str:
        return _tool_name(self.text)


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryList:
    items: tuple[Entry, ...]
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """A ``{allow, alsoAllow, deny}`` block (lists are None when the key is absent)."""

    allow: EntryList | None = None
    also_allow: EntryList | None = None
    deny: EntryList | None = None
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderPolicy:
    """A ``byProvider`` entry; ``key`` is normalized (trimmed, lowercased)."""

    key: str
    key_pos: Pos
    profile: Entry | None
    policy: Policy


@dataclass(frozen=True, slots=True, kw_only=True)
class Availability:
    providers: frozenset[str] | None = None
    models: frozenset[str] | None = None
    channels: frozenset[str] | None = None
    exclude_channels: frozenset[str] | None = None  # e.g. tts on the `voice` channel


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDef:
    name: str
    label: str
    summary: str
    description: str
    groups: tuple[str, ...]
    parameters: Mapping[str, Any]
    owner_only: bool
    plugin: str | None
    optional: bool
    channel: str | None
    availability: Availability | None
    param_aliases: tuple[tuple[str, str], ...]
    wire_names: tuple[tuple[str, str], ...]
    external_content: bool = False  # results are outside content: wrapped as untrusted
    upstream_sha256: str | None = None  # import-mcp's hash of the upstream tool's definition
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupDef:
    name: str
    members: tuple[Entry, ...]
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileDef:
    name: str
    allow: EntryList | None
    deny: EntryList | None
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class SenderRule:
    """One ``toolsBySender`` key: ``kind`` and the normalized ``value`` (for ``channel`` keys
    the sender id; ``channel`` then holds the normalized channel id). ``index``: the key's
    position in its map as written (from 0), which names the rule where the key must not
    appear (a decision log's layer: the key is a sender id)."""

    kind: SenderKind
    value: str
    key: str
    index: int
    pos: Pos
    policy: Policy
    channel: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsConfig:
    """Global ``tools`` or an agent's ``tools`` (agents have no subagents section)."""

    profile: Entry | None = None
    policy: Policy
    by_provider: tuple[ProviderPolicy, ...] = ()
    sandbox_allow: EntryList | None = None
    sandbox_deny: EntryList | None = None
    subagents: Policy | None = None
    # ``exec.applyPatch``: an agent's object replaces the global one as a whole (2026.3.2)
    apply_patch_set: bool = False
    apply_patch_enabled: bool | None = None
    apply_patch_models: tuple[str, ...] | None = None
    # ``exec.host`` / ``security`` / ``ask``: an agent's key overrides the global one (2026.3.2)
    exec_host: Entry | None = None
    exec_security: Entry | None = None
    exec_ask: Entry | None = None
    # ``exec.allowlist`` (toolc; OpenClaw keeps it in exec-approvals.json): global + agent
    exec_allowlist: EntryList | None = None
    # -- openclaw "2026.9" only (TC107 elsewhere); their meaning is the engines' ------------
    # ``toolsBySender`` of this scope, in JavaScript key order (globally: tools.toolsBySender,
    # per agent: its tools.toolsBySender, matched before the global one)
    by_sender: tuple[SenderRule, ...] = ()
    # ``sandbox.tools.alsoAllow``: added to this scope's sandbox allow list
    sandbox_also_allow: EntryList | None = None
    # ``exec.mode``: deny, allowlist, ask, auto, full (never beside security/ask: TC109)
    exec_mode: Entry | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDef:
    id: str
    pos: Pos
    tools: ToolsConfig | None
    default: bool = False  # OpenClaw's ``default: true`` (the default agent)
    sandbox_mode: str | None = None  # ``sandbox.mode``: off, non-main, all (None: unset)
    # Where the roster says it: ``agents.list`` (an array) or ``agents.entries`` (a map keyed
    # by the agent id, 2026.9), and its 0-based position there (entries: JavaScript key order,
    # which is the order 2026.9 lists the roster in; the first agent is the fallback default)
    roster: Literal["list", "entries"] = "list"
    index: int = 0
    # ``experimental.localModelLean`` of this agent (2026.9; None: unset)
    local_model_lean: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupConfig:
    id: str
    pos: Pos
    tools: Policy | None
    senders: tuple[SenderRule, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AccountDef:
    id: str
    pos: Pos
    groups: tuple[GroupConfig, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SpaceConfig:
    """An outer entry (a Discord guild): its own block, its ``slug`` and its inner entries
    (the guild's ``channels``)."""

    entry: GroupConfig
    slug: str | None
    channels: tuple[GroupConfig, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelDef:
    """A channel's entry map: ``groups`` holds the map its rule reads (``groups``, or Slack's
    ``channels``); ``spaces`` the outer map of a nested rule (Discord ``guilds``)."""

    name: str
    pos: Pos
    groups: tuple[GroupConfig, ...] | None
    accounts: tuple[AccountDef, ...]
    spaces: tuple[SpaceConfig, ...] | None = None

    def entry_maps(self) -> list[tuple[GroupConfig, ...]]:
        """Every map of entries with tools and sender rules, accounts' and guilds' included."""
        out = [m for m in (self.groups, *(a.groups for a in self.accounts)) if m is not None]
        if self.spaces is not None:
            out.append(tuple(s.entry for s in self.spaces))
            out += [s.channels for s in self.spaces if s.channels is not None]
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginEntry:
    id: str
    enabled: bool
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderDialect:
    key: str
    dialect: str
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class BindingDef:
    """One route binding (``bindings``, OpenClaw's shape): the agent a message gets when its
    channel, account, chat (``peer``), guild, team and the sender's roles match. Values as
    OpenClaw normalizes them: the channel lowercased, ids trimmed (compared as written), the
    agent id normalized; ``account`` is None when absent (the channel's default account) and
    ``*`` for every account; ``peer_id`` ``*`` is a wildcard of its kind."""

    agent_id: str
    agent_pos: Pos
    channel: str
    account: str | None = None
    peer_kind: str | None = None  # direct, group, channel (None: no peer constraint)
    peer_id: str | None = None
    guild_id: str | None = None
    team_id: str | None = None
    roles: tuple[str, ...] | None = None  # None: no roles (an empty list is none)
    dm_scope: str | None = None  # the binding's ``session`` override
    group_scope: str | None = None
    index: int  # its position in ``bindings`` (0-based)
    pos: Pos


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionDef:
    """``session``: how OpenClaw keys conversations (``scope``; 2026.9 routing:
    ``dmScope``, ``groupScope`` and ``identityLinks``, canonical name -> linked ids in
    JavaScript key order)."""

    scope: str | None = None
    dm_scope: str | None = None
    group_scope: str | None = None
    identity_links: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    pos: Pos | None = None


# What an assertion's class pattern says about one dimension: a list of values (any of
# them), "*" (any value present), a boolean (owner, sandboxed), or a subagent kind.
PatternValue = tuple[str, ...] | Literal["*"] | bool


@dataclass(frozen=True, slots=True, kw_only=True)
class AssertionDef:
    """``assertions: [{never|always: {tools, agent, provider, ...}, because}]``: a policy unit
    test checked over every context class at build time."""

    kind: Literal["never", "always"]
    pos: Pos  # the ``never``/``always`` key
    tools: tuple[Entry, ...]
    where: Mapping[str, PatternValue]  # pattern keys as written (agent, channel, owner, ...)
    field_pos: Mapping[str, Pos]
    text: str  # the pattern in one line, for messages
    because: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Definitions:
    """Everything one definitions directory says, merged across its files."""

    files: tuple[str, ...]  # relative to the definitions directory
    tools: tuple[ToolDef, ...]
    groups: tuple[GroupDef, ...]
    profiles: Mapping[str, ProfileDef]
    plugins_enabled: bool
    plugin_entries: tuple[PluginEntry, ...]
    default_dialect: str | None
    provider_dialects: tuple[ProviderDialect, ...]
    tools_config: ToolsConfig
    agents: tuple[AgentDef, ...]
    max_spawn_depth: int | None
    channels: tuple[ChannelDef, ...]
    sandbox_mode: str | None = None  # ``agents.defaults.sandbox.mode`` (None: unset, off)
    session_scope: str | None = None  # ``session.scope``: per-sender, global (None: unset)
    # ``{relative path: text}`` exactly as read (shipped as build/sources.json for explain)
    texts: Mapping[str, str] = field(default_factory=dict)
    assertions: tuple[AssertionDef, ...] = ()
    # ``openclaw:``: the release these definitions follow (None: unset, 2026.3) and where the
    # first file says it (without the key: the start of the first file, for note TC106)
    openclaw: str | None = None
    openclaw_pos: Pos | None = None
    # ``agents.ownership`` (2026.9: "explicit", a roster without a default agent) and where
    # the roster is (``agents.entries`` or ``agents.list``; None: no agents section)
    agents_ownership: str | None = None
    roster_pos: Pos | None = None
    # ``agents.defaults.experimental.localModelLean`` (2026.9; None: unset)
    local_model_lean: bool | None = None
    # The incremental cache's key of everything outside the ``channels`` sections, and the
    # sha256 of each file by its position name (``toolc.builds.stream``); "" and empty when
    # the definitions did not come from files
    unit_base: str = ""
    file_digests: Mapping[str, str] = field(default_factory=dict)
    # The channels of the files compiled on their own (``toolc.builds.stream``): their
    # names only (tool availability reads them); ``channels`` holds the others
    streamed_channels: tuple[str, ...] = ()
    # Routing (2026.9): the route bindings in order, and the session settings
    bindings: tuple[BindingDef, ...] = ()
    session: SessionDef = field(default_factory=SessionDef)


# The incremental cache pickles the model (``toolc.builds.cache``): a frozen dataclass with
# slots unpickles through ``dataclasses``' generic ``__setstate__``, which looks up the
# fields of every object; these classes pickle as their field values instead, restored
# without a lookup (several times faster for a model of thousands of agents).
# A class's ``__slots__`` are its fields, in order (``dataclass(slots=True)``; checked below).
_new, _set = object.__new__, object.__setattr__


def _restore(cls: Any, values: tuple[Any, ...]) -> Any:
    obj: Any = _new(cls)
    for name, value in zip(cls.__slots__, values):  # noqa: B905 (as many: _by_values)
        _set(obj, name, value)
    return obj


def _by_values(self: Any) -> tuple[Callable[[type, tuple[Any, ...]], Any], tuple[Any, ...]]:
    cls = type(self)
    return _restore, (cls, tuple(getattr(self, name) for name in cls.__slots__))


for _cls in (Entry, EntryList, Policy, ProviderPolicy, Availability, ToolDef, GroupDef,
             ProfileDef, SenderRule, ToolsConfig, AgentDef, GroupConfig, AccountDef,
             SpaceConfig, ChannelDef, PluginEntry, ProviderDialect, AssertionDef, BindingDef,
             SessionDef, Definitions):
    assert _cls.__slots__ == tuple(f.name for f in fields(_cls)), _cls
    _cls.__reduce__ = _by_values  # type: ignore[method-assign]
