"""OpenClaw 2026.3 (checked against openclaw@2026.3.2): the release definitions follow without
an ``openclaw:`` key.

Its data file is ``data/openclaw-2026.3.json``; its switches are below, each a field of
:class:`~toolc.targets.model.Target` (whose comments say what they mean).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config_specs import AGENT_TOOLS, BOOL, INT, POLICY, SANDBOX, SESSION, STR, ConfigSpecs
from ..grammar import COLLAPSED_SESSION_KEYS, LOOSE_SENDER_KEYS
from ..model import Target, data_lists

KEY = "2026.3"

CONFIG = ConfigSpecs(
    global_tools={**AGENT_TOOLS, "subagents": {"tools": POLICY}},
    agents={"defaults": {"subagents": {"maxSpawnDepth": INT}, "sandbox": SANDBOX},
            "list": ("list_of", {"id": STR, "default": BOOL, "sandbox": SANDBOX,
                                 "tools": AGENT_TOOLS})},
    session=SESSION)


def build(data: Mapping[str, Any]) -> Target:
    """This release's target from its data file."""
    return Target(
        key=KEY, release=str(data["release"]),
        sessions=COLLAPSED_SESSION_KEYS, senders=LOOSE_SENDER_KEYS, config=CONFIG,
        owner_unknown_keeps=False,
        owner_only_names=(),
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
        **data_lists(data))
