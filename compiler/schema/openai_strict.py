"""OpenAI strict mode (Structured Outputs rules for `strict: true` function tools).

Every object gets `additionalProperties: false` and lists every property in `required`;
properties that were optional become nullable (the runtime reads null as "omitted", see
`CleanedSchema.nullable_optionals`). Anything strict mode cannot express is a blocker note:
the tool is then emitted with the plain `openai` dialect and `strict: false`.
"""

from __future__ import annotations

import re
from typing import Any, Final

from . import openai
from .convert import (
    add_inferred_type,
    filter_format,
    fold_all_of,
    one_of_to_any_of,
    split_enum_by_type,
    tuple_to_items,
)
from .keywords import canonical, dict_at, enum_values, is_array, is_object, list_at, types_of
from .model import Pointer
from .refs import RefPolicy
from .strict_check import STRICT_FORMATS, STRICT_KEYWORDS, check_openai_strict
from .walker import Action, Ctx, Dialect, actions

KEEP: Final = STRICT_KEYWORDS
_LOOKAROUND: Final = re.compile(r"\(\?<?[=!]")


def hook(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    node = fold_all_of(node, at, ctx)
    node = one_of_to_any_of(node, at, ctx)
    node = tuple_to_items(node, at, ctx)
    node = _drop_null_default(node, at, ctx)
    node = filter_format(node, at, ctx, lambda fmt, _types: fmt in STRICT_FORMATS)
    node = _simple_pattern(node, at, ctx)
    node = split_enum_by_type(node, at, ctx)
    node = add_inferred_type(node)
    _require_type(node, at, ctx)
    if is_array(node):
        _require_typed_items(node, at, ctx)
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = _distinct_first_keys(node["anyOf"])
    if is_object(node):
        node = _strictify(node, at, ctx)
    return node


def _blocker(ctx: Ctx, at: Pointer, message: str) -> None:
    ctx.add("strict-unsupported", at, message, severity="warning", lossy=True)


def _drop_null_default(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    # `default: null` says "optional", which strict mode expresses with a null type instead.
    if "default" in node and node["default"] is None:
        ctx.add("keyword-stripped", (*at, "default"), "default null stripped for strict mode")
        return {k: v for k, v in node.items() if k != "default"}
    return node


def _simple_pattern(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    pattern = node.get("pattern")
    if isinstance(pattern, str) and _LOOKAROUND.search(pattern):
        ctx.lose(at, "pattern", pattern, why="regex lookaround is not supported in strict mode")
        return {k: v for k, v in node.items() if k != "pattern"}
    return node


def _require_type(node: dict[str, Any], at: Pointer, ctx: Ctx) -> None:
    if not (types_of(node) or "anyOf" in node or "$ref" in node):
        _blocker(ctx, at, "strict mode needs a type on every schema; this one accepts any value")


def _require_typed_items(node: dict[str, Any], at: Pointer, ctx: Ctx) -> None:
    items = node.get("items")
    typed = isinstance(items, dict) and bool(
        types_of(add_inferred_type(items)) or "anyOf" in items or "$ref" in items
    )
    if not typed:
        _blocker(ctx, at, "strict mode needs typed array items")


def _distinct_first_keys(branches: list[Any]) -> list[Any]:
    """Objects in one anyOf must not start with the same property (unless it discriminates
    them); move a property unique to the branch to the front, which changes nothing else."""
    out: list[Any] = []
    firsts: set[str] = set()
    for branch in branches:
        item = branch
        props = branch.get("properties") if isinstance(branch, dict) else None
        if isinstance(props, dict) and props:
            first = next(iter(props))
            if first in firsts and not _discriminates(first, branches):
                others = {n for b in branches if b is not branch for n in _prop_names(b)}
                unique = next((n for n in props if n not in others), None)
                if unique is not None:
                    item = {**branch, "properties": {unique: props[unique], **props}}
                    first = unique
            firsts.add(first)
        out.append(item)
    return out


def _prop_names(branch: Any) -> list[str]:
    props = branch.get("properties") if isinstance(branch, dict) else None
    return list(props) if isinstance(props, dict) else []


def _discriminates(name: str, branches: list[Any]) -> bool:
    sets = []
    for branch in branches:
        prop = dict_at(branch, "properties").get(name) if isinstance(branch, dict) else None
        values = enum_values(prop) if isinstance(prop, dict) else None
        if values is None:
            return False
        sets.append({canonical(v) for v in values})
    return sum(map(len, sets)) == len(set().union(*sets))


def _strictify(node: dict[str, Any], at: Pointer, ctx: Ctx) -> dict[str, Any]:
    props = dict_at(node, "properties")
    extra = node.get("additionalProperties")
    if extra not in (None, False):
        _blocker(ctx, at, "strict mode cannot express additionalProperties other than false")
    elif extra is None and not props and at != ():
        _blocker(ctx, at, "strict mode cannot express a free-form object")
    required = [n for n in list_at(node, "required") if isinstance(n, str)]
    undeclared = [n for n in required if n not in props]
    if undeclared:
        _blocker(ctx, at, f"required names {undeclared} are not declared properties")
    optional = tuple(n for n in props if n not in required)
    node = dict(node, additionalProperties=False, required=list(props))
    node["properties"] = {n: _nullable(s) if n in optional else s for n, s in props.items()}
    if optional:
        ctx.nullables[at] = optional
        ctx.add(
            "strict-optional-nullable",
            (*at, "required"),
            f"optional properties {list(optional)} made required and nullable (null means omitted)",
        )
    return node


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("anyOf"), list):
        branches = schema["anyOf"]
        null = {"type": "null"}
        has_null = any(canonical(b) == canonical(null) for b in branches)
        return schema if has_null else {**schema, "anyOf": [*branches, null]}
    schema = add_inferred_type(schema)
    types = types_of(schema)
    if "null" in types:
        return schema
    if not types or "$ref" in schema:
        # oneOf/allOf/$ref/typeless: wrap, the inner schema is converted when it is walked.
        notes = {k: v for k, v in schema.items() if k in ("description", "title")}
        inner = {k: v for k, v in schema.items() if k not in notes}
        return {"anyOf": [inner, {"type": "null"}], **notes}
    out = {**schema, "type": [*types, "null"]}
    values = enum_values(schema)
    if values is not None:
        out.pop("const", None)
        out["enum"] = values if None in values else [*values, None]
    return out


def _sibling_actions() -> dict[str, Action]:
    return actions(keep=KEEP, strip=openai.ANNOTATIONS)


DIALECT: Final = Dialect(
    name="openai-strict",
    actions=_sibling_actions(),
    default=Action.DESCRIBE,
    hook=hook,
    refs=RefPolicy(inline="non_defs", siblings="wrap", root_ref_ok=True),
    strict=True,
    fallback=openai.DIALECT,
    verify=check_openai_strict,
)
