"""``toolc report``: one self-contained HTML file to look at access (agents x tools).

Each cell says whether an agent's requests see a tool always, only for some providers,
channels, groups or senders, or never; the page's filters (request kind, provider, channel,
group, sender) narrow the classes a cell is computed over, and hovering a cell names the
classes that see it. With a base build the exact access delta (``review.delta``, the one
``toolc diff`` prints) marks every gained and lost cell.

The page gets the factored form of every class's tool set (``semantics.factored``), never
the product: per availability gate, the agent-side states (their classes as cubes, and the
values ``present, full, part``) and the channel classes grouped by their group layer's
content. A class's tools are ``e(present) & (full | part & mention)``, so for the classes a
filter keeps the page needs per state only ``AND`` and ``OR`` of the group contents (they
meet the state only through these): ``always = AND_e & (full | part & AND_m)`` and ``ever =
full & OR_e | part & OR_em``, evaluated per distinct witness-relevant present set. That
stays small at 500 agents x 2,000 tools x ~44,000 channel classes. Bitsets travel as runs
(``start.length...`` in base 36), which keeps "every channel class" one token long, each
distinct one once (``bits``; the structures hold indices).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..audit.access_md import default_route, routing_rows
from ..audit.words import Words
from ..pipeline.render import environment
from ..semantics.access import ClassSpace, Klass, TablesView
from ..semantics.factored import Content, Evaluator, bit_indices, eval_content, gate_channels
from ..semantics.routes import RouteTable
from .delta import compute_delta

REPORT_FORMAT = 1
OTHER_GROUP = "toolc-other"  # the group id access classes use for "any other group"
SENDER_KEYS = ("sender_id", "sender_e164", "sender_username", "sender_name")


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """The page and what it shows (for the CLI's summary line)."""

    html: str
    agents: int
    tools: int
    classes: int
    gained: int  # cells with a gain (0 without a base)
    lost: int


def _b36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def runs(bits: int) -> str:
    """A bitset as ``start.length`` runs in base 36 (the page decodes them to BigInts)."""
    out: list[str] = []
    digits = bin(bits)[:1:-1]
    start = digits.find("1")
    while start >= 0:
        end = digits.find("0", start)
        end = len(digits) if end < 0 else end
        out += [_b36(start), _b36(end - start)]
        start = digits.find("1", end)
    return ".".join(out)


def _channel_fields(k: Klass) -> list[str]:
    """A channel class: [label, channel, group, sender] (the filter values; ``-`` for
    none)."""
    flags = dict(k.flags)
    group = flags.get("group_id")
    sender = next((f"{key.removeprefix('sender_')}:{flags[key]}" for key in SENDER_KEYS
                   if key in flags), None)
    return [k.label, str(flags.get("message_provider") or "-"),
            "-" if group is None else "any other group" if group == OTHER_GROUP else str(group),
            sender or ("any other sender" if group is not None else "-")]


def _variants(space: ClassSpace) -> list[tuple[tuple[int, int, int], str]]:
    """The request kinds the page offers: the default request (owner class 0: not the owner,
    or, 2026.9, owner unknown), each other owner class, sandboxed, each subagent class."""
    out = [((0, 0, 0), f"default request ({space.owner[0].label}, not sandboxed, not a "
                       "subagent)")]
    out += [((o, 0, 0), klass.label) for o, klass in enumerate(space.owner) if o]
    out.append(((0, 1, 0), "sandboxed"))
    out += [((0, 0, k), klass.label) for k, klass in enumerate(space.subagent) if k]
    return out


class _Pool:
    """Bitsets as runs, each distinct one stored once (``bits`` in the data; states and
    groups hold indices into it)."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._ids: dict[str, int] = {}

    def ref(self, bits: int) -> int:
        text = runs(bits)
        found = self._ids.get(text)
        if found is None:
            found = self._ids[text] = len(self.items)
            self.items.append(text)
        return found


def _content(c: Content, everything: int, pool: _Pool) -> list[Any]:
    """A group layer's content: [mention, fixed, [[witness, allow pass, deny pass]...]]
    (``fixed`` is -1, every tool, for no group layer: written as every tool's bits)."""
    mention, fixed, layers = c
    return [pool.ref(mention), pool.ref(fixed & everything),
            [[pool.ref(w & everything), pool.ref(a), pool.ref(d)] for w, a, d in layers]]


def _gates(space: ClassSpace, pool: _Pool) -> dict[str, Any]:
    """The factored access sets (see the module docstring) as the page reads them.

    A message channel's availability gate changes an agent-side state only through its
    present set, unless a stripping layer of the agent side tests a tool whose presence
    varies between gates. So each state is written once, its tools before the gate's
    present set is applied (``full``, ``part``), with the key of its present sets per gate
    (``presents``); the few whose layers do test such a tool are written per gate
    (``fallback``), evaluated there as ``semantics.factored`` does.

    ``{"gates": [{"groups": [[content, channel classes]...], "fallback": [state...]}],
    "states": [[full, part, presents key, [[agents, providers, o, s, k]...]]...],
    "presents": [[present per gate]...], "wmask": bits}``; a fallback state is ``[present,
    full, part, members]``."""
    everything = (1 << len(space.tool_names)) - 1
    ev = Evaluator(space, everything)
    if space.coupled:
        return _coupled_gates(space, ev, pool)
    view = space.views[0]
    nonopt = view.non_optional & everything
    gates = sorted(gate_channels(space).items())
    out_gates: list[dict[str, Any]] = [
        {"groups": [[_content(contents[0], everything, pool), pool.ref(cbits)]
                    for contents, cbits in ev.channel_groups(channels)], "fallback": []}
        for _, channels in gates]
    wanted = {key for key, _ in _variants(space)}  # the request kinds the page offers
    presents: dict[tuple[Any, ...], tuple[int, list[int]]] = {}
    shared: dict[tuple[int, int, int], list[Any]] = {}
    fallback: list[dict[tuple[int, int, int], list[Any]]] = [{} for _ in gates]
    for aps in ev.ap_states():
        main, sandbox, ap_ok, gate_verdicts = aps.inputs[0]
        agents: dict[int, int] = {}
        for a, pbits in aps.members:
            agents[a] = agents.get(a, 0) | pbits
        cubes = _agent_cubes(agents)
        # a lean agent's lean tools are visible only where a layer keeps them (x_states)
        visible = nonopt & ~view.lean if aps.lean and aps.lean[0] else nonopt
        for o in range(len(space.owner)):
            pkey = (gate_verdicts, ap_ok, o)
            if pkey not in presents:
                ps = [ev.present(0, gi, gate_verdicts, ap_ok, o) for gi, _ in gates]
                presents[pkey] = (len(presents), ps)
            index, ps = presents[pkey]
            varying = 0
            for p in ps:
                varying |= p ^ ps[0]
            for s, sb in enumerate(space.sandbox):
                for k in range(len(space.subagent)):
                    if (o, s, k) not in wanted or (
                            k == space.depth0 and not aps.depth0 >> s & 1):
                        continue  # not offered, or no request there (ClassSpace.holds)
                    parts = [c for c in (main, sandbox if sb.key[0] else None, ev.subs[0][k])
                             if c is not None]
                    members = [[ab, pb, o, s, k] for ab, pb in cubes]
                    if any(w & varying for c in parts for w, _, _ in c[2]):
                        for g, p in enumerate(ps):
                            values = ev._values(p, main, sandbox if sb.key[0] else None,
                                                ev.subs[0][k], visible)
                            fallback[g].setdefault(values, []).extend(members)
                        continue
                    bits, mention = everything, 0
                    for c in parts:
                        bits &= eval_content(c, ps[0])
                        mention |= c[0]
                    shown = visible | mention
                    key = (bits & shown, bits & ~shown, index)
                    shared.setdefault(key, []).extend(members)
    for g, states in enumerate(fallback):
        out_gates[g]["fallback"] = [
            [pool.ref(present), pool.ref(full), pool.ref(part), _members(m, pool)]
            for (present, full, part), m in states.items()]
    return {
        "gates": out_gates,
        "states": [[pool.ref(full), pool.ref(part), index, _members(m, pool)]
                   for (full, part, index), m in shared.items()],
        "presents": [[pool.ref(p) for p in ps] for _, ps in sorted(presents.values())],
        "wmask": pool.ref(ev.wmask & everything),
    }


def _coupled_gates(space: ClassSpace, ev: Evaluator, pool: _Pool) -> dict[str, Any]:
    """2026.9 builds where a channel side depends on the agent's own toolsBySender or on
    the owner on webchat (``ClassSpace.selectors``): one page gate per (availability gate,
    selector), its channel groups read with that selector and every state of it written as
    that gate's fallback; a state's (agent, owner) members belong to one selector, so every
    class is still counted once."""
    everything = (1 << len(space.tool_names)) - 1
    wanted = {key for key, _ in _variants(space)}
    states = ev.ap_states()
    out_gates: list[dict[str, Any]] = []
    for gi, channels in sorted(gate_channels(space).items()):
        xstates = ev.x_states(gi, states)
        for sel in range(len(space.selectors)):
            groups = [[_content(contents[0], everything, pool), pool.ref(cbits)]
                      for contents, cbits in ev.channel_groups(channels, sel=sel)]
            fallback = []
            for xs in xstates:
                if xs.sel != sel:
                    continue
                members: list[list[int]] = []
                for aps, o, s, k in xs.members:
                    if (o, s, k) not in wanted:
                        continue
                    agents: dict[int, int] = {}
                    for a, pbits in aps.members:
                        agents[a] = agents.get(a, 0) | pbits
                    members += [[ab, pb, o, s, k] for ab, pb in _agent_cubes(agents)]
                if members:
                    present, full, part = xs.values[0]
                    fallback.append([pool.ref(present), pool.ref(full), pool.ref(part),
                                     _members(members, pool)])
            out_gates.append({"groups": groups, "fallback": fallback})
    return {"gates": out_gates, "states": [], "presents": [],
            "wmask": pool.ref(ev.wmask & everything)}


def _agent_cubes(agents: Mapping[int, int]) -> list[tuple[int, int]]:
    """Agent -> provider bits, as (agents bits, provider bits) cubes."""
    by_p: dict[int, int] = {}
    for a, pbits in agents.items():
        by_p[pbits] = by_p.get(pbits, 0) | 1 << a
    return [(abits, pbits) for pbits, abits in by_p.items()]


def _members(members: list[list[int]], pool: _Pool) -> list[list[int]]:
    return [[pool.ref(ab), pool.ref(pb), o, s, k] for ab, pb, o, s, k in members]


def _diff(base: Mapping[str, Any], head: Mapping[str, Any], tools: list[str],
          agents: list[str]) -> tuple[list[list[Any]], list[str]]:
    """The exact delta as [agent row, tool index, "+" or "-", words]; agents that only the
    base has are appended to ``agents`` (returned: the rows added)."""
    space = ClassSpace([TablesView(base, tools), TablesView(head, tools)], tools)
    words = Words(space)
    rows = {label: i for i, label in enumerate(agents)}
    extra: list[str] = []
    index = {t: i for i, t in enumerate(tools)}
    cells: dict[tuple[int, int, str], list[str]] = {}
    for change in compute_delta(space):
        for sign, lines in (("+", change.gained), ("-", change.lost)):
            for cube, _count in lines:
                where = words.cube(cube)
                for a in bit_indices(cube[0]):
                    label = space.agents[a].label
                    if label not in rows:
                        rows[label] = len(agents) + len(extra)
                        extra.append(label)
                    cells.setdefault((rows[label], index[change.tool], sign), []).append(where)
    return [[a, t, sign, "; ".join(w)] for (a, t, sign), w in sorted(cells.items())], extra


def _routes(routes: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Each agent's bindings (``ACCESS.md``'s "Routing" rows: agent, what routes to it,
    ``file:line:col`` or None for one OpenClaw's loader adds), the default route and the
    session settings; None for a build from before routing."""
    if routes is None:
        return None
    table = RouteTable.from_json(routes)
    return {"rows": [[agent, words, where] for agent, words, where in routing_rows(table)],
            "default": default_route(table, str),
            "session": f"Session keys: dmScope {table.dm_scope}, groupScope "
                       f"{table.group_scope}."}


def report_data(head: Mapping[str, Any], base: Mapping[str, Any] | None = None, *,
                title: str = "toolc access report",
                routes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything the page shows, JSON-ready (``head`` and ``base``: tables.json data;
    ``routes``: head's routes.json)."""
    tools = list(head["tools"])
    if base is not None:
        tools += [t for t in base["tools"] if t not in set(tools)]
    view = TablesView(head, tools)
    space = ClassSpace([view], tools)
    pool = _Pool()
    agents = [k.label for k in space.agents]
    data: dict[str, Any] = {
        "format": REPORT_FORMAT, "title": title, "tools": tools,
        "providers": [[k.label, k.group[0] if k.group else k.label] for k in space.providers],
        "channels": [_channel_fields(k) for k in space.channels],
        "variants": [{"key": list(key), "label": label} for key, label in _variants(space)],
        "agents": agents, **_gates(space, pool), "bits": pool.items, "diff": None,
        "classes": space.size(), "routes": _routes(routes),
    }
    if base is not None:
        cells, extra = _diff(base, head, tools, agents)
        data["agents"] = agents + extra  # rows only the base has: never, and the losses
        data["diff"] = cells
    return data


def render_report(data: Mapping[str, Any]) -> str:
    """The page: the template with the data embedded as JSON (``script_json``: no ``<``,
    ``>`` or ``&`` in it, so no name in the definitions can end or re-mode its script)."""
    return environment().get_template("report.html.jinja").render(
        title=data["title"], data=data)


def build_report(head: Mapping[str, Any], base: Mapping[str, Any] | None = None, *,
                 title: str = "toolc access report",
                 routes: Mapping[str, Any] | None = None) -> Report:
    data = report_data(head, base, title=title, routes=routes)
    diff = data["diff"] or []
    return Report(html=render_report(data), agents=len(data["agents"]), tools=len(data["tools"]),
                  classes=int(data["classes"]),
                  gained=sum(1 for d in diff if d[2] == "+"),
                  lost=sum(1 for d in diff if d[2] == "-"))
