"""``CountedWords`` (the diff's folding, counts per prefix) says what ``Words`` says (bitsets
per prefix), for any set of classes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.api import compile_files
from toolc.audit.words import Words
from toolc.builds.read import tables_of_files
from toolc.review.folding import CountedWords
from toolc.semantics.access import DIMS, ClassSpace, TablesView

from tests.helpers import write_definitions
from tests.strategies import definitions, split_files


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=definitions(), picks=st.lists(st.integers(0, 10_000), max_size=40),
       random=st.randoms(use_true_random=False))
def test_counted_folding_says_what_bitset_folding_says(
        data: dict[str, Any], picks: list[int], random: Any,
        tmp_path_factory: pytest.TempPathFactory) -> None:
    defs = write_definitions(tmp_path_factory.mktemp("fold"), split_files(data, []))
    files, _, _ = compile_files(defs, package="x", with_models=False)
    tables = tables_of_files(files, "x")
    space = ClassSpace([TablesView(tables, list(tables["tools"]))])
    words, counted = Words(space), CountedWords(space)
    for d, name in enumerate(DIMS):
        n = len(space.dims()[d])
        chosen = 0
        for p in picks:
            chosen |= 1 << (p % n)
        if random.random() < 0.5:  # whole groups of classes, so that something folds
            chosen |= random.getrandbits(n)
        if chosen:
            assert counted.dim(d, chosen) == words.dim(d, chosen), name
            assert counted.labels(d, chosen) == words.labels(d, chosen), name
