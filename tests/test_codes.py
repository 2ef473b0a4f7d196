"""The registry of diagnostic codes (toolc.codes), from which the documentation's diagnostic
reference is generated, is exactly the set of codes the compiler reports, with the same
severities."""

from __future__ import annotations

import re
from pathlib import Path

import toolc
from toolc.codes import BY_CODE, CODES

SOURCE = Path(toolc.__file__).resolve().parent
CODE = re.compile(r"\bTC\d{3}\b")
# diags.error(pos, "TC104", ...) / diags.warning(Pos(...), "TC130", ...), possibly over lines
REPORTED = re.compile(r"\.(error|warning)\(\s*[^()\"]*(?:\([^()]*\)[^()\"]*)*,\s*\"(TC\d{3})\"")


def _sources() -> dict[Path, str]:
    return {p: p.read_text("utf-8") for p in sorted(SOURCE.rglob("*.py"))
            if p.name != "codes.py"}


def test_every_code_in_the_source_is_registered_and_every_registered_code_is_used() -> None:
    used = {code for text in _sources().values() for code in CODE.findall(text)}
    assert used - set(BY_CODE) == set(), "add these codes to toolc/codes.py"
    assert set(BY_CODE) - used == set(), "these registered codes are reported nowhere"


def test_registered_severities_match_the_reports() -> None:
    seen = 0
    for path, text in _sources().items():
        for severity, code in REPORTED.findall(text):
            seen += 1
            assert BY_CODE[code].severity == severity, f"{path.name}: {code} is a {severity}"
    assert seen >= 30  # the pattern still finds the reports


def test_codes_are_unique_and_sorted_within_their_groups() -> None:
    codes = [c.code for c in CODES]
    assert len(codes) == len(set(codes))
    assert codes == sorted(codes, key=lambda c: (c[:3], int(c[2:])))
