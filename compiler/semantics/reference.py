"""The reference interpreter: OpenClaw's per-request, layer-by-layer evaluation, kept plain.

It is the oracle the compiled tables are tested against, the baseline the benchmarks compare
with, and the engine behind ``toolc explain`` (it records which rule decided every tool).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..diagnostics import BUILTIN
from ..pipeline.analyze import PLUGINS_GROUP, Resolved
from ..pipeline.model import (
    AgentDef,
    Entry,
    EntryList,
    Policy,
    ProviderPolicy,
    ToolDef,
    ToolsConfig,
)
from ..pipeline.policy import (
    admission_names,
    apply_patch_config,
    apply_patch_model_ok,
    is_leaf,
    is_owner_only,
    lean_patterns,
    local_model_lean,
    mentioned_names,
    owner_removes,
    pattern_match,
    pick_policy,
    policy_name,
    policy_names,
    profile_policy,
    provider_keys,
    sandbox_modes,
    sandbox_policy,
    select_agent,
    subagent_policy,
)
from ..rules.context import (
    Context,
    SessionInfo,
    delivery_channel,
    group_context,
    ignored_group,
    is_cron_session,
    parse_session_key,
    trusted_group,
)
from ..rules.names import (
    normalize_agent_id,
    normalize_channel,
    normalize_key,
    normalize_tool_name,
)
from ..rules.routing import Route, Routing, message, routing
from ..rules.routing import route as route_message
from ..rules.sandbox import derive_sandboxed, session_agent
from ..runtime._errors import AgentSelectionRequiredError, UntrustedGroupError
from .group_layer import GroupLayer, sender_match
from .trace import (
    Admission,
    Decision,
    GroupMatch,
    ListKind,
    Note,
    PolicyList,
    Resolution,
    StepTrace,
    _entry_list,
    _Step,
    block_lists,
    key_text,
)

__all__ = ["Admission", "Decision", "GroupMatch", "Note", "PolicyList", "ReferenceInterpreter",
           "Resolution", "StepTrace", "block_lists", "key_text", "sender_match"]


# what a message carries beside its routing: the sender, the owner flag, the model, the sandbox
_MESSAGE_SENDER_KEYS = frozenset({"sender_id", "sender_e164", "sender_username", "sender_name",
                                  "sender_is_owner", "model_provider", "model_id", "sandboxed"})


@functools.cache
def _compile(pattern: str) -> re.Pattern[str]:
    # \A...\Z, not ^...$: `$` would also match before a final newline
    return re.compile(r"\A" + ".*".join(re.escape(p) for p in pattern.split("*")) + r"\Z",
                      re.DOTALL)


class ReferenceInterpreter(GroupLayer):
    """Evaluates one request at a time against the resolved definitions."""

    def __init__(self, resolved: Resolved, *, trace: bool = False) -> None:
        """``trace``: record in every step which lists it reads and why (``toolc explain``)."""
        self.r = resolved
        self.trace = trace
        self.agents = {a.id: a for a in reversed(resolved.defs.agents)}
        self.channels = {c.name: c for c in resolved.defs.channels}
        self.sandbox_modes = sandbox_modes(resolved.defs)
        self._routing: Routing | None = None

    # -- message -> route -> request (rules.routing) -------------------------------------------
    @property
    def routing(self) -> Routing:
        """The config the release's loader hands ``resolveAgentRoute`` (read on first use)."""
        if self._routing is None:
            defs = self.r.defs
            self._routing = routing(
                bindings=defs.bindings, agents=defs.agents, ownership=defs.agents_ownership,
                channels=(*(c.name for c in defs.channels), *defs.streamed_channels),
                session=defs.session, target=self.r.target)
        return self._routing

    def route(self, channel: str, **routing_keywords: Any) -> Route:
        """The agent and session key the target gives a message (``toolc_runtime.route``'s
        keywords: account_id, peer, parent_peer, guild_id, team_id, member_role_ids,
        default_agent_id, dm_scope, group_scope); ``.describe()`` says which binding decided,
        and where it is written. AgentSelectionRequiredError as the runtime's."""
        return route_message(self.routing, message(self.routing, channel, **routing_keywords))

    def resolve_message(self, channel: str, *, account_id: str | None = None,
                        peer: tuple[str, str] | None = None,
                        parent_peer: tuple[str, str] | None = None,
                        guild_id: str | None = None, team_id: str | None = None,
                        member_role_ids: Sequence[str] = (),
                        default_agent_id: str | None = None, dm_scope: str | None = None,
                        group_scope: str | None = None,
                        **sender: Any) -> tuple[Route, Resolution]:
        """The route of a message and the tools of the run it starts
        (``toolc_runtime.resolve_message``): the route's agent, session key and account, the
        channel as the message provider, the chat as the group and the guild or team as its
        space (a DM has none), and ``sender`` (sender_id, sender_e164, sender_username,
        sender_name, sender_is_owner, model_provider, model_id, sandboxed). The group applies
        as the target applies it: under 2026.9 only where the session key names it, so the
        caller's group id is never refused here (OpenClaw's inbound run passes it too)."""
        unknown = set(sender) - _MESSAGE_SENDER_KEYS
        if unknown:
            raise TypeError(f"unknown message keyword(s): {', '.join(sorted(unknown))}")
        routed = self.route(channel, account_id=account_id, peer=peer, parent_peer=parent_peer,
                            guild_id=guild_id, team_id=team_id, member_role_ids=member_role_ids,
                            default_agent_id=default_agent_id, dm_scope=dm_scope,
                            group_scope=group_scope)
        chat = message(self.routing, channel, peer=peer).peer
        group = chat[1] if chat is not None and chat[0] != "direct" else None
        space = guild_id or team_id
        ctx = Context.of(agent_id=routed.agent_id, session_key=routed.session_key,
                         message_provider=channel, account_id=routed.account_id,
                         group_id=group, group_space=space if group is not None else None,
                         **sender)
        return routed, self.run(ctx)

    # -- request -> layers -------------------------------------------------------------------
    def resolve(self, *, strict: bool = True, **context: Any) -> Resolution:
        """The tools of one request; under 2026.9 a group the session key does not name is
        refused (UntrustedGroupError) unless ``strict`` is False, as the runtime's
        ``resolve``."""
        ctx = Context.of(**context)
        if strict is not False:
            self.refuse_ignored_group(ctx)
        return self.run(ctx)

    def refuse_ignored_group(self, ctx: Context) -> None:
        """UntrustedGroupError for a group the target would ignore (2026.9: one the session
        key or spawned_by does not name); nothing under a target that trusts the caller."""
        if not self.r.target.group_id_needs_session:
            return
        found = ignored_group(ctx.session_key, ctx.spawned_by, ctx.group_id, ctx.group_space,
                              ctx.group_channel)
        if found is not None:
            raise UntrustedGroupError(*found, session_key=ctx.session_key)

    def run(self, ctx: Context) -> Resolution:
        session = parse_session_key(ctx.session_key)
        agent = self.agent_for(ctx, session)
        provider = normalize_key(ctx.model_provider) or None
        model = normalize_key(ctx.model_id) or None
        if self.r.target.group_id_needs_session:
            # 2026.9.6: the session key's channel and groups first; a caller's group id only
            # when the session key or spawned_by names it (else group_space and group_channel
            # are dropped with it)
            trusted = trusted_group(ctx.session_key, ctx.spawned_by, ctx.group_id,
                                    ctx.message_provider)
            channel = self.request_channel(trusted.channel)
            group_ids = trusted.group_ids
            gctx = (replace(ctx, group_space=None, group_channel=None) if trusted.dropped
                    else ctx)
            dropped = ctx.group_id if trusted.dropped else None
        else:
            spawned_channel, spawned_group = group_context(ctx.spawned_by)
            # The group layer's channel and group: explicit, else the session key's, else
            # those of the session that spawned this one (a subagent stays in its parent's
            # group).
            channel = normalize_channel(ctx.message_provider if ctx.message_provider
                                        is not None else session.channel or spawned_channel)
            group_id = (ctx.group_id if ctx.group_id is not None
                        else session.group or spawned_group)
            group_ids = () if group_id is None else (group_id,)
            gctx, dropped = ctx, None
        steps = self.steps(gctx, agent, provider, model, channel, group_ids, session,
                           dropped=dropped)
        explicit: set[str] = set()
        for step in steps:
            explicit |= mentioned_names(step.policy)
        admission = self.admission(steps) if self.r.target.optional_admitted_by_wildcard else None
        # Availability and the message-provider filter see the explicit message channel only.
        inventory = self.inventory(agent, provider, model, normalize_key(ctx.message_provider)
                                   or None, explicit, admission)
        if local_model_lean(self.r, agent):
            self.lean(inventory, agent, steps)
        if self.r.target.cron_session_drop and is_cron_session(ctx.session_key):
            for name in self.r.target.cron_session_drop:
                if name in inventory and inventory[name].kept:
                    inventory[name] = Decision(
                        kept=False, reason="a cron session: OpenClaw never gives it this tool "
                        "(filterRequesterYieldTools)", entry=inventory[name].entry)
        if self.r.target.host_only_tools and self.sandboxed(ctx):
            for name in self.r.target.host_only_tools:
                if name in inventory and inventory[name].kept:
                    inventory[name] = Decision(
                        kept=False, reason="sandboxed: OpenClaw builds it only outside the "
                        "sandbox (createOpenClawTools)", entry=inventory[name].entry)
        if self.r.target.caller_only_tools and not (
                (ctx.sender_id or "").strip() and self.request_channel(ctx.message_provider)
                in self.r.target.gateway_channels):
            for name in self.r.target.caller_only_tools:
                if name in inventory and inventory[name].kept:
                    inventory[name] = Decision(
                        kept=False, reason="no channel caller (a gateway message channel and "
                        "a sender id): OpenClaw builds it only for one (createOpenClawTools)",
                        entry=inventory[name].entry)
        present = [t for t in self.r.tools if inventory[t.name].kept]
        if owner_removes(self.r, ctx.sender_is_owner):
            why = ("owner-only; the sender is known not to be the owner (sender_is_owner=False)"
                   if self.r.target.owner_unknown_keeps else "owner-only; sender is not the owner")
            owner_only = [t for t in present if is_owner_only(self.r, t)]
            for t in owner_only:
                inventory[t.name] = Decision(kept=False, reason=why,
                                             entry=Entry(text=t.name, pos=t.pos))
            present = [t for t in present if t not in owner_only]
        return self.pipeline(present, steps, inventory)

    def sandboxed(self, ctx: Context) -> bool:
        """``sandboxed=True``, or the sandbox mode sandboxes the session (``rules.sandbox``):
        ``sandboxed=False`` never lifts a sandbox the definitions impose. 2026.9: a key without
        an agent is the selected agent's (resolveSandboxRuntimeStatus -> resolveSessionAgentId);
        a request OpenClaw refuses is refused before this matters."""
        selected = None
        if self.r.target.agent_selection:
            try:
                selected = select_agent(self.r.target.sessions, self.r.defs, ctx.agent_id,
                                       ctx.session_key)
            except AgentSelectionRequiredError:
                selected = None
        return ctx.sandboxed is True or derive_sandboxed(self.sandbox_modes, ctx.session_key,
                                                         selected)

    def not_sandboxed(self, ctx: Context) -> str:
        modes = self.sandbox_modes
        if ctx.session_key is None or modes.inert:
            return "not sandboxed"
        agent = session_agent(ctx.session_key) or modes.default_agent
        mode = modes.agents.get(agent, modes.default_mode)
        if mode == "non-main":
            return f"not sandboxed: the main session of agent {agent} (sandbox mode non-main)"
        return f"not sandboxed: agent {agent} has sandbox mode {mode}"

    def agent_for(self, ctx: Context, session: SessionInfo) -> AgentDef | None:
        """The explicit agent id, else the session key's (``main`` for a key without one);
        neither, or an undeclared agent: no agent layer (OpenClaw 2026.3.2). With
        ``agent_selection`` (2026.9.6) :func:`select_agent` chooses, or raises
        AgentSelectionRequiredError; an undeclared chosen agent still has no agent layer."""
        if self.r.target.agent_selection:
            return self.agents.get(select_agent(self.r.target.sessions, self.r.defs,
                                                ctx.agent_id, ctx.session_key))
        if ctx.agent_id is not None:
            return self.agents.get(normalize_agent_id(ctx.agent_id))
        if ctx.session_key is not None:
            return self.agents.get(normalize_agent_id(session.agent))
        return None

    def steps(self, ctx: Context, agent: AgentDef | None, provider: str | None,
              model: str | None, channel: str | None, group_ids: tuple[str, ...],
              session: Any, *, dropped: str | None = None) -> list[_Step]:
        g = self.r.defs.tools_config
        a = agent.tools if agent else None
        aid = agent.id if agent else None
        at = f"agents.{key_text(aid)}.tools" if aid else ""
        slash = self.r.target.slash_model_is_prefixed
        gp = _provider_entry(g.by_provider, provider, model, slash_prefixed=slash)
        ap = (_provider_entry(a.by_provider, provider, model, slash_prefixed=slash) if a
              else None)
        gpw = f"tools.byProvider.{key_text(gp.key)}" if gp else ""
        apw = f"{at}.byProvider.{key_text(ap.key)}" if ap else ""
        no_agent = ("no declared agent: only the global policy applies" if agent is None
                    else f"agents.{key_text(agent.id)} has no tools")
        asked = (f"provider {provider_keys(provider, model, slash_prefixed=slash)[0]}"
                 if provider else "provider None")
        no_gp = (f"tools.byProvider has no entry for {asked}" if provider
                 else "no provider in the request")
        no_ap = (no_agent if a is None else f"{at}.byProvider has no entry for {asked}"
                 if provider else "no provider in the request")
        steps = [
            self.profile_step(
                "profile", "tools.profile",
                (a.profile, f"{at}.profile") if a and a.profile else (g.profile, "tools.profile"),
                (a.policy.also_allow, f"{at}.alsoAllow") if a and a.policy.also_allow is not None
                else (g.policy.also_allow, "tools.alsoAllow"), "no tools.profile"),
            self.profile_step(
                "provider profile", "tools.byProvider.profile",
                (ap.profile, f"{apw}.profile") if ap and ap.profile
                else (gp.profile, f"{gpw}.profile") if gp else (None, ""),
                (ap.policy.also_allow, f"{apw}.alsoAllow")
                if ap and ap.policy.also_allow is not None
                else (gp.policy.also_allow, f"{gpw}.alsoAllow") if gp else (None, ""),
                "no byProvider profile" if gp or ap else no_gp),
            self.block_step("global", "tools.allow", "tools", g.policy, "tools"),
            self.block_step("global provider", "tools.byProvider.allow", gpw,
                            gp.policy if gp else None, no_gp),
            self.block_step("agent", f"agents.{aid}.tools.allow" if aid else "agent tools.allow",
                            at, a.policy if a else None, no_agent),
            self.block_step("agent provider", f"agents.{aid}.tools.byProvider.allow" if aid
                            else "agent tools.byProvider.allow", apw, ap.policy if ap else None,
                            no_ap),
            self.group_step(ctx, channel, group_ids, senders=not self.owner_on_webchat(ctx),
                            dropped=dropped),
            *([self.sender_step(ctx, agent)] if self.r.target.global_sender_layer else []),
            self.sandbox_step(a, at, ctx) if self.sandboxed(ctx) else _Step(
                label="sandbox tools.allow", layer="sandbox", policy=None, strips=False,
                skip=self.not_sandboxed(ctx)),
        ]
        key_sub, key_depth = self.r.target.sessions.subagent_of(ctx.session_key)
        is_sub = key_sub or (ctx.spawn_depth or 0) >= 1
        # the stored depth, else the key's (2026.3.2 getSubagentDepth counts `:subagent:`, so
        # a bare `subagent:x` key has depth 0; 2026.9.6 counts `(^|:)subagent:`, 0 is the
        # `main` role): never a leaf at 0
        depth = ctx.spawn_depth if ctx.spawn_depth is not None else key_depth
        steps.append(self.subagent_step(depth) if is_sub else _Step(
            label="subagent tools.allow", layer="subagent", policy=None, strips=False,
            skip="not a subagent session"))
        return steps

    # Each step's lists and notes name where its policy comes from, for `toolc explain`; they
    # are built only when tracing, so that the oracle and benchmark baseline stays as fast.
    def block_step(self, layer: str, label: str, where: str, block: Policy | None,
                   none: str) -> _Step:
        """A step reading one ``{allow, alsoAllow, deny}`` block at ``where`` (``none``: why
        there is no block)."""
        return _Step(label=label, layer=layer, policy=pick_policy(block), strips=True,
                     skip=none if block is None
                     else f"{where} has no allow, alsoAllow or deny list",
                     lists=block_lists(where, block) if self.trace else ())

    def profile_step(self, layer: str, label: str, ref: tuple[Entry | None, str],
                     also: tuple[EntryList | None, str], none: str) -> _Step:
        """The profile or provider-profile step: the profile named at ``ref`` with the
        alsoAllow list chosen for it."""
        entry, where = ref
        if entry is None:
            return _Step(label=label, layer=layer, policy=None, strips=True, skip=none)
        profile = self.r.defs.profiles.get(entry.text)
        policy = profile_policy(profile, also[0],
                                full_allows_all=self.r.target.full_profile_allows_all)
        step = _Step(label=f"{label} ({entry.text})", layer=f"{layer} {entry.text}",
                     policy=policy, strips=True,
                     skip=f'profile "{entry.text}" restricts nothing')
        if not self.trace or profile is None:
            return step
        pw = f"profiles.{key_text(entry.text)}"
        if policy is not None and profile.allow is None and profile.deny is None and (
                policy.allow):
            # 2026.9's `full` profile: OpenClaw's own allow ["*"]
            return replace(step, lists=(
                PolicyList(label=f'{pw} (OpenClaw\'s allow ["*"] for "full")', kind="allow",
                           pos=profile.pos, entries=policy.allow[:1]),
                *_entry_list(also[1], "alsoAllow", also[0])),
                notes=(Note(text=f'profile "{entry.text}" from {where}', pos=entry.pos),))
        return replace(step, lists=(*_entry_list(f"{pw}.allow", "allow", profile.allow),
                                    *_entry_list(also[1], "alsoAllow", also[0]),
                                    *_entry_list(f"{pw}.deny", "deny", profile.deny)),
                       notes=(Note(text=f'profile "{entry.text}" from {where}', pos=entry.pos),))

    def owner_on_webchat(self, ctx: Context) -> bool:
        """2026.9.6 ``isOwnerInternalSession``: the owner on webchat gets no sender policy
        (``senderPolicyMode: "never"``: no tools.toolsBySender, no group toolsBySender)."""
        return (self.r.target.global_sender_layer and ctx.sender_is_owner is True
                and self.request_channel(ctx.message_provider) == "webchat")

    def request_channel(self, raw: str | None) -> str | None:
        """A request's channel as the target normalizes it (``normalizeMessageChannel``)."""
        channel = normalize_channel(raw)
        return self.r.target.request_channel_aliases.get(channel or "", channel)

    def sender_step(self, ctx: Context, agent: AgentDef | None) -> _Step:
        """2026.9.6 ``resolveSenderToolPolicy``: the agent's ``tools.toolsBySender`` rule for
        this sender, else the global one (``tools.toolsBySender``), as a step after the group
        step (``buildDefaultToolPolicyPipelineSteps``). The sender's channel for
        ``channel:<channel>:<id>`` keys: the session key's delivery route, else the message
        provider."""
        label = "tools.toolsBySender"
        if self.owner_on_webchat(ctx):
            return _Step(label=label, layer="sender", policy=None, strips=True,
                         skip="the owner on webchat: sender policies do not apply")
        channel = (self.request_channel(delivery_channel(ctx.session_key)
                                        or ctx.message_provider)
                   if self.r.target.channel_sender_keys else None)
        a = agent.tools if agent else None
        scopes = ((a.by_sender if a else (), f"agents.{key_text(agent.id)}.tools.toolsBySender"
                   if agent else ""), (self.r.defs.tools_config.by_sender, "tools.toolsBySender"))
        for rules, where in scopes:
            rule = sender_match(rules, ctx, channel=channel)
            if rule is None:
                continue
            rw = f"{where}.{key_text(rule.key)}"
            who = "any sender" if rule.kind == "*" else "this sender"
            return _Step(label=label, layer="sender", policy=pick_policy(rule.policy),
                         strips=True, skip=f"{rw} has no allow, alsoAllow or deny list",
                         lists=block_lists(rw, rule.policy) if self.trace else (),
                         notes=(Note(text=f"{rw} matches {who}", pos=rule.pos),)
                         if self.trace else ())
        return _Step(label=label, layer="sender", policy=None, strips=True,
                     skip="no tools.toolsBySender rule (agent or global) matches this sender")

    def group_step(self, ctx: Context, channel: str | None, group_ids: tuple[str, ...],
                   *, senders: bool = True, dropped: str | None = None) -> _Step:
        """The group layer; ``dropped``: a caller's group id the target refused (2026.9)."""
        match = self.group_match(ctx, channel, group_ids[0] if group_ids else None,
                                 group_ids[1:], senders=senders)
        if dropped is not None and not group_ids:
            match = GroupMatch(block=None, skip=f"group {dropped.strip()} is ignored: neither "
                               "the session key nor spawned_by names it (OpenClaw "
                               f"{self.r.target.key} trusts only those)")
        return _Step(label="group tools.allow", layer="group", strips=True,
                     policy=pick_policy(match.block),
                     skip=match.skip or f"{match.where} has no allow, alsoAllow or deny list",
                     lists=block_lists(match.where, match.block) if self.trace else (),
                     notes=match.notes() if self.trace else ())

    def sandbox_step(self, a: ToolsConfig | None, at: str, ctx: Context) -> _Step:
        """Section 8: allow and deny each from the agent, else the global config, else the
        built-in default; ``image`` joins a non-empty allow list."""
        policy = sandbox_policy(self.r, a)
        step = _Step(label="sandbox tools.allow", layer="sandbox", strips=False, policy=policy)
        if not self.trace:
            return step
        if ctx.sandboxed is not True and ctx.session_key is not None:
            agent = session_agent(ctx.session_key) or self.sandbox_modes.default_agent
            mode = self.sandbox_modes.agents.get(agent, self.sandbox_modes.default_mode)
            why = "every session" if mode == "all" else "not its main session"
            step = replace(step, notes=(Note(text=f"sandboxed by agent {agent}'s sandbox mode "
                                                  f"{mode} ({why})"),))
        g = self.r.defs.tools_config
        lists: list[PolicyList] = []
        sides: tuple[tuple[ListKind, EntryList | None, EntryList | None,
                           tuple[Entry, ...] | None], ...] = (
            ("allow", a.sandbox_allow if a else None, g.sandbox_allow, policy.allow),
            ("deny", a.sandbox_deny if a else None, g.sandbox_deny, policy.deny))
        for kind, ours, theirs, used in sides:
            if ours is not None:
                lists += _entry_list(f"{at}.sandbox.tools.{kind}", kind, ours)
            elif theirs is not None:
                lists += _entry_list(f"tools.sandbox.tools.{kind}", kind, theirs)
            builtin = tuple(e for e in used or () if e.pos == BUILTIN)
            if builtin:
                lists.append(PolicyList(
                    label="the built-in rule adding image to a sandbox allow list"
                    if ours is not None or theirs is not None
                    else f"the built-in sandbox {kind} list", kind=kind, pos=BUILTIN,
                    entries=builtin))
        return replace(step, lists=tuple(lists))

    def subagent_step(self, depth: int) -> _Step:
        """Section 9: the built-in deny lists (leaf or not), with the configured lists."""
        leaf = is_leaf(self.r, depth)
        policy = subagent_policy(self.r, leaf=leaf)
        step = _Step(label="subagent tools.allow", layer="subagent", strips=False,
                     policy=policy)
        if not self.trace:
            return step
        builtin = tuple(e for e in policy.deny or () if e.pos == BUILTIN)
        kind = "leaf subagent" if leaf else "subagent"
        return replace(step, lists=(
            *block_lists("tools.subagents.tools", self.r.defs.tools_config.subagents),
            PolicyList(label=f"the built-in {kind} deny list", kind="deny", pos=BUILTIN,
                       entries=builtin)),
            notes=(Note(text=f"a {kind} session (depth {depth}; agents.defaults.subagents."
                        f"maxSpawnDepth is {max(1, self.r.max_spawn_depth)})"),))

    def lean(self, inventory: dict[str, Decision], agent: AgentDef | None,
             steps: Sequence[_Step]) -> None:
        """2026.9 filterLocalModelLeanTools: with ``experimental.localModelLean`` on, the
        release's lean list is dropped from the inventory, except tools an allow list outside
        the profile steps names (by name, group or glob)."""
        keep = lean_patterns(self.r, [s.policy for s in steps if not s.layer.startswith(
            ("profile", "provider profile"))])
        where = (f"agents.{key_text(agent.id)}.experimental" if agent is not None
                 and agent.local_model_lean is not None else "agents.defaults.experimental")
        for t in self.r.tools:
            name = policy_name(self.r, normalize_tool_name(t.name))
            if (name in self.r.target.local_model_lean_tools and inventory[t.name].kept
                    and not any(pattern_match(p, name) for p in keep)):
                inventory[t.name] = Decision(
                    kept=False, reason=f"{where}.localModelLean drops it: no allow list outside "
                    "the profiles names it", entry=Entry(text=t.name, pos=t.pos))

    def admission(self, steps: Sequence[_Step]) -> Admission:
        """2026.9's load-time plugin allow and deny lists (collectExplicitAllowlist and
        collectExplicitDenylist over every step's policy; createPluginToolAllowlist)."""
        entries: set[str] = set()
        defaults = False
        deny: list[tuple[str, Entry]] = []
        for step in steps:
            policy = step.policy
            if policy is None:
                continue
            for e in policy.allow or ():
                for name in admission_names(self.r, (e,), expands=policy.expands_groups):
                    if name and not (name == "*" and policy.implicit_star):
                        entries.add(name)
            defaults = defaults or policy.implicit_star
            deny += [(name, e) for e in policy.deny or () if e.name
                     for name in admission_names(self.r, (e,), expands=policy.expands_groups)]
        return Admission(entries=frozenset(entries), defaults=defaults or not entries,
                         deny=tuple(deny))

    def inventory(self, agent: AgentDef | None, provider: str | None, model: str | None,
                  channel: str | None, explicit: set[str], admission: Admission | None = None
                  ) -> dict[str, Decision]:
        applypatch = apply_patch_config(self.r, agent.tools if agent else None)
        where = (f"agents.{key_text(agent.id)}.tools" if agent and agent.tools
                 and agent.tools.apply_patch_set else "tools")
        return {t.name: self.present(t, provider, model, channel, explicit, applypatch, where,
                                     admission)
                for t in self.r.tools}

    def present(self, t: ToolDef, provider: str | None, model: str | None,
                channel: str | None, explicit: set[str],
                applypatch: tuple[bool, tuple[str, ...] | None], where: str = "tools",
                admission: Admission | None = None) -> Decision:
        origin = Entry(text=t.name, pos=t.pos)
        target = self.r.target
        if channel is not None and channel in target.message_provider_allow and (
                t.name not in target.message_provider_allow[channel]):
            return Decision(kept=False, reason=f"not available on channel {channel} (OpenClaw "
                            f"lets only {', '.join(target.message_provider_allow[channel])} "
                            "through there)", entry=origin)
        if channel is not None and t.name in target.message_provider_deny.get(channel, ()):
            return Decision(kept=False, reason=f"not available on channel {channel}",
                            entry=origin)
        av = t.availability
        if av and av.providers is not None and provider not in av.providers:
            return Decision(kept=False, reason=f"not available for provider {provider}",
                            entry=origin)
        if av and av.models is not None and not _model_in(av.models, provider, model):
            return Decision(kept=False, reason=f"not available for model {model}", entry=origin)
        if av and av.channels is not None and channel not in av.channels:
            return Decision(kept=False, reason=f"not available on channel {channel}",
                            entry=origin)
        if av and av.exclude_channels is not None and channel in av.exclude_channels:
            return Decision(kept=False, reason=f"not available on channel {channel}",
                            entry=origin)
        if t.name == "apply_patch":
            enabled, models = applypatch
            if not enabled:
                return Decision(kept=False, reason=f"{where}.exec.applyPatch.enabled is "
                                + ("false" if target.apply_patch == "default-on"
                                   else "not true"), entry=origin)
            if not apply_patch_model_ok(models, provider, model):
                return Decision(kept=False, reason=f"model {model} is not in {where}.exec."
                                "applyPatch.allowModels", entry=origin)
        if admission is not None and t.plugin:
            return admission.decide(t, origin)
        if t.optional and not ({t.name, PLUGINS_GROUP, t.plugin} & explicit):
            return Decision(kept=False, reason="optional plugin tool not named by any allow "
                            "list", entry=origin)
        return Decision(kept=True, reason="present", entry=origin)

    # -- the pipeline ------------------------------------------------------------------------
    def pipeline(self, present: list[ToolDef], steps: Sequence[_Step],
                 inventory: dict[str, Decision]) -> Resolution:
        core = {t.name for t in present if not t.plugin}
        by_plugin: dict[str, list[str]] = {}
        for t in present:
            if t.plugin:
                by_plugin.setdefault(t.plugin, []).append(t.name)
        plugin_tools = [n for names in by_plugin.values() for n in names]
        names = [t.name for t in present]
        traces: list[StepTrace] = []
        warnings: list[str] = []
        for step in steps:
            trace = StepTrace(label=step.label, active=step.policy is not None,
                              layer=step.layer, lists=step.lists, notes=step.notes,
                              skip=step.skip)
            traces.append(trace)
            if step.policy is None:
                continue
            allow = step.policy.allow
            if step.strips and allow:
                kept_allow, warning = self.strip(step, allow, core, by_plugin, plugin_tools)
                if not self.r.target.plugin_only_allowlist_restricts:
                    allow = kept_allow
                    trace.stripped = allow is None
                if warning:
                    warnings.append(warning)
            allow_p = self.patterns(self.expand_plugins(allow or (), by_plugin, plugin_tools))
            deny_p = self.patterns(self.expand_plugins(step.policy.deny or (), by_plugin,
                                                       plugin_tools))
            kept = []
            for name in names:
                decision = _decide(name, allow_p, deny_p, self.r.target.apply_patch_implied_by)
                trace.decisions[name] = decision
                if decision.kept:
                    kept.append(name)
            names = kept
        return Resolution(names=tuple(names), inventory=inventory, steps=tuple(traces),
                          warnings=tuple(warnings))

    def strip(self, step: _Step, allow: tuple[Entry, ...], core: set[str],
              by_plugin: Mapping[str, list[str]], plugin_tools: list[str]
              ) -> tuple[tuple[Entry, ...] | None, str | None]:
        """Section 6.2 (CLASSIC, D3): an allowlist with no core entry is ignored."""
        has_core = False
        unknown: list[str] = []
        for e in allow:
            name = e.name
            if not name:
                continue
            if name == "*":
                has_core = True
                continue
            is_plugin = name == PLUGINS_GROUP or name in by_plugin or name in plugin_tools
            is_core = any(m in core for m in self.r.groups.get(name, (name,)))
            has_core = has_core or is_core
            if not is_core and not is_plugin and name not in unknown:
                unknown.append(name)
        if has_core:
            return allow, (f"tools: {step.label} allowlist contains unknown entries "
                           f"({', '.join(unknown)})." if unknown else None)
        if self.r.target.plugin_only_allowlist_restricts:
            # 2026.9 applyToolPolicyPipeline: the list restricts as written; only the
            # unknown entries are reported (analyzeAllowlistByToolType)
            return allow, (f"tools: {step.label} allowlist contains unknown entries "
                           f"({', '.join(unknown)}). These entries won't match any tool "
                           "unless the plugin is enabled." if unknown else None)
        detail = f" Unknown entries: {', '.join(unknown)}." if unknown else ""
        return None, (f"tools: {step.label} allowlist has no core tool entries; ignoring it so "
                      f"core tools remain available.{detail} Use alsoAllow for additive plugin "
                      "tool enablement.")

    def expand_plugins(self, entries: Sequence[Entry], by_plugin: Mapping[str, list[str]],
                       plugin_tools: list[str]) -> list[tuple[str, Entry]]:
        out: list[tuple[str, Entry]] = []
        for e in entries:
            for name in policy_names(self.r, e.name):
                if name == PLUGINS_GROUP and plugin_tools:
                    out.extend((n, e) for n in plugin_tools)
                elif name in by_plugin:
                    out.extend((n, e) for n in by_plugin[name])
                else:
                    out.append((name, e))
        return out

    def patterns(self, items: list[tuple[str, Entry]]) -> list[tuple[re.Pattern[str], Entry]]:
        out = []
        for name, origin in items:
            for member in self.r.groups.get(name, (name,)):
                m = policy_name(self.r, normalize_tool_name(member))
                if m:
                    out.append((_compile(m), origin))
        return out


def _decide(name: str, allow: list[tuple[re.Pattern[str], Entry]],
            deny: list[tuple[re.Pattern[str], Entry]], implied_by: str = "exec") -> Decision:
    for pattern, origin in deny:
        if pattern.match(name):
            return Decision(kept=False, reason=f'denied by "{origin.text}"', entry=origin,
                            rule="deny")
    if not allow:
        return Decision(kept=True, reason="no allow list", rule="open")
    for pattern, origin in allow:
        if pattern.match(name):
            return Decision(kept=True, reason=f'allowed by "{origin.text}"', entry=origin,
                            rule="allow")
    if name == "apply_patch":
        # createToolPolicyMatcher: an allow list matching `write` (2026.9; `exec` in 2026.3)
        # also allows apply_patch
        for pattern, origin in allow:
            if pattern.match(implied_by):
                return Decision(kept=True, reason=f'allowed because "{origin.text}" allows '
                                f"{implied_by}", entry=origin, rule="exec")
    return Decision(kept=False, reason="not in the allow list", rule="closed")


def _provider_entry(entries: Sequence[ProviderPolicy], provider: str | None,
                    model: str | None, *, slash_prefixed: bool = False
                    ) -> ProviderPolicy | None:
    """Section 5.3: the full model key shadows the provider key (``provider_keys``: with
    ``slash_prefixed``, 2026.9.6, a model id with ``/`` is still prefixed)."""
    if provider is None:
        return None
    by_key = {e.key: e for e in entries}
    for key in provider_keys(provider, model, slash_prefixed=slash_prefixed):
        if key in by_key:
            return by_key[key]
    return None


def _model_in(models: frozenset[str], provider: str | None, model: str | None) -> bool:
    if not model:
        return False
    return model in models or ("/" not in model and f"{provider}/{model}" in models)
