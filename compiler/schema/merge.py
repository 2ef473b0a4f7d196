"""Merging `allOf` members into one schema (lossless where the keywords allow it)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, Final

from .keywords import canonical, types_of

# First value wins: annotations, not constraints.
_ANNOTATIONS: Final = frozenset(
    {"title", "description", "default", "examples", "example", "deprecated", "readOnly"}
)
_LOWER_BOUNDS: Final = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
_UPPER_BOUNDS: Final = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)

Resolver = Callable[[Any], Any]


class _Conflict(Exception):
    """Two members constrain one keyword in ways a single schema cannot express."""


def merge_schemas(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any] | None:
    """The conjunction of two schemas as one schema, or None when it needs `allOf`."""
    try:
        return _merge(base, other)
    except _Conflict:
        return None


def merge_all_of(node: dict[str, Any], resolve: Resolver) -> tuple[dict[str, Any], list[Any]]:
    """Fold `node["allOf"]` into `node`; returns the merged node and the members that could
    not be merged (the caller decides how to report them)."""
    merged = {k: v for k, v in node.items() if k != "allOf"}
    leftovers: list[Any] = []
    for member in node.get("allOf", []):
        target = resolve(member)
        result = None
        if isinstance(target, dict) and "$ref" not in target:
            result = merge_schemas(merged, target)
        if result is None and target is not True:
            leftovers.append(member)
        merged = result if result is not None else merged
    return merged, leftovers


def _merge(base: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in other.items():
        if key not in out:
            out[key] = copy.deepcopy(value)
        elif key not in _ANNOTATIONS:
            out[key] = _merge_keyword(key, out[key], value)
    return out


def _merge_keyword(key: str, mine: Any, theirs: Any) -> Any:
    if canonical(mine) == canonical(theirs):
        return mine
    if key == "properties" and isinstance(mine, dict) and isinstance(theirs, dict):
        return _merge_properties(mine, theirs)
    if key == "required" and isinstance(mine, list) and isinstance(theirs, list):
        return mine + [name for name in theirs if name not in mine]
    if key == "type":
        return _merge_types(mine, theirs)
    if key == "enum" and isinstance(mine, list) and isinstance(theirs, list):
        kept = [v for v in mine if canonical(v) in {canonical(t) for t in theirs}]
        if not kept:
            raise _Conflict
        return kept
    if key in _LOWER_BOUNDS and _numbers(mine, theirs):
        return max(mine, theirs)
    if key in _UPPER_BOUNDS and _numbers(mine, theirs):
        return min(mine, theirs)
    raise _Conflict


def _merge_properties(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    out = dict(mine)
    for name, schema in theirs.items():
        if name not in out:
            out[name] = copy.deepcopy(schema)
        elif isinstance(out[name], dict) and isinstance(schema, dict):
            out[name] = _merge(out[name], schema)
        elif canonical(out[name]) != canonical(schema):
            raise _Conflict
    return out


def _merge_types(mine: Any, theirs: Any) -> Any:
    a = types_of({"type": mine})
    b = types_of({"type": theirs})
    # integer is a subset of number, so their intersection is integer.
    both = [t for t in a if t in b or (t == "integer" and "number" in b)]
    both += [t for t in b if t == "integer" and "number" in a and t not in both]
    if not both:
        raise _Conflict
    return both[0] if len(both) == 1 else both


def _numbers(a: Any, b: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
