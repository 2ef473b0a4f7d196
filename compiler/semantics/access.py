"""Context classes: the finite partition of requests that the tables distinguish, evaluated
exactly and factored (``toolc diff``, assertions, lints and ``build/ACCESS.md``).

A request's tool set depends on six effective inputs, each with finitely many classes:

* **agent**: each declared agent, plus "no declared agent" (no agent, or an undeclared one:
  the global policy only);
* **provider**: the (provider, model) pairs that some byProvider key, availability gate or
  ``applyPatch.allowModels`` entry tells apart, plus "any other provider";
* **channel**: where the group layer lands (channel, account, group, sender rule), or "no
  group"; and, where availability depends on the message channel, whether the channel was
  given explicitly or only came from the session key or ``spawned_by``;
* **owner** (or not; with OpenClaw 2026.9 three classes: unknown, the default request,
  which keeps owner-only tools, the owner, and known not to be: ``sender_is_owner=False``),
  **sandboxed** (or not), **subagent** (none, not a leaf, leaf; where maxSpawnDepth is 1, a
  subagent at depth 0, never a leaf).
  Sandboxed is ``sandboxed=True`` or what the sandbox mode derives from the session key
  (``rules.sandbox``); when two sides derive differently (a diff that changes a mode), the
  session keys that tell them apart add classes ("sandboxed on one side only").

Every request falls into exactly one class and every class has a representative request
(``ClassSpace.flags``) that reproduces it, but for the classes no request falls in
(``ClassSpace.holds``: a subagent at depth 0 whose session key's sandbox mode rules out the
class's sandbox verdict). Classes are never enumerated as a product: the
evaluation groups (agent, provider) pairs and group locations into kinds by the table
entries they select, evaluates kind pairs, and multiplies counts.

The engine reads ``tables.json`` (one side, or two sides in a shared tool index for a diff).
Its lookups port the generated runtime's; the brute-force tests hold both to the reference
interpreter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..pipeline import groups
from ..rules.context import (
    Context,
    parse_session_key,
)
from ..rules.names import (
    normalize_agent_id,
    normalize_key,
)
from ..rules.sandbox import derive_sandboxed
from .channel_classes import SENDER_FLAGS, ChannelClasses
from .classes import Klass, owner_classes, owner_index, owner_removes
from .tables_view import (
    DEPTH0,
    NO_LAYER,
    OTHER,
    InlineStacks,
    Record,
    Stack,
    TablesView,
    Unread,
    _model_in,
    runs_bits,
)

# The analysis' names, wherever they are defined (readers import them from here)
__all__ = ["DIMS", "NO_LAYER", "OTHER", "SENDER_FLAGS", "ClassSpace", "InlineStacks", "Klass",
           "Record", "Stack", "TablesView", "Unread", "_fresh", "owner_removes", "runs_bits"]

DIMS = ("agent", "provider", "channel", "owner", "sandbox", "subagent")

_fresh = groups.fresh


class ClassSpace(ChannelClasses):
    """The classes of one build, or the common refinement of two (a diff)."""

    def __init__(self, views: Sequence[TablesView],
                 tools: Sequence[str] | None = None) -> None:
        self.views = list(views)
        self.tool_names = list(tools if tools is not None else views[0].tools)
        self.agents = self._agents()
        self.providers = self._providers()
        self.gate_classes, self.gate_of = self._gate_classes()
        self.owner = owner_classes(self.views)
        # selectors: what a channel side may depend on besides the channel class (2026.9:
        # whether the sender is the owner, per side the agent's own toolsBySender map)
        self.selectors: list[tuple[bool, tuple[int, ...]]] = [(False, (0,) * len(self.views))]
        self._selector_index = {self.selectors[0]: 0}
        self._chan_stacks: list[list[tuple[tuple[int, ...], ...]]] = []
        self._unread: dict[str, list[range]] = {}  # channel -> its classes, per gate mode
        self._witnesses: int | None = None
        self._sender_maps: list[list[Any]] = []
        self._owner_matters = False
        self._trusted_index: dict[Any, int] | None = None
        if any(v.trusted for v in self.views):
            self.channels = self._trusted_channels()
        else:
            self.channels = self._channels()
            # classes with the same stacks share one (never mutated) list
            shared: dict[tuple[int | None, ...], list[tuple[tuple[int, ...], ...]]] = {}
            self._chan_stacks = [
                shared.get(k.stacks) or shared.setdefault(
                    k.stacks, [tuple(() if st is None else (st,) for st in k.stacks)])
                for k in self.channels]
        self.sandbox = self._sandboxes()
        self.subagent = self._subagents()

    def dims(self) -> tuple[list[Klass], ...]:
        return (self.agents, self.providers, self.channels, self.owner, self.sandbox,
                self.subagent)

    def size(self) -> int:
        n = 1
        for d in self.dims():
            n *= len(d)
        if self.depth0 is not None:  # less the empty classes (see depth0_sandboxes)
            rest = len(self.providers) * len(self.channels) * len(self.owner)
            n -= rest * sum(len(self.sandbox) - self.depth0_sandboxes(a).bit_count()
                            for a in range(len(self.agents)))
        return n

    def holds(self, point: Sequence[int]) -> bool:
        """Whether some request falls in the class: all do but a subagent at depth 0 in the
        sandbox classes its session key cannot reach (``depth0_sandboxes``)."""
        return point[5] != self.depth0 or bool(self.depth0_sandboxes(point[0]) >> point[4] & 1)

    def flags(self, point: Sequence[int]) -> dict[str, Any]:
        """The representative request of a class (``resolve`` keywords)."""
        out: dict[str, Any] = {}
        if any(point[2] in span for spans in self._unread.values() for span in spans):
            raise LookupError(f"channel class {point[2]} is one of a channel not read")
        for dim, i in zip(self.dims(), point, strict=True):
            out.update(dim[i].flags)
        if point[5] == self.depth0:
            out.update(self.depth0_flags(out, point[4]))
        if "agent_id" not in out and ("session_key" in out or any(
                v.agent_selection for v in self.views)):
            # a sandbox class's session key must not pick the policy agent, nor (2026.9) the
            # default agent a request without one gets: an undeclared agent id keeps "no
            # declared agent"
            out["agent_id"] = self._fresh_agent
        return out

    def classify(self, **context: Any) -> tuple[int, ...]:
        """The class of a request (``resolve`` keywords): every request falls into exactly
        one class, whose representative (``flags``) gets the same tools on every side."""
        ctx = Context.of(**context)
        session = parse_session_key(ctx.session_key)
        chooser = next((v for v in self.views if v.agent_selection), None)
        if chooser is not None:  # 2026.9 (AgentSelectionRequiredError: the request has none)
            aid: str | None = chooser.select_agent(ctx.agent_id, ctx.session_key)
        elif ctx.agent_id is not None:
            aid = normalize_agent_id(ctx.agent_id)
        elif ctx.session_key is not None:
            aid = normalize_agent_id(session.agent)
        else:
            aid = None
        agent = next((i for i, k in enumerate(self.agents) if k.key[0] == aid and aid),
                     len(self.agents) - 1)
        provider = normalize_key(ctx.model_provider) or None
        model = normalize_key(ctx.model_id) or None
        prov = self._provider_index[tuple(self._provider_sig(v, provider, model)
                                          for v in self.views)]
        key_sub, key_depth = self.views[0].rules.sessions.subagent_of(ctx.session_key)
        is_sub = key_sub or (ctx.spawn_depth or 0) >= 1
        depth = ctx.spawn_depth if ctx.spawn_depth is not None else key_depth
        if is_sub and depth == 0 and self._main_role is not None:
            sub = self._main_role  # 2026.9: a subagent at depth 0 has the `main` role
        else:
            sub = self._depth_index[min(max(depth, 1), len(self._depth_index) - 1)] \
                if is_sub else self._depth_index[0]
        # 2026.9: a key without an agent is the selected agent's (resolveSessionAgentId)
        sandboxed = tuple(ctx.sandboxed is True or derive_sandboxed(
            v.sandbox_modes, ctx.session_key, aid if v.agent_selection else None)
            for v in self.views)
        found = self._sandbox_index.get(sandboxed)
        if found is None:
            raise LookupError(f"no sandbox class holds {ctx}: the class space is incomplete")
        return (agent, prov, self._classify_channel(ctx, session),
                owner_index(self.owner, ctx.sender_is_owner), found, sub)

    # sandbox --------------------------------------------------------------------------------
    def _sandboxes(self) -> list[Klass]:
        """Not sandboxed (no session key), sandboxed (``sandboxed=True``), then one class per
        other per-side verdict some session key gets (only when the sides' modes differ).
        A class's key is its per-side verdict."""
        n = len(self.views)
        out = [Klass(label="not sandboxed", key=(False,) * n),
               Klass(label="sandboxed", flags=(("sandboxed", True),), key=(True,) * n)]
        self._sandbox_index: dict[tuple[bool, ...], int] = {k.key: i for i, k in enumerate(out)}
        ids = {a for v in self.views for a in v.agents}
        for v in self.views:
            ids.update(v.sandbox_modes.agents)
            ids.add(v.sandbox_modes.default_agent)
        self._fresh_agent = _fresh(ids)
        if all(v.sandbox_modes.inert for v in self.views):
            return out
        # The verdict depends on the key's agent (its mode), and on whether the key is that
        # agent's main session or "global": these keys reach every combination.
        keys = [k for a in sorted(ids | {self._fresh_agent})
                for k in (f"agent:{a}:main", f"agent:{a}:{OTHER}")]
        for key in [*keys, "main", "global", OTHER]:
            verdict = tuple(derive_sandboxed(v.sandbox_modes, key) for v in self.views)
            if verdict not in self._sandbox_index:
                self._sandbox_index[verdict] = len(out)
                sides = ", ".join("sandboxed" if b else "not" for b in verdict)
                out.append(Klass(label=f"session {key} ({sides})",
                                 flags=(("session_key", key),), key=verdict))
        return out

    # agents ---------------------------------------------------------------------------------
    def _agents(self) -> list[Klass]:
        ids = sorted({a for v in self.views for a in v.agents})
        out = [Klass(label=f"agent {a}", flags=(("agent_id", a),), key=(a,)) for a in ids]
        out.append(Klass(label="no declared agent", key=(None,)))
        return out

    # providers ------------------------------------------------------------------------------
    def _providers(self) -> list[Klass]:
        keys: set[str] = set()
        gate_models: set[str] = set()
        gate_providers: set[str] = set()
        for v in self.views:
            keys.update(v.global_bp)
            for r in v.records:
                keys.update(r.bp)
            for _, gate_p, gate_m, _, _ in v.gates:
                gate_providers.update(gate_p or ())
                gate_models.update(gate_m or ())
            for _, allow_models in v.ap_variants:
                gate_models.update(m for m in allow_models or () if m)
        providers: set[str] = set(gate_providers)
        models: set[str] = set()
        for k in keys | gate_models:
            if "/" in k:
                p, m = k.split("/", 1)
                providers.add(p)
                models.update((k, m))
            else:  # a bare key is a provider to byProvider, a model to allowModels
                if k in keys:
                    providers.add(k)
                if k in gate_models:
                    models.add(k)
        other = _fresh(providers)
        candidates: list[tuple[str | None, str | None]] = [(None, None), (other, None)]
        candidates += [(p, None) for p in sorted(providers)]
        for prov in [*sorted(providers), other, None]:
            candidates += [(prov, m) for m in sorted(models)]
        seen: dict[Any, int] = {}
        out: list[Klass] = []
        self._provider_index = seen
        for provider, model in candidates:
            sig = tuple(self._provider_sig(v, provider, model) for v in self.views)
            if sig in seen:
                continue
            seen[sig] = len(out)
            flags: list[tuple[str, Any]] = []
            if provider is not None:
                flags.append(("model_provider", provider))
            if model is not None:
                flags.append(("model_id", model))
            if provider in (None, other):
                label = "any other provider" if model is None else \
                    f"any other provider with model {model}"
                group = ("any other provider",)
            else:
                label = f"provider {provider}" + (f" model {model}" if model else "")
                group = (f"provider {provider}",)
            out.append(Klass(label=label, flags=tuple(flags), key=(provider, model),
                             group=group))
        return out

    @staticmethod
    def _provider_sig(v: TablesView, provider: str | None, model: str | None) -> Any:
        gates = tuple(
            (providers is None or provider in providers)
            and (models is None or _model_in(models, provider, model))
            for _, providers, models, _, _ in v.gates)
        # apply_patch also needs a gate that carries it: the allowModels verdict matters only
        # where that gate passes
        ap_gate = any(g and bits & v.ap_bit for g, (bits, *_) in zip(gates, v.gates, strict=True))
        ap = tuple(ap_gate and v.apply_patch_ok(i, provider, model)
                   for i in range(len(v.ap_variants)))
        # which agents' byProvider entries the provider and model select (the full model key
        # shadows the provider key), without visiting every agent
        full = v.model_key(provider, model) if provider is not None else None
        index = v.bp_index()
        with_full = index.get(full, frozenset()) if full is not None else frozenset()
        with_provider = (index.get(provider, frozenset()) - with_full
                         if provider is not None else frozenset())
        entries = ((full, with_full) if with_full else None,
                   (provider, with_provider) if with_provider else None)
        return gates, ap, entries, v.provider_entries(v.records[0], provider, model)[1]

    # subagents ------------------------------------------------------------------------------
    def _subagents(self) -> list[Klass]:
        top = max(v.leaf_depth for v in self.views)
        seen: dict[Any, int] = {}
        out: list[Klass] = []
        self._depth_index: list[int] = []
        for depth in range(top + 1):
            sig = tuple(v.subagent_stack(depth) is not None and depth >= v.leaf_depth
                        if depth else None for v in self.views)
            self._depth_index.append(seen.setdefault(sig, len(out)))
            if seen[sig] != len(out):
                continue
            out.append(Klass(label="", flags=(("spawn_depth", depth),) if depth else (),
                             key=(depth,)))
        # a subagent at depth 0 (2026.9: a stored depth 0, the `main` role; 2026.3: a bare
        # `subagent:` key, or a subagent key with spawn_depth=0) is never a leaf: it shares
        # the class of a depth whose subagent layer is the same on every side, else (a side
        # with maxSpawnDepth 1) it is a class of its own, reached only through a session key
        nonleaf = [v.stack(v.subagent[0]) for v in self.views]
        self._main_role: int | None = next(
            (self._depth_index[d] for d in range(1, top + 1)
             if all(v.stack(v.subagent[1] if d >= v.leaf_depth else v.subagent[0]) == n
                    for v, n in zip(self.views, nonleaf, strict=True))), None)
        self.depth0: int | None = None
        self._depth0: dict[int, int] = {}
        if self._main_role is None:
            self.depth0 = self._main_role = len(out)
            out.append(Klass(label="", key=(DEPTH0,)))
        labelled = []
        for i, k in enumerate(out):
            depth = k.key[0]
            if depth == 0:
                label = "not a subagent"
            elif depth == DEPTH0:
                label = "subagent at depth 0 (never a leaf)"
            elif len(self.views) == 1 or all(v.leaf_depth == self.views[0].leaf_depth
                                              for v in self.views):
                label = "leaf subagent" if depth >= self.views[0].leaf_depth else \
                    "subagent (not a leaf)"
            else:
                last = i == len(out) - 1
                label = f"subagent depth {depth}" + (" or more" if last else "")
            labelled.append(Klass(label=label, flags=k.flags, key=k.key))
        return labelled

    def depth0_sandboxes(self, agent: int) -> int:
        """The sandbox classes (bits) a subagent at depth 0 reaches with agent class
        ``agent``: ``sandboxed=True``'s, and those whose verdict some subagent session key
        gets. Its key's sandbox mode is the key's agent's (2026.9: the request's agent), so
        a mode that sandboxes every other session leaves the rest empty."""
        if self.depth0 is None:
            return (1 << len(self.sandbox)) - 1
        found = self._depth0.get(agent)
        if found is None:
            found = 0
            aid = self.agents[agent].key[0] or self._fresh_agent
            for s in range(len(self.sandbox)):
                if self._depth0_key(aid, s) is not None:
                    found |= 1 << s
            self._depth0[agent] = found
        return found

    def empty_cubes(self) -> list[tuple[int, ...]]:
        """The classes no request falls in (see ``holds``), as cubes: one per set of
        agent classes whose depth-0 subagents reach the same sandbox classes."""
        if self.depth0 is None:
            return []
        by_mask: dict[int, int] = defaultdict(int)
        for a in range(len(self.agents)):
            by_mask[self.depth0_sandboxes(a)] |= 1 << a
        everything = [(1 << len(d)) - 1 for d in self.dims()]
        return [(agents, *everything[1:4], everything[4] & ~mask, 1 << self.depth0)
                for mask, agents in by_mask.items() if everything[4] & ~mask]

    def depth0_flags(self, flags: Mapping[str, Any], sandbox: int) -> dict[str, Any]:
        """What makes the request ``flags`` (of sandbox class ``sandbox``) a subagent at
        depth 0: a subagent session key and ``spawn_depth=0``; LookupError where no request
        of that agent and sandbox class is one (``holds``)."""
        raw = flags.get("agent_id")
        aid = normalize_agent_id(raw) if raw is not None else self._fresh_agent
        key = self._depth0_key(aid, sandbox)
        if key is None:
            raise LookupError(f"no subagent at depth 0 of agent {aid!r} gets the sandbox "
                              f"verdict of class {self.sandbox[sandbox].label!r}")
        out = {"session_key": key, "spawn_depth": 0}
        if raw is None:  # the key's agent must be the request's (2026.9)
            out["agent_id"] = aid
        return out

    def _depth0_key(self, aid: str, sandbox: int) -> str | None:
        """A subagent session key for the depth-0 representative of agent ``aid`` in sandbox
        class ``sandbox`` (its flags set ``spawn_depth=0``), or None: the class is empty.
        The key names an agent: 2026.9 requires it to be the request's, 2026.3 reads its
        agent only for the sandbox mode (the request names its agent)."""
        verdict = self.sandbox[sandbox].key
        forced = ("sandboxed", True) in self.sandbox[sandbox].flags  # any key will do
        if any(v.agent_selection for v in self.views) or forced:
            candidates = [aid]
        else:
            candidates = sorted({a for v in self.views for a in v.sandbox_modes.agents}
                                | {aid, self._fresh_agent})
        for owner in candidates:
            key = f"agent:{owner}:subagent:{OTHER}"
            got = tuple(derive_sandboxed(v.sandbox_modes, key, aid if v.agent_selection
                                         else None) for v in self.views)
            if forced or got == verdict:
                return key
        return None
