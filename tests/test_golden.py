"""Golden cases: exact stderr, exit code and output files for each case directory."""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path

import pytest

from tests.golden import UPDATE_COMMAND, all_cases, expected, run_case, static_paths


@pytest.mark.parametrize("case", all_cases(), ids=lambda p: p.name)
def test_case(case: Path) -> None:
    got, want = run_case(case), expected(case)
    if got.stderr != want.stderr:
        diff = "".join(difflib.unified_diff(want.stderr.splitlines(True),
                                            got.stderr.splitlines(True), "expected", "actual"))
        pytest.fail(f"stderr differs for {case.name}:\n{diff}\nrun `{UPDATE_COMMAND}` if intended")
    assert got.exit_code == want.exit_code, f"run `{UPDATE_COMMAND}` if intended"
    assert sorted(got.files) == sorted(want.files), f"run `{UPDATE_COMMAND}` if intended"
    for rel, data in got.files.items():
        assert data == want.files[rel], f"{rel} differs; run `{UPDATE_COMMAND}` if intended"
    # static modules: by hash, against the expected manifest (which the runtime's own
    # __init__.py matches byte for byte above)
    assert sorted(got.static) == sorted(static_paths(want.files))
    recorded = json.loads(want.files["manifest.json"])["files"] if want.files else {}
    for rel, data in got.static.items():
        assert hashlib.sha256(data).hexdigest() == recorded[rel], (
            f"{rel} differs; run `{UPDATE_COMMAND}` if intended")


def test_errors_leave_no_output() -> None:
    for case in all_cases():
        outcome = expected(case)
        if outcome.exit_code != 0:
            assert not outcome.files, f"{case.name}: a failed build must not write anything"
