"""Conversions the dialect hooks compose. Each takes `(node, at, ctx)` and returns the node;
anything it cannot express exactly goes through `ctx.lose` (description + lossy note)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from .keywords import canonical, dict_at, enum_values, json_type, list_at, types_of
from .merge import merge_all_of
from .model import Pointer
from .walker import Ctx

GEMINI_PROPERTY_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def fold_all_of(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """Merge `allOf` members into the node; members that conflict are described."""
    if not isinstance(node.get("allOf"), list):
        return node
    merged, leftovers = merge_all_of(node, ctx.resolve)
    if len(leftovers) == 1 and "anyOf" not in merged:
        merged["anyOf"] = leftovers  # one member: anyOf and allOf mean the same
    elif leftovers:
        ctx.lose(at, "allOf", leftovers, why="allOf members that cannot be merged")
    return merged


def one_of_to_any_of(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """`oneOf` -> `anyOf`; exact when no value can match two branches."""
    branches = node.get("oneOf")
    if not isinstance(branches, list):
        return node
    node = {k: v for k, v in node.items() if k != "oneOf"}
    if "anyOf" in node:
        ctx.lose(at, "oneOf", branches, why="oneOf next to anyOf")
        return node
    node["anyOf"] = branches
    if not disjoint(branches, ctx.resolve):
        ctx.lose(at, "oneOf", "exactly one alternative applies", why="oneOf relaxed to anyOf")
    return node


def disjoint(branches: list[Any], resolve: Callable[[Any], Any]) -> bool:
    """True when no instance can match two branches (so anyOf == oneOf)."""
    resolved = [resolve(b) for b in branches]
    if len(resolved) < 2:
        return True
    if not all(isinstance(b, dict) for b in resolved):
        return False
    types = [frozenset("number" if t == "integer" else t for t in types_of(b)) for b in resolved]
    if all(types) and _pairwise_disjoint(types):
        return True
    values = [enum_values(b) for b in resolved]
    if all(v is not None for v in values):
        return _pairwise_disjoint([frozenset(map(canonical, v or [])) for v in values])
    return _discriminated(resolved, resolve)


def _discriminated(branches: list[dict[str, Any]], resolve: Callable[[Any], Any]) -> bool:
    first = branches[0].get("properties")
    for name in first if isinstance(first, dict) else {}:
        sets = []
        for branch in branches:
            prop = resolve(dict_at(branch, "properties").get(name))
            values = enum_values(prop) if isinstance(prop, dict) else None
            if values is None or name not in list_at(branch, "required"):
                break
            sets.append(frozenset(map(canonical, values)))
        else:
            if _pairwise_disjoint(sets):
                return True
    return False


def _pairwise_disjoint(sets: list[frozenset[str]]) -> bool:
    return sum(len(s) for s in sets) == len(frozenset().union(*sets))


def const_to_enum(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """`const: v` -> `enum: [v]` with a type (exact)."""
    if "const" not in node:
        return node
    node = dict(node)
    value = node.pop("const")
    node["enum"] = [value]
    if not types_of(node):
        node["type"] = json_type(value)
    return node


def tuple_to_items(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """`prefixItems` -> one `items` schema (the union of the positions); positional typing is
    described unless every position has the same schema."""
    prefix = node.get("prefixItems")
    if not isinstance(prefix, list):
        return node
    node = {k: v for k, v in node.items() if k != "prefixItems"}
    extra = node.get("items")
    distinct = _dedupe([*prefix, *([extra] if isinstance(extra, dict) else [])])
    if extra is False:
        node["maxItems"] = min(node.get("maxItems", len(prefix)), len(prefix))
    node["items"] = distinct[0] if len(distinct) == 1 else {"anyOf": distinct} if distinct else {}
    if len(_dedupe(prefix)) > 1:
        ctx.lose(at, "prefixItems", prefix, why="tuple positions merged into one items schema")
    return node


def _dedupe(values: Iterable[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for value in values:
        seen.setdefault(canonical(value), value)
    return list(seen.values())


def inferred_types(node: dict[str, Any]) -> list[str]:
    """The type(s) a typeless node evidently means, [] when it accepts anything."""
    values = enum_values(node)
    if values:
        kinds = _dedupe(json_type(v) for v in values)
        return [k for k in kinds if k != "integer" or "number" not in kinds]
    if "properties" in node or "required" in node or "additionalProperties" in node:
        return ["object"]
    if "items" in node or "prefixItems" in node:
        return ["array"]
    return []


def add_inferred_type(node: dict[str, Any]) -> dict[str, Any]:
    if types_of(node) or "anyOf" in node or "$ref" in node:
        return node
    kinds = inferred_types(node)
    if kinds:
        node = {"type": kinds[0] if len(kinds) == 1 else kinds, **node}
    return node


def exclusive_to_inclusive(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """Integer `exclusiveMinimum: n` == `minimum: floor(n) + 1` (and the mirror for max)."""
    if [t for t in types_of(node) if t != "null"] != ["integer"]:
        return node
    node = dict(node)
    for exclusive, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = node.get(exclusive)
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        del node[exclusive]
        if inclusive == "minimum":
            bound = math.floor(value) + 1
            node[inclusive] = max(bound, node.get(inclusive, bound))
        else:
            bound = math.ceil(value) - 1
            node[inclusive] = min(bound, node.get(inclusive, bound))
    return node


def filter_format(
    node: dict[str, Any], at: Pointer, ctx: Ctx, allowed: Callable[[str, list[str]], bool]
) -> dict[str, Any]:
    fmt = node.get("format")
    if not isinstance(fmt, str) or allowed(fmt, types_of(node)):
        return node
    ctx.lose(at, "format", fmt, why=f"format {fmt} is not supported by {ctx.dialect.name}")
    return {k: v for k, v in node.items() if k != "format"}


def drop_empty_enum_string(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """Gemini rejects `""` as an enum value; the model is told it is allowed."""
    values = node.get("enum")
    if not isinstance(values, list) or "" not in values:
        return node
    rest = [v for v in values if v != ""]
    ctx.lose(at, "enum", "", label="enum also allows", why='enum value "" is not supported')
    node = {k: v for k, v in node.items() if k != "enum"}
    return {**node, "enum": rest} if rest else node


def split_enum_by_type(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """A typeless enum gets its type; an enum mixing types becomes `anyOf` of typed enums."""
    values = node.get("enum")
    if not isinstance(values, list) or not values or types_of(node) or "anyOf" in node:
        return node
    kinds = _dedupe(json_type(v) for v in values)
    solid = [k for k in kinds if k != "null"]
    if len(solid) <= 1:
        return {"type": solid[0] if kinds == solid else [*solid, "null"], **node}
    rest = {k: v for k, v in node.items() if k != "enum"}
    rest["anyOf"] = [_typed_enum(kind, values) for kind in kinds]
    return rest


def _typed_enum(kind: str, values: list[Any]) -> dict[str, Any]:
    if kind == "null":
        return {"type": "null"}
    return {"type": kind, "enum": [v for v in values if json_type(v) == kind]}


def rename_properties(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """Gemini property names must match `^[A-Za-z_][A-Za-z0-9_]{0,63}$`: rename the others
    deterministically (`-A` -> `dash_A`), collision-safe, and remember the way back."""
    props = node.get("properties")
    if not isinstance(props, dict) or all(GEMINI_PROPERTY_NAME.match(n) for n in props):
        return node
    taken = {n for n in props if GEMINI_PROPERTY_NAME.match(n)}
    wire: dict[str, str] = {}
    for name in props:
        wire[name] = name if name in taken else _unique(gemini_wire_name(name), taken)
        taken.add(wire[name])
    node = dict(node, properties={wire[n]: s for n, s in props.items()})
    for key in ("required", "propertyOrdering"):
        if isinstance(node.get(key), list):
            node[key] = [wire.get(n, n) for n in node[key]]
    back = {w: n for n, w in wire.items() if w != n}
    ctx.renames[at] = back
    pairs = ", ".join(f"{n!r} -> {w!r}" for w, n in back.items())
    ctx.add("property-renamed", (*at, "properties"), f"property names renamed: {pairs}")
    return node


def gemini_wire_name(name: str) -> str:
    """`-A` -> `dash_A`, `foo.bar` -> `foo_bar`, `1st` -> `_1st` (before de-duplication)."""
    body = name.lstrip("-")
    out = "dash_" * (len(name) - len(body)) + re.sub(r"[^A-Za-z0-9_]", "_", body)
    if not out or out[0].isdigit():
        out = "_" + out
    return out[:64]


def _unique(base: str, taken: set[str]) -> str:
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = base[: 64 - len(suffix)] + suffix
    return candidate
