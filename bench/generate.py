"""Seeded synthetic deployment generator for the toolc benchmark.

``generate(out_dir, seed=..., tools=..., ...)`` writes a definitions directory in the format of
README.md ("Definitions format"): a catalog of core, extra and plugin tools split over several
files, groups and profiles, plugins, providers, the global ``tools`` policy, ``agents`` and
``channels``. The same arguments always produce the same bytes.

Each part of the deployment draws from its own RNG (seeded with the seed and the part's name), so
doubling one dimension changes only the parts that depend on it; that keeps the scaling figures of
``bench.run`` about one dimension at a time.

CLI: ``python -m bench.generate OUT --size large|medium --seed 1``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

# Dimensions of the two synthetic sizes; "small" is the shipped definitions/ directory.
# medium = one tenth of each large count. sender_rules_max is a per-group shape, not a count,
# so it stays at 5 in both (the issue: "up to 5 toolsBySender rules each").
SIZES: dict[str, dict[str, int]] = {
    "large": {
        "tools": 2000,
        "plugin_tools": 1500,
        "plugins": 100,
        "agents": 500,
        "provider_keys": 40,
        "channels": 50,
        "groups": 10000,
        "sender_rules_max": 5,
    },
    # opt-in (make bench-huge): a million groups over 100 channel accounts (20 channels, each
    # with its own groups map and 4 accounts), 2,000 agents
    "huge": {
        "tools": 2000,
        "plugin_tools": 1500,
        "plugins": 100,
        "agents": 2000,
        "provider_keys": 40,
        "channels": 20,
        "groups": 1000000,
        "sender_rules_max": 5,
        "accounts_per_channel": 4,
    },
    "medium": {
        "tools": 200,
        "plugin_tools": 150,
        "plugins": 10,
        "agents": 50,
        "provider_keys": 4,
        "channels": 5,
        "groups": 1000,
        "sender_rules_max": 5,
    },
}

# The dimensions the scaling measurement doubles one at a time.
SCALING_DIMENSIONS: tuple[str, ...] = ("tools", "agents", "provider_keys", "groups", "sender_rules")


def double(dims: dict[str, int], dimension: str) -> dict[str, int]:
    """Return a copy of ``dims`` with one scaling dimension doubled.

    ``tools`` doubles the whole catalog (plugin tools and plugins double with it, so the share of
    plugin tools and the tools per plugin stay the same); ``sender_rules`` doubles the per-group
    maximum, which doubles the expected number of toolsBySender rules.
    """
    out = dict(dims)
    if dimension == "tools":
        out["tools"] *= 2
        out["plugin_tools"] *= 2
        out["plugins"] *= 2
    elif dimension == "sender_rules":
        out["sender_rules_max"] *= 2
    elif dimension in ("agents", "provider_keys", "groups"):
        out[dimension] *= 2
    else:
        raise ValueError(f"unknown scaling dimension {dimension!r} (one of {SCALING_DIMENSIONS})")
    return out


# --------------------------------------------------------------------------------------------
# Core catalog: the 25 CLASSIC core tools plus the whatsapp_login channel tool
# (openclaw-semantics.md section 2.2, D6 owner-only flags, D8 apply_patch availability).

# name -> (section, in group:openclaw, summary, parameters {prop: (type, required)})
_CORE: tuple[tuple[str, str, bool, str, dict[str, tuple[str, bool]]], ...] = (
    (
        "read",
        "fs",
        False,
        "Read a file",
        {"path": ("string", True), "offset": ("integer", False), "limit": ("integer", False)},
    ),
    ("write", "fs", False, "Write a file", {"path": ("string", True), "content": ("string", True)}),
    (
        "edit",
        "fs",
        False,
        "Edit a file",
        {"path": ("string", True), "old_string": ("string", True), "new_string": ("string", True)},
    ),
    ("apply_patch", "fs", False, "Apply a patch", {"input": ("string", True)}),
    (
        "exec",
        "runtime",
        False,
        "Run a shell command",
        {"command": ("string", True), "timeout": ("integer", False)},
    ),
    (
        "process",
        "runtime",
        False,
        "Manage background processes",
        {"action": ("string", True), "session_id": ("string", False)},
    ),
    (
        "web_search",
        "web",
        True,
        "Search the web",
        {"query": ("string", True), "count": ("integer", False)},
    ),
    ("web_fetch", "web", True, "Fetch a URL", {"url": ("string", True)}),
    ("memory_search", "memory", True, "Search memory", {"query": ("string", True)}),
    ("memory_get", "memory", True, "Read a memory entry", {"path": ("string", True)}),
    ("sessions_list", "sessions", True, "List sessions", {"limit": ("integer", False)}),
    (
        "sessions_history",
        "sessions",
        True,
        "Read a session's history",
        {"session_key": ("string", True)},
    ),
    (
        "sessions_send",
        "sessions",
        True,
        "Send to a session",
        {"session_key": ("string", True), "message": ("string", True)},
    ),
    ("sessions_spawn", "sessions", True, "Spawn a subagent", {"task": ("string", True)}),
    ("subagents", "sessions", True, "Manage subagents", {"action": ("string", True)}),
    ("session_status", "sessions", True, "Show session status", {}),
    (
        "browser",
        "ui",
        True,
        "Control a browser",
        {"action": ("string", True), "url": ("string", False)},
    ),
    ("canvas", "ui", True, "Draw on the canvas", {"action": ("string", True)}),
    (
        "message",
        "messaging",
        True,
        "Send a message",
        {"to": ("string", True), "text": ("string", True)},
    ),
    ("cron", "automation", True, "Schedule jobs", {"action": ("string", True)}),
    ("gateway", "automation", True, "Control the gateway", {"action": ("string", True)}),
    ("nodes", "nodes", True, "Control paired nodes", {"action": ("string", True)}),
    ("agents_list", "agents", True, "List agents", {}),
    (
        "image",
        "media",
        True,
        "Describe an image",
        {"image": ("string", True), "prompt": ("string", False)},
    ),
    ("tts", "media", True, "Text to speech", {"text": ("string", True)}),
    ("whatsapp_login", "", False, "Log in to WhatsApp", {}),
)
CORE_NAMES: tuple[str, ...] = tuple(c[0] for c in _CORE)
CORE_GROUPS: tuple[str, ...] = (
    "group:fs",
    "group:runtime",
    "group:web",
    "group:memory",
    "group:sessions",
    "group:ui",
    "group:messaging",
    "group:automation",
    "group:nodes",
    "group:agents",
    "group:media",
    "group:openclaw",
)
_OWNER_ONLY = frozenset({"whatsapp_login", "cron", "gateway"})
# Core tools that are not present in every run (availability, channel or owner-only gating).
# They are never the "core" part of a generated allow list: a list whose core tools are all gated
# is dropped in some contexts by the plugin-only rule (section 6.2; toolc warns TC141).
_GATED_CORE = frozenset({"apply_patch", "whatsapp_login"}) | _OWNER_ONLY
_ALLOWABLE_CORE = tuple(n for n in CORE_NAMES if n not in _GATED_CORE)
_ALLOWABLE_CORE_GROUPS = tuple(g for g in CORE_GROUPS if g != "group:automation")

# Provider keys: real ones first (a mix of provider and provider/model keys), then synthetic ones.
_REAL_PROVIDER_KEYS: tuple[str, ...] = (
    "openai",
    "anthropic",
    "openai/gpt-5",
    "google",
    "openrouter",
    "anthropic/claude-sonnet-4-5",
    "openai-codex",
    "google/gemini-2.5-pro",
    "xai",
    "mistral",
)
_DIALECT_OF_PROVIDER = {
    "openai": "openai",
    "openai-codex": "openai",
    "openrouter": "openai",
    "xai": "openai",
    "mistral": "openai",
    "anthropic": "anthropic",
    "google": "gemini-json",
}
DIALECTS: tuple[str, ...] = ("openai", "anthropic", "gemini-json", "gemini", "mcp")
DEFAULT_DIALECT = "openai"
EXTRA_SECTIONS = 8  # extra tools fall into group:team_01 .. group:team_08
SENDER_POOL = 300  # senders named in toolsBySender rules (bench.run draws contexts from them too)
ACCOUNT_ID = "work"
MAX_SPAWN_DEPTH = 2


def provider_key_names(count: int) -> list[str]:
    """The first ``count`` byProvider keys (deterministic, no RNG)."""
    keys = list(_REAL_PROVIDER_KEYS[:count])
    i = 11
    while len(keys) < count:
        # every third synthetic key is a provider/model key of an earlier synthetic provider
        if i % 3 == 0:
            keys.append(f"provider{i - 1:02d}/model-{i % 7}")
        else:
            keys.append(f"provider{i:02d}")
        i += 1
    return keys


def sender(i: int) -> dict[str, str]:
    """Identity of sender number ``i`` of the sender pool."""
    return {
        "id": str(700000 + i * 13),
        "username": f"user{i:03d}",
        "e164": f"+1555{i:07d}",
        "name": f"Member {i}",
    }


# --------------------------------------------------------------------------------------------
# YAML output


# libyaml's emitter writes the same bytes as the pure-Python one (checked on the large size), only
# about twice as fast; fall back to the pure-Python dumper where PyYAML was built without libyaml.
_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Safe dumper that never writes anchors/aliases (every node is written in full)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _write_yaml(path: Path, doc: dict[str, Any]) -> None:
    body = {"version": 1, **doc}
    text = yaml.dump(
        body,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=100,
    )
    path.write_text(text, encoding="utf-8", newline="\n")


def _chunks(seq: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


# Picks use rng.random() (always 53 bits) instead of choice/sample (whose bit consumption depends
# on the pool size), so a bigger tool pool changes which names are drawn but not the structure.
def _pick(rng: random.Random, seq: Sequence[str]) -> str:
    return seq[int(rng.random() * len(seq))]


def _sample(rng: random.Random, seq: Sequence[str], k: int) -> list[str]:
    pool = list(seq)
    k = min(k, len(pool))
    for i in range(k):  # partial Fisher-Yates
        j = i + int(rng.random() * (len(pool) - i))
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


# --------------------------------------------------------------------------------------------
# Catalog


def _schema(props: dict[str, tuple[str, bool]], rng: random.Random | None = None) -> dict[str, Any]:
    properties = {
        name: {"type": t, "description": f"The {name.replace('_', ' ')}."}
        for name, (t, _) in props.items()
    }
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [name for name, (_, req) in props.items() if req]
    if required:
        schema["required"] = required
    if rng is not None and rng.random() < 0.3:
        schema["additionalProperties"] = False
    return schema


def _core_catalog() -> list[dict[str, Any]]:
    out = []
    for name, section, openclaw, summary, props in _CORE:
        tool: dict[str, Any] = {
            "name": name,
            "summary": summary,
            "description": f"{summary}. Core tool `{name}`.",
        }
        groups = ([section] if section else []) + (["openclaw"] if openclaw else [])
        if groups:
            tool["groups"] = groups
        tool["parameters"] = _schema(props)
        if name in _OWNER_ONLY:
            tool["ownerOnly"] = True
        if name == "whatsapp_login":
            tool["channel"] = "whatsapp"
        if name == "apply_patch":
            tool["availability"] = {"providers": ["openai", "openai-codex"]}
        if name in ("read", "write", "edit"):
            tool["paramAliases"] = {"file_path": "path"}
            tool["wireNames"] = {"anthropic": name.capitalize()}
        out.append(tool)
    return out


_PARAM_WORDS = ("query", "target", "limit", "mode", "path", "id", "verbose", "text")
_PARAM_TYPES = {
    "query": "string",
    "target": "string",
    "limit": "integer",
    "mode": "string",
    "path": "string",
    "id": "string",
    "verbose": "boolean",
    "text": "string",
}


def _random_props(rng: random.Random) -> dict[str, tuple[str, bool]]:
    names = _sample(rng, _PARAM_WORDS, rng.randint(1, 3))
    return {n: (_PARAM_TYPES[n], i == 0) for i, n in enumerate(names)}


def _extra_catalog(
    rng: random.Random, names: list[str], pkeys: list[str], channels: list[str]
) -> list[dict[str, Any]]:
    providers = sorted({k.split("/", 1)[0] for k in pkeys}) or ["openai"]
    models = sorted(k for k in pkeys if "/" in k) or ["openai/gpt-5"]
    out = []
    for name in names:
        tool: dict[str, Any] = {"name": name, "description": f"Extra tool {name}."}
        tool["groups"] = [f"team_{rng.randint(1, EXTRA_SECTIONS):02d}"]
        tool["parameters"] = _schema(_random_props(rng), rng)
        r = rng.random()
        if r < 0.05:
            tool["availability"] = {"providers": sorted(_sample(rng, providers, 2))}
        elif r < 0.08 and channels:
            tool["availability"] = {"channels": sorted(_sample(rng, channels, 2))}
        elif r < 0.10:
            tool["availability"] = {"models": [_pick(rng, models)]}
        if rng.random() < 0.02:
            tool["ownerOnly"] = True
        out.append(tool)
    return out


def _plugin_layout(plugin_tools: int, plugins: int) -> list[tuple[str, list[str]]]:
    """[(plugin id, [tool names])], plugin tools spread evenly over the plugins."""
    if plugins <= 0:
        return []
    layout = []
    for p in range(plugins):
        n = plugin_tools // plugins + (1 if p < plugin_tools % plugins else 0)
        layout.append((f"plug{p + 1:03d}", [f"p{p + 1:03d}_tool_{t + 1:03d}" for t in range(n)]))
    return layout


def _plugin_catalog(
    rng: random.Random, layout: list[tuple[str, list[str]]]
) -> tuple[list[dict[str, Any]], set[str]]:
    out, optional = [], set()
    for plugin_id, names in layout:
        for name in names:
            tool: dict[str, Any] = {
                "name": name,
                "description": f"Tool {name} of {plugin_id}.",
                "parameters": _schema(_random_props(rng), rng),
                "plugin": plugin_id,
            }
            if rng.random() < 0.10:
                tool["optional"] = True
                optional.add(name)
            out.append(tool)
    return out, optional


# --------------------------------------------------------------------------------------------
# Policy building blocks


class _Pools:
    """Names that policy lists draw from."""

    def __init__(
        self,
        extras: list[str],
        plugin_names: list[str],
        plugin_ids: list[str],
        custom_groups: list[str],
    ) -> None:
        self.extras = extras
        self.plugin_names = plugin_names
        self.plugin_ids = plugin_ids
        self.custom_groups = custom_groups
        globs = ["web_*", "sessions_*", "memory_*"]
        if extras:
            globs.append("tool_00*")
        if plugin_ids:
            globs.append("p001_*")
        self.globs = globs

    def core_entry(self, rng: random.Random) -> str:
        if rng.random() < 0.3:
            return _pick(rng, _ALLOWABLE_CORE_GROUPS)
        return _pick(rng, _ALLOWABLE_CORE)

    def other_entry(self, rng: random.Random) -> str:
        r = rng.random()
        if r < 0.3 and self.extras:
            return _pick(rng, self.extras)
        if r < 0.55 and self.plugin_names:
            return _pick(rng, self.plugin_names)
        if r < 0.75 and self.plugin_ids:
            return _pick(rng, self.plugin_ids)
        if r < 0.88 and self.custom_groups:
            return _pick(rng, self.custom_groups)
        if r < 0.95:
            return _pick(rng, self.globs)
        return "group:plugins" if self.plugin_ids else _pick(rng, self.globs)

    def any_entry(self, rng: random.Random) -> str:
        """Any entry, including gated core tools (for deny lists)."""
        if rng.random() >= 0.5:
            return self.other_entry(rng)
        return _pick(rng, CORE_GROUPS) if rng.random() < 0.3 else _pick(rng, CORE_NAMES)


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _allow_list(rng: random.Random, pools: _Pools, n: int = 3) -> list[str]:
    # At least one core entry, so the plugin-only rule never drops the list (except rarely, on
    # purpose: ~2% are plugin-only allow lists, which the compiler reports as warnings).
    core = [] if rng.random() < 0.02 else [pools.core_entry(rng) for _ in range(rng.randint(1, n))]
    other = [pools.other_entry(rng) for _ in range(rng.randint(0 if core else 1, n))]
    return _dedupe(core + other)


def _also_allow_list(rng: random.Random, pools: _Pools, n: int = 3) -> list[str]:
    return _dedupe(pools.other_entry(rng) for _ in range(rng.randint(1, n)))


def _deny_list(rng: random.Random, pools: _Pools, n: int = 3) -> list[str]:
    return _dedupe(pools.any_entry(rng) for _ in range(rng.randint(1, n)))


def _policy(
    rng: random.Random, pools: _Pools, *, p_allow: float, p_also: float, p_deny: float, n: int = 3
) -> dict[str, list[str]]:
    """An {allow, alsoAllow, deny} block with at least one key and lists of 1..n entries."""
    block: dict[str, list[str]] = {}
    if rng.random() < p_allow:
        block["allow"] = _allow_list(rng, pools, n)
    if rng.random() < p_also:
        block["alsoAllow"] = _also_allow_list(rng, pools, n)
    if rng.random() < p_deny or not block:
        block["deny"] = _deny_list(rng, pools, n)
    return block


def _profile(rng: random.Random) -> str:
    return rng.choices(("full", "coding", "messaging", "minimal"), (40, 35, 18, 7))[0]


def _by_provider(rng: random.Random, pools: _Pools, keys: list[str], k: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in sorted(_sample(rng, keys, k)):
        entry: dict[str, Any] = {}
        if rng.random() < 0.3:
            entry["profile"] = _profile(rng)
        if rng.random() < 0.8 or not entry:
            entry.update(_policy(rng, pools, p_allow=0.2, p_also=0.3, p_deny=0.6))
        out[key] = entry
    return out


def _sandbox(rng: random.Random, pools: _Pools) -> dict[str, Any]:
    block: dict[str, Any] = {}
    if rng.random() < 0.6:
        block["allow"] = _dedupe(
            ["group:fs", "group:runtime"] + [pools.any_entry(rng) for _ in range(rng.randint(0, 3))]
        )
    if rng.random() < 0.6 or not block:
        block["deny"] = _deny_list(rng, pools)
    return {"tools": block}


# --------------------------------------------------------------------------------------------
# Sections


def _groups_section(
    rng: random.Random, extras: list[str], plugin_names: list[str], count: int
) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {
        "group:readonly": ["read", "web_fetch", "memory_get", "sessions_list"],
        "group:danger": ["exec", "apply_patch", "gateway", "cron"],
        "group:ops": ["group:runtime", "group:web", "sessions_*"],
    }
    names: list[str] = []
    for i in range(count):
        name = f"group:bundle_{i + 1:03d}"
        members = _sample(rng, extras, rng.randint(2, 5))
        if plugin_names and rng.random() < 0.5:
            members.append(_pick(rng, plugin_names))
        if extras and rng.random() < 0.3:
            members.append(_pick(rng, extras)[:-1] + "*")  # a glob member, e.g. tool_012*
        if names and rng.random() < 0.3:
            members.append(_pick(rng, names))  # nested: only earlier groups, so no cycles
        groups[name] = _dedupe(members) or ["read"]
        names.append(name)
    return groups


def _profiles_section() -> dict[str, Any]:
    return {
        "minimal": {"allow": ["session_status"]},
        "coding": {
            "allow": ["group:fs", "group:runtime", "group:sessions", "group:memory", "image"]
        },
        "messaging": {
            "allow": [
                "group:messaging",
                "sessions_list",
                "sessions_history",
                "sessions_send",
                "session_status",
            ]
        },
        "full": {},
    }


def _plugins_section(rng: random.Random, plugin_ids: list[str]) -> dict[str, Any]:
    entries = {pid: {"enabled": rng.random() >= 0.05} for pid in plugin_ids}
    return {"enabled": True, "entries": entries}


def _providers_section(keys: list[str]) -> dict[str, Any]:
    entries: dict[str, Any] = {}
    for key in sorted(keys):
        provider = key.split("/", 1)[0]
        if provider in _DIALECT_OF_PROVIDER:
            dialect = _DIALECT_OF_PROVIDER[provider]
        else:
            dialect = DIALECTS[sum(map(ord, provider)) % len(DIALECTS)]
        entries[key] = {"dialect": dialect}
    return {"default": DEFAULT_DIALECT, "entries": entries}


def _global_tools(rng: random.Random, pools: _Pools, keys: list[str]) -> dict[str, Any]:
    tools: dict[str, Any] = {"profile": "coding"}
    also = ["web_search", "web_fetch", "message"]
    if pools.plugin_ids:
        also += _sample(rng, pools.plugin_ids, 3)
    tools["alsoAllow"] = also
    tools["deny"] = ["nodes"]
    n = max(1, len(keys) // 4)
    tools["byProvider"] = _by_provider(rng, pools, keys, n)
    tools["sandbox"] = {
        "tools": {
            "allow": ["group:fs", "group:runtime", "group:sessions", "image"],
            "deny": ["browser", "canvas", "nodes", "cron", "gateway"],
        }
    }
    tools["subagents"] = {"tools": {"alsoAllow": ["sessions_send"], "deny": ["browser"]}}
    tools["exec"] = {"applyPatch": {"enabled": True, "allowModels": ["gpt-5", "gpt-5-codex"]}}
    return tools


def _agents_section(seed: int, pools: _Pools, keys: list[str], agents: int) -> dict[str, Any]:
    roster = []
    for i in range(agents):
        # one RNG per agent: doubling the roster keeps the first agents as they were
        rng = random.Random(f"{seed}:agent:{i}")
        tools: dict[str, Any] = {}
        if rng.random() < 0.8:
            tools["profile"] = _profile(rng)
        if rng.random() < 0.3:
            tools["allow"] = _allow_list(rng, pools)
        if rng.random() < 0.35:
            tools["alsoAllow"] = _also_allow_list(rng, pools)
        if rng.random() < 0.45:
            tools["deny"] = _deny_list(rng, pools)
        if keys and rng.random() < 0.8:
            # each key with probability 0.09 (so the entry count follows the key count), >= 1
            chosen = [k for k in keys if rng.random() < 0.09] or [_pick(rng, keys)]
            tools["byProvider"] = _by_provider(rng, pools, chosen, len(chosen))
        if rng.random() < 0.15:
            tools["sandbox"] = _sandbox(rng, pools)
        agent: dict[str, Any] = {"id": f"agent{i + 1:04d}"}
        if tools:
            agent["tools"] = tools
        roster.append(agent)
    return {"defaults": {"subagents": {"maxSpawnDepth": MAX_SPAWN_DEPTH}}, "list": roster}


def _sender_rules(rng: random.Random, pools: _Pools, n: int) -> dict[str, Any]:
    rules: dict[str, Any] = {}
    tries = 0
    while len(rules) < n and tries < 4 * n + 8:
        tries += 1
        who = sender(rng.randrange(SENDER_POOL))
        kind = rng.choices(("id", "username", "e164", "name", "*"), (35, 25, 15, 10, 15))[0]
        if kind == "*":
            key = "*"
        elif kind == "username":
            key = f"username:@{who['username']}"
        else:
            key = f"{kind}:{who[kind]}"
        if key not in rules:
            rules[key] = _policy(rng, pools, p_allow=0.15, p_also=0.3, p_deny=0.6, n=2)
    # sorted keys, "*" last (it reads as the fallback)
    return {k: rules[k] for k in sorted(rules, key=lambda k: (k == "*", k))}


def _group_entry(rng: random.Random, pools: _Pools, sender_rules_max: int) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if rng.random() < 0.7:
        entry["tools"] = _policy(rng, pools, p_allow=0.2, p_also=0.25, p_deny=0.7, n=2)
    n = rng.randint(0, sender_rules_max) if sender_rules_max > 0 else 0
    if n:
        entry["toolsBySender"] = _sender_rules(rng, pools, n)
    if not entry:
        entry["tools"] = {"deny": _deny_list(rng, pools, 2)}
    return entry


def _group_map(seed: str, pools: _Pools, ids: list[str], sender_rules_max: int) -> dict[str, Any]:
    rng = random.Random(f"{seed}:*")
    groups: dict[str, Any] = {"*": {"tools": {"deny": _deny_list(rng, pools, 2)}}}
    if sender_rules_max > 0 and rng.random() < 0.5:
        groups["*"]["toolsBySender"] = _sender_rules(rng, pools, 1)
    for gid in sorted(ids):
        # one RNG per group id: a group's content does not depend on how many groups exist
        groups[gid] = _group_entry(random.Random(f"{seed}:{gid}"), pools, sender_rules_max)
    return groups


def _channel_names(channels: int) -> list[str]:
    return [f"chan{i + 1:02d}" for i in range(channels)]


def _channels_section(
    seed: int,
    pools: _Pools,
    channels: int,
    groups: int,
    sender_rules_max: int,
    accounts_per_channel: int = 0,
) -> Iterable[tuple[str, dict[str, Any]]]:
    """(name, channel) in order, one at a time (the huge size never holds them all)."""
    names = _channel_names(channels)
    for c, name in enumerate(names):
        # one RNG per channel: doubling the group count does not reshuffle other channels' ids
        rng = random.Random(f"{seed}:channel:{name}")
        count = groups // channels + (1 if c < groups % channels else 0) if channels else 0
        ids: set[str] = set()
        while len(ids) < count:
            ids.add(f"-100{rng.randrange(10**9):09d}")
        ordered = sorted(ids)
        rng.shuffle(ordered)
        base = f"{seed}:channel:{name}"
        if accounts_per_channel:
            # the groups split evenly between the channel's own map and its accounts' maps
            share = count // (accounts_per_channel + 1)
            channel_ids = ordered[: count - share * accounts_per_channel]
            channel = {"groups": _group_map(base, pools, channel_ids, sender_rules_max)}
            channel["accounts"] = {}
            for a in range(accounts_per_channel):
                account = f"{ACCOUNT_ID}{a + 1}"
                start = len(channel_ids) + a * share
                channel["accounts"][account] = {
                    "groups": _group_map(
                        f"{base}:{account}", pools, ordered[start : start + share], sender_rules_max
                    )
                }
            yield name, channel
            continue
        # every fifth channel routes a tenth of its groups through an account-specific map
        n_account = count // 10 if c % 5 == 4 else 0
        account_ids, channel_ids = ordered[:n_account], ordered[n_account:]
        channel = {"groups": _group_map(base, pools, channel_ids, sender_rules_max)}
        if n_account:
            channel["accounts"] = {
                ACCOUNT_ID: {
                    "groups": _group_map(
                        f"{base}:{ACCOUNT_ID}", pools, account_ids, sender_rules_max
                    )
                }
            }
        yield name, channel


# --------------------------------------------------------------------------------------------
# Route bindings (issue 32): ``bindings.yaml`` of a size's variant, for the routing figures

# bindings of the variant bench.run measures beside each size (compile and import against the
# same project without them, route and resolve_message latency)
BINDINGS: dict[str, int] = {"large": 10_000, "medium": 1_000}
BINDING_GUILDS = 40
BINDING_TEAMS = 20
BINDING_ROLES = 8
BINDING_ACCOUNTS = ("work", "acct2", "acct3")


def _binding_peer(rng: random.Random, wildcards: bool) -> dict[str, str]:
    roll = rng.random()
    kind = "group" if roll < 0.6 else "direct" if roll < 0.85 else "channel"
    if wildcards and rng.random() < 0.01:
        return {"kind": kind, "id": "*"}
    if kind == "direct":
        return {"kind": kind, "id": sender(rng.randrange(SENDER_POOL * 10))["id"]}
    return {"kind": kind, "id": f"-100{rng.randrange(10**9):09d}"}


def _binding_match(rng: random.Random, channel: str, wildcards: bool) -> tuple[str, dict[str, Any]]:
    """(tier, match) of one binding: peer 45%, guild with roles 10%, guild 10%, team 10%,
    account 20% (an account id, or absent: the default account), channel-wide 5%."""
    match: dict[str, Any] = {"channel": channel}
    roll = rng.random()
    if roll < 0.45:
        tier = "peer"
        match["peer"] = _binding_peer(rng, wildcards)
        account = rng.random()
        if account < 0.3:
            match["accountId"] = "*"
        elif account < 0.5:
            match["accountId"] = _pick(rng, BINDING_ACCOUNTS)
    elif roll < 0.75:
        match["accountId"] = "*"
        match["guildId" if roll < 0.65 else "teamId"] = (
            f"{rng.randrange(BINDING_GUILDS) + 1:06d}" if roll < 0.65
            else f"team-{rng.randrange(BINDING_TEAMS) + 1:02d}")
        tier = "guild" if roll < 0.65 else "team"
        if roll < 0.55:
            tier = "guild+roles"
            match["roles"] = [f"role{rng.randrange(BINDING_ROLES) + 1}"
                              for _ in range(1 + int(rng.random() * 2))]
    elif roll < 0.95:
        tier = "account"
        if rng.random() < 0.7:
            match["accountId"] = _pick(rng, BINDING_ACCOUNTS)
    else:
        tier = "channel"
        match["accountId"] = "*"
    return tier, match


def bindings_section(
    seed: int, count: int, *, agents: int, channels: int, openclaw: str | None = None
) -> list[dict[str, Any]]:
    """``count`` route bindings of mixed tiers over the size's channels and agents (seeded;
    2026.9: about 1% peer wildcards and 10% with their own ``session``)."""
    rng = random.Random(f"{seed}:bindings")
    names = _channel_names(channels) or ["chan01"]
    agent_ids = [f"agent{i + 1:04d}" for i in range(agents)] or ["main"]
    nine = openclaw == "2026.9"
    out = []
    for _ in range(count):
        _, match = _binding_match(rng, _pick(rng, names), nine)
        binding: dict[str, Any] = {"agentId": _pick(rng, agent_ids), "match": match}
        if nine and rng.random() < 0.1:
            binding["session"] = (
                {"dmScope": "per-channel-peer"} if rng.random() < 0.5 else {"groupScope": "main"}
            )
        out.append(binding)
    return out


def write_bindings(
    out_dir: Path, *, seed: int, count: int, agents: int, channels: int,
    openclaw: str | None = None,
) -> list[dict[str, Any]]:
    """Write :func:`bindings_section` as ``bindings.yaml`` beside a generated size, with the
    session settings that shape the keys (dmScope per-channel-peer); returns the bindings."""
    bindings = bindings_section(seed, count, agents=agents, channels=channels, openclaw=openclaw)
    _write_yaml(
        Path(out_dir) / "bindings.yaml",
        {"session": {"dmScope": "per-channel-peer"}, "bindings": bindings},
    )
    return bindings


# --------------------------------------------------------------------------------------------
# Entry point


def generate(
    out_dir: Path,
    *,
    seed: int,
    tools: int,
    plugin_tools: int,
    plugins: int,
    agents: int,
    provider_keys: int,
    channels: int,
    groups: int,
    sender_rules_max: int,
    accounts_per_channel: int = 0,
    openclaw: str | None = None,
) -> None:
    """Write a deterministic synthetic definitions directory into ``out_dir``.

    ``tools`` counts every catalog tool (26 core/channel tools, ``plugin_tools`` plugin tools
    spread over ``plugins`` plugins, the rest extra tools ``tool_0001``...). ``groups`` counts the
    specific group ids over all channels (each channel also gets a ``"*"`` group), one file per
    channel (``channels/chanNN.yaml``: a channel is the incremental cache's unit).
    ``accounts_per_channel``: split each channel's groups evenly between its own map and that
    many accounts (0: every fifth channel has one account with a tenth of its groups).
    Existing ``*.yaml`` files in ``out_dir`` are removed first. ``openclaw`` (``"2026.9"``)
    writes the same deployment for that release: the ``openclaw:`` key in ``tools.yaml`` and
    the first agent marked ``default: true`` (2026.9 refuses a roster without a default);
    without it the definitions follow 2026.3 (no key).
    """
    n_extra = tools - len(CORE_NAMES) - plugin_tools
    if n_extra < 0:
        raise ValueError(f"tools={tools} < {len(CORE_NAMES)} core tools + {plugin_tools} plugin")
    if plugin_tools and not plugins:
        raise ValueError("plugin_tools > 0 needs plugins > 0")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in [*out_dir.rglob("*.yaml"), *out_dir.rglob("*.yml")]:
        old.unlink()
    (out_dir / "catalog").mkdir(exist_ok=True)

    def part(name: str) -> random.Random:
        return random.Random(f"{seed}:{name}")

    keys = provider_key_names(provider_keys)
    channel_names = _channel_names(channels)
    extras = [f"tool_{i + 1:04d}" for i in range(n_extra)]
    layout = _plugin_layout(plugin_tools, plugins)
    plugin_ids = [pid for pid, _ in layout]
    plugin_names = [n for _, names in layout for n in names]

    # catalog: core, extra tools in chunks of 250, plugin tools in chunks of 10 plugins
    _write_yaml(out_dir / "catalog" / "000-core.yaml", {"catalog": _core_catalog()})
    extra_tools = _extra_catalog(part("extras"), extras, keys, channel_names)
    for i, chunk in enumerate(_chunks(extra_tools, 250)):
        _write_yaml(out_dir / "catalog" / f"100-extra-{i + 1:03d}.yaml", {"catalog": list(chunk)})
    plugin_tools_list, _optional = _plugin_catalog(part("plugins"), layout)
    per_file = 10 * max(1, plugin_tools // max(plugins, 1))
    for i, chunk in enumerate(_chunks(plugin_tools_list, per_file)):
        _write_yaml(out_dir / "catalog" / f"200-plugins-{i + 1:03d}.yaml", {"catalog": list(chunk)})

    n_custom = max(1, n_extra // 25) if extras else 0
    custom_groups = _groups_section(part("groups"), extras, plugin_names, n_custom)
    _write_yaml(out_dir / "groups.yaml", {"groups": custom_groups, "profiles": _profiles_section()})
    pools = _Pools(extras, plugin_names, plugin_ids, sorted(custom_groups))
    if plugin_ids:
        _write_yaml(
            out_dir / "plugins.yaml",
            {"plugins": _plugins_section(part("plugin-entries"), plugin_ids)},
        )
    _write_yaml(out_dir / "providers.yaml", {"providers": _providers_section(keys)})
    release = {"openclaw": openclaw} if openclaw else {}
    tools_doc = {**release, "tools": _global_tools(part("tools"), pools, keys)}
    _write_yaml(out_dir / "tools.yaml", tools_doc)
    agents_doc = _agents_section(seed, pools, keys, agents)
    if openclaw and openclaw != "2026.3" and agents_doc["list"]:
        agents_doc["list"][0]["default"] = True
    _write_yaml(out_dir / "agents.yaml", {"agents": agents_doc})
    if channels:
        (out_dir / "channels").mkdir(exist_ok=True)
        for name, channel in _channels_section(
            seed, pools, channels, groups, sender_rules_max, accounts_per_channel
        ):
            _write_yaml(out_dir / "channels" / f"{name}.yaml", {"channels": {name: channel}})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("out", type=Path, help="output definitions directory")
    parser.add_argument("--size", choices=sorted(SIZES), default="medium")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--double",
        choices=SCALING_DIMENSIONS,
        action="append",
        default=[],
        help="double one dimension (repeatable)",
    )
    parser.add_argument("--clean", action="store_true", help="remove OUT first")
    parser.add_argument(
        "--openclaw", choices=("2026.3", "2026.9"),
        help="the release the definitions name (default: no openclaw key, 2026.3)",
    )
    parser.add_argument(
        "--bindings", type=int, default=0,
        help="also write bindings.yaml with this many route bindings of mixed tiers",
    )
    args = parser.parse_args(argv)
    dims = dict(SIZES[args.size])
    for dim in args.double:
        dims = double(dims, dim)
    if args.clean and args.out.exists():
        shutil.rmtree(args.out)
    generate(args.out, seed=args.seed, openclaw=args.openclaw, **dims)
    if args.bindings:
        write_bindings(args.out, seed=args.seed, count=args.bindings, agents=dims["agents"],
                       channels=dims["channels"], openclaw=args.openclaw)
    files = sorted(args.out.rglob("*.yaml"))
    total = sum(f.stat().st_size for f in files)
    print(
        f"wrote {len(files)} files, {total / 1e6:.2f} MB into {args.out} ({dims})", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
