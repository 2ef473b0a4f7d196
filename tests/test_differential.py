"""The compiled runtime must agree with the reference interpreter on every context, per
OpenClaw target (``openclaw: "2026.3"`` and ``"2026.9"``), refusals included
(AgentSelectionRequiredError, 2026.9).

Budget: ``TOOLC_HYPOTHESIS_EXAMPLES`` (700) examples in all, split evenly between the
targets, so the file takes what it took with one target.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import engines_for
from tests.strategies import TARGETS, contexts, contexts_2026_9, definitions_for, split_files

EXAMPLES = int(os.environ.get("TOOLC_HYPOTHESIS_EXAMPLES", "700"))
PER_TARGET = max(1, EXAMPLES // len(TARGETS))


@pytest.mark.parametrize("target", TARGETS)
def test_runtime_agrees_with_reference(target: str) -> None:
    ctx_strategy = contexts_2026_9 if target == "2026.9" else contexts

    @settings(max_examples=PER_TARGET, deadline=None, derandomize=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(data=definitions_for(target), ctxs=st.lists(ctx_strategy, min_size=1, max_size=24))
    def check(data: dict[str, Any], ctxs: list[dict[str, Any]]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            engines = engines_for(Path(tmp), split_files(data, []))
            for ctx in ctxs:
                engines.both(**ctx)

    check()
