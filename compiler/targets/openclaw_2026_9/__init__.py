"""OpenClaw 2026.9 (checked against openclaw@2026.9.6): what ``init``, ``import-openclaw`` and
``migrate`` write.

Its data file is ``data/openclaw-2026.9.json`` (read from the release's code by ``python -m
conformance.extract``); its switches are below, each a field of
:class:`~toolc.targets.model.Target` (whose comments say what they mean).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config_specs import (
    AGENT_TOOLS,
    BOOL,
    EXEC,
    INT,
    POLICY,
    SANDBOX,
    SESSION,
    STR,
    ConfigSpecs,
    Spec,
    map_of,
)
from ..grammar import SEGMENTED_SESSION_KEYS, TYPED_SENDER_KEYS
from ..model import Target, data_lists, message_provider_tables

KEY = "2026.9"

# What 2026.9.6's config schema (zod-schema*.mjs) has that 2026.3.2's has not, as far as tool
# access goes: the keyed agent roster and its ownership marker, sender policies globally and per
# agent (group-level `toolsBySender` is in both), the sandbox layer's alsoAllow, exec's `mode`,
# and `experimental.localModelLean` (defaults and per agent).
_AGENT_TOOLS_KEYS: tuple[tuple[str | None, ...], ...] = (
    ("tools", "toolsBySender"), ("tools", "sandbox", "tools", "alsoAllow"),
    ("tools", "exec", "mode"), ("experimental",))
CONFIG_KEYS: tuple[tuple[str | None, ...], ...] = (
    ("tools", "toolsBySender"), ("tools", "sandbox", "tools", "alsoAllow"),
    ("tools", "exec", "mode"), ("bindings", None, "session"), ("session", "groupScope"),
    ("agents", "entries"), ("agents", "ownership"), ("agents", "defaults", "experimental"),
    *(("agents", "list", None, *p) for p in _AGENT_TOOLS_KEYS),
)

# The importer's shapes (zod-schema*.mjs): sender policies globally and per agent, the sandbox
# layer's alsoAllow, exec.mode, the keyed roster with its ownership marker (its loader still
# reads agents.list, moving it to agents.entries), experimental.localModelLean, and the
# session's groupScope.
_AGENT_TOOLS: Spec = {**AGENT_TOOLS, "toolsBySender": map_of(POLICY),
                      "sandbox": {"tools": POLICY}, "exec": {**EXEC, "mode": STR}}
_EXPERIMENTAL: Spec = {"localModelLean": BOOL}
_AGENT_ENTRY: Spec = {"default": BOOL, "sandbox": SANDBOX, "tools": _AGENT_TOOLS,
                      "experimental": _EXPERIMENTAL}
CONFIG = ConfigSpecs(
    global_tools={**_AGENT_TOOLS, "subagents": {"tools": POLICY}},
    agents={"defaults": {"subagents": {"maxSpawnDepth": INT}, "sandbox": SANDBOX,
                         "experimental": _EXPERIMENTAL},
            "ownership": STR, "entries": map_of(_AGENT_ENTRY),
            "list": ("list_of", {"id": STR, **_AGENT_ENTRY})},
    session={**SESSION, "groupScope": STR})

# ids-*.mjs GENERATED_BUNDLED_CHANNEL_IDS without configurable: false (qa-channel), plus
# webchat (isGatewayMessageChannel)
_GATEWAY_CHANNELS = (
    "webchat", "a2a", "buzz", "clickclack", "discord", "feishu", "googlechat", "imessage", "irc",
    "line", "matrix", "mattermost", "msteams", "nextcloud-talk", "nostr", "raft", "reef",
    "signal", "slack", "sms", "synology-chat", "telegram", "tlon", "twitch", "whatsapp", "zalo",
    "zalouser")


def build(data: Mapping[str, Any]) -> Target:
    """This release's target from its data file."""
    return Target(
        key=KEY, release=str(data["release"]),
        sessions=SEGMENTED_SESSION_KEYS, senders=TYPED_SENDER_KEYS, config=CONFIG,
        owner_unknown_keeps=True,
        # GATEWAY_OWNER_ONLY_CORE_TOOLS, denied by name
        owner_only_names=tuple(data["ownerOnly"]),
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
        plugin_group_resolvers=tuple(data.get("groupResolvers") or ()),
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
        # tool-policy-shared TOOL_NAME_ALIASES; tool-policy expandShippedCoreToolPolicyNames
        policy_aliases={"cron": "automations"},
        policy_expansions={"update_plan": ("progress_card",),
                           "canvas": ("canvas", "show_widget")},
        full_profile_allows_all=True,
        # local-model-lean LOCAL_MODEL_LEAN_DENY_TOOL_NAMES
        local_model_lean_tools=tuple(data["localModelLeanDeny"]),
        cron_session_drop=("sessions_yield",),
        host_only_tools=tuple(data.get("hostOnly") or ()),
        caller_only_tools=("transcripts",),
        gateway_channels=_GATEWAY_CHANNELS,
        renames={"cron": "automations", "image": "view_image"},
        config_keys=CONFIG_KEYS,
        config_values=((("tools", "exec", "host"), "auto"),
                       (("agents", "list", None, "tools", "exec", "host"), "auto")),
        roster_checked=True,
        route_peer_wildcard=True,
        route_binding_session=True,
        route_lowercase_key=False,
        route_implicit_channel_bindings=True,
        route_main_always=True,
        route_main_roster=True,
        **message_provider_tables(data),
        **data_lists(data))
