"""A fast yes/no structural check compiled from the definitions JSON Schema.

``jsonschema`` walks every value through its generic keyword machinery: about a quarter of a
second per MB of channels. Nearly every file is valid, and for a valid file only the answer
matters, so ``frontend.check_structure`` asks this gate first and runs ``jsonschema`` (and
reports its errors) only for a file the gate rejects.

The gate is exact, not merely cautious: for every value the YAML loader can produce it
accepts precisely what ``jsonschema``'s Draft 2020-12 validator (with toolc's ECMA ``pattern``)
accepts, so that ``not`` and ``oneOf`` can be built from it. It covers the keywords the shipped
schema uses; any other keyword is refused when the gate is compiled, never skipped.
tests/test_schemagate.py holds it against ``jsonschema`` on mutated documents.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]

# Keywords that only annotate (jsonschema ignores them while validating).
_ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "x-message"})
# JSON type name -> the Python types that carry it (the loader makes exactly these types;
# bool is not an integer in JSON Schema, and Python's bool is a type of its own here).
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "object": (dict,), "array": (list,), "boolean": (bool,),
    "null": (type(None),), "number": (int, float), "integer": (int,),
}


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def compile_gate(schema: Mapping[str, Any] | bool,
                 pattern: Callable[[str], re.Pattern[str]]) -> Check:
    """A predicate accepting exactly the values ``schema`` (``$ref`` already inlined) accepts;
    ``pattern`` compiles a ``pattern`` keyword as the validator does."""
    if isinstance(schema, bool):
        return _always if schema else _never
    unknown = set(schema) - _ANNOTATIONS - _KNOWN
    if unknown:
        raise ValueError(f"the structural gate has no rule for {sorted(unknown)}")
    checks = [check for check in (
        _type_check(schema), _object_check(schema, pattern), _array_check(schema, pattern),
        _string_check(schema, pattern), _number_check(schema), _enum_check(schema),
        _combinator_check(schema, pattern)) if check is not None]
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:  # most (a type and its keywords): no generator per value
        first, second = checks
        return lambda value: first(value) and second(value)
    return lambda value: all(check(value) for check in checks)


_KNOWN = frozenset({"type", "properties", "additionalProperties", "required", "propertyNames",
                    "items", "minItems", "minLength", "pattern", "minimum", "enum", "const",
                    "oneOf", "not"})


def _type_check(schema: Mapping[str, Any]) -> Check | None:
    if "type" not in schema:
        return None
    names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
    types = frozenset(t for name in names for t in _TYPES[name])
    if "integer" in names and "number" not in names:
        # Draft 6 on: a float with an integral value is an integer
        return lambda value: type(value) in types or (type(value) is float
                                                     and value.is_integer())
    return lambda value: type(value) in types


def _object_check(schema: Mapping[str, Any], pattern: Callable[[str], re.Pattern[str]]
                  ) -> Check | None:
    if not {"properties", "additionalProperties", "required", "propertyNames"} & set(schema):
        return None
    props = {k: compile_gate(v, pattern) for k, v in schema.get("properties", {}).items()}
    extra_schema = schema.get("additionalProperties", True)
    extra = None if extra_schema is False else compile_gate(extra_schema, pattern)
    required = tuple(schema.get("required", ()))
    names = (compile_gate(schema["propertyNames"], pattern) if "propertyNames" in schema
             else None)

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return True
        for key, item in value.items():
            item_check = props.get(key, extra)
            if item_check is None or not item_check(item):
                return False
            if names is not None and not names(key):
                return False
        return all(key in value for key in required)
    return check


def _array_check(schema: Mapping[str, Any], pattern: Callable[[str], re.Pattern[str]]
                 ) -> Check | None:
    if "items" not in schema and "minItems" not in schema:
        return None
    least = schema.get("minItems", 0)
    item_schema = schema.get("items", {})
    if set(item_schema) - _ANNOTATIONS == {"type"} and isinstance(item_schema["type"], str) \
            and item_schema["type"] != "integer":
        # a list of one type (most lists: tool names): no call per item
        types = _TYPES[item_schema["type"]]
        return lambda value: type(value) is not list or (
            len(value) >= least and all(type(item) in types for item in value))
    items = compile_gate(item_schema, pattern)
    return lambda value: type(value) is not list or (
        len(value) >= least and all(items(item) for item in value))


def _string_check(schema: Mapping[str, Any], pattern: Callable[[str], re.Pattern[str]]
                  ) -> Check | None:
    if "minLength" not in schema and "pattern" not in schema:
        return None
    least = schema.get("minLength", 0)
    search = pattern(schema["pattern"]).search if "pattern" in schema else None
    return lambda value: type(value) is not str or (
        len(value) >= least and (search is None or search(value) is not None))


def _number_check(schema: Mapping[str, Any]) -> Check | None:
    if "minimum" not in schema:
        return None
    least = schema["minimum"]
    return lambda value: type(value) not in (int, float) or value >= least


def _enum_check(schema: Mapping[str, Any]) -> Check | None:
    if "enum" not in schema and "const" not in schema:
        return None
    allowed = list(schema.get("enum", [])) + ([schema["const"]] if "const" in schema else [])
    if "enum" in schema and "const" in schema:
        raise ValueError("the structural gate has no rule for enum beside const")
    return lambda value: any(_equal(value, each) for each in allowed)


def _equal(value: Any, each: Any) -> bool:
    """jsonschema's ``equal`` for a scalar ``each``: ``1 == 1.0``, but ``True != 1``."""
    if isinstance(each, str):
        return type(value) is str and value == each
    if isinstance(each, bool) or each is None:
        return value is each
    if isinstance(each, (int, float)) and math.isfinite(each):
        return type(value) in (int, float) and value == each
    raise ValueError(f"the structural gate has no rule for enum value {each!r}")


def _combinator_check(schema: Mapping[str, Any], pattern: Callable[[str], re.Pattern[str]]
                      ) -> Check | None:
    if "oneOf" not in schema and "not" not in schema:
        return None
    branches = [compile_gate(branch, pattern) for branch in schema.get("oneOf", ())]
    negated = compile_gate(schema["not"], pattern) if "not" in schema else None

    def check(value: Any) -> bool:
        if branches and sum(branch(value) for branch in branches) != 1:
            return False
        return negated is None or not negated(value)
    return check
