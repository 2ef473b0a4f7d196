"""The reference interpreter: OpenClaw's per-request, layer-by-layer evaluation, kept plain.

It is the oracle the compiled tables are tested against, the baseline the benchmarks compare
with, and the engine behind ``toolc explain`` (it records which rule decided every tool).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .analyze import PLUGINS_GROUP, Resolved
from .context import Context, SessionInfo, group_context, parse_session_key
from .diagnostics import BUILTIN
from .model import (
    AccountDef,
    AgentDef,
    ChannelDef,
    Entry,
    GroupConfig,
    ProviderPolicy,
    SenderRule,
    ToolDef,
)
from .names import (
    CASE_INSENSITIVE_GROUP_CHANNELS,
    NO_E164_CHANNELS,
    group_candidates,
    model_key,
    normalize_account_id,
    normalize_agent_id,
    normalize_channel,
    normalize_key,
    normalize_tool_name,
)
from .policy import (
    LayerPolicy,
    apply_patch_config,
    apply_patch_model_ok,
    is_leaf,
    mentioned_names,
    pick_policy,
    profile_policy,
    sandbox_policy,
    subagent_policy,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    kept: bool
    reason: str
    entry: Entry | None = None

    def render(self) -> str:
        where = f" ({self.entry.pos})" if self.entry and self.entry.pos != BUILTIN else ""
        return self.reason + where


@dataclass(slots=True, kw_only=True)
class StepTrace:
    label: str
    active: bool
    stripped: bool = False
    decisions: dict[str, Decision] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    names: tuple[str, ...]
    inventory: Mapping[str, Decision]
    steps: tuple[StepTrace, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Step:
    label: str
    policy: LayerPolicy | None
    strips: bool


@functools.cache
def _compile(pattern: str) -> re.Pattern[str]:
    # \A...\Z, not ^...$: `$` would also match before a final newline
    return re.compile(r"\A" + ".*".join(re.escape(p) for p in pattern.split("*")) + r"\Z",
                      re.DOTALL)


class ReferenceInterpreter:
    """Evaluates one request at a time against the resolved definitions."""

    def __init__(self, resolved: Resolved) -> None:
        self.r = resolved
        self.agents = {a.id: a for a in reversed(resolved.defs.agents)}
        self.channels = {c.name: c for c in resolved.defs.channels}

    # -- request -> layers -------------------------------------------------------------------
    def resolve(self, **context: Any) -> Resolution:
        return self.run(Context.of(**context))

    def run(self, ctx: Context) -> Resolution:
        session = parse_session_key(ctx.session_key)
        agent = self.agent_for(ctx, session)
        provider = normalize_key(ctx.model_provider) or None
        model = normalize_key(ctx.model_id) or None
        spawned_channel, spawned_group = group_context(ctx.spawned_by)
        # The group layer's channel and group: explicit, else the session key's, else those
        # of the session that spawned this one (a subagent stays in its parent's group).
        channel = normalize_channel(ctx.message_provider if ctx.message_provider is not None
                                    else session.channel or spawned_channel)
        group_id = (ctx.group_id if ctx.group_id is not None
                    else session.group or spawned_group)
        steps = self.steps(ctx, agent, provider, model, channel, group_id, session)
        explicit: set[str] = set()
        for step in steps:
            explicit |= mentioned_names(step.policy)
        # Availability and the message-provider filter see the explicit message channel only.
        inventory = self.inventory(agent, provider, model, normalize_key(ctx.message_provider)
                                   or None, explicit)
        present = [t for t in self.r.tools if inventory[t.name].kept]
        if ctx.sender_is_owner is not True:
            for t in present:
                if t.owner_only:
                    inventory[t.name] = Decision(kept=False, reason="owner-only; sender is not "
                                                 "the owner", entry=Entry(text=t.name, pos=t.pos))
            present = [t for t in present if not t.owner_only]
        return self.pipeline(present, steps, inventory)

    def agent_for(self, ctx: Context, session: SessionInfo) -> AgentDef | None:
        """The explicit agent id, else the session key's (``main`` for a key without one);
        neither, or an undeclared agent: no agent layer (OpenClaw 2026.3.2)."""
        if ctx.agent_id is not None:
            return self.agents.get(normalize_agent_id(ctx.agent_id))
        if ctx.session_key is not None:
            return self.agents.get(normalize_agent_id(session.agent))
        return None

    def steps(self, ctx: Context, agent: AgentDef | None, provider: str | None,
              model: str | None, channel: str | None, group_id: str | None,
              session: Any) -> list[_Step]:
        g = self.r.defs.tools_config
        a = agent.tools if agent else None
        profile_ref = a.profile if a and a.profile else g.profile
        profile_also = (a.policy.also_allow if a and a.policy.also_allow is not None
                        else g.policy.also_allow)
        gp = _provider_entry(g.by_provider, provider, model)
        ap = _provider_entry(a.by_provider, provider, model) if a else None
        pp_ref = ap.profile if ap and ap.profile else gp.profile if gp else None
        pp_also = (ap.policy.also_allow if ap and ap.policy.also_allow is not None
                   else gp.policy.also_allow if gp else None)
        aid = agent.id if agent else None
        steps = [
            _Step(label=f"tools.profile ({profile_ref.text})" if profile_ref else "tools.profile",
                  policy=profile_policy(self.r.defs.profiles.get(profile_ref.text)
                                        if profile_ref else None, profile_also), strips=True),
            _Step(label=f"tools.byProvider.profile ({pp_ref.text})" if pp_ref
                  else "tools.byProvider.profile",
                  policy=profile_policy(self.r.defs.profiles.get(pp_ref.text) if pp_ref
                                        else None, pp_also), strips=True),
            _Step(label="tools.allow", policy=pick_policy(g.policy), strips=True),
            _Step(label="tools.byProvider.allow", policy=pick_policy(gp.policy if gp else None),
                  strips=True),
            _Step(label=f"agents.{aid}.tools.allow" if aid else "agent tools.allow",
                  policy=pick_policy(a.policy if a else None), strips=True),
            _Step(label=f"agents.{aid}.tools.byProvider.allow" if aid
                  else "agent tools.byProvider.allow",
                  policy=pick_policy(ap.policy if ap else None), strips=True),
            _Step(label="group tools.allow", strips=True,
                  policy=pick_policy(self.group_block(ctx, channel, group_id))),
            _Step(label="sandbox tools.allow", strips=False,
                  policy=sandbox_policy(self.r, a) if ctx.sandboxed is True else None),
        ]
        is_sub = session.is_subagent or (ctx.spawn_depth or 0) >= 1
        depth = ctx.spawn_depth if ctx.spawn_depth is not None else session.depth
        steps.append(_Step(label="subagent tools.allow", strips=False,
                           policy=subagent_policy(self.r, leaf=is_leaf(self.r, max(depth, 1)))
                           if is_sub else None))
        return steps

    def group_block(self, ctx: Context, channel: str | None, group_id: str | None) -> Any:
        """Section 7: the channel's (or account's) group map, per-channel id rules, then the
        precedence group sender rule > group tools > ``*`` sender rule > ``*`` tools."""
        if channel is None or group_id is None or channel not in self.channels:
            return None
        ch = self.channels[channel]
        groups = ch.groups
        account = _account(ch, ctx.account_id)
        if account is not None and account.groups is not None:
            groups = account.groups
        if groups is None:
            return None
        default = next((x for x in groups if x.id == "*"), None)
        for gid in group_candidates(channel, group_id):
            specific = next((x for x in groups if x.id == gid), None)
            if specific is None and channel in CASE_INSENSITIVE_GROUP_CHANNELS:
                specific = next((x for x in groups
                                 if x.id != "*" and x.id.lower() == gid.lower()), None)
            for cfg in (specific, default):
                if cfg is None:
                    continue
                rule = _sender_rule(cfg, ctx, e164=channel not in NO_E164_CHANNELS)
                if rule is not None:
                    return rule.policy
                if cfg.tools is not None:
                    return cfg.tools
        return None

    def inventory(self, agent: AgentDef | None, provider: str | None, model: str | None,
                  channel: str | None, explicit: set[str]) -> dict[str, Decision]:
        applypatch = apply_patch_config(self.r, agent.tools if agent else None)
        return {t.name: self.present(t, provider, model, channel, explicit, applypatch)
                for t in self.r.tools}

    def present(self, t: ToolDef, provider: str | None, model: str | None,
                channel: str | None, explicit: set[str],
                applypatch: tuple[bool, tuple[str, ...] | None]) -> Decision:
        origin = Entry(text=t.name, pos=t.pos)
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
                return Decision(kept=False, reason="tools.exec.applyPatch.enabled is not true")
            if not apply_patch_model_ok(models, provider, model):
                return Decision(kept=False, reason="model not in tools.exec.applyPatch."
                                "allowModels")
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
            trace = StepTrace(label=step.label, active=step.policy is not None)
            traces.append(trace)
            if step.policy is None:
                continue
            allow = step.policy.allow
            if step.strips and allow:
                allow, warning = self.strip(step, allow, core, by_plugin, plugin_tools)
                trace.stripped = allow is None
                if warning:
                    warnings.append(warning)
            allow_p = self.patterns(self.expand_plugins(allow or (), by_plugin, plugin_tools))
            deny_p = self.patterns(self.expand_plugins(step.policy.deny or (), by_plugin,
                                                       plugin_tools))
            kept = []
            for name in names:
                decision = _decide(name, allow_p, deny_p, step)
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
        detail = f" Unknown entries: {', '.join(unknown)}." if unknown else ""
        return None, (f"tools: {step.label} allowlist has no core tool entries; ignoring it so "
                      f"core tools remain available.{detail} Use alsoAllow for additive plugin "
                      "tool enablement.")

    def expand_plugins(self, entries: Sequence[Entry], by_plugin: Mapping[str, list[str]],
                       plugin_tools: list[str]) -> list[tuple[str, Entry]]:
        out: list[tuple[str, Entry]] = []
        for e in entries:
            name = e.name
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
                m = normalize_tool_name(member)
                if m:
                    out.append((_compile(m), origin))
        return out


def _decide(name: str, allow: list[tuple[re.Pattern[str], Entry]],
            deny: list[tuple[re.Pattern[str], Entry]], step: _Step) -> Decision:
    for pattern, origin in deny:
        if pattern.match(name):
            return Decision(kept=False, reason=f'denied by "{origin.text}" in {step.label}',
                            entry=origin)
    if not allow:
        return Decision(kept=True, reason=f"{step.label} has no allow list")
    for pattern, origin in allow:
        if pattern.match(name):
            return Decision(kept=True, reason=f'allowed by "{origin.text}" in {step.label}',
                            entry=origin)
    if name == "apply_patch":
        for pattern, origin in allow:
            if pattern.match("exec"):
                return Decision(kept=True, reason=f'allowed because "{origin.text}" allows exec '
                                f"in {step.label}", entry=origin)
    return Decision(kept=False, reason=f"not in the allow list of {step.label}")


def _provider_entry(entries: Sequence[ProviderPolicy], provider: str | None,
                    model: str | None) -> ProviderPolicy | None:
    """Section 5.3 CLASSIC: the full model key shadows the provider key."""
    if provider is None:
        return None
    by_key = {e.key: e for e in entries}
    if model:
        full = model_key(provider, model)
        if full in by_key:
            return by_key[full]
    return by_key.get(provider)


def _model_in(models: frozenset[str], provider: str | None, model: str | None) -> bool:
    if not model:
        return False
    return model in models or ("/" not in model and f"{provider}/{model}" in models)


def _account(ch: ChannelDef, account_id: str | None) -> AccountDef | None:
    """``resolveAccountEntry``: the normalized id (``default`` when absent), exact first."""
    norm = normalize_account_id(account_id)
    return next((a for a in ch.accounts if a.id == norm), None) or next(
        (a for a in ch.accounts if a.id.lower() == norm), None)


def _sender_rule(cfg: GroupConfig, ctx: Context, *, e164: bool = True) -> SenderRule | None:
    """Section 7.3: id, e164, username, name, then the wildcard; first key wins per bucket."""
    buckets: dict[tuple[str, str], SenderRule] = {}
    wildcard = None
    for rule in cfg.senders:
        if rule.kind == "*":
            wildcard = rule
        else:
            buckets.setdefault((rule.kind, rule.value), rule)
    candidates: list[tuple[str, str]] = []
    if ctx.sender_id is not None and ctx.sender_id.strip():
        sid = ctx.sender_id.strip().lower()
        candidates.append(("id", sid))
        if sid.startswith("@"):
            candidates.append(("id", sid[1:]))
    if e164 and ctx.sender_e164 is not None and ctx.sender_e164.strip():
        candidates.append(("e164", ctx.sender_e164.strip().lower()))
    if ctx.sender_username is not None and ctx.sender_username.strip():
        candidates.append(("username", ctx.sender_username.strip().lower().removeprefix("@")))
    if ctx.sender_name is not None and ctx.sender_name.strip():
        candidates.append(("name", ctx.sender_name.strip().lower()))
    for cand in candidates:
        if cand in buckets:
            return buckets[cand]
    return wildcard


def load_reference(definitions_dir: str | Path) -> ReferenceInterpreter:
    """Load and check a definitions directory once; raises DefinitionsError on errors."""
    from .api import resolve_definitions  # noqa: PLC0415 - api imports this module

    return ReferenceInterpreter(resolve_definitions(Path(definitions_dir)))


def reference_resolve(definitions_dir: str | Path, **context: Any) -> Resolution:
    """Evaluate one request against a definitions directory with the reference interpreter."""
    return load_reference(definitions_dir).resolve(**context)

