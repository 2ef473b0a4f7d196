"""``toolc import-openclaw``: an OpenClaw config (JSON or JSON5) -> definitions that mean the
same, against the shipped core catalog.

parse (JSON5, positioned syntax errors) -> keep (walk the config with a table of the keys that
carry tool policy, in OpenClaw's own vocabulary; everything else is left out and listed by JSON
path) -> stubs (policy names that are no known tool) -> a file map. Secrets never reach the
output: only the tables' keys are copied, and every string written is checked against the
config's secret-named values and secret shapes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import json5
import yaml

from ..rules.names import normalize_tool_name
from .starter import starter_files, starter_text, with_directive

POLICY_FILE = "openclaw/policy.yaml"
STUBS_FILE = "openclaw/stubs.yaml"
PROFILES_FILE = "profiles.yaml"
BUILTIN_PROFILES = ("minimal", "coding", "messaging", "full")

# -- what carries tool policy ------------------------------------------------------------------
# A spec is a type name ("list", "str", "bool", "int"), a dict of key -> spec (other keys are
# left out), or ("map", spec): any key, each value by spec.
Spec = Any
LIST, STR, BOOL, INT = "list", "str", "bool", "int"


def _map(spec: Spec) -> tuple[str, Spec]:
    return ("map", spec)


POLICY: Spec = {"allow": LIST, "alsoAllow": LIST, "deny": LIST}
PROVIDER_POLICY: Spec = {**POLICY, "profile": STR}
EXEC: Spec = {"applyPatch": {"enabled": BOOL, "allowModels": LIST},
              "host": STR, "security": STR, "ask": STR}
AGENT_TOOLS: Spec = {**PROVIDER_POLICY, "byProvider": _map(PROVIDER_POLICY),
                     "sandbox": {"tools": {"allow": LIST, "deny": LIST}}, "exec": EXEC}
GLOBAL_TOOLS: Spec = {**AGENT_TOOLS, "subagents": {"tools": POLICY}}
AGENTS: Spec = {"defaults": {"subagents": {"maxSpawnDepth": INT}},
                "list": ("list_of", {"id": STR, "tools": AGENT_TOOLS})}
PLUGINS: Spec = {"enabled": BOOL, "entries": _map({"enabled": BOOL})}
GROUP: Spec = {"tools": POLICY, "toolsBySender": _map(POLICY)}
GROUP_MAP: Spec = _map(GROUP)
# Every channel's generic fallback reads `groups` (also per account); some channels' own
# resolvers read more (OpenClaw 2026.3.2; one row per channel, as the resolvers are).
CHANNEL_MAPS: dict[str, dict[str, Spec]] = {
    "slack": {"channels": GROUP_MAP, "accounts": _map({"groups": GROUP_MAP,
                                                       "channels": GROUP_MAP})},
    "discord": {"guilds": _map({**GROUP, "slug": STR, "channels": GROUP_MAP})},
}
# Maps read only by a plugin channel's own resolver, which toolc does not model (OpenClaw
# 2026.3.2 reaches them only with the plugin loaded; otherwise `groups` applies): left out
# with that reason, so the imported definitions build and the report says what is missing.
UNMODELLED_MAPS: dict[str, tuple[str, ...]] = {
    "msteams": ("teams",), "matrix": ("rooms",), "nextcloud-talk": ("rooms",)}
CHANNEL_BASE: Spec = {"groups": GROUP_MAP, "accounts": _map({"groups": GROUP_MAP})}
# Objects whose presence alone means nothing to OpenClaw's policy code (unlike an agent's
# `exec.applyPatch`, which replaces the global one, or a group's `tools`, which stops the
# search): left out when nothing in them was kept.
PRUNABLE = frozenset({"defaults", "subagents", "exec", "sandbox", "tools"})
# Channels' config keys that are not channels.
NOT_CHANNELS = frozenset({"defaults"})

# Key names whose values are secrets (never written, also not in messages).
SECRET_KEY = re.compile(r"token|secret|passw|api[-_]?key|private[-_]?key|credential|cookie",
                        re.IGNORECASE)
# Values shaped like credentials: known token prefixes, long mixed letter-digit strings.
SECRET_SHAPE = re.compile(r"^(sk-|sk_|xox[abeprs]-|xapp-|ghp_|gho_|github_pat_|glpat-|AIza|"
                          r"AKIA|eyJ)|^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9+/_=.-]{32,}$")
TOOL_NAME = re.compile(r"[a-z][a-z0-9_]*")
PLUGIN_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")


class ConfigError(ValueError):
    """The config cannot be read; ``str()`` is ``FILE[:LINE:COL]: message``."""


@dataclass(slots=True)
class ImportResult:
    """The file map and the report."""

    files: dict[str, str]
    left_out: list[str] = field(default_factory=list)  # JSON paths
    notes: list[str] = field(default_factory=list)  # changes of meaning worth reading
    stubs: list[str] = field(default_factory=list)  # "tool (plugin P)"


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
    def __init__(self, result: ImportResult) -> None:
        self.result = result

    def leave(self, path: tuple[str | int, ...], why: str = "") -> None:
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
            return [self.keep(v, spec[1], (*path, i)) or {} for i, v in enumerate(value)]
        if not isinstance(value, dict):
            raise ConfigError(f"{path_text(path)}: expected an object, got "
                              f"{_json_type(value)}")
        if isinstance(spec, tuple):  # ("map", item spec)
            return {key: self.keep(item, spec[1], (*path, key)) or {}
                    for key, item in value.items()}
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in spec:
                kept = self.keep(item, spec[key], (*path, key))
                if kept is not None:
                    out[key] = kept
            else:
                self.leave((*path, key))
        if not out and value and path and path[-1] in PRUNABLE and "channels" not in path:
            return None  # everything in it was left out, and its presence means nothing
        return out

    def scalar(self, value: Any, spec: str, path: tuple[str | int, ...]) -> Any:
        if not _CHECKS[spec](value):
            want = {LIST: "a list of strings", STR: "a string", BOOL: "true or false",
                    INT: "an integer"}[spec]
            raise ConfigError(f"{path_text(path)}: expected {want}")
        return list(value) if spec == LIST else value


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
            keeper.leave(("channels", name))
            continue
        spec = {**CHANNEL_BASE, **CHANNEL_MAPS.get(name.strip().lower(), {})}
        source = block
        unmodelled = [k for k in UNMODELLED_MAPS.get(name.strip().lower(), ())
                      if isinstance(block, dict) and k in block]
        for key in unmodelled:
            keeper.leave(("channels", name, key), f"read only by the {name} plugin's own "
                         "group resolver, which toolc does not model")
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
                keeper.leave(("channels", name, key), "no tool policy")
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


def _plugin_lists(config: dict[str, Any], kept: dict[str, Any], keeper: _Keeper) -> None:
    """``plugins.deny`` (and ``allow``) disable plugins in OpenClaw, before their entries."""
    plugins = config.get("plugins")
    if not isinstance(plugins, dict):
        return
    entries = kept.setdefault("entries", {})
    for key in ("deny", "allow"):
        ids = plugins.get(key)
        if ids is None:
            continue
        keeper.scalar(ids, LIST, ("plugins", key))
        keeper.result.left_out.remove(path_text(("plugins", key)))
        if key == "deny":
            for pid in ids:
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


def _known_names() -> tuple[set[str], set[str]]:
    """Tool names and group/plugin names of the shipped starter catalog."""
    tools: set[str] = set()
    others = {"group:plugins"}
    for rel, text in starter_files().items():
        if not rel.endswith(".yaml"):
            continue
        data = yaml.safe_load(text)
        for tool in data.get("catalog", []):
            tools.add(tool["name"])
            others.update(f"group:{g}" for g in tool.get("groups", []))
            if "plugin" in tool:
                others.add(tool["plugin"])
    return tools, others


def _stubs(policy: dict[str, Any], result: ImportResult) -> list[dict[str, Any]]:
    tools, others = _known_names()
    declared = set(policy.get("plugins", {}).get("entries", {}))
    seen: dict[str, bool] = {}  # name -> named in an allow list
    for key, raw in _entries(policy):
        name = normalize_tool_name(raw)
        if not name or "*" in name or name in tools or name in others:
            continue
        seen[name] = seen.get(name, False) or key != "deny"
    stubs = []
    for name, allowed in seen.items():
        close = difflib.get_close_matches(name, sorted(tools | others), n=1, cutoff=0.75)
        if close or name.startswith("group:"):
            hint = f' (did you mean "{close[0]}"?)' if close else ""
            result.notes.append(f"unknown name {name!r}{hint}: kept as written; the build "
                                "warns about it (TC130)")
            continue
        tool = re.sub(r"[^a-z0-9_]", "_", name)
        tool = tool if TOOL_NAME.fullmatch(tool) else f"tool_{tool}"
        plugin = name if PLUGIN_ID.fullmatch(name) else tool
        stub: dict[str, Any] = {
            "name": tool, "plugin": plugin,
            "description": f"TODO: describe this tool (stub for {name!r} in the policies).",
            "parameters": {"type": "object"}}
        if allowed:
            stub["optional"] = True
        stubs.append(stub)
        origin = "declared in plugins.entries" if plugin in declared else "plugin id guessed"
        result.stubs.append(f"{tool} (plugin {plugin}, {origin}"
                            + (", optional" if allowed else "") + ")")
    return stubs


# -- secrets -----------------------------------------------------------------------------------
def _secret_values(node: Any, under_secret: bool = False) -> Iterator[str]:
    if isinstance(node, dict):
        for key, child in node.items():
            yield from _secret_values(child, under_secret or bool(SECRET_KEY.search(key)))
    elif isinstance(node, list):
        for child in node:
            yield from _secret_values(child, under_secret)
    elif under_secret and isinstance(node, str) and len(node.strip()) >= 6:
        yield node.strip()


def _strings(node: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...],
                                                                        str]]:
    """(path of the holding value, text) for every key and string below ``node``."""
    if isinstance(node, dict):
        for key, child in node.items():
            yield path, key
            yield from _strings(child, (*path, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from _strings(child, (*path, i))
    elif isinstance(node, str):
        yield path, node


def _check_secrets(config: dict[str, Any], kept: dict[str, Any]) -> None:
    """Refuse to write anything that is, or looks like, a secret of the config (the message
    names where, never what)."""
    secrets = set(_secret_values(config))
    for path, text in _strings(kept, ()):
        if text.strip() in secrets or SECRET_SHAPE.search(text.strip()):
            raise ConfigError(f"{path_text(path) or 'the config'}: refusing to import a key "
                              "or value that is, or looks like, a secret (a token, key or "
                              "password); remove it from the tool-policy sections")


# -- render ------------------------------------------------------------------------------------
def _dump(data: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100,
                          default_flow_style=None)


def _profiles_text() -> str:
    data = yaml.safe_load(starter_text(PROFILES_FILE))
    coding = data["profiles"]["coding"]["allow"]
    if "cron" not in coding:
        coding.append("cron")
    return ("version: 1\n\n# OpenClaw 2026.3.2's built-in profiles exactly: its `coding` "
            "also allows cron (toolc's\n# starter leaves cron out, decision D4; an import "
            "keeps OpenClaw's meaning).\n" + _dump({"profiles": data["profiles"]}))


def import_openclaw(config: dict[str, Any], source_name: str) -> ImportResult:
    """Definitions meaning what ``config`` means to OpenClaw, and what was left out."""
    result = ImportResult(files={})
    keeper = _Keeper(result)
    policy: dict[str, Any] = {}
    for key, value in config.items():
        if key == "tools":
            policy["tools"] = keeper.keep(value, GLOBAL_TOOLS, ("tools",))
        elif key == "agents":
            policy["agents"] = keeper.keep(value, AGENTS, ("agents",))
        elif key == "plugins":
            policy["plugins"] = keeper.keep(value, PLUGINS, ("plugins",))
            _plugin_lists(config, policy["plugins"], keeper)
        elif key == "channels":
            policy["channels"] = _channels(keeper, value)
        else:
            keeper.leave((key,))
    if isinstance(config, _Dict):
        result.notes.extend(f"{k}: duplicate key, the last one is used (as OpenClaw does)"
                            for k in config.duplicates)
    _profiles(policy, (), result.notes)
    policy = {k: v for k, v in policy.items() if v}
    _check_secrets(config, policy)
    stubs = _stubs(policy, result)
    files = starter_files()
    files[PROFILES_FILE] = with_directive(PROFILES_FILE, _profiles_text())
    source_name = "".join(c if c.isprintable() else "?" for c in source_name)
    header = (f"version: 1\n\n# Imported from {source_name} by toolc import-openclaw: its "
              "tool-policy sections,\n# in OpenClaw's own shape.\n")
    files[POLICY_FILE] = with_directive(POLICY_FILE, header + (_dump(policy) if policy else ""))
    if stubs:
        files[STUBS_FILE] = with_directive(STUBS_FILE, (
            "version: 1\n\n# Catalog stubs for names in the policies that are neither core "
            "tools nor\n# known plugin tools: fill in each description and parameters, and "
            "set the real\n# plugin id. `optional: true` where an allow list names the tool "
            "(OpenClaw's\n# plugin tools that need opting in); remove it if yours is not.\n"
            + _dump({"catalog": stubs})))
    result.files = files
    return result
