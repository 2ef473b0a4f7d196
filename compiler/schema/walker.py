"""The one recursive walker every dialect shares.

A dialect is data: a keyword -> action table (pass / strip / strip into the description), a
`$ref` policy and one small `hook` that converts what the table cannot express. Per node the
walker runs the hook, then the table, writes lost constraints into the node's description, then
descends into the subschemas that are left. Walking is top-down, so the path a child is visited
at is its path in the emitted schema.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from .keywords import (
    DEFS_PREFIX,
    SCHEMA_KEYS,
    SCHEMA_LIST_KEYS,
    SCHEMA_MAP_KEYS,
    canonical,
    is_defs_ref,
    render,
    resolve_local,
)
from .merge import merge_schemas
from .model import NoteList, Pointer
from .refs import RefPolicy, def_cycles


class Action(enum.Enum):
    PASS = "pass"
    STRIP = "strip"
    DESCRIBE = "describe"


Hook = Callable[[dict[str, Any], Pointer, "Ctx"], dict[str, Any]]
Verify = Callable[[dict[str, Any]], list[str]]

# Never touched by a table: the walker and the ref pass own these.
_ALWAYS_PASS: Final = frozenset({"description", "$ref", "$defs"})
# Their values are instance data: always quoted as JSON, so "a" and a read differently.
_DATA_KEYWORDS: Final = frozenset({"default", "const", "enum", "examples", "example"})


def actions(
    *, keep: Iterable[str] = (), strip: Iterable[str] = (), describe: Iterable[str] = ()
) -> dict[str, Action]:
    """Build a keyword table from three keyword lists."""
    table = dict.fromkeys(keep, Action.PASS)
    table.update(dict.fromkeys(strip, Action.STRIP))
    table.update(dict.fromkeys(describe, Action.DESCRIBE))
    return table


@dataclass(frozen=True, slots=True, kw_only=True)
class Dialect:
    """Everything that differs between providers. `default` applies to keywords the table
    does not list; `root_actions` override the table at the root only. A dialect with a
    `fallback` is a strict mode: when its rewrite is lossy or `verify` finds problems, the
    fallback dialect's output is emitted instead, with `strict` False."""

    name: str
    actions: Mapping[str, Action]
    default: Action = Action.PASS
    root_actions: Mapping[str, Action] = field(default_factory=dict)
    hook: Hook | None = None
    refs: RefPolicy = field(default_factory=RefPolicy)
    flatten_root_union: bool = True
    strict: bool = False
    fallback: Dialect | None = None
    verify: Verify | None = None

    def action(self, key: str, *, root: bool) -> Action:
        if key in _ALWAYS_PASS:
            return Action.PASS
        if root and key in self.root_actions:
            return self.root_actions[key]
        if key in self.actions:
            return self.actions[key]
        if key.startswith("x-") and "x-*" in self.actions:
            return self.actions["x-*"]
        return self.default


class Ctx(NoteList):
    """Per-walk state: notes, lost constraints waiting for their node's description, and the
    maps the runtime needs to decode calls."""

    def __init__(self, dialect: Dialect, root: dict[str, Any]) -> None:
        super().__init__()
        self.dialect = dialect
        self.root = root
        self.renames: dict[Pointer, dict[str, str]] = {}
        self.nullables: dict[Pointer, tuple[str, ...]] = {}
        self._lost: dict[Pointer, list[str]] = {}
        self._recursive: set[str] | None = None

    def lose(
        self, at: Pointer, key: str, value: Any, *, label: str | None = None, why: str = ""
    ) -> None:
        """Record that constraint `key: value` of the node at `at` no longer reaches the
        provider as schema; it is appended to that node's description when the walker
        reaches it."""
        text = canonical(value) if key in _DATA_KEYWORDS else render(value)
        self._lost.setdefault(at, []).append(f"{label or key}: {text}")
        reason = why or f"{key} is not supported by {self.dialect.name}"
        self.add(
            "constraint-described",
            (*at, key),
            f"{reason}; moved into the description",
            severity="warning",
            lossy=True,
        )

    def flush(self, node: dict[str, Any], at: Pointer) -> dict[str, Any]:
        lost = self._lost.pop(at, None)
        if not lost:
            return node
        text = "(" + "; ".join(sorted(lost)) + ")"
        desc = node.get("description")
        return {**node, "description": f"{desc} {text}" if isinstance(desc, str) and desc else text}

    def drain(self, root: dict[str, Any]) -> dict[str, Any]:
        """Safety net: a loss recorded for a node the walk never reached goes to the root."""
        rest = [text for at in sorted(self._lost, key=repr) for text in self._lost[at]]
        self._lost = {(): rest} if rest else {}
        return self.flush(root, ())

    def resolve(self, member: Any) -> Any:
        """`member` with a local `$ref` replaced by its target (one level), for merges and
        checks that must see through references. References into a recursive definition stay:
        merging them would unroll the recursion forever."""
        if isinstance(member, dict) and isinstance(member.get("$ref"), str):
            if self._recursive is None:
                self._recursive = {DEFS_PREFIX + name for name in def_cycles(self.root)}
            if member["$ref"] in self._recursive or not is_defs_ref(member["$ref"]):
                return member  # `#` and recursive definitions
            found, target = resolve_local(self.root, member["$ref"])
            if found and isinstance(target, dict):
                rest = {k: v for k, v in member.items() if k != "$ref"}
                return merge_schemas(rest, target) or target
        return member


def walk(schema: dict[str, Any], ctx: Ctx) -> dict[str, Any]:
    """Clean `schema` (already normalized and ref-resolved) for `ctx.dialect`."""
    out = _node(schema, (), ctx)
    out = out if isinstance(out, dict) else {"type": "object"}
    return ctx.drain(out)


def _node(node: Any, at: Pointer, ctx: Ctx) -> Any:
    if not isinstance(node, dict):
        return node
    hook = ctx.dialect.hook
    node = hook(dict(node), at, ctx) if hook is not None else dict(node)
    node = _apply_actions(node, at, ctx)
    node = ctx.flush(node, at)
    return _children(node, at, ctx)


def _apply_actions(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        action = ctx.dialect.action(key, root=at == ())
        if action is Action.PASS:
            out[key] = value
        elif action is Action.DESCRIBE:
            ctx.lose(at, key, value)
        elif key != "title":  # titles are pure labels: stripping them loses nothing
            ctx.add("keyword-stripped", (*at, key), f"{key} stripped for {ctx.dialect.name}")
    return out


def _children(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    out = dict(node)
    for key, value in node.items():
        if key in SCHEMA_KEYS and isinstance(value, dict):
            out[key] = _node(value, (*at, key), ctx)
        elif key in SCHEMA_MAP_KEYS and isinstance(value, dict):
            out[key] = {n: _node(s, (*at, key, n), ctx) for n, s in value.items()}
        elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [_node(s, (*at, key, i), ctx) for i, s in enumerate(value)]
    return out
