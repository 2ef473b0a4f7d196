"""Gemini `FunctionDeclaration.parameters`: the protobuf `Schema` (an OpenAPI 3.0 subset).

Unknown fields are 400s, so the table is an allow-list of the proto's fields. One `type`
(upper-case enum) per node plus `nullable`; `enum` holds strings only; STRING `format` is only
`enum`/`date-time`; no `$ref` (everything is inlined; recursion is an error); arrays need
`items`; nested objects may not have empty `properties`; `anyOf` takes no siblings but
`description`.
"""

from __future__ import annotations

from typing import Any, Final

from .convert import (
    add_inferred_type,
    const_to_enum,
    drop_empty_enum_string,
    exclusive_to_inclusive,
    filter_format,
    fold_all_of,
    one_of_to_any_of,
    rename_properties,
    tuple_to_items,
)
from .keywords import TYPE_KEYWORDS, canonical, is_array, is_object, json_type, types_of
from .model import Pointer
from .refs import RefPolicy
from .walker import Action, Ctx, Dialect, actions

KEEP: Final = (
    "type",
    "format",
    "nullable",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "propertyOrdering",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "anyOf",
    "example",
)
STRIP: Final = ("title", "examples", "discriminator", "deprecated", "readOnly", "writeOnly", "x-*")
ACTIONS: Final = actions(keep=KEEP, strip=STRIP)
FORMATS: Final[dict[str, frozenset[str]]] = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"enum", "float", "double"}),
    "integer": frozenset({"enum", "int32", "int64"}),
}


def hook(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    node = fold_all_of(node, at, ctx)
    node = one_of_to_any_of(node, at, ctx)
    node = const_to_enum(node, at, ctx)
    node = tuple_to_items(node, at, ctx)
    node = _null_branches(node)
    node = _type_list(node, at, ctx)
    node = _push_into_branches(node)
    if "anyOf" in node:
        return node
    node = exclusive_to_inclusive(node, at, ctx)
    node = _enum(node, at, ctx)
    node = _require_type(node, at, ctx)
    node = filter_format(node, at, ctx, _format_ok)
    node = _array(node, at, ctx)
    node = _object(node, at, ctx)
    node = rename_properties(node, at, ctx)
    return _upper_type(node)


def _is_null(branch: Any) -> bool:
    if not isinstance(branch, dict):
        return False
    return (
        types_of(branch) == ["null"]
        or branch.get("const", 0) is None
        or branch.get("enum") == [None]
    )


def _null_branches(node: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [X, {type: null}]` -> X + `nullable: true`."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or not any(_is_null(b) for b in branches):
        return node
    rest = [b for b in branches if not _is_null(b)]
    siblings = {k: v for k, v in node.items() if k != "anyOf"}
    if len(rest) == 1 and isinstance(rest[0], dict):
        return {**rest[0], **siblings, "nullable": True}
    return {**siblings, "anyOf": [_with_nullable(b) for b in rest]}


def _with_nullable(branch: Any) -> dict[str, Any]:
    return {**branch, "nullable": True} if isinstance(branch, dict) else {"nullable": True}


def _type_list(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """One type + `nullable`, or `anyOf` of one branch per type with its own keywords."""
    if not isinstance(node.get("type"), list):
        return node
    types = types_of(node)
    solid = [t for t in types if t != "null"] or ["null"]
    if "null" in types and solid != ["null"]:
        node = {**node, "nullable": True}
    if len(solid) == 1:
        return {**node, "type": solid[0]}
    if "anyOf" in node:  # a second anyOf cannot sit next to the first one
        ctx.lose(at, "type", solid, why="a type list next to anyOf")
        return {k: v for k, v in node.items() if k != "type"}
    owned = {k for t in solid for k in TYPE_KEYWORDS.get(t, ())} | {"type", "enum"}
    rest = {k: v for k, v in node.items() if k not in owned}
    rest["anyOf"] = [_branch(node, t) for t in solid]
    return rest


def _branch(node: dict[str, Any], kind: str) -> dict[str, Any]:
    branch: dict[str, Any] = {"type": kind}
    branch.update({k: v for k, v in node.items() if k in TYPE_KEYWORDS.get(kind, ())})
    if isinstance(node.get("enum"), list):
        branch["enum"] = [v for v in node["enum"] if _fits(v, kind)]
    return branch


def _fits(value: Any, kind: str) -> bool:
    actual = json_type(value)
    return actual == kind or (kind == "number" and actual == "integer")


def _push_into_branches(node: dict[str, Any]) -> dict[str, Any]:
    # anyOf takes no siblings except description: constraints move into every branch
    # (a branch's own keyword wins); annotations stay for the table to strip or describe.
    branches = node.get("anyOf")
    if not isinstance(branches, list):
        return node
    moved = {k: v for k, v in node.items() if k not in ("anyOf", "description") and k in KEEP}
    if not moved:
        return node
    rest = {k: v for k, v in node.items() if k not in moved}
    rest["anyOf"] = [{**moved, **b} if isinstance(b, dict) else dict(moved) for b in branches]
    return rest


def _enum(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    """String enums pass; number enums become strings with `format: enum` (the documented
    spelling); anything else is described."""
    node = drop_empty_enum_string(node, at, ctx)
    values = node.get("enum")
    if not isinstance(values, list):
        return node
    if None in values:
        values = [v for v in values if v is not None]
        node = {**node, "enum": values, "nullable": True}
    if not values:
        return {k: v for k, v in node.items() if k != "enum"}
    kinds = {json_type(v) for v in values}
    types = [t for t in types_of(node) if t != "null"]
    if kinds <= {"string"} and types in ([], ["string"]):
        nullable = {"nullable": True} if "null" in types_of(node) else {}
        return node if types else {**node, "type": "string", **nullable}
    if kinds <= {"integer", "number"} and types in ([], ["integer"], ["number"]):
        return _stringified_enum(node, values, types, at, ctx)
    ctx.lose(at, "enum", values, why="Gemini enums hold strings only")
    return {k: v for k, v in node.items() if k != "enum"}


def _stringified_enum(
    node: dict[str, Any], values: list[Any], types: list[str], at: Pointer, ctx: Ctx
) -> dict[str, Any]:
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt != "enum":
        ctx.lose(at, "format", fmt, why="format enum replaces the number format")
    kind = (
        types[0]
        if types
        else "integer"
        if {json_type(v) for v in values} == {"integer"}
        else "number"
    )
    return {**node, "type": kind, "format": "enum", "enum": [canonical(v) for v in values]}


def _require_type(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    node = add_inferred_type(node)
    if types_of(node):
        return node
    # A typeless schema accepts anything; Gemini needs a type, STRING is the least wrong.
    ctx.lose(at, "type", "any JSON value", why="Gemini needs a type on every schema")
    return {"type": "string", **node}


def _format_ok(fmt: str, types: list[str]) -> bool:
    return any(fmt in FORMATS.get(t, frozenset()) for t in types)


def _array(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    if not is_array(node) or isinstance(node.get("items"), dict):
        return node
    items = node.get("items", "any JSON value")
    ctx.lose(
        at,
        "items",
        items if items is not True else "any JSON value",
        why="Gemini arrays need an items schema",
    )
    return {**node, "items": {"type": "string"}}


def _object(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    if not is_object(node):
        return node
    node = dict(node)
    props = node.get("properties")
    if isinstance(props, dict) and not props and at != ():
        del node["properties"]  # "should be non-empty for OBJECT type"
    declared = props if isinstance(props, dict) else {}
    required = node.get("required")
    if isinstance(required, list):
        undeclared = [n for n in required if n not in declared]
        if undeclared:
            ctx.lose(
                at,
                "required",
                undeclared,
                label="also requires",
                why="required names without a property schema",
            )
        node["required"] = [n for n in required if n in declared]
        if not node["required"]:
            del node["required"]
    return node


def _upper_type(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    return {**node, "type": kind.upper()} if isinstance(kind, str) else node


DIALECT: Final = Dialect(
    name="gemini",
    actions=ACTIONS,
    default=Action.DESCRIBE,
    hook=hook,
    refs=RefPolicy(inline="all", recursion="error"),
)
