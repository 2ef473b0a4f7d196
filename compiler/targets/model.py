"""The :class:`Target` value: one OpenClaw release's data, key grammars and named rule switches,
as its release module (``openclaw_<key>.py``) builds it from its data file."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .config_specs import ConfigSpecs
from .grammar import SenderKeyGrammar, SessionKeyGrammar
from .release_data import release_data
from .rules import RequestRules

ApplyPatchRule = Literal["opt-in-openai", "default-on"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """One OpenClaw release's semantics: data plus named rule switches."""

    key: str  # what definitions write: "2026.3", "2026.9"
    release: str  # the published npm version the conformance suite checks: "2026.9.6"

    # -- key grammars (toolc.targets.grammar) -----------------------------------------------
    sessions: SessionKeyGrammar  # which agent and subagent depth a session key names
    senders: SenderKeyGrammar  # what a toolsBySender key names
    # -- the importer's key specs (toolc.targets.config_specs) -------------------------------
    config: ConfigSpecs

    # -- owner-only tools ------------------------------------------------------------------
    # True: owner-only tools are removed only when the sender is known not to be the owner
    # (sender_is_owner=False); unknown (None) keeps them. False: only an explicit True keeps
    # them (2026.3.2 applyOwnerOnlyToolPolicy(tools, senderIsOwner === true)).
    owner_unknown_keeps: bool
    # Names removed for a non-owner on top of the catalog's ``ownerOnly`` flags. 2026.9.6
    # denies GATEWAY_OWNER_ONLY_CORE_TOOLS by name (createOpenClawCodingToolsInternal's
    # ownerOnlyCoreToolPolicy, a deny step after the sandbox step and in the plugin denylist),
    # so a plugin tool of such a name goes too; 2026.3.2 reads the tools' own flags only.
    owner_only_names: tuple[str, ...]

    # -- agent selection -------------------------------------------------------------------
    # True: a request without an agent uses the sole or the `default: true` agent, and where
    # the release cannot choose, resolve raises AgentSelectionRequiredError.
    agent_selection: bool

    # -- apply_patch -----------------------------------------------------------------------
    # "opt-in-openai": tools.exec.applyPatch.enabled must be true and the provider OpenAI;
    # "default-on": on unless disabled, for every provider.
    apply_patch: ApplyPatchRule
    apply_patch_implied_by: str  # a layer allowing this tool also allows apply_patch

    # -- subagents -------------------------------------------------------------------------
    subagent_deny_always: tuple[str, ...]
    subagent_deny_leaf: tuple[str, ...]
    subagent_allow_lifts_default_deny: bool  # subagents.tools.allow drops default denies
    default_max_spawn_depth: int

    # -- plugins ---------------------------------------------------------------------------
    plugin_only_allowlist_restricts: bool  # False: stripped with a warning (2026.3, D3)
    # True: plugin tools are admitted at load time as createPluginToolAllowlist decides
    # (2026.9): optional ones by `*`, globs, the plugin id, their name or group:plugins in any
    # allow list; non-optional ones likewise once some allow list has entries (a core group
    # never admits); a deny matching the plugin id (or group:plugins) drops the plugin.
    # False: optional ones only when an allow list names them, their plugin or group:plugins.
    optional_admitted_by_wildcard: bool

    # -- the pipeline's steps and name matching ---------------------------------------------
    # extra whole-name aliases of normalizeToolPolicyName beyond bash/apply-patch
    policy_aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # expandShippedCoreToolPolicyNames: a policy entry that stands for these names
    policy_expansions: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    full_profile_allows_all: bool = False  # a `full` profile without lists is allow `*`

    # -- groups and senders ----------------------------------------------------------------
    group_id_needs_session: bool  # a caller's groupId counts only when the session names it
    global_sender_layer: bool  # tools.toolsBySender, globally and per agent
    channel_sender_keys: bool  # typed sender keys `channel:<channel>:<id>`
    # Only the generic `channels.<ch>.groups` resolver (2026.9.6: no Slack `channels`, Discord
    # `guilds`, IRC case folding or IRC e164 exception), empty account `groups` inheriting the
    # channel's with at most one account (resolveChannelGroups); request channel aliases
    # beyond the definitions' own (normalizeMessageChannel).
    generic_group_resolver: bool = False
    # Channels whose bundled plugin brings its own group resolver, tried per group id before
    # the generic one (2026.9.6 resolveGroupToolPolicyOutcome: Telegram's
    # resolveTelegramGroupToolPolicy); the data's ``groupResolvers`` (read from the release)
    plugin_group_resolvers: tuple[str, ...] = ()
    # 2026.9.6 isSubagentSessionKey / getSubagentDepth: an agent key's REST (segments kept as
    # written) starts with `subagent:`; depth counts `(^|:)subagent:` in REST (2026.3.2
    # counted `:subagent:` in the whole key)
    subagent_key_rules: bool = False
    request_channel_aliases: Mapping[str, str] = field(default_factory=dict)

    # -- routing (resolveAgentRoute: toolc_runtime.route, resolve_message) ------------------
    # 2026.9.6: a `peer: {id: "*"}` binding is a wildcard tier of its own
    route_peer_wildcard: bool = False
    # 2026.9.6: a binding's `session` (dmScope, groupScope) overrides the config's,
    # `session.groupScope: main` keys groups to the agent's main session, and the caller may
    # pass a default agent id (2026.3.2 has none of them: their keys are TC107 there)
    route_binding_session: bool = False
    # 2026.3.2 lowercases the whole session key (2026.9.6 keeps the case of Signal group ids
    # and Matrix rooms)
    route_lowercase_key: bool = True
    # 2026.9.6's loader adds a channel-wide binding to the legacy `default: true` agent for
    # each configured channel without one (materializeLegacyDefaultAgentRoles)
    route_implicit_channel_bindings: bool = False
    # 2026.9.6's pickFirstExistingAgentId routes a binding to `main` to main even where the
    # roster does not declare it; 2026.3.2's sends it, like any undeclared agent, to the
    # default agent (only an empty roster keeps the binding's own id)
    route_main_always: bool = False
    # 2026.9.6's loader gives a config without a roster (or an empty one) `agents.entries:
    # {main: {}}` unless `agents.ownership` is `explicit` (migratePersistedImplicitMainRoster),
    # so a caller's default agent id other than main is refused there; 2026.3.2 has no such
    # step: without a roster any id routes as given
    route_main_roster: bool = False

    # -- providers -------------------------------------------------------------------------
    slash_model_is_prefixed: bool  # a model id with `/` is provider-prefixed in byProvider

    # -- sandbox ---------------------------------------------------------------------------
    sandbox_default_allow: tuple[str, ...]
    sandbox_default_deny: tuple[str, ...]
    sandbox_also_allow: bool  # sandbox.tools.alsoAllow
    sandbox_allow_lifts_default_deny: bool  # an explicit allow removes it from the default deny
    sandbox_image_tool: str = "image"  # joins a non-empty sandbox allow list (expandResolved...)
    sandbox_image_deny_follows: bool = False  # a deny matching `image` also denies view_image

    # -- subagents (more) --------------------------------------------------------------------
    # True: the depth of a key counts `(?:^|:)subagent:` in the part after `agent:<id>:`
    # (2026.9 getSubagentDepth); False: `:subagent:` in the whole key (2026.3 toolc)
    subagent_depth_counts_leading: bool = False

    # -- message provider (filterToolsByMessageProvider) ----------------------------------------
    message_provider_tables: bool = False  # the release's tables apply (from its data)
    message_provider_allow: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=dict)
    message_provider_deny: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=dict)
    # experimental.localModelLean (2026.9 filterLocalModelLeanTools): the tools it drops unless
    # an allow list outside the profiles names them (empty: no such rule)
    local_model_lean_tools: tuple[str, ...] = ()
    # filterRequesterYieldTools: tools a cron session (`agent:<id>:cron:...`) never gets
    cron_session_drop: tuple[str, ...] = ()
    # createOpenClawTools `options.sandboxed ? [] : [terminal, portal]` (2026.9): tools never
    # built for a sandboxed run (the release's data: hostOnly)
    host_only_tools: tuple[str, ...] = ()
    # createOpenClawTools (2026.9) builds these only for a channel caller
    # (resolveTranscriptCaller: resolveGatewayMessageChannel(messageProvider) and a sender id)
    caller_only_tools: tuple[str, ...] = ()
    # isGatewayMessageChannel: webchat and the deliverable channels (CHANNEL_IDS)
    gateway_channels: tuple[str, ...] = ()

    # -- renames from the previous target (migrate) -----------------------------------------
    renames: Mapping[str, str]

    # -- config shapes (definitions format, import-openclaw, migrate) -------------------------
    # Definitions keys only this release reads, as paths (None: any key or index); in a project
    # that follows another release they are an error (TC107) naming the `openclaw:` value.
    config_keys: tuple[tuple[str | None, ...], ...] = ()
    # Values only this release accepts: (path, value)
    config_values: tuple[tuple[tuple[str | None, ...], str], ...] = ()
    # The release's loader checks the agent roster (agents.entries: one agent, or one
    # `default: true`, or `ownership: explicit`) and refuses `exec.mode` beside security/ask.
    roster_checked: bool = False

    @property
    def data(self) -> Mapping[str, Any]:
        """The release's own data (``data/openclaw-<key>.json``): catalog, groups, profiles
        (read once per release, never carried in a pickled target)."""
        return release_data(self.key)

    @property
    def label(self) -> str:
        return f"OpenClaw {self.key} (checked against openclaw@{self.release})"

    def routing_rules(self) -> dict[str, Any]:
        """What ``toolc_runtime.route`` needs to follow this release (routes.json)."""
        return {"peer_wildcard": self.route_peer_wildcard,
                "binding_session": self.route_binding_session,
                "lowercase_key": self.route_lowercase_key}

    def request_rules(self) -> RequestRules:
        """What the static runtime needs to follow this target at request time (tables.json)."""
        return RequestRules(
            openclaw=self.key, release=self.release,
            owner_unknown_keeps=self.owner_unknown_keeps,
            agent_selection=self.agent_selection,
            group_id_needs_session=self.group_id_needs_session,
            global_sender_layer=self.global_sender_layer,
            channel_sender_keys=self.channel_sender_keys,
            slash_model_is_prefixed=self.slash_model_is_prefixed,
            generic_group_resolver=self.generic_group_resolver,
            plugin_group_resolvers=self.plugin_group_resolvers,
            subagent_key_rules=self.subagent_key_rules,
            request_channel_aliases=self.request_channel_aliases,
            plugin_admission=self.optional_admitted_by_wildcard,
            local_model_lean=bool(self.local_model_lean_tools),
            subagent_depth_counts_leading=self.subagent_depth_counts_leading,
            gateway_channels=self.gateway_channels)

    def runtime_rules(self) -> dict[str, Any]:
        """:meth:`request_rules` as ``tables.json`` writes them."""
        return self.request_rules().to_json()


def data_lists(data: Mapping[str, Any]) -> dict[str, Any]:
    """The Target fields every release reads from its data file the same way: subagent deny
    lists, maxSpawnDepth, sandbox defaults."""
    return {"subagent_deny_always": tuple(data["subagentDeny"]["always"]),
            "subagent_deny_leaf": tuple(data["subagentDeny"]["leaf"]),
            "default_max_spawn_depth": int(data["maxSpawnDepth"]),
            "sandbox_default_allow": tuple(data["sandbox"]["allow"]),
            "sandbox_default_deny": tuple(data["sandbox"]["deny"])}


def message_provider_tables(data: Mapping[str, Any]) -> dict[str, Any]:
    """filterToolsByMessageProvider's tables, for a release that applies them as data (2026.3
    keeps them in the catalog's ``excludeChannels``)."""
    return {"message_provider_tables": True,
            "message_provider_allow": {k: tuple(v) for k, v in
                                       (data.get("messageProviderAllow") or {}).items()},
            "message_provider_deny": {k: tuple(v) for k, v in
                                      (data.get("messageProviderDeny") or {}).items()}}
