"""``toolc import-openclaw``: an OpenClaw config (JSON or JSON5) -> definitions that mean the
same, against the shipped core catalog.

parse (JSON5, positioned syntax errors; ``$include`` is resolved before, by openclaw_load)
-> keep (walk the config with a table of the keys that carry tool policy, in OpenClaw's own
vocabulary; everything else is left out and listed by JSON path, and a key left out that could
change tool access (openclaw_keys) is an error unless ``allow_partial``) -> stubs (policy
names that are no known tool, under OpenClaw's real plugin ids: openclaw_plugins) -> a file
map. Secrets never reach the output nor any message: only the tables' keys are copied, every
kept key and value holding a secret (openclaw_secrets) is refused (toolc definitions have no
environment reference to write instead), and every line of the report and every error is
redacted.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import json5
import yaml

from ..rules.names import normalize_agent_id, normalize_tool_name
from ..targets import KEYS, NEWEST_KEY, target
from ..targets.config_specs import BOOL, INT, LIST, POLICY, STR, Spec, map_of
from .openclaw_keys import SANDBOX_OFF, access_reason, sandbox_mode
from .openclaw_plugins import (
    BUNDLED_2026_3_2,
    BUNDLED_ENABLED_BY_DEFAULT,
    OPTIONAL_2026_3_2,
    PLUGIN_IDS,
    plugin_tools,
    tool_plugin,
)
from .openclaw_routing import RELEASE, Routing, read_routing, session_refusals
from .openclaw_secrets import Secrets, config_secrets
from .starter import starter_files, starter_text, with_directive

POLICY_FILE = "openclaw/policy.yaml"
MEMORY_CORE = "memory-core"  # the default of plugins.slots.memory (DEFAULT_SLOT_BY_KEY)
STUBS_FILE = "openclaw/stubs.yaml"
PROFILES_FILE = "profiles.yaml"
BUILTIN_PROFILES = ("minimal", "coding", "messaging", "full")

# -- what carries tool policy ------------------------------------------------------------------
# The spec vocabulary and each release's specs of `tools`, `agents` and `session` are the
# release's (toolc.targets.config_specs; ``target(key).config``).
PLUGINS: Spec = {"enabled": BOOL, "entries": map_of({"enabled": BOOL})}
GROUP: Spec = {"tools": POLICY, "toolsBySender": map_of(POLICY)}
GROUP_MAP: Spec = map_of(GROUP)
# Every channel's generic fallback reads `groups` (also per account); some channels' own
# resolvers read more (OpenClaw 2026.3.2; one row per channel, as the resolvers are).
CHANNEL_MAPS: dict[str, dict[str, Spec]] = {
    "slack": {"channels": GROUP_MAP, "accounts": map_of({"groups": GROUP_MAP,
                                                       "channels": GROUP_MAP})},
    "discord": {"guilds": map_of({**GROUP, "slug": STR, "channels": GROUP_MAP})},
}
# Maps read only by a plugin channel's own resolver, which toolc does not model (OpenClaw
# 2026.3.2 reaches them only with the plugin loaded; otherwise `groups` applies): left out
# with that reason, so the imported definitions build and the report says what is missing.
UNMODELLED_MAPS: dict[str, tuple[str, ...]] = {
    "msteams": ("teams",), "matrix": ("rooms",), "nextcloud-talk": ("rooms",)}
CHANNEL_BASE: Spec = {"groups": GROUP_MAP, "accounts": map_of({"groups": GROUP_MAP})}
# Objects whose presence alone means nothing to OpenClaw's policy code (unlike an agent's
# `exec.applyPatch`, which replaces the global one, or a group's `tools`, which stops the
# search): left out when nothing in them was kept.
PRUNABLE = frozenset({"defaults", "subagents", "exec", "sandbox", "tools"})
# Channels' config keys that are not channels.
NOT_CHANNELS = frozenset({"defaults"})

TOOL_NAME = re.compile(r"[a-z][a-z0-9_]*")
PLUGIN_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")


class ConfigError(ValueError):
    """The config cannot be read; ``str()`` is ``FILE[:LINE:COL]: message``."""


@dataclass(slots=True)
class ImportResult:
    """The file map and the report."""

    files: dict[str, str]
    left_out: list[str] = field(default_factory=list)  # JSON paths
    # JSON paths left out that could change tool access (errors unless allow_partial)
    partial: list[str] = field(default_factory=list)
    included: list[str] = field(default_factory=list)  # $include files read
    notes: list[str] = field(default_factory=list)  # changes of meaning worth reading
    stubs: list[str] = field(default_factory=list)  # "tool (plugin P)"
    openclaw: str = NEWEST_KEY  # the target written (`openclaw:` in the policy file)
    openclaw_reason: str = ""  # why that target: the option, meta.lastTouchedVersion, ...


# -- parse -----------------------------------------------------------------------------------
class _Dict(dict[str, Any]):
    duplicates: list[str]


def _pairs(pairs: Iterable[tuple[str, Any]]) -> _Dict:
    out = _Dict()
    out.duplicates = []
    for key, value in pairs:
        if key in out:
            out.duplicates.append(key)
        out[key] = value  # the last one wins, as in OpenClaw's JSON5 parser
    return out


_POSITION = re.compile(r"^<string>:(\d+) (.*) at column (\d+)$")


def parse_config(raw: bytes, display: str) -> dict[str, Any]:
    """The config object; ConfigError (positioned where the parser says) when unreadable."""
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        row = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{display}:{row}: not valid UTF-8") from exc
    try:
        data = json5.loads(text, object_pairs_hook=_pairs)
    except ValueError as exc:
        match = _POSITION.match(str(exc).splitlines()[0] if str(exc) else "")
        if match:
            at_line, message, col = match.groups()
            raise ConfigError(f"{display}:{at_line}:{col}: JSON5 syntax error: "
                              f"{message}") from exc
        raise ConfigError(f"{display}: JSON5 syntax error: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{display}: values nest too deeply") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{display}:1:1: an OpenClaw config is a JSON object")
    return data


# -- paths -----------------------------------------------------------------------------------
_PLAIN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def path_text(path: tuple[str | int, ...]) -> str:
    """``channels.telegram.groups."-100123".tools``, ``agents.list[0].name``."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            part = p if _PLAIN.fullmatch(p) else '"' + p.replace('"', '\\"') + '"'
            out += f".{part}" if out else part
    return out


# -- keep --------------------------------------------------------------------------------------
class _Keeper:
    def __init__(self, result: ImportResult, config: dict[str, Any]) -> None:
        self.result = result
        self.config = config
        self.errors: list[str] = []  # access-relevant keys left out

    def leave(self, path: tuple[str | int, ...], why: str = "", value: Any = None) -> None:
        reason = access_reason(self.config, path, value)
        if reason is not None:
            self.result.partial.append(f"{path_text(path)} ({reason})")
            self.errors.append(f"{path_text(path)}: left out, but it could change tool "
                               f"access: {reason}; pass --allow-partial to import without it")
            return
        self.result.left_out.append(path_text(path) + (f" ({why})" if why else ""))

    def keep(self, value: Any, spec: Spec, path: tuple[str | int, ...]) -> Any:
        """The kept part of ``value`` (None: nothing kept; the dropped parts are listed)."""
        if isinstance(value, _Dict) and value.duplicates:
            for key in value.duplicates:
                self.result.notes.append(f"{path_text((*path, key))}: duplicate key, the last "
                                         "one is used (as OpenClaw does)")
        if spec in (LIST, STR, BOOL, INT):
            return self.scalar(value, spec, path)
        if isinstance(spec, tuple) and spec[0] == "list_of":
            if not isinstance(value, list):
                raise ConfigError(f"{path_text(path)}: expected a list")
            return [_or_empty(self.keep(v, spec[1], (*path, i))) for i, v in enumerate(value)]
        if not isinstance(value, dict):
            raise ConfigError(f"{path_text(path)}: expected an object, got "
                              f"{_json_type(value)}")
        if isinstance(spec, tuple):  # ("map", item spec)
            return {key: _or_empty(self.keep(item, spec[1], (*path, key)))
                    for key, item in value.items()}
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in spec:
                kept = self.keep(item, spec[key], (*path, key))
                if kept is not None:
                    out[key] = kept
            else:
                self.leave((*path, key), value=item)
        if not out and value and path and path[-1] in PRUNABLE and "channels" not in path:
            return None  # everything in it was left out, and its presence means nothing
        return out

    def scalar(self, value: Any, spec: str, path: tuple[str | int, ...]) -> Any:
        if not _CHECKS[spec](value):
            want = {LIST: "a list of strings", STR: "a string", BOOL: "true or false",
                    INT: "an integer"}[spec]
            raise ConfigError(f"{path_text(path)}: expected {want}")
        return list(value) if spec == LIST else value


def _or_empty(kept: Any) -> Any:
    """A map's or list's item: an object everything was left out of stays, emptied (an empty
    list of ids stays a list)."""
    return {} if kept is None else kept


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "an array", type(None): "null"}
    return names.get(type(value), "an object")


_CHECKS: dict[str, Callable[[Any], bool]] = {
    LIST: lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    STR: lambda v: isinstance(v, str), BOOL: lambda v: isinstance(v, bool),
    INT: lambda v: isinstance(v, int) and not isinstance(v, bool)}


def _has_policy(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in ("tools", "toolsBySender") or _has_policy(v) for k, v in value.items())
    return False


def _channels(keeper: _Keeper, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError("channels: expected an object")
    out: dict[str, Any] = {}
    for name, block in value.items():
        if name in NOT_CHANNELS:
            keeper.leave(("channels", name), value=block)
            continue
        spec = {**CHANNEL_BASE, **CHANNEL_MAPS.get(name.strip().lower(), {})}
        source = block
        unmodelled = [k for k in UNMODELLED_MAPS.get(name.strip().lower(), ())
                      if isinstance(block, dict) and k in block]
        for key in unmodelled:
            keeper.leave(("channels", name, key), f"read only by the {name} plugin's own "
                         "group resolver, which toolc does not model", block[key])
            if _has_policy(block[key]):
                keeper.result.notes.append(
                    f"{path_text(('channels', name, key))}: its tool policies are not "
                    f"imported (toolc models {name} through `groups` only)")
        if unmodelled:
            source = type(block)((k, v) for k, v in block.items() if k not in unmodelled)
            if isinstance(block, _Dict):
                source.duplicates = block.duplicates
        kept = keeper.keep(source, spec, ("channels", name)) or {}
        if not _has_policy(kept):
            # No tool policy anywhere in the channel: its maps mean nothing for tools. (With
            # some, every entry is kept, emptied: resolvers stop at a matched entry, and an
            # account's map replaces the channel's.)
            for key in kept:
                prefix = path_text(("channels", name, key))
                keeper.result.left_out[:] = [p for p in keeper.result.left_out
                                             if not p.startswith((prefix + ".", prefix + "["))]
                keeper.result.left_out.append(f"{prefix} (no tool policy)")
            kept = {}
        # Declared even without policy: a channel's tools (whatsapp_login) need it.
        out[name] = kept
    return out


# -- meaning fixes ---------------------------------------------------------------------------
def _profiles(node: Any, path: tuple[str | int, ...], notes: list[str]) -> None:
    """Profiles OpenClaw does not know become ``full``: OpenClaw applies no profile for them
    (also none of a less specific level), toolc would refuse them (D5)."""
    if isinstance(node, dict):
        name = node.get("profile")
        if isinstance(name, str) and name not in BUILTIN_PROFILES:
            node["profile"] = "full"
            close = difflib.get_close_matches(name, BUILTIN_PROFILES, n=1)
            notes.append(f"{path_text((*path, 'profile'))}: unknown profile {name!r} imported "
                         "as \"full\" (OpenClaw 2026.3.2 applies no profile for it)"
                         + (f'; did you mean "{close[0]}"?' if close else ""))
        for key, child in node.items():
            _profiles(child, (*path, key), notes)
    elif isinstance(node, list):
        for i, child in enumerate(node):
            _profiles(child, (*path, i), notes)


def memory_slot(plugins: Any) -> str | None:
    """The plugin ``plugins.slots.memory`` selects (2026.9.6 resolveSlotSelection): the value
    trimmed (its case kept: plugin ids compare exactly), None for ``none`` in any case, and
    ``memory-core`` when it is absent, blank or not a string."""
    slots = plugins.get("slots") if isinstance(plugins, dict) else None
    raw = slots.get("memory") if isinstance(slots, dict) else None
    if not isinstance(raw, str) or not raw.strip():
        return MEMORY_CORE
    value = raw.strip()
    return None if value.lower() == "none" else value


def _plugin_lists(config: dict[str, Any], kept: dict[str, Any], keeper: _Keeper,
                  target_key: str) -> None:
    """``plugins.deny`` (and ``allow``) disable plugins in OpenClaw, before their entries.

    2026.9.6 (resolvePluginActivationDecisionShared, then resolveMemorySlotDecisionShared):
    the plugin the memory slot selects (``memory-core`` unless ``slots.memory`` says otherwise)
    is enabled before the allowlist is read, a non-empty allowlist disables every other plugin
    it does not list (the starter's bundled ones too), and ``memory-core`` is disabled when the
    slot names another plugin or ``none``."""
    plugins = config.get("plugins")
    if not isinstance(plugins, dict):
        return
    entries = kept.setdefault("entries", {})
    slot = memory_slot(plugins)
    if target_key == "2026.9" and slot != MEMORY_CORE:
        entries[MEMORY_CORE] = {"enabled": False}
    for key in ("deny", "allow"):
        ids = plugins.get(key)
        if ids is None:
            continue
        keeper.scalar(ids, LIST, ("plugins", key))
        keeper.result.left_out.remove(path_text(("plugins", key)))
        if key == "deny":
            for pid in ids:
                entries[pid] = {"enabled": False}
        elif ids and target_key == "2026.9":
            for pid in [*entries, *_starter_plugins(target_key)]:
                if pid not in ids and pid != slot:
                    entries[pid] = {"enabled": False}
        elif ids:
            for pid in [*entries, "memory-core"]:
                if pid not in ids:
                    entries[pid] = {"enabled": False}
            keeper.result.notes.append("plugins.allow: plugins not listed are disabled; list "
                                       "every plugin you use (toolc knows only the plugins of "
                                       "plugins.entries and the stubs)")
    if not entries:
        kept.pop("entries")


# -- stubs -------------------------------------------------------------------------------------
def _entries(node: Any) -> Iterator[tuple[str, str]]:
    """(list key, entry) for every allow/alsoAllow/deny entry below ``node``."""
    if isinstance(node, dict):
        for key, child in node.items():
            if key in ("allow", "alsoAllow", "deny") and isinstance(child, list):
                yield from ((key, e) for e in child if isinstance(e, str))
            else:
                yield from _entries(child)
    elif isinstance(node, list):
        for child in node:
            yield from _entries(child)


@functools.cache
def _known_names(key: str) -> tuple[frozenset[str], frozenset[str]]:
    """Tool names and group/plugin names of the target's starter catalog (package data:
    read once)."""
    tools: set[str] = set()
    others = {"group:plugins"}
    for rel, text in starter_files(key).items():
        if not rel.endswith(".yaml"):
            continue
        data = yaml.safe_load(text)
        for tool in data.get("catalog", []):
            tools.add(tool["name"])
            others.update(f"group:{g}" for g in tool.get("groups", []))
            if "plugin" in tool:
                others.add(tool["plugin"])
    return frozenset(tools), frozenset(others)


def _starter_plugins(key: str) -> list[str]:
    """The plugin ids of the target's starter catalog (its bundled plugins) that the starter
    leaves enabled (a plugin file that declares its plugin's state, xai's, decides it)."""
    out: list[str] = []
    for rel, text in starter_files(key).items():
        if rel.endswith(".yaml"):
            data = yaml.safe_load(text)
            declared = _object(_object(data.get("plugins")).get("entries"))
            for tool in data.get("catalog", []):
                pid = tool.get("plugin")
                if pid is not None and pid not in out and pid not in declared:
                    out.append(pid)
    return out


def _stub_tool_name(name: str) -> str:
    tool = re.sub(r"[^a-z0-9_]", "_", name)
    return tool if TOOL_NAME.fullmatch(tool) else f"tool_{tool}"


def _stubs(policy: dict[str, Any], result: ImportResult, target_key: str
           ) -> list[dict[str, Any]]:
    """Catalog stubs for the names the policies use that no shipped catalog knows: the tools
    of OpenClaw's own plugins under their real plugin ids (openclaw_plugins), other names as
    a tool of a plugin named after it (the convention of ``lobster`` and ``llm-task``)."""
    tools, others = _known_names(target_key)
    declared = set(policy.get("plugins", {}).get("entries", {}))
    seen: dict[str, bool] = {}  # name -> named in an allow list
    for key, raw in _entries(policy):
        name = normalize_tool_name(raw)
        if not name or "*" in name or name in tools or name in others:
            continue
        seen[name] = seen.get(name, False) or key != "deny"
    stubs: dict[str, dict[str, Any]] = {}
    for name, allowed in seen.items():
        if name in PLUGIN_IDS and plugin_tools(name):
            for tool in plugin_tools(name):
                _add_stub(stubs, result, tool, name, allowed, "tools of OpenClaw's plugin")
            continue
        plugin = tool_plugin(name)
        if plugin is not None:
            _add_stub(stubs, result, name, plugin, allowed, "OpenClaw's plugin")
            continue
        close = difflib.get_close_matches(name, sorted(tools | others), n=1, cutoff=0.75)
        if close or name.startswith("group:"):
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            result.notes.append(f"unknown name {name!r}{hint}: kept as written; the build "
                                "warns about it (TC130)")
            continue
        plugin = name if PLUGIN_ID.fullmatch(name) else _stub_tool_name(name)
        origin = ("declared in plugins.entries" if plugin in declared
                  else "a plugin id of OpenClaw's, its tools unknown" if plugin in PLUGIN_IDS
                  else "plugin id guessed")
        _add_stub(stubs, result, name, plugin, allowed, origin)
    return list(stubs.values())


def _add_stub(stubs: dict[str, dict[str, Any]], result: ImportResult, name: str, plugin: str,
              allowed: bool, origin: str) -> None:
    tool = _stub_tool_name(name)
    if tool in stubs:
        return
    # OpenClaw's own plugins: their registration says optional; others: the narrower guess
    optional = (name in OPTIONAL_2026_3_2 if plugin in BUNDLED_2026_3_2
                or tool_plugin(name) is not None else allowed)
    stub: dict[str, Any] = {
        "name": tool, "plugin": plugin,
        "description": f"TODO: describe this tool (stub for {name!r} in the policies).",
        "parameters": {"type": "object"}}
    if optional:
        stub["optional"] = True
    stubs[tool] = stub
    result.stubs.append(f"{tool} (plugin {plugin}, {origin}"
                        + (", optional" if optional else "") + ")")


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _stub_plugin_states(config: dict[str, Any], policy: dict[str, Any],
                        stubs: list[dict[str, Any]], result: ImportResult,
                        target_key: str) -> None:
    """The stubs' plugins enabled or not as OpenClaw decides (resolveEnableState, 2026.3.2):
    ``plugins.enabled: false``, then ``deny``, then a non-empty ``allow`` that does not list
    it, then ``slots.memory``, then the entry's ``enabled``; a bundled plugin without an entry
    is disabled unless bundled-enabled-by-default or a channel with ``enabled: true``
    (isBundledChannelEnabledByChannelConfig). Bundled: the target release's own set (2026.9.6:
    the bundled tool plugins of its data, each with its manifest's ``enabledByDefault``; a
    plugin it does not bundle, e.g. ``lobster``, is installed by the user and enabled)."""
    if target_key == "2026.3":
        bundled, default_on = BUNDLED_2026_3_2, BUNDLED_ENABLED_BY_DEFAULT
    else:
        shipped = target(target_key).data["plugins"]
        bundled = frozenset(shipped)
        default_on = frozenset(p for p, v in shipped.items() if v.get("enabledByDefault"))
    plugins = _object(config.get("plugins"))
    deny = _list(plugins.get("deny"))
    allow = _list(plugins.get("allow"))
    slots = _object(plugins.get("slots"))
    entries = _object(plugins.get("entries"))
    kept = policy.setdefault("plugins", {}).setdefault("entries", {})
    for pid in sorted({s["plugin"] for s in stubs}):
        entry = _object(entries.get(pid))
        if pid in deny or (allow and pid not in allow):
            why = "plugins.deny" if pid in deny else "not in plugins.allow"
        elif slots.get("memory") == pid or entry.get("enabled") is not None:
            continue  # enabled by the slot, or its entry (kept) decides
        elif pid in bundled and pid not in default_on \
                and _object(_object(config.get("channels")).get(pid)).get("enabled") is not True:
            why = "a bundled plugin, disabled unless plugins.entries enables it"
        else:
            continue
        kept[pid] = {"enabled": False}
        result.notes.append(f"plugin {pid}: disabled, as in OpenClaw ({why}); its stubbed "
                            "tools are absent")
    if not kept:
        policy["plugins"].pop("entries")
    if not policy["plugins"]:
        policy.pop("plugins")


# -- secrets -----------------------------------------------------------------------------------
# toolc definitions have no environment reference (nothing in a policy is read from the
# environment), so a credential in a kept key or value cannot be written as one: it is
# refused, its path redacted, and the message says how to supply the entry instead.
NO_ENV_REFERENCE = ("toolc definitions have no environment reference for it, so it cannot "
                    "be imported without writing the secret: replace it in the config with "
                    "the identifier OpenClaw matches (a sender's id, a group's id, a tool or "
                    "plugin name), or pass --allow-partial to leave this entry out")
ENV_REFERENCE = re.compile(r"(?<!\$)\$\{[A-Z_][A-Z0-9_]*\}")


def _strings(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...],
                                                                        str]]:
    """(path of the key or value, text) for every key and string below ``node``."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield (*path, key), key
            yield from _strings(child, (*path, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from _strings(child, (*path, i))
    elif isinstance(node, str):
        yield path, node


def _check_secrets(kept: dict[str, Any], secrets: Secrets, result: ImportResult,
                   allow_partial: bool) -> list[str]:
    """Errors for every kept key or value that is or holds a secret, or that OpenClaw reads
    from the environment (``${VAR}``); with ``allow_partial`` they are dropped and listed."""
    errors: list[str] = []
    drop: list[tuple[str | int, ...]] = []
    for path, text in _strings(kept, ()):
        kind = secrets.kind(text, chat_id=_signal_chat(kept, path))
        if kind is not None:
            why = f"holds a credential ({kind})"
            message = f"{path_text(path)}: {why}; {NO_ENV_REFERENCE}"
        elif ENV_REFERENCE.search(text):
            why = "a ${VAR} OpenClaw substitutes from the gateway's environment"
            message = (f"{path_text(path)}: OpenClaw substitutes this ${{VAR}} from the "
                       "gateway's environment when it loads the config; toolc definitions "
                       "have no environment reference: write the value itself, or pass "
                       "--allow-partial to leave this entry out")
        else:
            continue
        if allow_partial:
            result.partial.append(f"{path_text(path)} ({why})")
        else:
            errors.append(message)
        # an agent without its id is no agent, a binding without a part of its match routes
        # other messages: the whole entry goes
        drop.append(path[:3] if path[:2] == ("agents", "list") and path[3:] == ("id",)
                    else path[:2] if path[:1] == ("bindings",) else path)
    for path in sorted(drop, key=len, reverse=True):
        _drop(kept, path)
    return errors


def _signal_chat(kept: dict[str, Any], path: tuple[str | int, ...]) -> bool:
    """``path`` names a Signal chat: a Signal group of ``channels.signal`` (or one of its
    accounts), or the peer id of a binding on Signal."""
    if path[:1] == ("channels",) and len(path) in (4, 6):
        return (str(path[1]).strip().lower() == "signal" and path[-2] == "groups"
                and (len(path) == 4 or path[2] == "accounts"))
    if path[:1] == ("bindings",) and path[2:] == ("match", "peer", "id"):
        binding = kept["bindings"][path[1]]
        return str(binding["match"]["channel"]).strip().lower() == "signal"
    return False


def _drop(node: Any, path: tuple[str | int, ...]) -> None:
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return  # an enclosing entry is gone already
    if isinstance(node, dict):
        node.pop(path[-1], None)
    elif isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node):
        node[path[-1]] = None


ESCAPED_ENV_REFERENCE = re.compile(r"\$(\$\{[A-Z_][A-Z0-9_]*\})")


def _unescaped(node: Any) -> Any:
    """Values as OpenClaw reads them: ``$${VAR}`` is the literal ``${VAR}`` (keys are not
    substituted)."""
    if isinstance(node, dict):
        return {k: _unescaped(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_unescaped(v) for v in node]
    return ESCAPED_ENV_REFERENCE.sub(r"\1", node) if isinstance(node, str) else node


def _without_dropped(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_dropped(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_without_dropped(v) for v in node if v is not None]
    return node


# -- render ------------------------------------------------------------------------------------
def _dump(data: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100,
                          default_flow_style=None)


def _profiles_text(key: str) -> str:
    if key != "2026.3":  # the generated starter has the release's profiles exactly
        return starter_text(PROFILES_FILE, key)
    data = yaml.safe_load(starter_text(PROFILES_FILE, key))
    coding = data["profiles"]["coding"]["allow"]
    if "cron" not in coding:
        coding.append("cron")
    return ("version: 1\n\n# OpenClaw 2026.3.2's built-in profiles exactly: its `coding` "
            "also allows cron (toolc's\n# starter leaves cron out, decision D4; an import "
            "keeps OpenClaw's meaning).\n" + _dump({"profiles": data["profiles"]}))


class ImportRefused(ConfigError):
    """Several errors (each redacted); ``messages`` lists them."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = messages


def choose_target(config: dict[str, Any], requested: str | None) -> tuple[str, str]:
    """The OpenClaw release an import follows, and why: ``--openclaw``, else the config's
    ``meta.lastTouchedVersion`` (the release that last wrote it: 2026.9 or later -> 2026.9,
    earlier -> 2026.3), else the newest."""
    if requested is not None:
        if requested not in KEYS:
            raise ConfigError(f"--openclaw {requested}: not one of {', '.join(KEYS)}")
        return requested, f"--openclaw {requested}"
    meta = config.get("meta")
    version = meta.get("lastTouchedVersion") if isinstance(meta, dict) else None
    if version is None:
        return NEWEST_KEY, "no meta.lastTouchedVersion: the newest release"
    match = re.match(r"\s*v?(\d+)\.(\d+)", version) if isinstance(version, str) else None
    if match is None:
        return NEWEST_KEY, (f"meta.lastTouchedVersion {version!r} is no release number: the "
                            "newest release")
    year, minor = int(match[1]), int(match[2])
    key = "2026.9" if (year, minor) >= (2026, 9) else "2026.3"
    return key, f"meta.lastTouchedVersion {version}"


def import_openclaw(config: dict[str, Any], source_name: str, *, allow_partial: bool = False,
                    included: Iterable[str] = (), openclaw: str | None = None) -> ImportResult:
    """Definitions meaning what ``config`` means to OpenClaw, and what was left out.

    ``openclaw`` names the release the definitions follow (None: see ``choose_target``).
    Raises ImportRefused when a key that could change tool access would be left out (unless
    ``allow_partial``), a kept key or value holds a secret, or the release's loader would
    refuse the config for a reason that touches tool access. Every message is redacted."""
    secrets = Secrets(known=config_secrets(config))
    try:
        key, reason = choose_target(config, openclaw)
        result = _import(config, source_name, secrets, allow_partial, key)
        result.openclaw, result.openclaw_reason = key, secrets.redact(reason)
    except ImportRefused as exc:
        raise ImportRefused([secrets.redact(m) for m in exc.messages]) from None
    except ConfigError as exc:
        raise ConfigError(secrets.redact(str(exc))) from None
    result.included = [secrets.redact(name) for name in included]
    for lines in (result.left_out, result.partial, result.notes, result.stubs):
        lines[:] = [secrets.redact(line) for line in lines]
    return result


def _import(config: dict[str, Any], source_name: str, secrets: Secrets,
            allow_partial: bool, target_key: str) -> ImportResult:
    result = ImportResult(files={})
    # a release whose loader checks the roster refuses configs it cannot load
    refused = _loader_refusals(config, result) if target(target_key).roster_checked else []
    routing = read_routing(config, target_key)
    refused += [f"{path_text(path)}: {RELEASE[target_key]} refuses the config: {why}"
                for path, why in [*routing.refused, *session_refusals(config, target_key)]]
    if refused:
        raise ImportRefused(refused)
    keeper = _Keeper(result, config)
    specs = target(target_key).config
    policy: dict[str, Any] = {}
    for key, value in config.items():
        if key == "tools":
            policy["tools"] = keeper.keep(value, specs.global_tools, ("tools",))
        elif key == "agents":
            policy["agents"] = keeper.keep(value, specs.agents, ("agents",))
        elif key == "plugins":
            policy["plugins"] = keeper.keep(value, PLUGINS, ("plugins",))
            _plugin_lists(config, policy["plugins"], keeper, target_key)
        elif key == "channels":
            policy["channels"] = _channels(keeper, value)
        elif key == "session":
            policy["session"] = keeper.keep(value, specs.session, ("session",))
        elif key == "bindings":
            policy["bindings"] = _bindings(routing, keeper)
        else:
            keeper.leave((key,), value=value)
    if isinstance(config, _Dict):
        result.notes.extend(f"{k}: duplicate key, the last one is used (as OpenClaw does)"
                            for k in config.duplicates)
    _sandbox_notes(config, result)
    if target_key == "2026.3":  # 2026.9's loader refuses unknown profiles (_loader_refusals)
        _profiles(policy, (), result.notes)
    policy = {k: v for k, v in policy.items() if v}
    errors = [] if allow_partial else list(keeper.errors)
    errors += _check_secrets(policy, secrets, result, allow_partial)
    if errors:
        raise ImportRefused(errors)
    policy = _unescaped(_without_dropped(policy))
    if not policy.get("bindings", True):  # every binding was left out
        del policy["bindings"]
    stubs = _stubs(policy, result, target_key)
    _stub_plugin_states(config, policy, stubs, result, target_key)
    files = starter_files(target_key)
    files[PROFILES_FILE] = with_directive(PROFILES_FILE, _profiles_text(target_key))
    source_name = secrets.redact("".join(c if c.isprintable() else "?" for c in source_name))
    header = (f"version: 1\n\n# Imported from {source_name} by toolc import-openclaw: its "
              "tool-policy sections,\n# in OpenClaw's own shape.\n"
              f'openclaw: "{target_key}"\n')
    files[POLICY_FILE] = with_directive(POLICY_FILE, header + (_dump(policy) if policy else ""))
    if stubs:
        files[STUBS_FILE] = with_directive(STUBS_FILE, (
            "version: 1\n\n# Catalog stubs for names in the policies that are neither core "
            "tools nor\n# known plugin tools: fill in each description and parameters (the "
            "plugin ids of\n# OpenClaw's bundled plugins are real; others are the name "
            "itself: check them).\n# `optional: true` where OpenClaw's plugin registers the "
            "tool as optional, or\n# (unknown plugins) where an allow list names it.\n"
            + _dump({"catalog": stubs})))
    result.files = files
    return result


def _bindings(routing: Routing, keeper: _Keeper) -> list[dict[str, Any] | None]:
    """The kept route bindings (None where one is left out, dropped after the secrets check,
    so that every message names the config's own index), and the report's lines."""
    result = keeper.result
    result.left_out += [f"{path_text(path)} ({why})" for path, why in routing.left_out]
    result.notes += [f"{path_text(path)}: {note}" for path, note in routing.notes]
    for p in routing.partial:
        where = path_text(p.path)
        keeper.errors.append(f"{where}: {p.reason}; pass --allow-partial to import anyway "
                             f"(it {p.instead})")
        if p.left_out:
            result.partial.append(f"{where} ({p.reason})")
        else:
            result.notes.append(f"{where}: {p.reason}; --allow-partial {p.instead}")
    return routing.bindings


def _sandbox_notes(config: dict[str, Any], result: ImportResult) -> None:
    """Sandbox modes are imported (the runtime derives ``sandboxed`` from them and the
    session key, as OpenClaw does); ``session.mainKey`` is not: OpenClaw's loader forces it
    to ``main``."""
    agents = config.get("agents")
    blocks: list[tuple[tuple[str | int, ...], Any]] = []
    if isinstance(agents, dict):
        defaults = agents.get("defaults")
        blocks.append((("agents", "defaults", "sandbox"),
                       defaults.get("sandbox") if isinstance(defaults, dict) else None))
        if isinstance(agents.get("list"), list):
            blocks += [(("agents", "list", i, "sandbox"), a.get("sandbox"))
                       for i, a in enumerate(agents["list"]) if isinstance(a, dict)]
        if isinstance(agents.get("entries"), dict):
            blocks += [(("agents", "entries", k, "sandbox"), a.get("sandbox"))
                       for k, a in agents["entries"].items() if isinstance(a, dict)]
    for path, block in blocks:
        if isinstance(block, dict) and sandbox_mode(config, path, block) != SANDBOX_OFF:
            result.notes.append(f"{path_text(path)}: sandbox mode "
                                f"{sandbox_mode(config, path, block)!r} imported: sessions it "
                                "sandboxes get the sandbox tool policy without sandboxed=True")
    session = config.get("session")
    main_key = session.get("mainKey") if isinstance(session, dict) else None
    if isinstance(main_key, str) and main_key.strip() not in ("", "main"):
        result.notes.append("session.mainKey: not imported; OpenClaw ignores it too (its "
                            "loader makes the main session key always \"main\": a routed "
                            "message's main session is agent:<agent>:main)")


# -- what 2026.9's loader refuses --------------------------------------------------------------
def _loader_refusals(config: dict[str, Any], result: ImportResult) -> list[str]:
    """Reasons OpenClaw 2026.9.6's config loader (createConfigIO().loadConfig: its zod schema
    after the legacy moves it applies itself) refuses ``config`` that touch tool access; the
    gateway would not start with it, so there is no policy to import. Legacy shapes the loader
    moves itself are notes."""
    out: list[str] = []
    agents = _object(config.get("agents"))
    defaults = _object(agents.get("defaults"))
    if "tools" in defaults:
        out.append("agents.defaults.tools: OpenClaw 2026.9 refuses the config (agents.defaults "
                   "has no `tools` key); write the policy in tools or in each agent's tools")
    depth = _object(defaults.get("subagents")).get("maxSpawnDepth")
    if depth is not None and not (isinstance(depth, int) and not isinstance(depth, bool)
                                  and 1 <= depth <= 5):
        # zod-schema: maxSpawnDepth number().int().min(1).max(5); it decides which subagents
        # are leaves (SUBAGENT_TOOL_DENY_LEAF)
        out.append("agents.defaults.subagents.maxSpawnDepth: OpenClaw 2026.9 refuses the "
                   f"config: {depth!r} is not a whole number from 1 to 5")
    out += _roster_refusals(agents, result)
    scopes: list[tuple[tuple[str | int, ...], Any]] = [(("tools",), config.get("tools"))]
    scopes += [((*at, "tools"), _object(a).get("tools")) for at, a in _roster(agents)]
    for at, tools in scopes:
        if not isinstance(tools, dict):
            continue
        exec_block = _object(tools.get("exec"))
        if "mode" in exec_block and ("security" in exec_block or "ask" in exec_block):
            out.append(f"{path_text((*at, 'exec', 'mode'))}: OpenClaw 2026.9 refuses the "
                       "config: mode cannot be combined with security or ask in the same exec "
                       "object")
        out += _policy_refusals(tools, at)
    return out


def _roster(agents: dict[str, Any]) -> list[tuple[tuple[str | int, ...], Any]]:
    """(path, entry) of each agent: agents.entries, else agents.list (which the 2026.9 loader
    moves to entries; with entries set it drops the list)."""
    if isinstance(agents.get("entries"), dict):
        return [(("agents", "entries", k), v) for k, v in agents["entries"].items()]
    if isinstance(agents.get("list"), list):
        return [(("agents", "list", i), v) for i, v in enumerate(agents["list"])]
    return []


def _roster_refusals(agents: dict[str, Any], result: ImportResult) -> list[str]:
    if "list" in agents:
        result.notes.append("agents.list: OpenClaw 2026.9 moves it to the keyed agents.entries "
                            "when it loads the config (`openclaw doctor --fix` writes the move)"
                            + ("; agents.entries is set, so the list is dropped"
                               if isinstance(agents.get("entries"), dict) else ""))
    if "entries" not in agents and "list" not in agents:
        return []
    roster = _roster(agents)
    where = "agents.entries" if isinstance(agents.get("entries"), dict) else "agents.list"
    marked = [at for at, a in roster if _object(a).get("default") is True]
    explicit = agents.get("ownership") == "explicit"
    why = None
    # (an empty roster is no error: the loader fills in the default `main` agent)
    if len(marked) > 1:
        why = f"at most one agent may have default: true (found {len(marked)})"
    elif marked and explicit:
        why = "agents.ownership=explicit cannot be combined with a default: true agent"
    elif len(roster) > 1 and not marked and not explicit:
        why = ("a roster of several agents needs agents.ownership=\"explicit\" or one "
               "default: true agent: OpenClaw cannot select the agent of a request that names "
               "none")
    ids: dict[str, str] = {}
    for at, agent in roster:
        raw = str(at[-1]) if at[1] == "entries" else str(_object(agent).get("id", ""))
        agent_id = normalize_agent_id(raw)
        if agent_id in ids and why is None:
            why = (f"agents {ids[agent_id]!r} and {raw!r} resolve to the same agent id "
                   f"{agent_id!r}")
        ids.setdefault(agent_id, raw)
    return [] if why is None else [f"{where}: OpenClaw 2026.9 refuses the config: {why}"]


def _policy_refusals(node: Any, at: tuple[str | int, ...]) -> list[str]:
    """allow beside alsoAllow in one scope, and unknown profiles (both refused by 2026.9's
    schema), anywhere in a tools block."""
    out: list[str] = []
    if not isinstance(node, dict):
        return out
    if _list(node.get("allow")) and _list(node.get("alsoAllow")):
        out.append(f"{path_text(at)}: OpenClaw 2026.9 refuses the config: a tools policy "
                   "cannot set both allow and alsoAllow in the same scope")
    profile = node.get("profile")
    if isinstance(profile, str) and profile not in BUILTIN_PROFILES:
        out.append(f"{path_text((*at, 'profile'))}: OpenClaw 2026.9 refuses the config: "
                   f"unknown profile {profile!r} (one of {', '.join(BUILTIN_PROFILES)})")
    for key, child in node.items():
        if key in ("byProvider", "toolsBySender"):
            for name, block in _object(child).items():
                out += _policy_refusals(block, (*at, key, name))
        elif key in ("sandbox", "subagents"):
            out += _policy_refusals(_object(child).get("tools"), (*at, key, "tools"))
    return out

