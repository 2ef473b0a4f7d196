"""``bundles.json`` keeps a schema's property order (what the provider is sent): strict-mode
cleaning orders ``anyOf`` branches' properties so that no two share a first key, which a
sorted dump would undo (2026.9's ``mobile_ui``)."""

from __future__ import annotations

import json

from toolc.pipeline.render import dump_bundles
from toolc.schema import check_openai_strict, clean_schema


def test_properties_keep_their_order_and_everything_else_is_sorted() -> None:
    value = {"b": 1, "a": {"properties": {"z": {"type": "string", "description": "d"},
                                          "y": {"type": "integer"}}, "type": "object"}}
    text = dump_bundles(value)
    assert text == ('{"a":{"properties":{"z":{"description":"d","type":"string"},'
                    '"y":{"type":"integer"}},"type":"object"},"b":1}\n')


def test_a_strict_schema_stays_strict_through_the_bundle() -> None:
    branch = {"type": "object", "properties": {"ref": {"type": "string"}}, "required": ["ref"]}
    schema = {"type": "object", "properties": {"action": {"anyOf": [
        {**branch, "properties": {"ref": {"type": "string"}, "x": {"type": "integer"}}},
        {**branch, "properties": {"ref": {"type": "string"}, "y": {"type": "integer"}}},
    ]}}, "required": ["action"]}
    cleaned = clean_schema(schema, "openai-strict")
    assert cleaned.strict
    assert check_openai_strict(json.loads(dump_bundles(cleaned.schema))) == []
