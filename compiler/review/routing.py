"""The routing part of ``toolc diff``: the messages that run elsewhere between two builds, and
the tools their runs gain or lose because of it.

A binding change is reviewed as a gateway sees it: for a message on channel C in chat P
(account A, guild G, ...), which agent runs it, under which session key, and with which
tools, before and after. ``semantics.messages`` enumerates the message classes the two
builds' bindings tell apart; for every class whose route changes (another agent, another
session key, or a refusal on one side only) this evaluates its run on each side, with that
side's route, over every provider and owner class (``factored.class_tools``). A session key
that changes alone can change tools too: under 2026.9 a group's policy applies only through
the key, so ``groupScope: main`` takes the group's restrictions away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..semantics.access import ClassSpace
from ..semantics.factored import bit_indices, class_tools
from ..semantics.messages import MessageClass, MessageSpace, Point, route_command
from ..semantics.routes import Message, Routed, RouteTable


@dataclass(frozen=True, slots=True, kw_only=True)
class RouteChange:
    """One message class that runs elsewhere: its tools gained and lost, each with the
    number of (provider, owner) classes of its run where that happens (of ``classes``)."""

    klass: MessageClass
    gained: dict[str, int]
    lost: dict[str, int]
    classes: int

    @property
    def message(self) -> Message:
        return self.klass.message


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutingDelta:
    """The routing view of a diff. ``messages``: how many message classes the two builds'
    bindings make (None when both route alike: ``routes.json`` is the same on both sides,
    so no message can run elsewhere, and none are enumerated)."""

    messages: int | None
    changes: list[RouteChange]
    sources: tuple[tuple[str | None, ...], ...]  # per side, each binding's file:line:col

    @property
    def widened(self) -> bool:
        return any(c.gained for c in self.changes)

    def where(self, side: int, routed: Routed) -> str:
        """The deciding binding of a route, in words: its tier, and where it is written
        (or that OpenClaw's loader added it)."""
        if routed.refused is not None:
            return "refused"
        if routed.binding is None:
            return routed.matched_by
        source = self.sources[side][routed.binding]
        return f"{routed.matched_by} at {source}" if source else \
            f"{routed.matched_by}, added by OpenClaw's loader"


def compute_routing(routes: Sequence[Mapping[str, Any] | None], space: ClassSpace
                    ) -> RoutingDelta | None:
    """The messages that run elsewhere from base to head (``routes``: each side's
    ``routes.json``; None for a build from before routing, which has no routing view)."""
    if any(r is None for r in routes):
        return None
    tables = [RouteTable.from_json(r) for r in routes if r is not None]
    sources = tuple(tuple(b.source for b in t.bindings) for t in tables)
    if same_routing(*routes):
        return RoutingDelta(messages=None, changes=[], sources=sources)
    messages = MessageSpace(tables, space)
    changed = messages.changed()
    variants = [(p, o) for p in range(len(space.providers)) for o in range(len(space.owner))]
    runs = {k.message: [_vary(k.points, p, o) for p, o in variants] for k in changed}
    found = class_tools(space, [x for per in runs.values() for pts in per for x in pts if x])
    names = space.tool_names
    out = []
    for k in changed:
        gained: dict[str, int] = {}
        lost: dict[str, int] = {}
        for pts in runs[k.message]:
            before, after = (0 if x is None else found[x][side] for side, x in enumerate(pts))
            for i in bit_indices(after & ~before):
                gained[names[i]] = gained.get(names[i], 0) + 1
            for i in bit_indices(before & ~after):
                lost[names[i]] = lost.get(names[i], 0) + 1
        out.append(RouteChange(klass=k, gained=gained, lost=lost, classes=len(variants)))
    return RoutingDelta(messages=len(messages.classes), changes=out, sources=sources)


def same_routing(base: Mapping[str, Any] | None, head: Mapping[str, Any] | None) -> bool:
    """Whether two ``routes.json`` route every message alike: equal but for where their
    bindings are written (a definitions file that grew a line above them)."""
    if base is None or head is None:
        return base is head

    def routing(routes: Mapping[str, Any]) -> dict[str, Any]:
        return {**routes, "bindings": [row[:-1] for row in routes["bindings"]]}

    return routing(base) == routing(head)


def _vary(points: tuple[Point | None, ...] | None, provider: int, owner: int
          ) -> tuple[Point | None, ...]:
    """A run's classes with another provider and owner class (the message fixes the rest)."""
    assert points is not None
    return tuple(None if p is None else (p[0], provider, p[2], owner, p[4], p[5])
                 for p in points)


# -- words -----------------------------------------------------------------------------------
def headline(change: RouteChange) -> str:
    """What moves: "agent main -> agent viewer", or the session key alone."""
    before, after = change.klass.routes
    if change.klass.agent_changed:
        return f"{_agent(before)} -> {_agent(after)}"
    return f"{_agent(before)}, another session key"


def _agent(r: Routed) -> str:
    return "refused" if r.refused is not None else f"agent {r.agent_id}"


def side_words(delta: RoutingDelta, side: int, r: Routed) -> str:
    """A route's session key and deciding binding (or OpenClaw's reason for refusing)."""
    if r.refused is not None:
        return f"refused: {r.refused}"
    return f"session {r.session_key} ({delta.where(side, r)})"


def folded(changes: Sequence[RouteChange]) -> list[tuple[RouteChange, list[RouteChange]]]:
    """Changes that read alike (the same agents and deciding bindings on each side, the
    same tools gained and lost: a peer binding moves the group, the channel chat of the same
    id and the threads under it), each first one with the others, in order."""
    groups: dict[tuple[Any, ...], tuple[RouteChange, list[RouteChange]]] = {}
    for c in changes:
        key = (*((r.refused is not None, r.agent_id, r.matched_by, r.binding)
                 for r in c.klass.routes),
               tuple(c.gained.items()), tuple(c.lost.items()), c.klass.agent_changed)
        if key in groups:
            groups[key][1].append(c)
        else:
            groups[key] = (c, [])
    return list(groups.values())


def tool_parts(change: RouteChange) -> list[tuple[str, list[str], str]]:
    """``(sign, tools, qualifier)`` groups: tools gained (lost) in every provider and owner
    class of the run, then those gained (lost) in some, per count."""
    out: list[tuple[str, list[str], str]] = []
    for sign, counts in (("+", change.gained), ("-", change.lost)):
        by_count: dict[int, list[str]] = {}
        for tool, n in counts.items():
            by_count.setdefault(n, []).append(tool)
        for n in sorted(by_count, reverse=True):
            where = "" if n == change.classes else \
                f"in {n:,} of {change.classes:,} provider and owner classes"
            out.append((sign, by_count[n], where))
    return out


def route_json(delta: RoutingDelta, side: int, r: Routed) -> dict[str, Any]:
    if r.refused is not None:
        return {"refused": r.refused, "agent_id": None, "session_key": None,
                "matched_by": None, "binding": None, "added_by_loader": False}
    source = None if r.binding is None else delta.sources[side][r.binding]
    return {"refused": None, "agent_id": r.agent_id, "session_key": r.session_key,
            "matched_by": r.matched_by, "binding": source,
            "added_by_loader": r.binding is not None and source is None}


def to_json(delta: RoutingDelta | None) -> dict[str, Any] | None:
    """The diff JSON's ``routing`` (docs/reference/review.md)."""
    if delta is None:
        return None
    return {
        "messages": delta.messages, "changed": len(delta.changes),
        "widened": delta.widened,
        "changes": [{
            "words": c.klass.words, "message": c.message.keywords() | {
                "channel": c.message.channel},
            "witness": f"toolc route {route_command(c.message)}",
            "agent_changed": c.klass.agent_changed,
            "before": route_json(delta, 0, c.klass.routes[0]),
            "after": route_json(delta, 1, c.klass.routes[1]),
            "classes": c.classes,
            "gained": [{"tool": t, "count": n} for t, n in c.gained.items()],
            "lost": [{"tool": t, "count": n} for t, n in c.lost.items()],
        } for c in delta.changes],
    }
