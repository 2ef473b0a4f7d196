"""Documented decisions: where toolc deliberately answers differently from OpenClaw, per release
(``DECISIONS`` for 2026.3.2, ``DECISIONS_9`` for 2026.9.6).

Each entry names the README decision it stands for and says exactly which differences it
covers; a difference no entry covers fails ``make conformance``. Keep this list short: a new
entry needs a new line in the README's decision list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class Asker(Protocol):
    def resolve(self, cfg: Mapping[str, Any], plugins: Any, ctxs: list[dict[str, Any]]
                ) -> list[list[str]]: ...


Check = Callable[[Asker, Mapping[str, Any], Any, dict[str, Any], list[str], list[str]], bool]


@dataclass(frozen=True, slots=True)
class Decision:
    name: str
    readme: str  # the README entry under "Decisions"
    covers: Check


def _blank_values(oracle: Asker, cfg: Mapping[str, Any], plugins: Any, ctx: dict[str, Any],
                  ours: list[str], theirs: list[str]) -> bool:
    """toolc treats a blank string as absent; OpenClaw may take an explicit "" as "none"."""
    blank = {k for k, v in ctx.items() if isinstance(v, str) and not v.strip()}
    if not blank:
        return False
    trimmed = {k: v for k, v in ctx.items() if k not in blank}
    return oracle.resolve(cfg, plugins, [trimmed])[0] == ours


DECISIONS = (
    Decision("blank-values-are-absent", "Blank and ill-typed request values", _blank_values),
)


def explain(oracle: Asker, cfg: Mapping[str, Any], plugins: Any, ctx: dict[str, Any],
            ours: list[str], theirs: list[str]) -> str | None:
    """The decision that covers this difference, if any."""
    for decision in DECISIONS:
        if decision.covers(oracle, cfg, plugins, ctx, ours, theirs):
            return decision.name
    return None


# -- openclaw@2026.9.6 -----------------------------------------------------------------------
# Answers there are a tool list or a refusal ({"error_kind": ...}); a check sees both. Empty:
# seeds 1-3 of `python -m conformance --openclaw 2026.9` need no decision (every difference they
# found was a toolc bug, fixed); a new entry needs a line in docs/reference/semantics.md's list.
DECISIONS_9: tuple[Decision, ...] = ()


def explain9(oracle: Asker, cfg: Mapping[str, Any], plugins: Any, ctx: dict[str, Any],
             ours: Any, theirs: Any) -> str | None:
    """The 2026.9 decision that covers this difference, if any."""
    for decision in DECISIONS_9:
        if decision.covers(oracle, cfg, plugins, ctx, ours, theirs):
            return decision.name
    return None


# -- messages in (the routing mode, ``--routing``) ---------------------------------------------
# A check sees the config, the message, and both answers in the routing mode's shape
# ({"route": {...}, "tools": [...]} or a refusal {"error_kind", "why"}).
RouteCheck = Callable[[Mapping[str, Any], Mapping[str, Any], Any, Any], bool]


@dataclass(frozen=True, slots=True)
class RouteDecision:
    name: str
    readme: str  # the entry of docs/reference/semantics.md's decision list
    covers: RouteCheck


def _undeclared_binding_agent(cfg: Mapping[str, Any], msg: Mapping[str, Any], ours: Any,
                              theirs: Any) -> bool:
    """toolc refuses definitions with a binding to an agent the roster does not declare
    (TC170; under 2026.3 also ``main`` once a roster is declared), where 2026.3.2 sends what
    the binding matches to the default agent (``pickFirstExistingAgentId``)."""
    return ("route" in theirs and ours.get("error_kind") == "refused"
            and str(ours.get("why", "")).endswith("TC170"))


# 2026.9.6's loader refuses such a binding itself ("Unknown agent id"): no decision needed.
DECISIONS_ROUTE_9: tuple[RouteDecision, ...] = ()
DECISIONS_ROUTE_3 = (
    RouteDecision("binding-to-undeclared-agent", "Bindings name declared agents",
                  _undeclared_binding_agent),
)


def explain_route(decisions: tuple[RouteDecision, ...], cfg: Mapping[str, Any],
                  msg: Mapping[str, Any], ours: Any, theirs: Any) -> str | None:
    """The routing decision that covers this difference, if any."""
    for decision in decisions:
        if decision.covers(cfg, msg, ours, theirs):
            return decision.name
    return None
