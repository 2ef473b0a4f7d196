"""Offline checker for OpenAI strict-mode schemas (no SDK validates them).

Messages follow the API's wording (`In context=('properties', 'x'), ...`) so a failure reads
like the 400 it prevents. Sizes follow the Structured Outputs limits.
"""

from __future__ import annotations

from typing import Any, Final

from .keywords import canonical, enum_values, is_defs_ref, resolve_local, types_of
from .model import Pointer

STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
# the keywords strict mode takes in a schema node (the openai-strict dialect keeps these)
STRICT_KEYWORDS: Final = (
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
)
ALLOWED_KEYWORDS: Final = frozenset(
    {*STRICT_KEYWORDS, "description", "title", "$ref", "$defs", "definitions"}
)
MAX_PROPERTIES: Final = 5000
MAX_DEPTH: Final = 10
MAX_STRING_BUDGET: Final = 120_000
MAX_ENUM_VALUES: Final = 1000
LARGE_ENUM: Final = 250
LARGE_ENUM_CHARS: Final = 15_000
_ROOT_FORBIDDEN: Final = ("oneOf", "anyOf", "allOf", "enum", "not")


def check_openai_strict(schema: dict[str, Any]) -> list[str]:
    """Every reason OpenAI would reject `schema` as a strict function schema ([] if none)."""
    problems: list[str] = []
    if schema.get("type") != "object" or any(k in schema for k in _ROOT_FORBIDDEN):
        problems.append(
            "schema must have type 'object' and not have "
            "'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level."
        )
    counts = _Counts()
    _check(schema, (), schema, problems, counts)
    problems.extend(counts.problems())
    return problems


class _Counts:
    def __init__(self) -> None:
        self.properties = 0
        self.enum_values = 0
        self.chars = 0
        self.depth = 0

    def problems(self) -> list[str]:
        out = []
        if self.properties > MAX_PROPERTIES:
            out.append(f"too many object properties: {self.properties} > {MAX_PROPERTIES}.")
        if self.depth > MAX_DEPTH:
            out.append(f"too much nesting: {self.depth} levels > {MAX_DEPTH}.")
        if self.chars > MAX_STRING_BUDGET:
            out.append(
                f"names, enum and const values total {self.chars} characters > {MAX_STRING_BUDGET}."
            )
        if self.enum_values > MAX_ENUM_VALUES:
            out.append(f"too many enum values: {self.enum_values} > {MAX_ENUM_VALUES}.")
        return out


def _context(at: Pointer) -> str:
    return f"In context={tuple(str(p) for p in at)!r}, "


def _check(node: Any, at: Pointer, root: dict[str, Any], out: list[str], counts: _Counts) -> None:
    if not isinstance(node, dict):
        out.append(_context(at) + "schema must be an object.")
        return
    counts.depth = max(counts.depth, sum(1 for p in at if p in ("properties", "items")) + 1)
    for key in node:
        if key not in ALLOWED_KEYWORDS:
            out.append(_context(at) + f"'{key}' is not permitted.")
    if "$ref" in node:
        _check_ref(node, at, root, out)
        return
    if not types_of(node) and "anyOf" not in node:
        out.append(_context(at) + "schema must have a 'type' key.")
    _check_values(node, at, out, counts)
    if isinstance(node.get("$defs"), dict):
        counts.chars += sum(len(n) for n in node["$defs"])
    if "object" in types_of(node):
        _check_object(node, at, out, counts)
    if "array" in types_of(node) and not isinstance(node.get("items"), dict):
        out.append(_context(at) + "array schema missing items.")
    if isinstance(node.get("anyOf"), list):
        _check_first_keys(node["anyOf"], at, root, out)
    for key, sub in _subschemas(node):
        _check(sub, (*at, *key), root, out, counts)


def _subschemas(node: dict[str, Any]) -> list[tuple[Pointer, Any]]:
    subs: list[tuple[Pointer, Any]] = []
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), dict):
            subs.extend(((key, n), s) for n, s in node[key].items())
    if "items" in node:
        subs.append((("items",), node["items"]))
    if isinstance(node.get("anyOf"), list):
        subs.extend((("anyOf", i), s) for i, s in enumerate(node["anyOf"]))
    return subs


def _check_ref(node: dict[str, Any], at: Pointer, root: dict[str, Any], out: list[str]) -> None:
    ref = node["$ref"]
    if len(node) > 1:
        out.append(
            _context(at)
            + "$ref cannot have keywords {"
            + ", ".join(sorted(repr(k) for k in node if k != "$ref"))
            + "}."
        )
    legacy = isinstance(ref, str) and ref.startswith("#/definitions/")
    if not isinstance(ref, str) or not (ref == "#" or is_defs_ref(ref) or legacy):
        out.append(_context(at) + f"$ref {ref!r} must point to '#' or '#/$defs/<name>'.")
    elif not resolve_local(root, ref)[0]:
        out.append(_context(at) + f"$ref {ref!r} does not resolve.")


def _check_values(node: dict[str, Any], at: Pointer, out: list[str], counts: _Counts) -> None:
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt not in STRICT_FORMATS:
        out.append(_context(at) + f"format '{fmt}' is not permitted.")
    values = enum_values(node)
    if values is None:
        return
    counts.enum_values += len(values) if "enum" in node else 0
    chars = sum(len(v) if isinstance(v, str) else len(canonical(v)) for v in values)
    counts.chars += chars
    strings = [v for v in values if isinstance(v, str)]
    if len(strings) > LARGE_ENUM and chars > LARGE_ENUM_CHARS:
        out.append(
            _context(at) + f"enum of {len(strings)} strings exceeds {LARGE_ENUM_CHARS} characters."
        )


def _check_object(node: dict[str, Any], at: Pointer, out: list[str], counts: _Counts) -> None:
    props = node.get("properties")
    if not isinstance(props, dict):
        out.append(_context(at) + "object schema missing properties.")
        props = {}
    counts.properties += len(props)
    counts.chars += sum(len(n) for n in props)
    if node.get("additionalProperties") is not False:
        out.append(
            _context(at) + "'additionalProperties' is required to be supplied and to be false."
        )
    required = node.get("required")
    missing = [n for n in props if not isinstance(required, list) or n not in required]
    if missing:
        out.append(
            _context(at) + "'required' is required to be supplied and to be an array "
            f"including every key in properties. Missing '{missing[0]}'."
        )


def _check_first_keys(
    branches: list[Any], at: Pointer, root: dict[str, Any], out: list[str]
) -> None:
    firsts: dict[str, list[dict[str, Any]]] = {}
    for branch in branches:
        target = branch
        if isinstance(branch, dict) and isinstance(branch.get("$ref"), str):
            target = resolve_local(root, branch["$ref"])[1]
        props = target.get("properties") if isinstance(target, dict) else None
        if isinstance(props, dict) and props:
            firsts.setdefault(next(iter(props)), []).append(props)
    for name, group in firsts.items():
        values = [enum_values(p[name]) if isinstance(p[name], dict) else None for p in group]
        sets = [{canonical(v) for v in vs} for vs in values if vs is not None]
        exclusive = len(sets) == len(group) and sum(map(len, sets)) == len(set().union(*sets))
        if len(group) > 1 and not exclusive:
            out.append(
                _context(at) + "Objects provided via 'anyOf' must not share identical "
                f"first keys ('{name}')."
            )
