"""The structural gate (toolc.pipeline.schemagate) accepts exactly what jsonschema accepts, and
check_structure reports exactly what the jsonschema path alone reported."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.diagnostics import Diagnostics
from toolc.pipeline import frontend
from toolc.pipeline.schemagate import compile_gate
from toolc.pipeline.yamlsrc import SourceFile, load_yaml

from bench.generate import SIZES, generate
from tests.helpers import ROOT


def _names(node: Any) -> set[str]:
    """Every property name the definitions schema knows."""
    if isinstance(node, dict):
        own = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) else set()
        return own.union(*(_names(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_names(v) for v in node))
    return set()


def _siblings(node: Any, out: dict[str, set[str]]) -> dict[str, set[str]]:
    """Property name -> the names defined beside it somewhere in the schema."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for name in props:
                out.setdefault(name, set()).update(props)
        for v in node.values():
            _siblings(v, out)
    elif isinstance(node, list):
        for v in node:
            _siblings(v, out)
    return out


SIBLINGS = {k: sorted(v) for k, v in _siblings(frontend.definitions_schema(), {}).items()}
VOCAB = [*sorted(_names(frontend.definitions_schema())), "unknown", "Allow", "", "é", "*"]
TRICKY = ["", " ", "x", "exec\n", "exec", "group:web", "group:Web", "group:", "UPPER", "ﬁ",
          "a" * 64, "a" * 65, "_a", "-a", "2026.3", "2026.9", "openai", "mcp", "off", "all",
          "non-main", "leaf", "non-leaf", "unknown", "explicit", "global", "per-sender", "deny",
          "allowlist", "full", "ask", "auto", "node", "on-miss", "always", "0" * 64, "f" * 64,
          "F" * 64, "tool_1", "tool-1", "1tool", "per-sender\n", "x\n", "\n", "é"]
SCALARS = (st.sampled_from(TRICKY) | st.sampled_from([0, 1, 2, -1, 1.0, 0.0, 1.5, -1.0, 2.0])
           | st.booleans() | st.none() | st.integers() | st.floats(allow_nan=False,
                                                                  allow_infinity=False))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(VOCAB), inner, max_size=3), max_leaves=8)


@functools.cache
def corpus() -> list[Any]:
    """The documents of the shipped definitions, the fixtures, the golden case inputs and a
    generated medium deployment."""
    paths = [p for root in ("definitions", "tests/fixtures", "tests/cases")
             for p in sorted((ROOT / root).rglob("*.y*ml")) if "/expected/" not in p.as_posix()]
    raws = [p.read_bytes() for p in paths]
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), seed=4, **SIZES["medium"])
        raws += [p.read_bytes() for p in sorted(Path(tmp).rglob("*.yaml"))]
    docs = []
    for raw in raws:
        src = load_yaml(raw, "f.yaml", Diagnostics())
        if src is not None:
            docs.append(src.data)
    return docs


@functools.cache
def valid_corpus() -> list[Any]:
    return [doc for doc in corpus() if jsonschema_accepts(doc)]


def jsonschema_accepts(doc: Any) -> bool:
    return bool(frontend._validator().is_valid(doc))


def mutate(draw: st.DrawFn, node: Any) -> Any:
    """``node`` with one change somewhere below it (the containers on the way copied)."""
    if isinstance(node, dict) and node and draw(st.integers(0, 5)):
        key = draw(st.sampled_from(sorted(node)))
        return {**node, key: mutate(draw, node[key])}
    if isinstance(node, list) and node and draw(st.integers(0, 5)):
        i = draw(st.integers(0, len(node) - 1))
        return [*node[:i], mutate(draw, node[i]), *node[i + 1:]]
    op = draw(st.sampled_from(["replace", "add", "drop", "retype", "repeat", "alike", "alike",
                               "twin", "clear"]))
    if op == "twin" and isinstance(node, dict) and set(node) & set(SIBLINGS):
        # a key beside one it excludes or must not repeat (never/always, tools/tool)
        key = draw(st.sampled_from(sorted(set(node) & set(SIBLINGS))))
        return {**node, draw(st.sampled_from(SIBLINGS[key])): node[key]}
    if op == "clear" and isinstance(node, (list, dict)):
        return type(node)()
    if op == "repeat" and isinstance(node, list) and node:
        return [*node, draw(st.sampled_from(node))]  # often still valid
    if op == "add" and isinstance(node, dict):
        return {**node, draw(st.sampled_from(VOCAB)): draw(VALUES)}
    if op == "add" and isinstance(node, list):
        return [*node, draw(VALUES)]
    if op == "drop" and isinstance(node, dict) and node:
        gone = draw(st.sampled_from(sorted(node)))
        return {k: v for k, v in node.items() if k != gone}
    if op == "drop" and isinstance(node, list) and node:
        return node[1:]
    if op == "alike" and isinstance(node, (str, bool)):
        return draw(st.sampled_from(TRICKY) if isinstance(node, str) else st.booleans())
    if op == "retype" and isinstance(node, str):
        return draw(st.sampled_from([node + "\n", node.upper(), " " + node, node[:1], [node],
                                     {node: node}, 1, True, None]))
    return draw(VALUES)


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    doc = draw(st.sampled_from(valid_corpus()) | st.sampled_from(corpus()))
    for _ in range(draw(st.integers(1, 2))):
        doc = mutate(draw, doc)
    return doc


def assert_exact(doc: Any) -> None:
    assert frontend._gate()(doc) == jsonschema_accepts(doc)
    src = SourceFile(path="defs/f.yaml", data=doc, value_pos={}, key_pos={})
    gated, plain = Diagnostics(), Diagnostics()
    assert frontend.check_structure(src, gated) == frontend._schema_errors(src, plain)
    assert gated.items == plain.items


def test_corpus_documents() -> None:
    docs = corpus()
    assert len(docs) > 60
    for doc in docs:
        assert_exact(doc)
    # the corpus holds valid files (the gate's fast answer) and invalid ones
    assert 10 < sum(map(frontend._gate(), docs)) < len(docs)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_mutated_documents(doc: Any) -> None:
    assert_exact(doc)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(VOCAB), VALUES, max_size=4))
def test_random_documents(doc: Any) -> None:
    assert_exact({"version": 1, **doc})


def _subschemas(schema: Any) -> list[Any]:
    """Every schema inside ``schema`` (``$ref`` inlined), itself first."""
    out = [schema]
    for key in ("properties",):
        for sub in schema.get(key, {}).values():
            out += _subschemas(sub)
    for key in ("additionalProperties", "items", "not", "propertyNames"):
        if isinstance(schema.get(key), dict):
            out += _subschemas(schema[key])
    for sub in schema.get("oneOf", ()):
        out += _subschemas(sub)
    return out


def _under_keys(node: Any, out: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Key -> the distinct values found under that key (real policies, patterns, lists)."""
    if isinstance(node, dict):
        for key, child in node.items():
            out.setdefault(key, {}).setdefault(json.dumps(child, sort_keys=True), child)
    for child in node.values() if isinstance(node, dict) else node if isinstance(
            node, list) else ():
        _under_keys(child, out)
    return out


@functools.cache
def subschemas() -> list[Any]:
    schema = frontend.definitions_schema()
    unique = {json.dumps(s, sort_keys=True): s
              for s in _subschemas(frontend._inline(schema, schema["$defs"]))}
    return [unique[k] for k in sorted(unique)]


@functools.cache
def values_under() -> dict[str, list[Any]]:
    """Key -> the values the valid corpus documents hold under it, smallest first."""
    found: dict[str, dict[str, Any]] = {}
    for doc in valid_corpus():
        _under_keys(doc, found)
    return {key: [values[k] for k in sorted(values, key=lambda k: (len(k), k))][:50]
            for key, values in found.items()}


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_subschema(data: st.DataObject) -> None:
    """Each schema inside the definitions schema, on objects with its own keys and real values
    from the corpus (a pattern with both ``never`` and ``always``)."""
    schema = data.draw(st.sampled_from(subschemas()))
    names = [*sorted(schema.get("properties", {})), "unknown"]
    under = values_under()
    keys = data.draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
    instance = data.draw(st.just({}) | VALUES) if not keys else {
        key: data.draw(st.sampled_from(under[key]) if key in under and data.draw(st.booleans())
                       else VALUES) for key in keys}
    gate = compile_gate(schema, frontend._ecma)
    assert gate(instance) == frontend._StrictPatterns(schema).is_valid(instance)


def test_mutations_are_often_still_valid() -> None:
    """Enough mutated documents stay valid for the comparison to test acceptance too."""
    verdicts: list[bool] = []

    @settings(max_examples=300, deadline=None, database=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(mutated_documents())
    def sample(doc: Any) -> None:
        verdicts.append(jsonschema_accepts(doc))

    sample()
    assert 0.05 < sum(verdicts) / len(verdicts) < 0.95


@pytest.mark.parametrize(("schema", "good", "bad"), [
    ({"type": "integer"}, [1, 1.0, -3], [True, 1.5, "1", None]),
    ({"type": "number", "minimum": 1}, [1, 1.5, 2], [0, 0.5, False]),
    ({"minimum": 1}, ["x", True, None, 1], [0, 0.9]),
    ({"enum": [False, "leaf"]}, [False, "leaf"], [0, "Leaf", None]),
    ({"const": 1}, [1, 1.0], [True, "1", [1]]),
    ({"pattern": "^a$"}, ["a", 1], ["a\n", "ba"]),
    ({"minLength": 2}, ["ab", 3], ["a", ""]),
    ({"type": "array", "items": {"type": "string"}, "minItems": 1}, [["a"]], [[], [1], "a"]),
    ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, [{"a": 1}, {"b": 1}],
     [{}, {"a": 1, "b": 1}]),
    ({"not": {"required": ["a"]}}, [{}], [{"a": 1}, 1]),
    ({"propertyNames": {"pattern": "^x"}}, [{"xa": 1}, []], [{"a": 1}]),
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": False},
     [{"a": "x"}, {}], [{"a": 1}, {"b": 1}]),
])
def test_keywords(schema: dict[str, Any], good: list[Any], bad: list[Any]) -> None:
    gate = compile_gate(schema, frontend._ecma)
    validator = frontend._StrictPatterns(schema)
    assert [(gate(v), validator.is_valid(v)) for v in good] == [(True, True)] * len(good)
    assert [(gate(v), validator.is_valid(v)) for v in bad] == [(False, False)] * len(bad)


def test_an_unknown_keyword_is_refused() -> None:
    with pytest.raises(ValueError, match="maxLength"):
        compile_gate({"type": "string", "maxLength": 3}, re.compile)
