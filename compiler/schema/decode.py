"""Provider call arguments -> the tool's own argument names and optionality.

Walks the emitted schema alongside the arguments: Gemini wire names go back to the original
property names and, for OpenAI strict mode, a null for a property that was optional in the
source means "omitted" and is removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .keywords import DEFS_PREFIX, dict_at, is_defs_ref, json_type, list_at, types_of
from .model import CleanedSchema, Pointer

_MAX_REF_HOPS: Final = 64


def decode_call_args(args: Mapping[str, Any], cleaned: CleanedSchema) -> dict[str, Any]:
    """Arguments as the tool expects them, given the arguments the provider sent for the
    schema in `cleaned`. Unknown keys are kept as they are."""
    if not cleaned.property_renames and not cleaned.nullable_optionals:
        return dict(args)
    decoded = _decode(dict(args), (), cleaned.schema, cleaned)
    return decoded if isinstance(decoded, dict) else dict(args)


def _decode(value: Any, at: Pointer, schema: Any, c: CleanedSchema) -> Any:
    at, schema = _follow(at, schema, c.schema)
    if not isinstance(schema, dict):
        return value
    if isinstance(schema.get("anyOf"), list):
        index = _pick(value, schema["anyOf"], c.schema)
        if index is None:
            return value
        return _decode(value, (*at, "anyOf", index), schema["anyOf"][index], c)
    if isinstance(value, dict):
        return _decode_object(value, at, schema, c)
    if isinstance(value, list):
        return _decode_array(value, at, schema, c)
    return value


def _decode_object(
    value: dict[str, Any], at: Pointer, schema: dict[str, Any], c: CleanedSchema
) -> dict[str, Any]:
    renames = c.property_renames.get(at, {})
    optional = c.nullable_optionals.get(at, ())
    props = dict_at(schema, "properties")
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None and key in optional:
            continue
        sub = props.get(key)
        decoded = _decode(item, (*at, "properties", key), sub, c) if sub is not None else item
        out[renames.get(key, key)] = decoded
    return out


def _decode_array(
    value: list[Any], at: Pointer, schema: dict[str, Any], c: CleanedSchema
) -> list[Any]:
    prefix = list_at(schema, "prefixItems")
    out = []
    for index, item in enumerate(value):
        if index < len(prefix):
            out.append(_decode(item, (*at, "prefixItems", index), prefix[index], c))
        else:
            out.append(_decode(item, (*at, "items"), schema.get("items"), c))
    return out


def _follow(at: Pointer, schema: Any, root: dict[str, Any]) -> tuple[Pointer, Any]:
    for _ in range(_MAX_REF_HOPS):
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if not isinstance(ref, str) or not is_defs_ref(ref):
            break
        name = ref[len(DEFS_PREFIX) :]
        at, schema = ("$defs", name), dict_at(root, "$defs").get(name)
    return at, schema


def _pick(value: Any, branches: list[Any], root: dict[str, Any]) -> int | None:
    """The branch the value was most likely produced for."""
    fallback = None
    for index, branch in enumerate(branches):
        _, target = _follow((), branch, root)
        if not isinstance(target, dict):
            continue
        types = [t.lower() for t in types_of(target)]
        if isinstance(value, dict) and isinstance(target.get("properties"), dict):
            if set(value) <= set(target["properties"]):
                return index
            fallback = index if fallback is None else fallback
        elif not isinstance(value, dict) and _fits(json_type(value), types):
            return index
    return fallback


def _fits(kind: str, types: list[str]) -> bool:
    return kind in types or (kind == "integer" and "number" in types)
