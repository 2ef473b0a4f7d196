"""JSON Schema vocabulary facts shared by every stage: where subschemas live, types, pointers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final
from urllib.parse import unquote

from .model import Pointer

# Keywords whose value is one subschema / a map of subschemas / a list of subschemas.
SCHEMA_KEYS: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "additionalItems",
    }
)
SCHEMA_MAP_KEYS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
SCHEMA_LIST_KEYS: Final = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})

JSON_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})

# Keywords that only constrain instances of one type; used to split a type list into branches.
TYPE_KEYWORDS: Final[dict[str, frozenset[str]]] = {
    "string": frozenset({"minLength", "maxLength", "pattern", "format"}),
    "number": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}
    ),
    "array": frozenset(
        {
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        }
    ),
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
            "propertyOrdering",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        }
    ),
}
TYPE_KEYWORDS["integer"] = TYPE_KEYWORDS["number"]
ALL_TYPE_KEYWORDS: Final = frozenset().union(*TYPE_KEYWORDS.values())

DEFS_PREFIX: Final = "#/$defs/"


def children(node: dict[str, Any]) -> Iterator[tuple[Pointer, Any]]:
    """Every direct subschema of `node` with its relative path, in key order."""
    for key, value in node.items():
        if key in SCHEMA_KEYS and isinstance(value, dict | bool):
            yield (key,), value
        elif key in SCHEMA_MAP_KEYS and isinstance(value, dict):
            for name, sub in value.items():
                yield (key, name), sub
        elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
            for index, sub in enumerate(value):
                yield (key, index), sub


def json_type(value: Any) -> str:
    """The JSON Schema type name of a JSON value (bool is not an integer here)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def types_of(node: dict[str, Any]) -> list[str]:
    """The node's `type` as a list ([] when absent or malformed)."""
    value = node.get("type")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for t in value if isinstance(t, str)]
    return []


def has_type(node: dict[str, Any], name: str) -> bool:
    return name in types_of(node)


def is_object(node: dict[str, Any]) -> bool:
    return has_type(node, "object") or (not types_of(node) and "properties" in node)


def is_array(node: dict[str, Any]) -> bool:
    return has_type(node, "array")


def canonical(value: Any) -> str:
    """Order-independent text of a JSON value, for equality and de-duplication."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def render(value: Any) -> str:
    """How a lost constraint's value is written into a description."""
    if isinstance(value, str) and value:
        return value
    return canonical(value)


def is_defs_ref(ref: str) -> bool:
    """True for `#/$defs/<name>`, the only pointer form every ref-keeping dialect accepts."""
    return ref.startswith(DEFS_PREFIX) and "/" not in ref[len(DEFS_PREFIX) :]


_MISSING: Final = object()


def pointer_tokens(ref: str) -> list[str] | None:
    """Tokens of a local JSON-pointer ref (`#/a/b`), None for anything else."""
    if ref == "#":
        return []
    if not ref.startswith("#/"):
        return None
    return [unquote(t).replace("~1", "/").replace("~0", "~") for t in ref[2:].split("/")]


def resolve_local(root: dict[str, Any], ref: str) -> tuple[bool, Any]:
    """(found, target) for a local JSON-pointer ref inside `root`."""
    tokens = pointer_tokens(ref)
    if tokens is None:
        return False, None
    current: Any = root
    for token in tokens:
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return False, None
    return True, current


def encode_pointer(path: Pointer) -> str:
    parts = (str(p).replace("~", "~0").replace("/", "~1") for p in path)
    return "#" + "".join("/" + p for p in parts)


def enum_values(node: dict[str, Any]) -> list[Any] | None:
    """The values a node is limited to by `enum`/`const`, None when unrestricted."""
    if "const" in node:
        return [node["const"]]
    values = node.get("enum")
    return list(values) if isinstance(values, list) else None


def dict_at(node: dict[str, Any], key: str) -> dict[str, Any]:
    """`node[key]` when it is an object, else an empty one (untrusted input)."""
    value = node.get(key)
    return value if isinstance(value, dict) else {}


def list_at(node: dict[str, Any], key: str) -> list[Any]:
    """`node[key]` when it is an array, else an empty one (untrusted input)."""
    value = node.get(key)
    return value if isinstance(value, list) else []
