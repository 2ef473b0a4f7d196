"""``build/ACCESS.md``: exact (every row's tools equal the reference interpreter on every class
it covers), complete, and shipped with the build."""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from toolc.api import resolve_definitions
from toolc.audit import access_md as review
from toolc.diagnostics import DefinitionsError
from toolc.review.diff import side_from_definitions
from toolc.semantics.access import ClassSpace, TablesView
from toolc.semantics.factored import bit_indices
from toolc.semantics.reference import ReferenceInterpreter

from tests.helpers import ROOT, write_definitions
from tests.strategies import definitions, split_files
from tests.test_diff_bruteforce import _shrink

EXAMPLES = int(os.environ.get("TOOLC_ACCESS_EXAMPLES", "40"))


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=definitions())
def test_access_sets_equal_the_reference_on_every_class(data: dict[str, Any]) -> None:
    data = _shrink(data)
    with tempfile.TemporaryDirectory() as tmp:
        defs = write_definitions(Path(tmp) / "d", split_files(data, []))
        try:
            side = side_from_definitions(defs)
        except DefinitionsError:
            return
        ref = ReferenceInterpreter(resolve_definitions(defs))
        space = ClassSpace([TablesView(side.tables, side.tables["tools"])])
        tools = space.tool_names
        sets = review.access_sets(space)
        variants = list(itertools.product(range(2), range(2), range(len(space.subagent))))
        for a in range(len(space.agents)):
            for key in variants:
                seen = set()
                for bits, cubes in sets[a][key].items():
                    names = tuple(t for i, t in enumerate(tools) if bits >> i & 1)
                    for pbits, cbits in cubes:
                        for p in bit_indices(pbits):
                            for c in bit_indices(cbits):
                                assert (p, c) not in seen
                                seen.add((p, c))
                                flags = space.flags((a, p, c, *key))
                                assert ref.resolve(**flags).names == names, flags
                assert len(seen) == len(space.providers) * len(space.channels)


def test_shipped_build_has_access_md() -> None:
    build = ROOT / "build"
    tables = json.loads((build / "toolc_runtime" / "tables.json").read_text())
    text = (build / "ACCESS.md").read_text()
    assert text == review.access_markdown(tables)
    assert "## agent viewer" in text and "## no declared agent" in text
    viewer = text.split("## agent viewer")[1]
    ref = ReferenceInterpreter(resolve_definitions(ROOT / "definitions"))
    names = ref.resolve(agent_id="viewer").names
    assert f"Most contexts ({len(names)} tools): " + ", ".join(f"`{n}`" for n in names) in viewer
    main = text.split("## agent main")[1].split("## ")[0]
    assert "- owner: + `cron`, `gateway`, `whatsapp_login` (in some contexts)" in main


def test_very_large_deployments_get_a_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    tables = json.loads((ROOT / "build" / "toolc_runtime" / "tables.json").read_text())
    monkeypatch.setattr(review, "MAX_CLASSES", 10)
    text = review.access_markdown(tables)
    assert "more than the 10 this table shows" in text and "## agent" not in text
