"""The `$ref` pass: keep, wrap or inline each reference as the dialect allows, before the walk.

Running it first means the walker never follows references: inlined copies are walked like any
other node, kept references point at `$defs` entries that are walked once under `("$defs", name)`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

from .keywords import DEFS_PREFIX, canonical, children, is_defs_ref, resolve_local
from .merge import merge_schemas
from .model import NoteList, Pointer, Severity

# Inlining a diamond-shaped graph of definitions grows exponentially; stop well before that.
INLINE_BUDGET: Final = 2_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class RefPolicy:
    """What a dialect accepts: `inline` none / refs that are not `#/$defs/<name>` / all;
    `$ref` siblings kept, wrapped as `anyOf: [{$ref}]` + siblings, or inlined when a sibling is
    one of `blocking_siblings`; the severity of a note for recursion (None: silently fine) and for
    refs outside the document."""

    inline: Literal["none", "non_defs", "all"] = "none"
    siblings: Literal["keep", "wrap", "inline"] = "keep"
    blocking_siblings: frozenset[str] = frozenset()
    root_ref_ok: bool = True
    recursion: Severity | None = None
    external: Severity = "error"
    prune_defs: bool = True


def resolve_refs(schema: dict[str, Any], policy: RefPolicy, notes: NoteList) -> dict[str, Any]:
    """Return `schema` with every `$ref` in the form `policy` accepts."""
    return _RefPass(schema, policy, notes).run()


def def_cycles(schema: dict[str, Any]) -> list[str]:
    """Names of root `$defs` entries that reach themselves through `$ref`s."""
    defs = schema.get("$defs")
    if not isinstance(defs, dict):
        return []
    edges = {name: set(_defs_refs(body)) for name, body in defs.items()}
    return [name for name in defs if name in _reachable(edges, edges[name])]


def _reachable(edges: dict[str, set[str]], start: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name not in seen and name in edges:
            seen.add(name)
            todo.extend(edges[name])
    return seen


def _defs_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and is_defs_ref(ref):
            yield _def_name(ref)
        for _, child in children(node):
            yield from _defs_refs(child)


def _def_name(ref: str) -> str:
    return ref[len(DEFS_PREFIX) :].replace("~1", "/").replace("~0", "~")


class _RefPass:
    def __init__(self, root: dict[str, Any], policy: RefPolicy, notes: NoteList) -> None:
        self.root = root
        self.policy = policy
        self.notes = notes
        self.budget = INLINE_BUDGET

    def run(self) -> dict[str, Any]:
        defs = self.root.get("$defs")
        body = {k: v for k, v in self.root.items() if k != "$defs"}
        out = self.children(body, (), ("#",))
        if self.policy.inline != "all" and isinstance(defs, dict):
            out["$defs"] = {
                name: self.node(d, ("$defs", name), (DEFS_PREFIX + name,))
                for name, d in defs.items()
            }
            self._prune(out)
            self._report_cycles(out)
        return out

    def node(self, node: Any, at: Pointer, stack: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str):
            return self.ref(node, at, stack)
        return self.children(node, at, stack)

    def children(self, node: dict[str, Any], at: Pointer, stack: tuple[str, ...]) -> dict[str, Any]:
        out = dict(node)
        if self.policy.inline != "none" and at != ():
            # Nested $defs are only reachable through non-root pointers, which were inlined.
            out.pop("$defs", None)
        for rel, child in children(node):
            if rel[0] == "$defs" and "$defs" not in out:
                continue
            _assign(out, rel, self.node(child, (*at, *rel), stack))
        return out

    def ref(self, node: dict[str, Any], at: Pointer, stack: tuple[str, ...]) -> dict[str, Any]:
        ref: str = node["$ref"]
        siblings = self.children({k: v for k, v in node.items() if k != "$ref"}, at, stack)
        if not ref.startswith("#"):
            return self._external(ref, siblings, at)
        found, target = resolve_local(self.root, ref)
        if not found:
            self.notes.add(
                "ref-unresolved",
                (*at, "$ref"),
                f"$ref {ref} does not resolve inside the parameters schema",
                severity="error",
            )
            return siblings
        if not self._must_inline(ref, siblings):
            if siblings and self.policy.siblings == "wrap":
                return {"anyOf": [{"$ref": ref}], **siblings}
            return {"$ref": ref, **siblings}
        return self._inline(ref, target, siblings, at, stack)

    def _must_inline(self, ref: str, siblings: dict[str, Any]) -> bool:
        policy = self.policy
        if policy.inline == "all":
            return True
        if policy.inline == "non_defs" and not is_defs_ref(ref):
            return not (ref == "#" and policy.root_ref_ok)
        if policy.siblings == "inline":
            return any(k in policy.blocking_siblings for k in siblings)
        return False

    def _inline(
        self, ref: str, target: Any, siblings: dict[str, Any], at: Pointer, stack: tuple[str, ...]
    ) -> dict[str, Any]:
        if ref in stack:
            if self.policy.inline != "all" and is_defs_ref(ref):
                return {"$ref": ref, **siblings}  # recursion through $defs stays a reference
            self.notes.add(
                "ref-recursive",
                (*at, "$ref"),
                f"recursive $ref {ref} cannot be expressed in this dialect",
                severity="error",
            )
            return siblings
        self.budget -= len(canonical(target))
        if self.budget < 0:
            self.notes.add(
                "ref-inline-too-large",
                (*at, "$ref"),
                f"inlining $refs exceeds {INLINE_BUDGET} characters",
                severity="error",
            )
            return siblings
        body = self.node(copy.deepcopy(target), at, (*stack, ref))
        if not isinstance(body, dict):
            body = {} if body is True else {"not": {}}
        self.notes.add("ref-inlined", at, f"$ref {ref} inlined")
        return self._with_siblings(body, siblings, at)

    def _with_siblings(
        self, body: dict[str, Any], siblings: dict[str, Any], at: Pointer
    ) -> dict[str, Any]:
        if not siblings:
            return body
        merged = merge_schemas(siblings, body)
        if merged is not None:
            return merged
        self.notes.add(
            "ref-siblings-override",
            at,
            "$ref siblings conflict with the target; the siblings win",
            severity="warning",
            lossy=True,
        )
        return {**body, **siblings}

    def _external(self, ref: str, siblings: dict[str, Any], at: Pointer) -> dict[str, Any]:
        severity = self.policy.external
        self.notes.add(
            "ref-external",
            (*at, "$ref"),
            f"$ref {ref} points outside the schema",
            severity=severity,
        )
        return {"$ref": ref, **siblings} if severity != "error" else siblings

    def _prune(self, out: dict[str, Any]) -> None:
        defs = out.get("$defs")
        if not self.policy.prune_defs or not isinstance(defs, dict):
            return
        body = {k: v for k, v in out.items() if k != "$defs"}
        edges = {name: set(_defs_refs(d)) for name, d in defs.items()}
        keep = _reachable(edges, set(_defs_refs(body)))
        out["$defs"] = {name: d for name, d in defs.items() if name in keep}
        if not out["$defs"]:
            del out["$defs"]

    def _report_cycles(self, out: dict[str, Any]) -> None:
        if self.policy.recursion is None:
            return
        for name in def_cycles(out):
            self.notes.add(
                "ref-recursive",
                ("$defs", name),
                f"$defs/{name} is recursive; the provider supports recursion only partially",
                severity=self.policy.recursion,
            )


def _assign(out: dict[str, Any], rel: Pointer, value: Any) -> None:
    key = str(rel[0])
    if len(rel) == 1:
        out[key] = value
        return
    container = out[key]
    if isinstance(container, dict):
        out[key] = {**container, rel[1]: value}
    else:
        items = list(container)
        items[int(rel[1])] = value
        out[key] = items
