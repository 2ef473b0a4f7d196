"""``render.dump_json`` writes what ``json.dumps(sort_keys=True, indent=2, ensure_ascii=False)``
writes, and ``join_members`` what ``dump_compact`` writes, for any JSON value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from toolc.pipeline.render import (
    compact_members,
    dump_compact,
    dump_json,
    join_members,
    manifest_json,
)

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=12)  # controls, quotes, é, 😀
SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.tuples(inner, inner) | st.dictionaries(TEXT, inner, max_size=4),
                      max_leaves=30)


def _reference(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


@given(VALUES)
def test_dump_json_is_the_standard_librarys_text(value: Any) -> None:
    assert dump_json(value) == _reference(value)


@given(st.dictionaries(TEXT, VALUES, max_size=6), st.sets(TEXT, max_size=3))
def test_members_written_apart_join_into_the_compact_text(value: dict[str, Any],
                                                          later: set[str]) -> None:
    members = compact_members({k: v for k, v in value.items() if k not in later})
    members.update(compact_members({k: value[k] for k in later if k in value}))
    assert join_members(members) + "\n" == dump_compact(value)


def test_what_the_standard_library_refuses_is_refused() -> None:
    with pytest.raises(ValueError):
        dump_json({"a": [float("nan")]})
    with pytest.raises(TypeError):
        dump_json({"a": {1, 2}})


def test_keys_that_are_not_strings_are_written_as_the_standard_library_writes_them() -> None:
    value = {"b": {10: "ten", 2: [True], 1: {}}, "a": 1.5}
    assert dump_json(value) == _reference(value)


@given(st.dictionaries(st.sampled_from(["files", "package", "tables", "toolc"]), VALUES),
       st.lists(st.tuples(TEXT, TEXT), max_size=5))
def test_the_manifest_is_written_as_dump_json_writes_it(manifest: dict[str, Any],
                                                        warnings: list[tuple[str, str]]) -> None:
    full = {**manifest, "warnings": [{"code": c, "message": m} for c, m in warnings]}
    assert manifest_json(manifest, warnings) == _reference(full)
