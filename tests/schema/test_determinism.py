"""The same input cleans to the same bytes under any hash seed, and inputs stay untouched."""

from __future__ import annotations

import copy
import os
import subprocess
import sys

from toolc.schema import DIALECTS, clean_schema

SCRIPT = """
import json
from toolc.schema import DIALECTS, clean_schema
schema = {
    "oneOf": [
        {"properties": {"-A": {"type": "integer", "exclusiveMinimum": 0}, "k": {"const": "a"}},
         "required": ["k"]},
        {"properties": {"x.y": {"enum": ["", 1, True]}, "k": {"const": "b"}}, "required": ["k"]},
    ],
    "definitions": {"N": {"type": "object", "properties": {"n": {"$ref": "#/definitions/N"}}}},
    "properties": {"tree": {"$ref": "#/definitions/N"}, "t": {"type": ["string", "integer"]}},
}
out = []
for dialect in DIALECTS:
    r = clean_schema(schema, dialect)
    out.append([dialect, r.schema, [repr(n) for n in r.notes], r.strict,
                sorted(map(repr, r.property_renames.items()))])
print(json.dumps(out, ensure_ascii=False))
"""


def run(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_output_does_not_depend_on_the_hash_seed() -> None:
    assert run("1") == run("2") == run("12345")


def test_cleaning_never_mutates_its_input() -> None:
    schema = {
        "properties": {"a": {"type": "string", "nullable": True}, "-b": {"items": [{}]}},
        "definitions": {"D": {"type": "object"}},
        "anyOf": [{"required": ["a"]}],
    }
    before = copy.deepcopy(schema)
    for dialect in DIALECTS:
        clean_schema(schema, dialect)
    assert schema == before
