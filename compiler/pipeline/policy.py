"""Config blocks -> layer policies (OpenClaw section 5.1, 5.2, 8, 9). Request-independent.

Both engines build their layers from these; they differ in how they evaluate a layer: the
reference interpreter matches names per request, the compiler turns layers into bitsets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..diagnostics import BUILTIN
from ..rules.names import normalize_agent_id, normalize_tool_name
from ..rules.sandbox import SandboxModes
from ..runtime._errors import AgentSelectionRequiredError
from ..targets.grammar import SessionKeyGrammar
from .analyze import Resolved
from .model import AgentDef, Definitions, Entry, EntryList, Policy, ProfileDef, ToolDef, ToolsConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerPolicy:
    """One pipeline step's lists; ``allow`` None or empty restricts nothing."""

    allow: tuple[Entry, ...] | None
    deny: tuple[Entry, ...] | None
    # The allow list's ``*`` came from an alsoAllow without allow (pickSandboxToolPolicy's
    # IMPLICIT_ALLOW_ALL_FROM_ALSO_ALLOW): for plugin admission it means "default plugin
    # tools", not `*` (2026.9 collectExplicitAllowlist)
    implicit_star: bool = False
    # OpenClaw hands the step's lists on with the core groups expanded (2026.9
    # resolveSandboxToolPolicyForAgent -> expandResolvedPolicy): load-time plugin admission
    # (createPluginToolAllowlist, denylistBlocksPlugin) sees a group's members, so a sandbox
    # allow of group:ui loads the browser plugin's tool
    expands_groups: bool = False


def admission_names(resolved: Resolved, entries: Iterable[Entry], *, expands: bool
                    ) -> list[str]:
    """The names load-time plugin admission reads in one of a step's lists: the entries,
    or their core groups' members where the step hands its lists on expanded
    (``LayerPolicy.expands_groups``)."""
    names = (expand_core_groups(resolved, entries) if expands
             else [e.name for e in entries if e.name])
    return [policy_name(resolved, n) for n in names]


def builtin_entries(names: Iterable[str]) -> tuple[Entry, ...]:
    return tuple(Entry(text=n, pos=BUILTIN) for n in names)


def _union(*lists: Iterable[Entry]) -> tuple[Entry, ...]:
    out: dict[str, Entry] = {}
    for lst in lists:
        for e in lst:
            out.setdefault(e.text, e)
    return tuple(out.values())


def _items(lst: EntryList | None) -> tuple[Entry, ...] | None:
    return None if lst is None else lst.items


def pick_policy(block: Policy | None) -> LayerPolicy | None:
    """Section 5.1: fold alsoAllow into allow; an absent allow plus alsoAllow means ``*``."""
    if block is None:
        return None
    allow = _items(block.allow)
    also = _items(block.also_allow) or ()
    implicit = False
    if also:
        star = Entry(text="*", pos=block.also_allow.pos if block.also_allow else block.pos)
        implicit = allow is None and not any(e.text.strip() == "*" for e in also)
        allow = _union(allow or (star,), also)
    deny = _items(block.deny)
    if allow is None and deny is None:
        return None
    return LayerPolicy(allow=allow, deny=deny, implicit_star=implicit)


def profile_policy(profile: ProfileDef | None, also: EntryList | None, *,
                   full_allows_all: bool = False) -> LayerPolicy | None:
    """A profile's lists with alsoAllow merged in (only when the profile has an allow list).

    ``full_allows_all`` (2026.9 ``resolveCoreToolProfilePolicy``: ``full`` is ``allow: ["*"]``):
    a ``full`` profile without lists is a step allowing ``*``, whose ``*`` admits optional
    plugin tools; elsewhere a profile without lists is no step."""
    if profile is None:
        return None
    if profile.allow is None and profile.deny is None:
        if not (full_allows_all and profile.name == "full"):
            return None  # `full` and friends: the step is skipped
        star = (Entry(text="*", pos=profile.pos),)
        return LayerPolicy(allow=_union(star, also.items) if also and also.items else star,
                           deny=None)
    allow = _items(profile.allow)
    if allow is not None and also and also.items:
        allow = _union(allow or (Entry(text="*", pos=also.pos),), also.items)
    return LayerPolicy(allow=allow, deny=_items(profile.deny))


def sandbox_modes(defs: Definitions) -> SandboxModes:
    """Which sessions are sandboxed (``rules.sandbox``): agent modes by normalized id (the
    first entry of an id, as ``resolveAgentEntry`` finds it), the default agent
    (``resolveDefaultAgentId``) and ``session.scope``."""
    first: dict[str, str | None] = {}
    for agent in defs.agents:
        first.setdefault(agent.id, agent.sandbox_mode)
    agents = {k: v for k, v in first.items() if v is not None}
    chosen = next((a for a in defs.agents if a.default), defs.agents[0] if defs.agents else None)
    return SandboxModes(default_mode=defs.sandbox_mode or "off",  # type: ignore[arg-type]
                        agents=agents,  # type: ignore[arg-type]
                        default_agent=chosen.id if chosen else "main",
                        scope_global=defs.session_scope == "global")


def sandbox_policy(resolved: Resolved, agent_tools: ToolsConfig | None) -> LayerPolicy:
    """Section 8: agent list ?? global list ?? default, allow and deny chosen independently."""
    glob = resolved.defs.tools_config

    def pick(agent: EntryList | None, global_: EntryList | None,
             default: tuple[str, ...]) -> tuple[Entry, ...]:
        chosen = agent if agent is not None else global_
        return chosen.items if chosen is not None else builtin_entries(default)

    target = resolved.target
    if target.sandbox_also_allow:
        return _sandbox_policy_also_allow(resolved, agent_tools)
    allow = pick(agent_tools.sandbox_allow if agent_tools else None, glob.sandbox_allow,
                 target.sandbox_default_allow)
    deny = pick(agent_tools.sandbox_deny if agent_tools else None, glob.sandbox_deny,
                target.sandbox_default_deny)
    expanded_allow = expand_core_groups(resolved, allow)
    expanded_deny = expand_core_groups(resolved, deny)
    if expanded_allow and "image" not in expanded_allow and "image" not in expanded_deny:
        allow = (*allow, Entry(text="image", pos=BUILTIN))
    return LayerPolicy(allow=allow, deny=deny)


def _sandbox_policy_also_allow(resolved: Resolved, agent_tools: ToolsConfig | None) -> LayerPolicy:
    """2026.9 ``resolveSandboxToolPolicyForAgent``: allow, alsoAllow and deny each from the
    agent, else the global config; alsoAllow widens the chosen (or default) allow list; an
    explicit allow or alsoAllow lifts matching names out of the *default* deny (a configured
    deny is kept as written); ``view_image`` joins a non-empty allow list, and a deny matching
    ``image`` also denies ``view_image``."""
    glob = resolved.defs.tools_config
    target = resolved.target

    def pick(field: str) -> EntryList | None:
        own = getattr(agent_tools, field) if agent_tools is not None else None
        chosen: EntryList | None = own if own is not None else getattr(glob, field)
        return chosen

    allow_l, also_l, deny_l = (pick("sandbox_allow"), pick("sandbox_also_allow"),
                               pick("sandbox_deny"))
    also = also_l.items if also_l is not None else ()
    if allow_l is not None:
        allow = () if not allow_l.items else _union(allow_l.items, also)
    else:
        allow = _union(builtin_entries(target.sandbox_default_allow), also)
    explicit = (*(allow_l.items if allow_l is not None else ()), *also)
    if deny_l is not None:
        deny = deny_l.items
    else:
        lifted = [policy_name(resolved, n) for n in expand_core_groups(resolved, explicit)]
        deny = builtin_entries(d for d in target.sandbox_default_deny
                               if not any(pattern_match(p, policy_name(resolved, d))
                                          for p in lifted if p))
    image = target.sandbox_image_tool
    denied = [policy_name(resolved, n) for n in expand_core_groups(resolved, deny)]
    if (target.sandbox_image_deny_follows and any(pattern_match(p, "image") for p in denied)
            and not any(pattern_match(p, image) for p in denied)):
        deny = (*deny, Entry(text=image, pos=BUILTIN))
        denied.append(image)
    allowed = expand_core_groups(resolved, allow)
    if allowed and image not in denied and image not in allowed:
        allow = (*allow, Entry(text=image, pos=BUILTIN))
    return LayerPolicy(allow=allow, deny=deny, expands_groups=True)


def subagent_policy(resolved: Resolved, *, leaf: bool) -> LayerPolicy:
    """Section 9: default denies minus explicitly allowed names, plus configured denies."""
    config = resolved.defs.tools_config.subagents
    allow = _items(config.allow) if config else None
    also = _items(config.also_allow) if config else None
    target = resolved.target
    # 2026.9 resolveSubagentToolPolicyForSession: the default denies stay whatever allow says
    explicit = ({e.name for e in (*(allow or ()), *(also or ()))}
                if target.subagent_allow_lifts_default_deny else set())
    defaults = target.subagent_deny_always + (target.subagent_deny_leaf if leaf else ())
    deny = builtin_entries(n for n in defaults if n not in explicit)
    if config and config.deny:
        deny = (*deny, *config.deny.items)
    if allow is not None and also is not None:
        allow = _union(allow, also)
    return LayerPolicy(allow=allow, deny=deny)


def apply_patch_config(resolved: Resolved, agent_tools: ToolsConfig | None
                       ) -> tuple[bool, tuple[str, ...] | None]:
    """``tools.exec.applyPatch`` for an agent: (enabled, allowModels). The agent's object
    replaces the global one as a whole; only ``enabled: true`` turns apply_patch on (opt-in,
    OpenClaw 2026.3.2)."""
    chosen = (agent_tools if agent_tools is not None and agent_tools.apply_patch_set
              else resolved.defs.tools_config)
    if resolved.target.apply_patch == "default-on":
        # 2026.9 resolveConfiguredApplyPatchPolicy: on unless `enabled: false`;
        # isApplyPatchAllowedForModel compares trimmed, lowercased allowModels entries
        models = chosen.apply_patch_models
        return chosen.apply_patch_enabled is not False, (
            None if models is None else tuple(m.strip().lower() for m in models))
    return chosen.apply_patch_enabled is True, chosen.apply_patch_models


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecConfig:
    """An agent's effective ``tools.exec`` approval policy, defaults applied (2026.3.2)."""

    host: str
    security: str
    ask: str
    allowlist: tuple[str, ...]


EXEC_DEFAULT_HOST = "sandbox"
EXEC_DEFAULT_ASK = "on-miss"


def exec_default_security(host: str) -> str:
    """``tools.exec.security`` when unset: deny on the sandbox host, allowlist elsewhere."""
    return "deny" if host == "sandbox" else "allowlist"


def exec_config(resolved: Resolved, agent_tools: ToolsConfig | None) -> ExecConfig:
    """``resolveExecConfig``: each of host, security and ask is the agent's value ?? the
    global one ?? the default; the allowlist is the global patterns then the agent's (as
    OpenClaw adds ``agents["*"]`` and the agent's approvals entries), trimmed, exact
    duplicates dropped (patterns are case-sensitive, as in 2026.9.6)."""
    glob = resolved.defs.tools_config

    def pick(attr: str) -> str | None:
        agent = getattr(agent_tools, attr) if agent_tools is not None else None
        chosen = agent if agent is not None else getattr(glob, attr)
        return chosen.text if chosen is not None else None

    host = pick("exec_host") or EXEC_DEFAULT_HOST
    lists = [glob.exec_allowlist, agent_tools.exec_allowlist if agent_tools else None]
    patterns: dict[str, str] = {}
    for lst in lists:
        for entry in lst.items if lst else ():
            patterns.setdefault(entry.text.strip(), entry.text.strip())
    return ExecConfig(host=host, security=pick("exec_security") or exec_default_security(host),
                      ask=pick("exec_ask") or EXEC_DEFAULT_ASK,
                      allowlist=tuple(p for key, p in patterns.items() if key))


def apply_patch_model_ok(models: tuple[str, ...] | None, provider: str | None,
                         model: str | None) -> bool:
    """``isApplyPatchAllowedForModel``: no list allows every model; else the bare model id or
    ``provider/model`` must be listed (blank entries match nothing)."""
    if not models:
        return True
    if not model:
        return False
    full = model if "/" in model or not provider else f"{provider}/{model}"
    return any(m and m in (model, full) for m in models)


def is_leaf(resolved: Resolved, depth: int) -> bool:
    """2026.9 resolveSubagentRoleForDepth: depth 0 is the ``main`` role (never a leaf)."""
    if resolved.target.subagent_depth_counts_leading and depth <= 0:
        return False
    return depth >= max(1, resolved.max_spawn_depth)


def local_model_lean(resolved: Resolved, agent: AgentDef | None) -> bool:
    """2026.9 isLocalModelLeanEnabled: the agent's ``experimental.localModelLean``, else
    ``agents.defaults.experimental.localModelLean`` (an undeclared agent: the defaults)."""
    if not resolved.target.local_model_lean_tools:
        return False
    own = agent.local_model_lean if agent is not None else None
    return (own if own is not None else resolved.defs.local_model_lean) is True


def lean_patterns(resolved: Resolved, policies: Iterable[LayerPolicy | None]) -> list[str]:
    """resolvePreservedLocalModelLeanToolNames over explicitToolOverrideAllowlist: the allow
    entries of the given (non-profile) steps, groups expanded, ``*`` dropped."""
    out: list[str] = []
    for policy in policies:
        for e in policy.allow or () if policy is not None else ():
            name = policy_name(resolved, e.name)
            if not name or name == "*":
                continue
            for member in resolved.groups.get(name, (name,)):
                m = policy_name(resolved, normalize_tool_name(member))
                if m and m != "*" and m not in out:
                    out.append(m)
    return out


def policy_name(resolved: Resolved, name: str) -> str:
    """A normalized entry with the target's extra aliases (2026.9: ``cron`` is
    ``automations``)."""
    return resolved.target.policy_aliases.get(name, name)


def policy_names(resolved: Resolved, name: str) -> tuple[str, ...]:
    """The names a normalized policy entry stands for before plugin and core groups
    expand: the target's aliases, then 2026.9's expandShippedCoreToolPolicyNames
    (``update_plan`` is ``progress_card``; ``canvas`` also means ``show_widget``)."""
    name = policy_name(resolved, name)
    return resolved.target.policy_expansions.get(name, (name,))


def pattern_match(pattern: str, name: str) -> bool:
    """OpenClaw's glob (``*`` any run, all else literal) on normalized names."""
    if pattern == "*":
        return True
    if "*" not in pattern:
        return pattern == name
    return re.fullmatch(".*".join(re.escape(p) for p in pattern.split("*")), name,
                        re.DOTALL) is not None


def expand_core_groups(resolved: Resolved, entries: Iterable[Entry]) -> list[str]:
    """Normalized names with group keys replaced by their members, deduped, blanks dropped."""
    out: list[str] = []
    for e in entries:
        name = e.name
        if not name:
            continue
        for member in resolved.groups.get(name, (name,)):
            if member not in out:
                out.append(member)
    return out


def mentioned_names(policy: LayerPolicy | None) -> set[str]:
    """Normalized allow entries: the explicit allowlist that materializes optional tools."""
    if policy is None or not policy.allow:
        return set()
    return {e.name for e in policy.allow if e.text.strip()}  # e.name: normalized, memoized


def is_owner_only(resolved: Resolved, tool: ToolDef) -> bool:
    """Removed for a non-owner: the tool's ``ownerOnly`` flag, or (2026.9) a name of the
    release's owner-only set, which OpenClaw denies by name whatever defines the tool."""
    names = resolved.target.owner_only_names
    # the deny expands plugin ids too: a plugin named like an owner-only tool loses them all
    return tool.owner_only or tool.name in names or (tool.plugin is not None
                                                     and tool.plugin in names)


def owner_removes(resolved: Resolved, sender_is_owner: bool | None) -> bool:
    """Whether owner-only tools go for this ``sender_is_owner``: 2026.3.2 keeps them only for
    an explicit True (``applyOwnerOnlyToolPolicy(tools, senderIsOwner === true)``); 2026.9.6
    removes them only for an explicit False (``senderIsOwner === false`` in
    createOpenClawCodingToolsInternal), so unknown (None) keeps them."""
    if resolved.target.owner_unknown_keeps:
        return sender_is_owner is False
    return sender_is_owner is not True


def provider_keys(provider: str, model: str | None, *, slash_prefixed: bool) -> tuple[str, ...]:
    """The byProvider keys a (normalized) provider and model look up, most specific first.
    2026.3.2: a model id with ``/`` is its own key; 2026.9.6 (resolveProviderToolPolicyEntry):
    always ``provider/model``, so ``openrouter`` + ``anthropic/claude`` is
    ``openrouter/anthropic/claude``."""
    if not model:
        return (provider,)
    full = f"{provider}/{model}" if slash_prefixed or "/" not in model else model
    return (full, provider)


def default_agent(defs: Definitions) -> str | None:
    """The agent a request without one runs as (2026.9.6 ``resolveDefaultAgentId``): the one
    entry marked ``default: true`` (``tryResolveRawLegacyDefaultAgentId``: exactly one
    marked entry, unless ``agents.ownership`` is ``explicit``), else the sole entry
    (``tryResolveSoleAgentId``), else ``main`` without a
    roster; None when several agents leave the choice open (OpenClaw throws
    AgentSelectionRequiredError). An empty roster is read as no roster."""
    if not defs.agents:
        return "main"
    # agents.ownership "explicit" turns the markers off (tryResolveRawLegacyDefaultAgentId)
    marked = [a for a in defs.agents if a.default and defs.agents_ownership != "explicit"]
    if len(marked) == 1:
        return marked[0].id
    if len(defs.agents) == 1:
        return defs.agents[0].id
    return None


def agent_ids(defs: Definitions) -> tuple[str, ...]:
    """``listAgentIds``: the roster's normalized ids, first occurrence order."""
    return tuple(dict.fromkeys(a.id for a in defs.agents)) or ("main",)


def select_agent(sessions: SessionKeyGrammar, defs: Definitions, agent_id: str | None,
                 session_key: str | None) -> str:
    """The request's agent under 2026.9.6 (``resolveEffectiveToolPolicy`` ->
    ``resolveSessionAgentIds`` -> ``resolveSelectedSessionAgentId``): :func:`choose_agent`
    with the definitions' :func:`default_agent`, reading session keys by ``sessions`` (the
    target's grammar)."""
    return choose_agent(sessions, default_agent(defs), agent_ids(defs), agent_id, session_key)


def choose_agent(sessions: SessionKeyGrammar, default: str | None, ids: tuple[str, ...],
                 agent_id: str | None, session_key: str | None) -> str:
    """The session key's agent, else the explicit one, else ``default``. Raises
    AgentSelectionRequiredError where OpenClaw refuses: an ``agent:`` key that does not
    parse (``classifySessionKeyShape`` "malformed_agent", a plain Error there), an explicit
    agent other than the session key's, or no agent with several to choose from (``default``
    None). Inputs are trimmed, blank ones absent (``Context``); ``ids`` name the roster in
    the error."""
    explicit = normalize_agent_id(agent_id) if agent_id is not None else None
    shape, raw = sessions.agent_of(session_key)
    if shape == "malformed_agent":
        raise AgentSelectionRequiredError(
            f"session key {session_key!r} starts with agent: but names no agent "
            "(OpenClaw: malformed agent session key)",
            code="MALFORMED_AGENT_SESSION_KEY", agent_ids=ids)
    keyed = normalize_agent_id(raw.lower()) if raw is not None else None
    if keyed is not None and explicit is not None and keyed != explicit:
        raise AgentSelectionRequiredError(
            f"the session key belongs to agent {keyed!r}, not {explicit!r}", agent_ids=ids)
    if keyed is None and default is None and sessions.subagent_of(session_key)[0]:
        # resolveStoredSubagentCapabilities reads the depth of a subagent key without an agent
        # (`subagent:x`) through resolveSessionAgentId without the request's agent id: refused
        # whatever agent_id says when no default agent can be chosen
        raise AgentSelectionRequiredError(
            f"session key {session_key!r} is a subagent key without an agent, and no default "
            "agent can be chosen (OpenClaw ignores agent_id there)", agent_ids=ids)
    chosen = keyed or explicit or default
    if chosen is None:
        raise AgentSelectionRequiredError(
            "several agents are declared, none is marked default: true, and the request "
            "names none", agent_ids=ids)
    return chosen
