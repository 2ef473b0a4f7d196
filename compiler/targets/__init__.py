"""Targets: the OpenClaw release whose semantics a project's definitions follow.

A project names its release with a top-level ``openclaw: "2026.9"`` (or ``"2026.3"``) in any
definitions file; without the key it keeps 2026.3 semantics (note TC106). Everything that
differs between releases is here, one :class:`Target` per release: the release's own data (read
from its code by ``python -m conformance.extract`` into ``data/openclaw-<key>.json``: catalog
names and groups, profiles, owner-only set, subagent deny lists, sandbox defaults) and the
named rule switches the engines consult. No other module compares release strings.

The runtime's modules are the same static code in every build, so the switches a request needs
travel in the build as data (:meth:`Target.runtime_rules`, written into ``tables.json``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

ApplyPatchRule = Literal["opt-in-openai", "default-on"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Target:
    """One OpenClaw release's semantics: data plus named rule switches."""

    key: str  # what definitions write: "2026.3", "2026.9"
    release: str  # the published npm version the conformance suite checks: "2026.9.6"

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
    def label(self) -> str:
        return f"OpenClaw {self.key} (checked against openclaw@{self.release})"

    @property
    def data(self) -> Mapping[str, Any]:
        """The release's own data (``data/openclaw-<key>.json``): catalog, groups, profiles."""
        return _data(self.key)

    def routing_rules(self) -> dict[str, Any]:
        """What ``toolc_runtime.route`` needs to follow this release (routes.json)."""
        return {"peer_wildcard": self.route_peer_wildcard,
                "binding_session": self.route_binding_session,
                "lowercase_key": self.route_lowercase_key}

    def runtime_rules(self) -> dict[str, Any]:
        """What the static runtime needs to follow this target at request time (tables.json)."""
        return {"openclaw": self.key, "release": self.release,
                "owner_unknown_keeps": self.owner_unknown_keeps,
                "agent_selection": self.agent_selection,
                "group_id_needs_session": self.group_id_needs_session,
                "global_sender_layer": self.global_sender_layer,
                "channel_sender_keys": self.channel_sender_keys,
                "slash_model_is_prefixed": self.slash_model_is_prefixed,
                "generic_group_resolver": self.generic_group_resolver,
                "plugin_group_resolvers": list(self.plugin_group_resolvers),
                "subagent_key_rules": self.subagent_key_rules,
                "request_channel_aliases": dict(self.request_channel_aliases),
                "plugin_admission": self.optional_admitted_by_wildcard,
                "local_model_lean": bool(self.local_model_lean_tools),
                "subagent_depth_counts_leading": self.subagent_depth_counts_leading,
                "gateway_channels": list(self.gateway_channels)}


@functools.cache
def _data(key: str) -> Mapping[str, Any]:
    # a module-level cache: a slotted dataclass has no __dict__ for cached_property
    text = resources.files(__name__).joinpath(f"data/openclaw-{key}.json").read_text(
        encoding="utf-8")
    loaded: Mapping[str, Any] = json.loads(text)
    return loaded


# What 2026.9.6's config schema (zod-schema*.mjs) has that 2026.3.2's has not, as far as tool
# access goes: the keyed agent roster and its ownership marker, sender policies globally and per
# agent (group-level `toolsBySender` is in both), the sandbox layer's alsoAllow, exec's `mode`,
# and `experimental.localModelLean` (defaults and per agent).
_AGENT_TOOLS_9: tuple[tuple[str | None, ...], ...] = (
    ("tools", "toolsBySender"), ("tools", "sandbox", "tools", "alsoAllow"),
    ("tools", "exec", "mode"), ("experimental",))
CONFIG_KEYS_2026_9: tuple[tuple[str | None, ...], ...] = (
    ("tools", "toolsBySender"), ("tools", "sandbox", "tools", "alsoAllow"),
    ("tools", "exec", "mode"), ("bindings", None, "session"), ("session", "groupScope"),
    ("agents", "entries"), ("agents", "ownership"), ("agents", "defaults", "experimental"),
    *(("agents", "list", None, *p) for p in _AGENT_TOOLS_9),
)

# Each release's switches; the lists (subagent deny lists, sandbox defaults, maxSpawnDepth,
# the owner-only names with ``owner_only_by_name``) are the release's own, read from
# data/openclaw-<key>.json (see _from_data).
_SWITCHES: dict[str, dict[str, Any]] = {
    "2026.3": dict(
        owner_unknown_keeps=False,
        agent_selection=False,
        apply_patch="opt-in-openai", apply_patch_implied_by="exec",
        subagent_allow_lifts_default_deny=True,
        plugin_only_allowlist_restricts=False,
        optional_admitted_by_wildcard=False,
        group_id_needs_session=False,
        global_sender_layer=False,
        channel_sender_keys=False,
        slash_model_is_prefixed=False,
        sandbox_also_allow=False,
        sandbox_allow_lifts_default_deny=False,
        renames={},
    ),
    "2026.9": dict(
        owner_unknown_keeps=True,
        owner_only_by_name=True,
        agent_selection=True,
        apply_patch="default-on", apply_patch_implied_by="write",
        subagent_allow_lifts_default_deny=False,
        plugin_only_allowlist_restricts=True,
        optional_admitted_by_wildcard=True,
        group_id_needs_session=True,
        global_sender_layer=True,
        channel_sender_keys=True,
        slash_model_is_prefixed=True,
        generic_group_resolver=True,
        subagent_key_rules=True,
        request_channel_aliases={"lark": "feishu", "teams": "msteams", "nc": "nextcloud-talk",
                                 "nc-talk": "nextcloud-talk", "twitch-chat": "twitch",
                                 "zl": "zalo", "zlu": "zalouser"},
        sandbox_also_allow=True,
        sandbox_allow_lifts_default_deny=True,
        # engB: the 2026.9 build-time layer rules (see the field comments)
        sandbox_image_tool="view_image",
        sandbox_image_deny_follows=True,
        subagent_depth_counts_leading=True,
        message_provider_tables=True,
        # tool-policy-shared TOOL_NAME_ALIASES; tool-policy expandShippedCoreToolPolicyNames
        policy_aliases={"cron": "automations"},
        policy_expansions={"update_plan": ("progress_card",),
                           "canvas": ("canvas", "show_widget")},
        full_profile_allows_all=True,
        # local-model-lean LOCAL_MODEL_LEAN_DENY_TOOL_NAMES: the data's localModelLeanDeny
        local_model_lean_from_data=True,
        cron_session_drop=("sessions_yield",),
        caller_only_tools=("transcripts",),
        # ids-*.mjs GENERATED_BUNDLED_CHANNEL_IDS without configurable: false (qa-channel),
        # plus webchat (isGatewayMessageChannel)
        gateway_channels=("webchat", "a2a", "buzz", "clickclack", "discord", "feishu",
                          "googlechat", "imessage", "irc", "line", "matrix", "mattermost",
                          "msteams", "nextcloud-talk", "nostr", "raft", "reef", "signal",
                          "slack", "sms", "synology-chat", "telegram", "tlon", "twitch",
                          "whatsapp", "zalo", "zalouser"),
        renames={"cron": "automations", "image": "view_image"},
        config_keys=CONFIG_KEYS_2026_9,
        config_values=((("tools", "exec", "host"), "auto"),
                       (("agents", "list", None, "tools", "exec", "host"), "auto")),
        roster_checked=True,
        route_peer_wildcard=True,
        route_binding_session=True,
        route_lowercase_key=False,
        route_implicit_channel_bindings=True,
        route_main_always=True,
        route_main_roster=True,
    ),
}

DEFAULT_KEY = "2026.3"  # definitions without `openclaw:`
NEWEST_KEY = "2026.9"  # what init, import-openclaw and migrate write


@functools.cache
def _from_data(key: str) -> Target:
    data = json.loads(resources.files(__name__).joinpath(f"data/openclaw-{key}.json")
                      .read_text(encoding="utf-8"))
    switches = dict(_SWITCHES[key])
    # 2026.9.6 denies GATEWAY_OWNER_ONLY_CORE_TOOLS by name: the release's list
    by_name = switches.pop("owner_only_by_name", False)
    if switches.pop("local_model_lean_from_data", False):
        switches["local_model_lean_tools"] = tuple(data["localModelLeanDeny"])
    if "hostOnly" in data:
        switches.setdefault("host_only_tools", tuple(data["hostOnly"]))
    if switches.get("generic_group_resolver"):
        switches.setdefault("plugin_group_resolvers", tuple(data.get("groupResolvers") or ()))
    return Target(key=key, release=str(data["release"]), **switches,
                  owner_only_names=tuple(data["ownerOnly"]) if by_name else (),
                  subagent_deny_always=tuple(data["subagentDeny"]["always"]),
                  subagent_deny_leaf=tuple(data["subagentDeny"]["leaf"]),
                  default_max_spawn_depth=int(data["maxSpawnDepth"]),
                  sandbox_default_allow=tuple(data["sandbox"]["allow"]),
                  sandbox_default_deny=tuple(data["sandbox"]["deny"]),
                  **_message_provider_tables(key, data))


def _message_provider_tables(key: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """filterToolsByMessageProvider's tables, for a target that applies them as data (2026.3
    keeps them in the catalog's ``excludeChannels``)."""
    if not _SWITCHES[key].get("message_provider_tables"):
        return {}
    return {"message_provider_allow": {k: tuple(v) for k, v in
                                       (data.get("messageProviderAllow") or {}).items()},
            "message_provider_deny": {k: tuple(v) for k, v in
                                      (data.get("messageProviderDeny") or {}).items()}}


KEYS = tuple(_SWITCHES)


def target(key: str | None) -> Target:
    """The target a definitions' ``openclaw`` key names (None: the default, 2026.3)."""
    key = key or DEFAULT_KEY
    if key not in _SWITCHES:
        raise KeyError(key)
    return _from_data(key)
