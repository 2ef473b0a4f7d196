"""The docs' keyword x dialect table, derived by running the cleaner (so docs cannot drift).

``python -m toolc.schema.table`` prints it; a test checks the docs page holds the same text.
"""

from __future__ import annotations

import json
from typing import Any, Final

from ..runtime._dialects import DIALECTS
from .clean import clean_schema

# keyword label -> a property schema using it (put under properties.x of an object)
SAMPLES: Final[dict[str, dict[str, Any]]] = {
    "type list with null": {"type": ["string", "null"]},
    "enum (strings)": {"type": "string", "enum": ["a", "b"]},
    "enum (integers)": {"type": "integer", "enum": [1, 2]},
    "const": {"const": "a"},
    "default": {"type": "string", "default": "a"},
    "title": {"type": "string", "title": "X"},
    "examples": {"type": "string", "examples": ["a"]},
    "pattern": {"type": "string", "pattern": "^a+$"},
    "minLength/maxLength": {"type": "string", "minLength": 1, "maxLength": 9},
    "format: date-time": {"type": "string", "format": "date-time"},
    "format: uri": {"type": "string", "format": "uri"},
    "minimum/maximum": {"type": "integer", "minimum": 1, "maximum": 9},
    "exclusiveMinimum": {"type": "number", "exclusiveMinimum": 0},
    "multipleOf": {"type": "integer", "multipleOf": 2},
    "minItems/maxItems": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "uniqueItems": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    "nested object, additionalProperties: false": {
        "type": "object", "properties": {"a": {"type": "string"}},
        "additionalProperties": False},
    "additionalProperties: schema": {"type": "object",
                                     "additionalProperties": {"type": "string"}},
    "anyOf": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "oneOf (disjoint types)": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "allOf": {"allOf": [{"type": "string"}, {"minLength": 1}]},
    "not": {"type": "string", "not": {"const": "x"}},
    "$ref to $defs": {"$ref": "#/$defs/D"},
}


def classify(label: str, dialect: str) -> str:
    """What ``dialect`` does to the keyword of ``SAMPLES[label]``."""
    prop = SAMPLES[label]
    schema: dict[str, Any] = {"type": "object", "properties": {"x": prop}, "required": ["x"]}
    if "$ref" in prop:
        schema["$defs"] = {"D": {"type": "string"}}
    cleaned = clean_schema(schema, dialect)
    verdict = _verdict(cleaned, prop)
    if dialect == "openai-strict" and not cleaned.strict and verdict != "error":
        return f"{verdict}, strict: false"
    return verdict


def _verdict(cleaned: Any, prop: dict[str, Any]) -> str:
    if cleaned.errors:
        return "error"
    if cleaned.lossy:
        return "describe"
    out = _norm(cleaned.schema.get("properties", {}).get("x"))
    want = _norm(prop)
    if out == want or (isinstance(out, dict) and _subset(want, out)):
        return "pass"
    keys = set(prop) - {"type"}
    rest = {k: v for k, v in want.items() if k not in keys}
    if isinstance(out, dict) and {k: v for k, v in out.items() if k != "description"} == rest:
        return "strip"
    return "convert"


def _norm(node: Any) -> Any:
    """Gemini's upper-case type names are a spelling, not a conversion."""
    if isinstance(node, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _norm(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_norm(v) for v in node]
    return node


def _subset(small: dict[str, Any], big: dict[str, Any]) -> bool:
    return all(k in big and json.dumps(big[k]) == json.dumps(v) for k, v in small.items())


def keyword_table() -> str:
    header = "| keyword | " + " | ".join(DIALECTS) + " |\n"
    header += "|---|" + "---|" * len(DIALECTS) + "\n"
    rows = [f"| {label} | " + " | ".join(classify(label, d) for d in DIALECTS) + " |\n"
            for label in SAMPLES]
    return header + "".join(rows)


if __name__ == "__main__":
    print(keyword_table(), end="")
