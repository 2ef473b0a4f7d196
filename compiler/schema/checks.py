"""Per-dialect schema checkers: what each provider would reject, found offline.

Messages quote the providers' own wording where one is known (see provider-schemas.md
section 3), so a lint failure names the 400 it prevents.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any, Final

from jsonschema import Draft202012Validator

from . import gemini
from .convert import GEMINI_PROPERTY_NAME
from .keywords import children, is_defs_ref, json_type, pointer_tokens, resolve_local, types_of
from .model import Pointer
from .strict_check import check_openai_strict

_META_VALIDATOR: Final = Draft202012Validator(Draft202012Validator.META_SCHEMA)
# what Gemini's Schema object accepts: the keywords the gemini dialect keeps (one list, in
# ``gemini.py``), and the annotations it also takes
_GEMINI_FIELDS: Final = frozenset({*gemini.KEEP, "title", "description", "default"})
_GEMINI_TYPES: Final = frozenset(
    {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
)
_GEMINI_FORMATS: Final = {
    "STRING": frozenset({"enum", "date-time"}),
    "NUMBER": frozenset({"enum", "float", "double"}),
    "INTEGER": frozenset({"enum", "int32", "int64"}),
}
_ROOT_UNIONS: Final = ("anyOf", "oneOf", "allOf")


def nodes(schema: Any, at: Pointer = ()) -> Iterator[tuple[Pointer, dict[str, Any]]]:
    """Every schema object inside `schema`, parents first."""
    if isinstance(schema, dict):
        yield at, schema
        for rel, child in children(schema):
            yield from nodes(child, (*at, *rel))


def context(at: Pointer) -> str:
    return f"In context={tuple(str(p) for p in at)!r}, "


def schema_problems(dialect: str, schema: Any, *, strict: bool = False) -> list[str]:
    """Everything `dialect`'s API would reject in this parameters schema."""
    if not isinstance(schema, dict):
        return [f"{schema!r} is not of type 'object', 'boolean'"]
    if dialect == "gemini":
        return gemini_problems(schema)
    problems = meta_problems(schema) + root_problems(dialect, schema)
    if dialect in ("openai", "openai-strict"):
        problems += check_openai_strict(schema) if strict else openai_problems(schema)
    elif dialect == "gemini-json":
        problems += gemini_json_problems(schema)
    elif dialect == "mcp":
        problems += unresolved_refs(schema)
    return problems


def meta_problems(schema: dict[str, Any]) -> list[str]:
    """Draft 2020-12 meta-schema errors (Anthropic: "JSON schema is invalid. It must match JSON
    Schema draft 2020-12")."""
    # Meta-schema validation is the slowest step of a build and catalogs repeat schemas
    # (per dialect, across similar tools): cache by content.
    return list(_meta_problems(json.dumps(schema, sort_keys=True)))


@functools.lru_cache(maxsize=8192)
def _meta_problems(text: str) -> tuple[str, ...]:
    errors = sorted(
        _META_VALIDATOR.iter_errors(json.loads(text)),
        key=lambda e: list(map(str, e.absolute_path)),
    )
    return tuple(
        f"{context(tuple(e.absolute_path))}JSON schema is invalid (draft 2020-12): {e.message}."
        for e in errors
    )


def root_problems(dialect: str, schema: dict[str, Any]) -> list[str]:
    problems = []
    if schema.get("type") != "object":
        problems.append("input_schema.type: Field required (root must be type 'object').")
    unions = [k for k in _ROOT_UNIONS if k in schema]
    if dialect != "mcp" and unions:
        problems += [
            "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' "
            f"at the top level (found {unions})."
        ]
    return problems


def openai_problems(schema: dict[str, Any]) -> list[str]:
    problems = []
    for at, node in nodes(schema):
        kinds = types_of(node)
        if "array" in kinds and "items" not in node:
            problems.append(context(at) + "array schema missing items.")
        if "object" in kinds and "properties" not in node:
            problems.append(context(at) + "object schema missing properties.")
    return problems


def gemini_json_problems(schema: dict[str, Any]) -> list[str]:
    problems = unresolved_refs(schema)
    for at, node in nodes(schema):
        ref = node.get("$ref")
        extra = sorted(k for k in node if k not in ("$ref", "description", "default"))
        if isinstance(ref, str) and extra:
            problems.append(
                f"$ref '{ref}' was set alongside unsupported fields {extra}. If a schema "
                "node has $ref set, then only description and default can be set "
                "alongside it."
            )
        if isinstance(ref, str) and not is_defs_ref(ref):
            problems.append(context(at) + f"$ref {ref!r} must point to a root $defs entry.")
        problems += _title_problem(at, node) + _name_problems(at, node)
    return problems


def unresolved_refs(schema: dict[str, Any]) -> list[str]:
    problems = []
    for at, node in nodes(schema):
        ref = node.get("$ref")
        if (
            isinstance(ref, str)
            and pointer_tokens(ref) is not None
            and not resolve_local(schema, ref)[0]
        ):
            problems.append(
                f"can't resolve reference {ref} from id # (reference to undefined "
                f"schema at {'.'.join(map(str, at))})."
            )
    return problems


def _title_problem(at: Pointer, node: dict[str, Any]) -> list[str]:
    # A nested title makes Gemini answer MALFORMED_FUNCTION_CALL.
    return (
        [context(at) + "title is not allowed (MALFORMED_FUNCTION_CALL)."] if "title" in node else []
    )


def _name_problems(at: Pointer, node: dict[str, Any]) -> list[str]:
    props = node.get("properties")
    names = props if isinstance(props, dict) else {}
    return [
        context(at) + f"property name {n!r} must match ^[A-Za-z_][A-Za-z0-9_]{{0,63}}$."
        for n in names
        if not GEMINI_PROPERTY_NAME.match(n)
    ]


def gemini_problems(schema: dict[str, Any]) -> list[str]:
    """Gemini `parameters` (Schema proto) rules: allow-listed fields, one upper-case type,
    string enums, restricted formats, items on arrays, non-empty nested properties."""
    problems = []
    if schema.get("type") not in ("OBJECT", "object"):
        problems.append("functionDeclaration parameters schema should be of type OBJECT.")
    for at, node in nodes(schema):
        where = "parameters" + "".join(f".{p}" for p in at)
        problems += [
            f"Invalid JSON payload received. Unknown name \"{k}\" at '{where}': Cannot find field."
            for k in node
            if k not in _GEMINI_FIELDS
        ]
        problems += _gemini_node(at, node, where) + _name_problems(at, node)
        problems += _title_problem(at, node) if at else []
    return problems


def _gemini_node(at: Pointer, node: dict[str, Any], where: str) -> list[str]:
    kind = node.get("type")
    if isinstance(kind, list):
        return [
            f"Invalid JSON payload received. Unknown name \"type\" at '{where}': Proto field "
            "is not repeating, cannot start list."
        ]
    if kind is None:
        return (
            []
            if "anyOf" in node
            else [f"functionDeclaration '{where}' schema didn't specify the schema type field."]
        )
    upper = str(kind).upper()
    if upper not in _GEMINI_TYPES:
        return [
            f"Invalid value at '{where}.type' (type.googleapis.com/google.ai."
            f'generativelanguage.v1beta.Type), "{kind}"'
        ]
    return _gemini_typed(node, where, upper)


def _gemini_typed(node: dict[str, Any], where: str, kind: str) -> list[str]:
    problems = []
    values = node.get("enum")
    if isinstance(values, list) and (any(json_type(v) != "string" for v in values) or "" in values):
        problems.append(f"{where}.enum: only allowed for STRING type (strings, none empty).")
    elif isinstance(values, list) and kind != "STRING" and node.get("format") != "enum":
        problems.append(f"{where}.enum: only allowed for STRING type or format enum.")
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt not in _GEMINI_FORMATS.get(kind, frozenset()):
        problems.append(
            f"{where}.format: only 'enum' and 'date-time' are supported for STRING "
            f"type (got {fmt!r} for {kind})."
        )
    if kind == "ARRAY" and "items" not in node:
        problems.append(f"{where}.items: missing field.")
    props = node.get("properties")
    if kind == "OBJECT" and isinstance(props, dict) and not props and where != "parameters":
        problems.append(f"{where}.properties: should be non-empty for OBJECT type.")
    return problems
