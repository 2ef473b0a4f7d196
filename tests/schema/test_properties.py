"""Property tests: whatever schema comes in, each dialect's output is one its provider accepts
(by our checkers and the meta-schema), cleaning is deterministic and never mutates its input."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from toolc.schema import DIALECTS, clean_schema, tool_envelope
from toolc.schema.checks import schema_problems

NAMES = st.sampled_from(["a", "b", "-A", "x.y", "1st", "dash_A", "title", "$ref"])
TYPES = st.sampled_from(
    ["string", "integer", "number", "boolean", "null", "object", "array", "STRING", "enum"]
)
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "a", "b"]))

FACETS: dict[str, st.SearchStrategy[Any]] = {
    "minLength": st.integers(0, 3),
    "pattern": st.sampled_from(["^a", "^(?!x)"]),
    "format": st.sampled_from(["date-time", "uri", "email", "int32", "double", "enum"]),
    "minimum": st.integers(-5, 5),
    "exclusiveMinimum": st.one_of(st.integers(-5, 5), st.booleans()),
    "exclusiveMaximum": st.floats(-5, 5, allow_nan=False),
    "multipleOf": st.integers(1, 3),
    "enum": st.lists(VALUES, min_size=1, max_size=3),
    "const": VALUES,
    "default": VALUES,
    "title": st.just("T"),
    "examples": st.lists(VALUES, max_size=2),
    "deprecated": st.booleans(),
    "x-extra": st.integers(),
    "nullable": st.booleans(),
    "uniqueItems": st.booleans(),
    "minItems": st.integers(0, 2),
    "description": st.just("d"),
}


def leaf() -> st.SearchStrategy[dict[str, Any]]:
    typed = st.fixed_dictionaries(
        {}, optional={"type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3))}
    )
    facets = st.fixed_dictionaries({}, optional=FACETS)
    ref = st.builds(
        lambda r: {"$ref": r},
        st.sampled_from(["#/$defs/D", "#/$defs/D", "#/properties/a", "#", "#/definitions/E"]),
    )
    return st.one_of(st.builds(lambda t, f: {**t, **f}, typed, facets), ref)


def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    props = st.dictionaries(NAMES, children, max_size=3)
    obj = st.builds(
        lambda p, r, extra: {
            "type": "object",
            "properties": p,
            "required": [n for n in p if r],
            **extra,
        },
        props,
        st.booleans(),
        st.fixed_dictionaries(
            {}, optional={"additionalProperties": st.one_of(st.booleans(), children)}
        ),
    )
    arr = st.builds(
        lambda items, extra: {"type": "array", **items, **extra},
        st.one_of(
            st.just({}),
            st.builds(lambda c: {"items": c}, children),
            st.builds(lambda cs: {"prefixItems": cs}, st.lists(children, min_size=1, max_size=2)),
            st.builds(lambda cs: {"items": cs}, st.lists(children, min_size=1, max_size=2)),
        ),
        st.fixed_dictionaries(
            {}, optional={"minItems": st.integers(0, 2), "uniqueItems": st.booleans()}
        ),
    )
    union = st.builds(
        lambda k, cs: {k: cs},
        st.sampled_from(["anyOf", "oneOf", "allOf"]),
        st.lists(children, min_size=1, max_size=3),
    )
    misc = st.builds(lambda c: {"not": c}, children)
    return st.one_of(obj, arr, union, misc)


SCHEMAS = st.recursive(leaf(), extend, max_leaves=8)
ROOTS = st.builds(
    lambda body, d, root_union: {
        **(body if isinstance(body, dict) else {}),
        **({"anyOf": root_union} if root_union else {}),
        "$defs": {"D": d},
        "definitions": {"E": {"type": "string", "nullable": True}},
    },
    SCHEMAS,
    SCHEMAS,
    st.one_of(st.just([]), st.lists(SCHEMAS, min_size=1, max_size=2)),
)


def gemini_sdk_problems(envelope: dict[str, Any]) -> list[str]:
    try:
        from google.genai import types  # noqa: PLC0415
    except ImportError:
        return []
    try:
        types.FunctionDeclaration.model_validate(envelope)
    except Exception as exc:  # the SDK also crashes with AttributeError
        return [str(exc)]
    return []


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=ROOTS)
def test_output_is_accepted_by_the_dialect(dialect: str, schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    cleaned = clean_schema(schema, dialect)
    assert schema == before
    assert clean_schema(schema, dialect) == cleaned
    json.dumps(cleaned.schema)
    if cleaned.errors:
        return
    if dialect != "gemini":
        Draft202012Validator.check_schema(cleaned.schema)
    strict = cleaned.strict and dialect == "openai-strict"
    assert schema_problems(dialect, cleaned.schema, strict=strict) == []
    if dialect == "gemini":
        env = tool_envelope("gemini", name="t", description="d", cleaned=cleaned)
        assert gemini_sdk_problems(env) == []


@settings(max_examples=150, deadline=None)
@given(schema=ROOTS)
def test_lossy_notes_leave_a_trace_in_some_description(schema: dict[str, Any]) -> None:
    for dialect in ("gemini", "gemini-json"):
        cleaned = clean_schema(schema, dialect)
        described = [n for n in cleaned.notes if n.code == "constraint-described"]
        if described:
            assert "description" in json.dumps(cleaned.schema)
