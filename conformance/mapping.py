"""OpenClaw config (+ plugin stand-ins + OpenClaw's own core catalog) -> toolc definitions."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

OPENAI_FAMILY = ["openai", "openai-codex"]  # OpenClaw's isOpenAIProvider
MEMORY_CORE = {"id": "memory-core", "tools": [{"name": "memory_search"},
                                              {"name": "memory_get"}]}
# Tools that exist outside every catalog section (no group): 2026.3.2 builds `pdf` as a core
# tool, and `whatsapp_login` comes from the WhatsApp channel plugin.
UNSECTIONED = ("pdf",)


def catalog_from(oracle: Mapping[str, Any], plugins: Sequence[Mapping[str, Any]]
                 ) -> list[dict[str, Any]]:
    """toolc catalog entries for OpenClaw's core tools (as its catalog groups them), the
    WhatsApp login tool, memory-core's tools and the given plugin stand-ins."""
    groups: Mapping[str, list[str]] = oracle["groups"]
    owner_only = set(oracle["ownerOnly"])
    sections: dict[str, list[str]] = {}
    for group, members in groups.items():
        for name in members:
            sections.setdefault(name, []).append(group.removeprefix("group:"))
    memory = {t["name"] for t in MEMORY_CORE["tools"]}
    tools: list[dict[str, Any]] = []
    for name in [*(n for n in sections if n not in memory), *UNSECTIONED]:
        tool = _tool(name, sections.get(name, []), owner_only)
        if name == "apply_patch":
            tool["availability"] = {"providers": OPENAI_FAMILY}
        if name == "tts":  # OpenClaw's message-provider filter
            tool["availability"] = {"excludeChannels": ["voice"]}
        tools.append(tool)
    tools.append({**_tool("whatsapp_login", [], owner_only), "channel": "whatsapp"})
    for plugin in [MEMORY_CORE, *plugins]:
        for t in plugin["tools"]:
            tool = _tool(t["name"], sections.get(t["name"], []), owner_only)
            tool["plugin"] = plugin["id"]
            if t.get("optional"):
                tool["optional"] = True
            tools.append(tool)
    return tools


def _tool(name: str, groups: list[str], owner_only: set[str]) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": f"The {name} tool.",
                            "parameters": {"type": "object"}}
    if groups:
        tool["groups"] = sorted(groups, key=lambda g: (g == "openclaw", g))
    if name in owner_only:
        tool["ownerOnly"] = True
    return tool


def definitions_from(config: Mapping[str, Any], plugins: Sequence[Mapping[str, Any]],
                     oracle: Mapping[str, Any]) -> dict[str, Any]:
    """One toolc definitions file meaning what ``config`` means to OpenClaw: its own profiles
    as data, its catalog, and the config's policy sections as they are."""
    data: dict[str, Any] = {"catalog": catalog_from(oracle, plugins),
                            "profiles": {name: dict(p) for name, p in
                                         oracle["profiles"].items()}}
    for key in ("tools", "agents", "channels", "plugins"):
        if key in config:
            data[key] = copy.deepcopy(config[key])
    # session.scope decides the main session (sandbox mode non-main); mainKey is not carried:
    # OpenClaw's loader forces it to "main" (applySessionDefaults)
    scope = (config.get("session") or {}).get("scope")
    if scope is not None:
        data["session"] = {"scope": scope}
    return data
