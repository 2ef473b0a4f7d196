"""Policy checks on the compiled tables: assertions (policy unit tests) and the lints that
catch silent mistakes. They run after the tables are built, over the context classes of
``access.ClassSpace`` with the factored evaluation of ``factored`` (never the product of
all classes), and explain what they find with the reference interpreter.

* ``assertions:`` (``never``/``always`` over class patterns): checked exhaustively; a
  violated assertion is an error at its position with one concrete counterexample as a
  ``toolc resolve`` command line and the layers and rules responsible (TC300).
* Lints (warnings; errors under ``--strict``): a group's ``tools`` that a ``*`` sender rule
  always pre-empts (TC310); a sender rule or group entry that can never be selected (TC311);
  an allow entry naming a tool the agent never sees (TC312); an agent that sees no tool at
  all (TC313); more tools than a dialect accepts in some context (TC211).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..diagnostics import Diagnostics, Pos
from ..pipeline.analyze import Resolved
from ..pipeline.bundles import dialect_registry
from ..pipeline.memo import UnitCache, outside_channels
from ..pipeline.model import AssertionDef, ChannelDef, GroupConfig, PatternValue
from ..rules.context import CLI_OPTIONS, NEGATED_OPTIONS, group_context, trusted_group
from ..rules.names import (
    NO_E164_CHANNELS,
    group_candidates,
    normalize_account_id,
    normalize_agent_id,
    normalize_channel,
    normalize_key,
    normalize_tool_name,
)
from ..schema import DIALECTS
from ..schema.lint import MAX_TOOLS
from ..semantics.access import OTHER, SENDER_FLAGS, ClassSpace, Klass, TablesView, _fresh
from ..semantics.factored import Cube, Evaluator, bit_indices, blocks, cube_size, gate_channels
from ..semantics.reference import ReferenceInterpreter, key_text
from .explain import Explanation, explain


def resolve_command(flags: Mapping[str, Any]) -> str:
    """The ``toolc resolve`` command line of a request (``resolve`` keywords)."""
    words = ["toolc", "resolve"]
    for key, option in CLI_OPTIONS.items():
        value = flags.get(key)
        if value is False and key in NEGATED_OPTIONS:  # 2026.9: unset is not "not the owner"
            words.append(NEGATED_OPTIONS[key])
            continue
        if value is None or value is False:
            continue
        words.append(option)
        if value is not True:
            words.append(str(value))
    return " ".join(shlex.quote(w) for w in words)


# -- class patterns --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Selection:
    """A pattern's classes: one bitset per dimension, and per selected class a request in
    both the class and the pattern (the class representative, refined where needed)."""

    cube: Cube
    witness: tuple[dict[int, dict[str, Any]], ...]
    space: ClassSpace | None = None

    def flags(self, point: Sequence[int]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for d, i in enumerate(point):
            out.update(self.witness[d][i])
        if self.space is not None and point[5] == self.space.depth0:
            # a subagent at depth 0 is reached through a session key (ClassSpace.holds)
            out.update(self.space.depth0_flags(out, point[4]))
        return out


def _matches(pattern: PatternValue | None, value: str | None,
             norm: Callable[[str], str | None]) -> bool:
    if pattern is None:
        return True
    if pattern == "*":
        return value is not None
    if isinstance(pattern, bool):  # pragma: no cover - the schema allows no boolean here
        return False
    return value is not None and value in {norm(p) for p in pattern}


def _key(raw: str) -> str | None:
    return normalize_key(raw) or None


def _sender_key(raw: str) -> tuple[str, str]:
    kind, sep, value = raw.strip().partition(":")
    if sep and kind.strip().lower() in SENDER_FLAGS:
        return kind.strip().lower(), value
    return "id", raw


def _sender_value(kind: str, value: str) -> str:
    value = value.strip().lower()
    return value.removeprefix("@") if kind in ("username", "id") else value


class Patterns:
    """Selects the classes of a ``ClassSpace`` (one side) that a pattern touches."""

    def __init__(self, space: ClassSpace) -> None:
        self.space = space
        view = space.views[0]
        self.view = view
        declared = [k.key[0] for k in space.agents if k.key[0] is not None]
        self.fresh_agent = _fresh(declared)
        self.fresh_channel = _fresh(view.channels)
        self.providers = sorted({k.key[0] for k in space.providers if k.key[0] is not None})
        self.models = sorted({k.key[1] for k in space.providers if k.key[1] is not None})

    def select(self, where: Mapping[str, PatternValue]) -> Selection:
        dims = (self._agents(where.get("agent")),
                self._providers(where.get("provider"), where.get("model")),
                self._channels(where),
                self._owner(where.get("owner")),
                self._bool(where.get("sandboxed"), "sandboxed"),
                self._subagents(where.get("subagent")))
        cube = tuple(sum(1 << i for i in d) for d in dims)
        return Selection(cube=cube, witness=dims, space=self.space)

    def _agents(self, p: PatternValue | None) -> dict[int, dict[str, Any]]:
        agents = self.space.agents
        other = len(agents) - 1
        out: dict[int, dict[str, Any]] = {}
        if p is None or p == "*":
            out = {i: dict(k.flags) for i, k in enumerate(agents[:-1])}
            out[other] = {} if p is None else {"agent_id": self.fresh_agent}
            return out
        assert not isinstance(p, bool)
        index = {k.key[0]: i for i, k in enumerate(agents[:-1])}
        for raw in p:
            i = index.get(normalize_agent_id(raw), other)
            out.setdefault(i, {"agent_id": raw})
        return out

    def _providers(self, p: PatternValue | None, m: PatternValue | None
                   ) -> dict[int, dict[str, Any]]:
        space = self.space
        extra_p = [x for x in (p if isinstance(p, tuple) else ()) if _key(x)]
        extra_m = [x for x in (m if isinstance(m, tuple) else ()) if _key(x)]
        fresh = _fresh([*self.providers, *map(normalize_key, extra_p)])
        fresh_m = _fresh([*self.models, *map(normalize_key, extra_m)])
        out: dict[int, dict[str, Any]] = {}
        for prov in [None, *self.providers, *extra_p, fresh]:
            for model in [None, *self.models, *extra_m, fresh_m]:
                pn = _key(prov) if prov is not None else None
                mn = _key(model) if model is not None else None
                if not (_matches(p, pn, _key) and _matches(m, mn, _key)):
                    continue
                i = space._provider_index[tuple(space._provider_sig(v, pn, mn)
                                                for v in space.views)]
                flags = {k: v for k, v in (("model_provider", prov), ("model_id", model))
                         if v is not None}
                out.setdefault(i, flags)
        return out

    @staticmethod
    def _bool(p: PatternValue | None, flag: str) -> dict[int, dict[str, Any]]:
        if p is None:
            return {0: {}, 1: {flag: True}}
        return {1: {flag: True}} if p is True else {0: {}}

    def _owner(self, p: PatternValue | None) -> dict[int, dict[str, Any]]:
        """``owner: true`` the owner; ``false`` not the owner (2026.9: known not to be, and
        ``owner: unknown`` the requests that do not say); absent: every class."""
        classes = self.space.owner
        if p is None:
            return {i: dict(k.flags) for i, k in enumerate(classes)}
        wanted = True if p is True else None if p == ("unknown",) else False
        if len(classes) == 2 and wanted is None:
            wanted = False  # 2026.3: not saying is not being the owner
        return {i: dict(k.flags) for i, k in enumerate(classes) if k.key[0] is wanted}

    def _subagents(self, p: PatternValue | None) -> dict[int, dict[str, Any]]:
        leaf = self.view.leaf_depth
        out: dict[int, dict[str, Any]] = {}
        for i, k in enumerate(self.space.subagent):
            depth = k.key[0]
            kind = None if depth == 0 else "leaf" if depth >= leaf else "non-leaf"
            if p is None or (p is False and kind is None) or (p is True and kind) or p == kind:
                out[i] = dict(k.flags)
        return out

    # the channel dimension: channel, account, group and sender together ---------------------
    def _channels(self, where: Mapping[str, PatternValue]) -> dict[int, dict[str, Any]]:
        fields = {k: where[k] for k in ("channel", "account", "group", "sender") if k in where}
        out: dict[int, dict[str, Any]] = {}
        for k in self.space.channels:
            for flags in self._variants(k, fields):
                if not self._channel_match(flags, fields):
                    continue
                i = self.space.classify_channel(**flags)
                out.setdefault(i, {f: v for f, v in flags.items()})
        return out

    def _variants(self, k: Klass, fields: Mapping[str, PatternValue]
                  ) -> Iterable[dict[str, Any]]:
        """Requests near the class representative with the pattern's values put in."""
        variants = [dict(k.flags)]
        for name, p in fields.items():
            nxt: list[dict[str, Any]] = []
            for base in variants:
                nxt.extend(self._put(base, name, p))
            variants = nxt
        return variants

    def _put(self, base: dict[str, Any], name: str, p: PatternValue
             ) -> list[dict[str, Any]]:
        present = {"channel": "message_provider" in base or "spawned_by" in base,
                   "account": "account_id" in base, "group": "group_id" in base,
                   "sender": any(f in base for f in SENDER_FLAGS.values())}[name]
        if p == "*":
            if present:
                return [base]
            values: tuple[str, ...] = (OTHER,) if name != "channel" else (self.fresh_channel,)
        else:
            assert isinstance(p, tuple)
            values = p
        out = []
        for value in values:
            if name == "channel":
                out.append({**{f: v for f, v in base.items() if f != "spawned_by"},
                            "message_provider": value})
                if "spawned_by" in base:
                    _, gid = group_context(base["spawned_by"])
                    out.append({**base, "spawned_by": f"{value}:group:{gid}"})
            elif name == "account":
                out.append({**base, "account_id": value})
            elif name == "group":
                out.append({**base, "group_id": value})
                if any(v.trusted for v in self.space.views):
                    # 2026.9 counts a group only when the session key or spawned_by names it
                    where = base.get("message_provider")
                    if "spawned_by" in base:
                        where = group_context(base["spawned_by"])[0] or where
                    if where is not None:
                        out.append({**base, "spawned_by": f"{where}:group:{value}"})
            else:
                kind, sv = _sender_key(value)
                only = {f: v for f, v in base.items() if f not in SENDER_FLAGS.values()}
                out.append({**only, SENDER_FLAGS[kind]: sv})
                out.append({**base, SENDER_FLAGS[kind]: sv})
        return out

    def _channel_match(self, flags: Mapping[str, Any],
                       fields: Mapping[str, PatternValue]) -> bool:
        channel = normalize_channel(flags.get("message_provider"))
        group = flags.get("group_id")
        if "spawned_by" in flags:
            sc, sg = group_context(flags["spawned_by"])
            channel = channel or sc
            group = group if group is not None else sg
        if all(v.trusted for v in self.space.views):
            # 2026.9: a request's group is the one its session key (or spawned_by) names, a
            # caller's group id alone is ignored; its channel the message channel, else
            # the session's
            trusted = trusted_group(flags.get("session_key"), flags.get("spawned_by"),
                                    flags.get("group_id"), flags.get("message_provider"))
            channel = channel if "message_provider" in flags else normalize_channel(
                trusted.channel)
            group = trusted.group_ids[0] if trusted.group_ids else None
        account = flags.get("account_id")
        if not _matches(fields.get("channel"), channel, normalize_channel):
            return False
        # no account is the default account, as OpenClaw reads it
        if not _matches(fields.get("account"), normalize_account_id(account),
                        normalize_account_id):
            return False
        if not _matches(fields.get("group"), None if group is None else group.strip(),
                        str.strip):
            return False
        p = fields.get("sender")
        senders = {(kind, _sender_value(kind, flags[f])) for kind, f in SENDER_FLAGS.items()
                   if f in flags}
        if p is None:
            return True
        if p == "*":
            return bool(senders)
        assert isinstance(p, tuple)
        return any((kind, _sender_value(kind, v)) in senders
                   for kind, v in map(_sender_key, p))


# -- assertions ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Violation:
    tools: tuple[str, ...]  # the tools that break it in the counterexample's class
    flags: dict[str, Any]  # the counterexample request
    classes: int  # how many matching classes break it
    matching: int  # how many classes the pattern selects


def check_assertion(space: ClassSpace, patterns: Patterns, a: AssertionDef,
                    tools: Sequence[str]) -> Violation | None:
    """The first counterexample (in class order) of one assertion, with counts."""
    index = {n: i for i, n in enumerate(space.tool_names)}
    sel = patterns.select(a.where)
    matching = cube_size(sel.cube) - sum(  # less the classes no request falls in
        cube_size(tuple(x & y for x, y in zip(e, sel.cube, strict=True)))
        for e in space.empty_cubes())
    r = 0
    for t in tools:  # a catalog tool the build leaves out (a disabled plugin's) is never seen
        if t in index:
            r |= 1 << index[t]
    missing_everywhere = a.kind == "always" and any(t not in index for t in tools)
    if matching == 0:
        return None
    ev = Evaluator(space, r)
    aps = ev.ap_states()
    found: tuple[int, list[int], Cube] | None = None
    bad_classes = 0
    channel_bits = sel.cube[2]
    for gi, chans in sorted(gate_channels(space).items()):
        chans_in = [c for c in chans if channel_bits >> c & 1]
        if not chans_in:
            continue
        for xs, cbits, (res,) in blocks(ev, gi, ev.x_states(gi, aps), chans_in):
            bad = (res & r) if a.kind == "never" else (~res & r)
            if not bad and not missing_everywhere:
                continue
            for cube in xs.cubes(cbits):
                inter = tuple(x & y for x, y in zip(cube, sel.cube, strict=True))
                if not all(inter):
                    continue
                bad_classes += cube_size(inter)
                point = [bit_indices(b)[0] for b in inter]
                if found is None or point < found[1]:
                    found = (bad, point, inter)
    if found is None:
        return None
    bad, point, _ = found
    names = [space.tool_names[i] for i in bit_indices(bad)]
    if missing_everywhere:
        names += [t for t in tools if t not in index and t not in names]
    return Violation(tools=tuple(sorted(names, key=tools.index)), flags=sel.flags(point),
                     classes=bad_classes, matching=matching)


def _responsible(resolved: Resolved, kind: str, tool: str, flags: dict[str, Any]
                 ) -> tuple[Explanation, list[str]]:
    """The reference interpreter's account of ``tool`` at the counterexample: the rules that
    let it through (``never``) or the one that removed it (``always``)."""
    ex = explain(resolved, tool, flags)
    lines = []
    for row in ex.rows:
        if kind == "never" and row.result == "kept":
            if row.layer != "inventory":
                lines.append(f"{row.layer}: {row.rule}" + _at(row.pos))
        elif kind == "always" and row.result in ("absent", "removed"):
            lines.append(f"{row.layer}: {row.rule}" + _at(row.pos))
    return ex, lines


def short(resolved: Resolved, pos: Pos) -> str:
    """A position inside the definitions, without the directory's own path: messages are
    recorded in the manifest, which must not depend on where the definitions live."""
    for rel in resolved.defs.files:
        if pos.file == rel or pos.file.endswith("/" + rel):
            return f"{rel}:{pos.line}:{pos.col}"
    return str(pos)


def _at(pos: Pos | None) -> str:
    return "" if pos is None or pos.line == 0 else f" ({pos})"


def assertion_tools(resolved: Resolved, a: AssertionDef, diags: Diagnostics
                    ) -> list[str] | None:
    """The catalog tools an assertion names (groups expanded); None after an error."""
    known = {t.name for t in resolved.defs.tools}
    out: list[str] = []
    ok = True
    for e in a.tools:
        name = normalize_tool_name(e.text)
        members = resolved.groups.get(name)
        if members is None and name not in known:
            diags.error(e.pos, "TC160", f'assertion names unknown tool "{e.text}"',
                        hint="assertions name catalog tools or group:NAME")
            ok = False
            continue
        for m in members or (name,):
            if m not in out:
                out.append(m)
    return out if ok else None


def check_assertions(resolved: Resolved, space_of: Callable[[], ClassSpace],
                     diags: Diagnostics) -> None:
    assertions = resolved.defs.assertions
    if not assertions:
        return
    space = space_of()
    patterns = Patterns(space)
    for a in assertions:
        tools = assertion_tools(resolved, a, diags)
        if tools is None:
            continue
        v = check_assertion(space, patterns, a, tools)
        if v is None:
            continue
        verb = "visible" if a.kind == "never" else "not visible"
        lines = [f"counterexample: {resolve_command(v.flags)}"]
        for tool in v.tools:
            ex, why = _responsible(resolved, a.kind, tool, v.flags)
            if ex.visible != (a.kind == "never"):  # pragma: no cover - engine disagreement
                raise AssertionError(f"tables and reference disagree on {tool} at {v.flags}")
            lines += [f"{tool}: {w}" for w in why] or [f"{tool}: no rule names it"]
        if a.because:
            lines.append(f"because: {a.because}")
        diags.error(a.pos, "TC300",
                    f"assertion fails: {a.text}: {', '.join(v.tools)} {verb} in "
                    f"{v.classes:,} of {v.matching:,} matching context classes",
                    hint="\n        ".join(lines))


# -- lints -----------------------------------------------------------------------------------
def _group_maps(resolved: Resolved, ch: ChannelDef
                ) -> Iterable[tuple[str, str, tuple[GroupConfig, ...]]]:
    where = f"channels.{key_text(ch.name)}"
    if ch.groups is not None:
        yield ch.name, where, ch.groups
    for acc in ch.accounts:
        if acc.groups is not None:
            yield ch.name, f"{where}.accounts.{key_text(acc.id)}", acc.groups


def _always_decides(cfg: GroupConfig | None) -> bool:
    """The entry yields a block for every sender: tools, or a ``*`` sender rule."""
    return cfg is not None and (cfg.tools is not None
                                or any(r.kind == "*" for r in cfg.senders))


def lint_groups(resolved: Resolved, diags: Diagnostics) -> None:
    """TC310 and TC311 of every channel the definitions model (``lint_channel``)."""
    for ch in resolved.defs.channels:
        lint_channel(resolved, ch, diags)


def lint_channel(resolved: Resolved, ch: ChannelDef, diags: Diagnostics) -> None:
    """TC310 and TC311: group tools and sender rules of one channel that can never be
    selected (a channel compiled on its own is linted there: ``toolc.builds.stream``)."""
    for channel, where, groups in _group_maps(resolved, ch):
        default = next((g for g in groups if g.id == "*"), None)
        for g in groups:
            gw = f"{where}.groups.{key_text(g.id)}"
            star = next((r for r in g.senders if r.kind == "*"), None)
            if g.tools is not None and star is not None:
                diags.warning(g.tools.pos, "TC310",
                              f"{gw}.tools never applies: the toolsBySender \"*\" rule "
                              f"({short(resolved, star.pos)}) matches every sender first",
                              hint="move these rules into the \"*\" sender rule, or remove it")
            for r in g.senders:
                if r.kind == "e164" and channel in NO_E164_CHANNELS:
                    diags.warning(r.pos, "TC311", f"{gw}.toolsBySender.{key_text(r.key)} never "
                                  f"matches: {channel} senders have no phone number (e164)",
                                  hint="match the sender by id, username or name")
            if g.id == "*":
                continue
            candidates = group_candidates(channel, g.id)
            if len(candidates) > 1 and candidates[-1] == g.id.strip():
                # a topic entry: the chat's entry (or the "*" group) is tried first
                chat = next((x for x in groups if x.id == candidates[0]), None)
                first = chat if _always_decides(chat) else default
                if first is None or not _always_decides(first):
                    continue
                why = (f"chat {candidates[0]}'s own entry" if first is chat else
                       f'the "*" group (tried for chat {candidates[0]})')
                diags.warning(g.pos, "TC311",
                              f"{gw} is never used: {why} at {short(resolved, first.pos)} "
                              f"decides first for every sender of topic {g.id}",
                              hint="a topic entry applies only where the chat's entry and "
                              'the "*" group have no tools and no rule for the sender')


def maybe_passes(view: TablesView, index: int) -> int:
    """The tools a stack lets through under some present set: a layer that can be ignored
    (a plugin-only allowlist, D3) may let through whatever its deny list does."""
    stack = view.stack(index)
    bits = stack.fixed
    for witness, allow_pass, deny_pass in stack.layers:
        bits &= allow_pass if witness == -1 else allow_pass | deny_pass
    return bits


# TC312 warnings whose hint names the removing rule (one reference run each); the rest point
# at `toolc explain`.
EXPLAINED_LINTS = 20


def lint_reach(resolved: Resolved, view: TablesView, diags: Diagnostics) -> None:
    """TC312: an agent's allow entry naming a tool that the agent's own stack (profile,
    global and agent layers) removes in every context; TC313: an agent whose stack removes
    every tool. Both are exact claims (no context lets the tool through), never guesses."""
    index = {n: i for i, n in enumerate(view.tools)}
    everything = (1 << len(view.tools)) - 1
    done: set[str] = set()
    explained = 0
    for agent in resolved.defs.agents:
        if agent.id in done or agent.id not in view.agents:
            continue
        done.add(agent.id)
        _, record = view.record(agent.id)
        bits = maybe_passes(view, record.stack) & everything
        where = f"agents.{key_text(agent.id)}.tools"
        if not bits:
            diags.warning(agent.pos, "TC313", f"agent {agent.id} sees no tool in any context",
                          hint=f"toolc explain TOOL --agent {shlex.quote(agent.id)} shows "
                          "which layer removes a tool")
            continue
        tools = agent.tools
        if tools is None:
            continue
        lists = [(f"{where}.{k}", lst) for k, lst in
                 (("allow", tools.policy.allow), ("alsoAllow", tools.policy.also_allow))
                 if lst is not None]
        for bp in tools.by_provider:
            lists += [(f"{where}.byProvider.{key_text(bp.key)}.{k}", lst) for k, lst in
                      (("allow", bp.policy.allow), ("alsoAllow", bp.policy.also_allow))
                      if lst is not None]
        for label, lst in lists:
            for e in lst.items:
                if "*" in e.text:
                    continue
                hit = [n for n in resolved.groups.get(e.name, (e.name,)) if n in index]
                if not hit or any(bits >> index[n] & 1 for n in hit):
                    continue
                what = f'"{e.text}"' + (" (every member)" if len(hit) > 1 else "")
                hint = (f"toolc explain {shlex.quote(hit[0])} --agent "
                        f"{shlex.quote(agent.id)} shows which layer removes it")
                if explained < EXPLAINED_LINTS:  # the reference is slow on huge catalogs
                    explained += 1
                    ex = explain(resolved, hit[0], {"agent_id": agent.id,
                                                    "sender_is_owner": True})
                    removed = next((r for r in ex.rows if r.result in ("absent", "removed")),
                                   None)
                    if removed is not None:
                        hint = (f"removed in every context by {removed.layer}: "
                                f"{removed.rule}{_at(removed.pos)}")
                diags.warning(e.pos, "TC312",
                              f"{what} in {label} never takes effect: agent {agent.id} "
                              f"never sees {hit[0]}", hint=hint)


# -- tool counts -----------------------------------------------------------------------------
# Example contexts the tool-count lint evaluates per dialect (it stops at the first hit): the
# first agents (owner, no channel) with each provider speaking the dialect, up to a budget.
COUNT_LINT_AGENTS = 8
COUNT_LINT_BUDGET = 24


def provider_candidates(resolved: Resolved) -> list[tuple[str, str | None]]:
    """Every provider (and provider/model) the definitions mention, in sorted order."""
    defs = resolved.defs
    keys = {p.key for p in defs.provider_dialects} | set(dialect_registry(defs).builtin)
    for config in [defs.tools_config, *(a.tools for a in defs.agents if a.tools)]:
        keys |= {bp.key for bp in config.by_provider}
    for tool in resolved.tools:
        if tool.availability and tool.availability.providers:
            keys |= tool.availability.providers
    out: list[tuple[str, str | None]] = []
    for key in sorted(keys):
        provider, _, model = key.partition("/")
        out.append((provider, model or None))
    return out


def lint_counts(resolved: Resolved, diags: Diagnostics) -> None:
    """TC211: a dialect's tool-count limit, checked on example contexts (owner, each agent)."""
    tools = resolved.tools
    if all(len(tools) <= MAX_TOOLS.get(d, len(tools)) for d in DIALECTS):
        return
    defs = resolved.defs
    registry = dialect_registry(defs)
    interp = ReferenceInterpreter(resolved)
    agents = [a.id for a in defs.agents][:COUNT_LINT_AGENTS] or ["main"]
    candidates = provider_candidates(resolved)
    for dialect, limit in sorted(MAX_TOOLS.items()):
        pairs = [(p, m) for p, m in candidates if registry.dialect_for(p, m)[0] == dialect]
        tries = [(a, p, m) for a in agents for p, m in pairs][:COUNT_LINT_BUDGET]
        hit = next(((a, p, m, names) for a, p, m in tries
                    for names in [interp.resolve(agent_id=a, model_provider=p, model_id=m,
                                                 sender_is_owner=True).names]
                    if len(names) > limit), None)
        if hit is None:
            continue
        agent, provider, model, names = hit
        tool = next(t for t in tools if t.name == names[limit])
        example = resolve_command({"agent_id": agent, "model_provider": provider,
                                   "model_id": model, "sender_is_owner": True})
        diags.warning(tool.pos, "TC211", f"{dialect} accepts at most {limit} tools, "
                      f"but {len(names)} are visible in some contexts; "
                      f'"{tool.name}" is number {limit + 1}',
                      hint=f"example context: {example}")


def lazy_space(view: TablesView) -> Callable[[], ClassSpace]:
    """Build the single-side class space once, on first use."""
    box: list[ClassSpace] = []

    def get() -> ClassSpace:
        if not box:
            box.append(ClassSpace([view]))
        return box[0]
    return get


def run_checks(resolved: Resolved, tables: Mapping[str, Any], diags: Diagnostics,
               cache: UnitCache | None = None) -> None:
    """Every check that needs the compiled tables, in a stable order (``cache``: the
    incremental cache; the reach and count lints read no channel, so they are cached on
    the rest)."""
    view = TablesView(tables, list(tables["tools"]))
    lint_groups(resolved, diags)
    base_checks(resolved, tables, diags, cache)
    check_assertions(resolved, lazy_space(view), diags)


def base_checks(resolved: Resolved, tables: Mapping[str, Any], diags: Diagnostics,
                cache: UnitCache | None = None) -> None:
    """The lints that read no channel (agents' own stacks, explained without a channel;
    tool counts), cached on everything but the channels: ``tables`` needs none."""
    view = TablesView(tables, list(tables["tools"]))
    outside_channels(cache, "lint-reach", resolved.defs,
                     lambda d: lint_reach(resolved, view, d), diags)
    outside_channels(cache, "lint-counts", resolved.defs,
                     lambda d: lint_counts(resolved, d), diags)


__all__ = ["Patterns", "base_checks", "check_assertion", "lint_channel", "resolve_command",
           "run_checks"]
