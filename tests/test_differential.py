"""The compiled runtime must agree with the reference interpreter on every context."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import engines_for
from tests.strategies import contexts, definitions, split_files

EXAMPLES = int(os.environ.get("TOOLC_HYPOTHESIS_EXAMPLES", "700"))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=definitions(), ctxs=st.lists(contexts, min_size=1, max_size=24))
def test_runtime_agrees_with_reference(data: dict[str, Any], ctxs: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        engines = engines_for(Path(tmp), split_files(data, []))
        for ctx in ctxs:
            engines.both(**ctx)
