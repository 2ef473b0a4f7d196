"""Stage 3, validate and expand groups: the document model -> the resolved IR both engines read."""

from __future__ import annotations

import fnmatch
import functools
import json
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass

import jsonschema

from ..diagnostics import Diagnostics, Pos, did_you_mean
from ..runtime._dialects import DIALECTS
from ..runtime._shell import pattern_breadth, pattern_can_match
from ..targets import DEFAULT_KEY, NEWEST_KEY, Target, target
from .model import (
    ChannelDef,
    Definitions,
    Entry,
    EntryList,
    Policy,
    SenderRule,
    ToolDef,
    ToolsConfig,
)

PLUGINS_GROUP = "group:plugins"


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolved:
    """The resolved IR: present-capable tools in catalog order, flattened groups, plugin map."""

    defs: Definitions
    tools: tuple[ToolDef, ...]
    groups: Mapping[str, tuple[str, ...]]
    plugin_tools: Mapping[str, tuple[str, ...]]
    known_names: frozenset[str]
    max_spawn_depth: int
    target: Target

    @property
    def channels(self) -> frozenset[str]:
        return channel_names(self.defs)


def channel_names(defs: Definitions) -> frozenset[str]:
    """Every channel the definitions define: modelled here, or compiled on its own."""
    return frozenset((*(c.name for c in defs.channels), *defs.streamed_channels))


@functools.lru_cache(maxsize=4096)
def _schema_problem(text: str) -> str | None:
    """The meta-schema error of a parameters schema, cached by content (catalogs repeat)."""
    try:
        jsonschema.Draft202012Validator.check_schema(json.loads(text))
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{where}: {exc.message}"
    return None


def pattern_matches(pattern: str, name: str) -> bool:
    """OpenClaw glob: ``*`` is any run of characters; everything else is literal."""
    if pattern == "*":
        return True
    if "*" not in pattern:
        return pattern == name
    return fnmatch.fnmatchcase(name, pattern.replace("[", "[[]").replace("?", "[?]"))


def policy_entries(config: ToolsConfig) -> Iterator[EntryList]:
    """Every allow/alsoAllow/deny list of a tools block (sandbox and subagents included)."""
    blocks: list[Policy] = [config.policy, *(bp.policy for bp in config.by_provider)]
    if config.subagents:
        blocks.append(config.subagents)
    blocks.extend(rule.policy for rule in config.by_sender)
    for block in blocks:
        yield from (lst for lst in (block.allow, block.also_allow, block.deny) if lst)
    yield from (lst for lst in (config.sandbox_allow, config.sandbox_also_allow,
                                config.sandbox_deny) if lst)


def _all_policy_lists(defs: Definitions) -> Iterator[EntryList]:
    yield from policy_entries(defs.tools_config)
    for agent in defs.agents:
        if agent.tools:
            yield from policy_entries(agent.tools)
    for profile in defs.profiles.values():
        yield from (lst for lst in (profile.allow, profile.deny) if lst)
    for channel in defs.channels:
        yield from channel_policy_lists(channel)


def channel_policy_lists(channel: ChannelDef) -> Iterator[EntryList]:
    """Every allow/alsoAllow/deny list of a channel's groups and their sender rules."""
    for gmap in channel.entry_maps():
        for group in gmap:
            blocks = [group.tools, *(s.policy for s in group.senders)]
            for block in blocks:
                if block:
                    yield from (x for x in (block.allow, block.also_allow, block.deny) if x)


class _Analyzer:
    def __init__(self, defs: Definitions, diags: Diagnostics) -> None:
        self.defs = defs
        self.diags = diags

    def tools(self) -> tuple[ToolDef, ...]:
        seen: dict[str, Pos] = {}
        for tool in self.defs.tools:
            if tool.name in seen:
                self.diags.error(tool.pos, "TC120", f'duplicate tool name "{tool.name}"',
                                 hint=f"first defined at {seen[tool.name]}")
                continue
            seen[tool.name] = tool.pos
            self.check_tool(tool)
        plugin_ids = {t.plugin for t in self.defs.tools if t.plugin}
        owner: dict[str, str | None] = {}  # tool name -> its plugin id (None: core)
        for tool in self.defs.tools:
            owner.setdefault(tool.name, tool.plugin)
        for tool in self.defs.tools:
            # A plugin may name one of its own tools after itself (OpenClaw's `lobster`);
            # only a core tool or another plugin's tool of that name is a conflict.
            if tool.plugin and tool.plugin in seen and owner[tool.plugin] != tool.plugin:
                self.diags.error(tool.pos, "TC121",
                                 f'plugin id "{tool.plugin}" conflicts with tool name '
                                 f'"{tool.plugin}" (defined at {seen[tool.plugin]})',
                                 hint="a plugin id acts as a group name in allow/deny lists")
        for entry in self.defs.plugin_entries:
            if entry.id not in plugin_ids:
                self.diags.warning(entry.pos, "TC136", f'plugin "{entry.id}" has no tools',
                                   hint=did_you_mean(entry.id, plugin_ids))
        disabled = {e.id for e in self.defs.plugin_entries if not e.enabled}
        first = {name: pos for name, pos in seen.items()}
        return tuple(t for t in self.defs.tools
                     if first.get(t.name) == t.pos and self.present_capable(t, disabled))

    def present_capable(self, tool: ToolDef, disabled: set[str]) -> bool:
        if tool.plugin and (not self.defs.plugins_enabled or tool.plugin in disabled):
            return False
        return not (tool.channel and tool.channel not in channel_names(self.defs))

    def check_tool(self, tool: ToolDef) -> None:
        if tool.optional and not tool.plugin:
            self.diags.error(tool.pos, "TC133", f'"{tool.name}" is optional but not a plugin tool',
                             hint="only plugin tools can be optional")
        problem = _schema_problem(json.dumps(tool.parameters, sort_keys=True))
        if problem is not None:
            self.diags.error(tool.pos, "TC122",
                             f'"{tool.name}": parameters are not a valid JSON Schema at '
                             f"{problem}")
        props = tool.parameters.get("properties")
        props = props if isinstance(props, dict) else {}
        for alias, canonical in tool.param_aliases:
            if canonical not in props:
                self.diags.error(tool.pos, "TC134", f'"{tool.name}": paramAliases maps '
                                 f'"{alias}" to "{canonical}", which is not a parameter',
                                 hint=did_you_mean(canonical, props))
            if alias in props:
                # the shim would rewrite the real parameter's values into another one
                self.diags.error(tool.pos, "TC138", f'"{tool.name}": paramAliases alias '
                                 f'"{alias}" is itself a parameter',
                                 hint="an alias must be a name the schema does not have")
        for dialect, _ in tool.wire_names:
            if dialect not in DIALECTS:
                self.diags.error(tool.pos, "TC135", f'"{tool.name}": unknown dialect '
                                 f'"{dialect}" in wireNames', hint=did_you_mean(dialect, DIALECTS))

    def wire_names(self, tools: tuple[ToolDef, ...]) -> None:
        """Per dialect, the names sent on the wire (a tool's wire name there, else its name)
        must be unique, exactly and case-insensitively: one name, one tool (TC139)."""
        for dialect in DIALECTS:
            seen: dict[str, ToolDef] = {}
            for tool in tools:
                wire = dict(tool.wire_names).get(dialect, tool.name)
                key = unicodedata.normalize("NFKC", wire).strip().casefold()
                other = seen.setdefault(key, tool)
                if other is not tool:
                    self.diags.error(tool.pos, "TC139", f'"{tool.name}" is sent to {dialect} as '
                                     f'"{wire}", which collides with "{other.name}" '
                                     f"(defined at {other.pos})",
                                     hint="give one of them another wireNames entry")

    def group_sources(self) -> dict[str, tuple[list[Entry], Pos]]:
        sources: dict[str, tuple[list[Entry], Pos]] = {}
        for tool in self.defs.tools:
            for g in tool.groups:
                members, _ = sources.setdefault(f"group:{g}", ([], tool.pos))
                members.append(Entry(text=tool.name, pos=tool.pos))
        for group in self.defs.groups:
            if group.name == PLUGINS_GROUP:
                self.diags.error(group.pos, "TC124", f"{PLUGINS_GROUP} is reserved",
                                 hint="it always means every plugin tool present")
                continue
            members, _ = sources.setdefault(group.name, ([], group.pos))
            members.extend(group.members)
        return sources

    def expand_groups(self, sources: dict[str, tuple[list[Entry], Pos]]
                      ) -> dict[str, tuple[str, ...]]:
        done: dict[str, tuple[str, ...]] = {}

        def visit(name: str, stack: list[str]) -> tuple[str, ...]:
            if name in done:
                return done[name]
            if name in stack:
                cycle = " -> ".join([*stack[stack.index(name):], name])
                self.diags.error(sources[name][1], "TC123", f"group cycle: {cycle}")
                return ()
            out: list[str] = []
            for member in sources[name][0]:
                m = member.name
                expanded = visit(m, [*stack, name]) if m in sources else (m,)
                out.extend(x for x in expanded if x not in out)
            done[name] = tuple(out)
            return done[name]

        for name in sources:
            visit(name, [])
        return done

    def check_names(self, lists: Iterable[EntryList], known: Set[str], groups: Set[str],
                    plugin_ids: Set[str], context: str) -> None:
        vocabulary = known | groups | plugin_ids | {PLUGINS_GROUP}
        glob_hits: dict[str, bool] = {}
        for lst in lists:
            for entry in lst.items:
                name = entry.name
                if not name or name == "*" or name in vocabulary:
                    continue
                if "*" in name:
                    if name not in glob_hits:
                        glob_hits[name] = any(pattern_matches(name, k) for k in known)
                    if not glob_hits[name]:
                        self.diags.warning(entry.pos, "TC130",
                                           f'pattern "{entry.text}" matches no tool')
                    continue
                kind = "group" if name.startswith("group:") else "tool"
                self.diags.warning(entry.pos, "TC130", f'unknown {kind} "{entry.text}"{context}',
                                   hint=did_you_mean(name, vocabulary))

    def profiles(self) -> None:
        known = set(self.defs.profiles)
        refs: list[Entry] = []
        configs = [self.defs.tools_config, *(a.tools for a in self.defs.agents if a.tools)]
        for config in configs:
            if config.profile:
                refs.append(config.profile)
            refs.extend(bp.profile for bp in config.by_provider if bp.profile)
        for ref in refs:
            if ref.text not in known:
                self.diags.error(ref.pos, "TC104", f'unknown profile "{ref.text}"',
                                 hint=did_you_mean(ref.text, known)
                                 or f"known profiles: {', '.join(sorted(known))}")

    def agents(self) -> None:
        seen: dict[str, Pos] = {}
        for agent in self.defs.agents:
            if agent.id in seen:
                self.diags.error(agent.pos, "TC125", f'duplicate agent id "{agent.id}"',
                                 hint=f"first defined at {seen[agent.id]}")
            seen.setdefault(agent.id, agent.pos)

    def senders(self, target: Target) -> None:
        scopes = [self.defs.tools_config.by_sender,
                  *(a.tools.by_sender for a in self.defs.agents if a.tools)]
        for channel in self.defs.channels:
            scopes += [group.senders for gmap in channel.entry_maps() for group in gmap]
        for rules in scopes:
            self.sender_keys(rules, target)

    def sender_keys(self, rules: tuple[SenderRule, ...], target: Target) -> None:
        seen: dict[tuple[str, str, str | None], str] = {}
        for rule in rules:
            typed = rule.key.strip().lower().split(":", 1)[0]
            if typed == "channel" and rule.kind != "channel":
                newest = NEWEST_KEY
                self.diags.error(rule.pos, "TC107", f'toolsBySender key "{rule.key}": '
                                 f"channel:<channel>:<id> keys are read by OpenClaw {newest} "
                                 f"only; these definitions follow OpenClaw {target.key}",
                                 hint=f'add `openclaw: "{newest}"` to a definitions file to '
                                      f"follow OpenClaw {newest}, or write \"id:<id>\"")
                continue
            if rule.kind != "*" and not rule.value:
                example = '"channel:discord:42", ' if target.channel_sender_keys else ""
                self.diags.error(rule.pos, "TC132", f'toolsBySender key '
                                 f'"{rule.key}" names no sender',
                                 hint=f'write a value after the prefix, e.g. "id:42", '
                                      f'{example}or use "*" for every sender')
                continue
            if rule.kind == "id" and typed != "id":
                self.diags.warning(
                    rule.pos, "TC131", f'toolsBySender key "{rule.key}" is untyped; '
                    "it matches the sender id only",
                    hint=f'write "id:{rule.value}" (or e164:, username:, name:)')
            bucket = (rule.kind, rule.value, rule.channel)
            if rule.kind != "*" and bucket in seen:
                self.diags.warning(rule.pos, "TC137", f'toolsBySender key '
                                   f'"{rule.key}" is shadowed by "{seen[bucket]}"',
                                   hint="the first key wins")
            seen.setdefault(bucket, rule.key)

    def roster(self, target: Target) -> None:
        """2026.9's loader refuses a roster it cannot pick a default agent from (TC108)."""
        defs = self.defs
        if not target.roster_checked or defs.roster_pos is None:
            return
        kinds = {a.roster for a in defs.agents}
        if len(kinds) > 1:
            self.diags.error(defs.roster_pos, "TC108", "agents.list and agents.entries are both "
                             "set: OpenClaw 2026.9 drops agents.list when agents.entries is set",
                             hint="move the agents of agents.list into agents.entries")
        marked = [a for a in defs.agents if a.default]
        why = None
        # (an empty roster is no error: 2026.9's loader fills in the default `main` agent)
        if len(marked) > 1:
            why = (f"{len(marked)} agents have default: true (OpenClaw 2026.9 allows at most "
                   "one)")
        elif marked and defs.agents_ownership == "explicit":
            why = "agents.ownership: explicit cannot be combined with a default: true agent"
        elif len(defs.agents) > 1 and not marked and defs.agents_ownership != "explicit":
            why = ("a roster of several agents needs one default: true agent or "
                   "agents.ownership: explicit (OpenClaw 2026.9 refuses it otherwise)")
        if why:
            self.diags.error(marked[1].pos if len(marked) > 1 else defs.roster_pos, "TC108",
                             f"agent roster: {why}",
                             hint="mark the agent that answers requests naming no agent with "
                                  "default: true, or set agents.ownership: explicit so every "
                                  "request must name its agent")

    def bindings(self, target: Target) -> None:
        """Route bindings: each names a declared agent (TC170; ``main`` routes to main under
        2026.9, and wherever the roster is empty, as in OpenClaw's
        ``pickFirstExistingAgentId``). 2026.9.6 refuses every message such a binding matches;
        2026.3.2 routes it to the default agent (``main`` too, once a roster is declared),
        which is never what was meant, so toolc refuses the binding under both."""
        declared = {a.id for a in self.defs.agents}
        main_routes = target.route_main_always or not declared
        for b in self.defs.bindings:
            if not (b.agent_id == "main" and main_routes) and b.agent_id not in declared:
                self.diags.error(b.agent_pos, "TC170",
                                 f'binding {b.index} routes to agent "{b.agent_id}", which is not '
                                 "declared",
                                 hint=("OpenClaw 2026.3 sends a binding to an undeclared "
                                       "main to the default agent: declare main in "
                                       "agents.list, or route to a declared agent")
                                 if b.agent_id == "main" else did_you_mean(b.agent_id, declared)
                                 or "declare the agent, or route to one that is")

    def exec_mode(self) -> None:
        """2026.9's loader refuses ``exec.mode`` beside ``security`` or ``ask`` (TC109)."""
        configs = [self.defs.tools_config, *(a.tools for a in self.defs.agents if a.tools)]
        for config in configs:
            if config.exec_mode and (config.exec_security or config.exec_ask):
                self.diags.error(config.exec_mode.pos, "TC109", "tools.exec.mode cannot be "
                                 "combined with security or ask in the same exec object",
                                 hint="keep mode and remove security/ask (or the reverse)")

    def exec_policy(self) -> None:
        """``tools.exec`` approvals: allowlist patterns that can never match (TC150) or
        that allow every command or a whole directory tree (TC152), and approval settings
        that no context uses because exec runs in the sandbox wherever they apply (TC151)."""
        configs = [self.defs.tools_config, *(a.tools for a in self.defs.agents if a.tools)]
        for config in configs:
            for entry in config.exec_allowlist.items if config.exec_allowlist else ():
                if not pattern_can_match(entry.text):
                    self.never_matches(entry)
                elif (why := pattern_breadth(entry.text)) is not None:
                    self.too_broad(entry, why)
        glob = self.defs.tools_config
        global_host = glob.exec_host.text if glob.exec_host else "sandbox"
        agents = [a.tools for a in self.defs.agents]

        def host(config: ToolsConfig | None) -> str:
            return config.exec_host.text if config and config.exec_host else global_host

        for key in _EXEC_APPROVAL_KEYS:
            # global settings apply without an agent and to agents that do not set the key
            # (allowlists add up, so to every agent)
            users = [global_host, *(host(c) for c in agents
                                    if key == "exec_allowlist" or getattr(c, key, None) is None)]
            if set(users) == {"sandbox"}:
                self.unused_exec_setting(getattr(glob, key), key)
        for agent_config in agents:
            if agent_config is not None and host(agent_config) == "sandbox":
                for key in _EXEC_APPROVAL_KEYS:
                    self.unused_exec_setting(getattr(agent_config, key), key)

    def never_matches(self, entry: Entry) -> None:
        text = entry.text.strip()
        if any(c in text for c in "/\\~"):
            why, hint = ("it is not an absolute path",
                         'patterns match absolute paths: start it with "/", "~" or "**/"')
        else:
            why, hint = ("it names no path", f'write the executable\'s path, such as '
                         f'"/usr/bin/{text}"; "*" alone allows every command')
        self.diags.warning(entry.pos, "TC150", f'exec allowlist pattern "{entry.text}" never '
                           f"matches: {why}", hint=hint)

    def too_broad(self, entry: Entry, why: str) -> None:
        # OpenClaw reads such a pattern as written ("*" allows every command it can
        # analyse), so it stays valid; but it is rarely what was meant, and a learned
        # path was never meant to be one (toolc stores those escaped: "/[*][*]")
        self.diags.warning(entry.pos, "TC152", f'exec allowlist pattern "{entry.text}" {why}',
                           hint="list the executables' paths (\"/usr/bin/git\") or one "
                                'directory ("/opt/tools/*"); write [*] for a literal *')

    def unused_exec_setting(self, setting: Entry | EntryList | None, key: str) -> None:
        if setting is None:
            return
        name = key.removeprefix("exec_")
        self.diags.warning(setting.pos, "TC151", f"tools.exec.{name} has no effect: exec runs "
                           "on the sandbox host wherever it applies",
                           hint="approvals guard the gateway and node hosts; set "
                                "tools.exec.host: gateway (or node) to use them")


_EXEC_APPROVAL_KEYS = ("exec_security", "exec_ask", "exec_allowlist")


def analyze(defs: Definitions, diags: Diagnostics) -> Resolved | None:
    """Check cross references and expand groups; None when any error was reported."""
    a = _Analyzer(defs, diags)
    tools = a.tools()
    a.wire_names(tools)
    sources = a.group_sources()
    groups = a.expand_groups(sources)
    all_names = {t.name for t in defs.tools}
    plugin_ids = {t.plugin for t in defs.tools if t.plugin}
    a.profiles()
    a.agents()
    target = target_of(defs, diags)
    a.senders(target)
    a.roster(target)
    a.bindings(target)
    a.exec_mode()
    a.exec_policy()
    for name, (members, pos) in sources.items():
        a.check_names([EntryList(items=tuple(members), pos=pos)], all_names, set(sources),
                      set(), f" in {name}")
    checks = channel_checks(defs, target)
    a.check_names(_all_policy_lists(defs), checks.known, checks.groups, plugin_ids, "")
    plugin_tools: dict[str, list[str]] = {}
    for tool in tools:
        if tool.plugin:
            plugin_tools.setdefault(tool.plugin, []).append(tool.name)
    if diags.has_errors():
        return None
    return Resolved(defs=defs, tools=tools, groups=groups,
                    plugin_tools={k: tuple(v) for k, v in plugin_tools.items()},
                    known_names=frozenset(all_names),
                    max_spawn_depth=defs.max_spawn_depth or target.default_max_spawn_depth,
                    target=target)


def target_of(defs: Definitions, diags: Diagnostics) -> Target:
    """The release the definitions follow; without ``openclaw:`` a note (TC106, never an
    error, not even under ``--strict``) says which one that is and how to choose."""
    if defs.openclaw is None and defs.openclaw_pos is not None:
        diags.note(defs.openclaw_pos, "TC106",
                   f"no `openclaw` key: these definitions follow OpenClaw {DEFAULT_KEY} "
                   "semantics",
                   hint=f'add `openclaw: "{NEWEST_KEY}"` to a definitions file to follow '
                        f"OpenClaw {NEWEST_KEY} (`toolc migrate --openclaw {NEWEST_KEY}` "
                        f'rewrites the project), or `openclaw: "{DEFAULT_KEY}"` to keep these '
                        "semantics without this note")
    return target(defs.openclaw)



@dataclass(frozen=True, slots=True, kw_only=True)
class ChannelChecks:
    """What ``analyze`` checks a channel's groups against, for a channel compiled on its own
    (``toolc.builds.stream``): the release, and the names an entry may use."""

    target: Target
    known: frozenset[str]  # tool names and the release's policy aliases of present tools
    groups: frozenset[str]  # group names (catalog groups and the groups section)
    plugin_ids: frozenset[str]


def channel_checks(defs: Definitions, target: Target) -> ChannelChecks:
    """``analyze``'s vocabulary for channels, reporting nothing (``analyze`` reports)."""
    all_names = {t.name for t in defs.tools}
    # the release's policy aliases (2026.9: cron, update_plan) name the tools they stand for
    aliases = {**target.policy_aliases,
               **{k: v[0] for k, v in target.policy_expansions.items()}}
    aliased = {alias for alias, name in aliases.items() if name in all_names}
    groups = {f"group:{g}" for t in defs.tools for g in t.groups}
    groups |= {g.name for g in defs.groups if g.name != PLUGINS_GROUP}
    return ChannelChecks(target=target, known=frozenset(all_names | aliased),
                         groups=frozenset(groups),
                         plugin_ids=frozenset(t.plugin for t in defs.tools if t.plugin))


def check_channel(defs: Definitions, channel: ChannelDef, checks: ChannelChecks,
                  diags: Diagnostics) -> None:
    """``analyze``'s checks of one channel: its sender keys and the names its lists use."""
    a = _Analyzer(defs, diags)
    for gmap in channel.entry_maps():
        for group in gmap:
            a.sender_keys(group.senders, checks.target)
    a.check_names(channel_policy_lists(channel), checks.known, checks.groups,
                  checks.plugin_ids, "")
