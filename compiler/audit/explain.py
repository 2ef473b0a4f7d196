"""``toolc explain``: one tool's way through the layers for one request, in the definitions'
own words (``tools.deny``, ``channels.telegram.groups."-100123".toolsBySender."id:42".allow``)
and with the ``file:line:col`` of every rule that decided, including the allow list a tool is
missing from. The reference interpreter does the work (tracing which lists each layer reads).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..diagnostics import BUILTIN, Pos, did_you_mean
from ..pipeline.analyze import Resolved
from ..pipeline.model import ToolDef
from ..rules.context import Context
from ..rules.names import normalize_tool_name
from ..semantics.reference import Decision, ReferenceInterpreter, Resolution, StepTrace
from ..targets import DEFAULT_KEY


class UnknownToolError(ValueError):
    """The tool is not in the catalog (the message suggests the closest name)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Detail:
    """One line of evidence: what the definitions say there."""

    text: str
    pos: Pos | None = None  # None: nothing to point at; BUILTIN: toolc's built-in rule

    def where(self) -> str | None:
        if self.pos is None:
            return None
        return "built-in" if self.pos == BUILTIN else str(self.pos)


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One layer: its result, the rule that decided (with its position) and the evidence."""

    layer: str
    result: str  # present, absent, kept, removed, skipped, not reached
    rule: str
    pos: Pos | None = None
    details: tuple[Detail, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Explanation:
    tool: str
    visible: bool
    rows: tuple[Row, ...]
    resolution: Resolution | None  # None: the tool can never be present
    target: str = DEFAULT_KEY  # the OpenClaw release whose semantics decided

    @property
    def decided_by(self) -> str | None:
        """The layer that removed the tool (None when visible)."""
        return next((r.layer for r in self.rows if r.result in ("absent", "removed")), None)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape (documented in docs/reference/cli.md, toolc explain)."""
        def pos(p: Pos | None) -> str | None:
            return None if p is None else "built-in" if p == BUILTIN else str(p)

        return {"tool": self.tool, "visible": self.visible, "decided_by": self.decided_by,
                "target": {"openclaw": self.target},
                "layers": [{"layer": r.layer, "result": r.result, "rule": r.rule,
                            "pos": pos(r.pos),
                            "details": [{"text": d.text, "pos": pos(d.pos)}
                                        for d in r.details]}
                           for r in self.rows]}


def catalog_tool(resolved: Resolved, raw: str) -> str:
    """The tool a name means, read as policies read names (``Exec``, `` bash `` -> exec)."""
    name = normalize_tool_name(raw)
    if any(t.name == name for t in resolved.defs.tools):
        return name
    hint = did_you_mean(name, [t.name for t in resolved.defs.tools])
    raise UnknownToolError(f'unknown tool "{raw.strip()}"' + (f" ({hint})" if hint else ""))


def explain(resolved: Resolved, tool: str, context: dict[str, Any], *,
            strict: bool = False) -> Explanation:
    """Explain ``tool`` (a catalog name, see ``catalog_tool``) for one request, as the
    release decides it: a group it ignores is said to be ignored by the group layer. With
    ``strict`` (``toolc explain``, ``toolc.api.explain``), such a group is refused instead
    (UntrustedGroupError), as ``resolve`` refuses it."""
    interpreter = ReferenceInterpreter(resolved, trace=True)
    ctx = Context.of(**context)
    if strict is not False:
        interpreter.refuse_ignored_group(ctx)
    if tool not in {t.name for t in resolved.tools}:
        never = _never_present(resolved, next(t for t in resolved.defs.tools if t.name == tool))
        return replace(never, target=resolved.target.key)
    result = interpreter.run(ctx)
    inventory = result.inventory[tool]
    rows = [_inventory_row(tool, inventory)]
    if inventory.kept:
        rows += [_step_row(step, step.decisions.get(tool)) for step in result.steps]
    return Explanation(tool=tool, visible=tool in result.names, rows=tuple(rows),
                       resolution=result, target=resolved.target.key)


def _never_present(resolved: Resolved, t: ToolDef) -> Explanation:
    """A catalog tool the build leaves out entirely (disabled plugin, undeclared channel)."""
    if t.channel is not None and t.channel not in resolved.channels:
        why = f"channel tool of channels.{t.channel}, which is not declared"
    elif not resolved.defs.plugins_enabled:
        why = "plugin tool, and plugins.enabled is false"
    else:
        why = f"tool of plugin {t.plugin}, which plugins.entries disables"
    rule = f"never present: {why}"
    row = Row(layer="inventory", result="absent", rule=rule, pos=t.pos,
              details=(Detail(text=rule, pos=t.pos),))
    return Explanation(tool=t.name, visible=False, rows=(row,), resolution=None)


def _inventory_row(tool: str, d: Decision) -> Row:
    pos = d.entry.pos if d.entry else None
    rule = f"{tool} is in the catalog" if d.kept else d.reason
    return Row(layer="inventory", result="present" if d.kept else "absent", rule=rule, pos=pos,
               details=(Detail(text=rule, pos=pos),))


def _step_row(step: StepTrace, d: Decision | None) -> Row:
    layer = step.layer or step.label
    notes = tuple(Detail(text=n.text, pos=n.pos) for n in step.notes)
    if not step.active:
        return Row(layer=layer, result="skipped", rule=step.skip, details=notes)
    if d is None:
        return Row(layer=layer, result="not reached", rule="removed by an earlier layer")
    rule, pos, evidence = _rule(step, d)
    return Row(layer=layer, result="kept" if d.kept else "removed", rule=rule, pos=pos,
               details=(*notes, *evidence))


def _rule(step: StepTrace, d: Decision) -> tuple[str, Pos | None, tuple[Detail, ...]]:
    """The deciding rule's words and position, and every line of evidence for it."""
    allows = [lst for lst in step.lists if lst.kind in ("allow", "alsoAllow")]
    denies = [lst for lst in step.lists if lst.kind == "deny"]
    if d.entry is not None and d.rule in ("deny", "allow", "exec"):
        e = d.entry
        lst = step.list_of(e, ("deny",) if d.rule == "deny" else ("allow", "alsoAllow"))
        label = lst.label if lst else step.label
        if lst is not None and lst.kind == "alsoAllow" and e.text == "*" and e.pos == lst.pos:
            rule = f"{label} without an allow list keeps every tool"
        elif d.rule == "exec":
            # the tool whose allowance carries apply_patch (the target's: exec or write)
            implied = d.reason.rsplit(" allows ", 1)[-1]
            rule = (f'allowed by "{e.text}" in {label}, which allows {implied} (apply_patch '
                    "follows)")
        else:
            rule = f'{"denied" if d.rule == "deny" else "allowed"} by "{e.text}" in {label}'
        # a kept tool also passed the deny lists: show them, they are part of the answer
        passed = () if d.rule == "deny" else tuple(
            Detail(text=f"not in {lst.label}", pos=lst.pos) for lst in denies)
        return rule, e.pos, (Detail(text=rule, pos=e.pos), *passed)
    if d.rule == "closed":
        missing = tuple(Detail(text=f"not in {lst.label}", pos=lst.pos) for lst in allows)
        rule = "not in " + " nor ".join(lst.label for lst in allows) if allows else d.reason
        return rule, allows[0].pos if allows else None, missing
    # open: no allow list (or one ignored by D3), and no deny entry matches
    lines: tuple[Detail, ...] = ()
    if step.stripped:
        lines += tuple(Detail(text=f"{lst.label} is ignored: it names no core tool present "
                              "here (plugin-only allowlist, D3)", pos=lst.pos) for lst in allows)
        rule = "allow list ignored (plugin-only, D3)"
    else:
        rule = "no allow list"
    lines += tuple(Detail(text=f"not in {lst.label}", pos=lst.pos) for lst in denies)
    if denies:
        rule += "; not in " + " nor ".join(lst.label for lst in denies)
    return rule, (lines[0].pos if lines else None), lines
