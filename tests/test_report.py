"""``toolc report``: the data behind the page is exact (every class's tool set as the generated
runtime resolves it), the diff marks exactly what ``toolc diff`` reports, and the page is one
self-contained file (no URL a browser would fetch). The page in a browser:
tests/test_report_browser.py (make test-ship)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from toolc.api import build, diff, report
from toolc.audit.access_md import access_sets
from toolc.builds import read_tables
from toolc.cli import main
from toolc.review.report import render_report, report_data, runs
from toolc.semantics.access import ClassSpace, TablesView
from toolc.semantics.factored import bit_indices

from tests.helpers import ROOT, import_runtime


def _bits(text: str) -> int:
    value = 0
    parts = text.split(".") if text else []
    for k in range(0, len(parts), 2):
        value |= ((1 << int(parts[k + 1], 36)) - 1) << int(parts[k], 36)
    return value


def test_runs_round_trip() -> None:
    for bits in (0, 1, 0b1011, (1 << 300) - 1, 1 << 70 | 0b110):
        assert _bits(runs(bits)) == bits
    assert runs((1 << 43814) - 1) == "0.xt2"  # every class: one run


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("report")
    build(ROOT / "definitions", root / "build", package_name="toolc_report_rt")
    tables = read_tables(root / "build")
    return {"root": root, "tables": tables,
            "rt": import_runtime(root / "build", "toolc_report_rt")}


def _content_bits(content: list[Any], present: int, b: Any) -> int:
    bits = b(content[1])
    for w, a, d in content[2]:
        bits &= b(a) if b(w) & present else b(d)
    return bits


def class_tools(data: dict[str, Any], a: int, p: int, c: int, variant: list[int]) -> int:
    """A class's tools from the page's factored data, as the page computes them."""
    def b(i: int) -> int:
        return _bits(data["bits"][i])

    def mine(members: list[list[int]]) -> bool:
        return any(b(ar) >> a & 1 and b(pr) >> p & 1 and [o, s, k] == variant
                   for ar, pr, o, s, k in members)

    wmask = b(data["wmask"])
    found = []
    for g, gate in enumerate(data["gates"]):
        groups = [x for x, cr in gate["groups"] if b(cr) >> c & 1]
        if not groups:
            continue
        group = groups[0]
        for full, part, index, members in data["states"]:
            if mine(members):
                present = b(data["presents"][index][g])
                e = _content_bits(group, present & wmask, b)
                found.append(e & present & (b(full) | b(part) & b(group[0])))
        for present, full, part, members in gate["fallback"]:
            if mine(members):
                e = _content_bits(group, b(present), b)
                found.append(e & (b(full) | b(part) & b(group[0])))
    assert len(found) == 1, (a, p, c, variant)
    return found[0]


def test_every_class_gets_the_tools_the_access_sets_hold(shipped: dict[str, Any]) -> None:
    """The page's factored data gives every class exactly the tool set of the access
    analysis that ACCESS.md and ``toolc diff`` use (``audit.access_md.access_sets``; its own
    tests hold it against the runtime)."""
    tables = shipped["tables"]
    data = report_data(tables)
    space = ClassSpace([TablesView(tables, list(tables["tools"]))])
    sets = access_sets(space)
    checked = 0
    for v in data["variants"]:
        key = tuple(v["key"])
        for a in range(len(space.agents)):
            for bits, cubes in sets[a][key].items():
                for pbits, cbits in cubes:
                    p = bit_indices(pbits)[0]
                    for c in bit_indices(cbits)[::7]:
                        assert class_tools(data, a, p, c, v["key"]) == bits, (a, p, c, key)
                        checked += 1
    assert checked > 100


def test_the_diff_marks_what_toolc_diff_reports(shipped: dict[str, Any], tmp_path: Path) -> None:
    base = tmp_path / "base"
    shutil.copytree(ROOT / "definitions", base)
    agents = base / "deployment" / "agents.yaml"
    agents.write_text(agents.read_text().replace("deny: [canvas]", "deny: [gateway]")
                      .replace("whatsapp_login]\n        deny", "whatsapp_login, canvas]\n"
                               "        deny"))
    data = report_data(shipped["tables"], _tables(base, tmp_path))
    marked = {(data["agents"][a], data["tools"][t], sign) for a, t, sign, _ in data["diff"]}
    assert marked and {a for a, _, _ in marked} == {"agent main"}
    reported = diff(str(base), str(ROOT / "definitions"))
    assert {(c.tool, sign) for c in reported.changes
            for sign, lines in (("+", c.gained), ("-", c.lost)) if lines} == {
        (t, sign) for _, t, sign in marked}
    words = {d[1]: d[3] for d in data["diff"]}
    assert all(w.startswith("agent main") for w in words.values())


def _tables(defs: Path, tmp: Path) -> dict[str, Any]:
    build(defs, tmp / "base-build")
    return read_tables(tmp / "base-build")


def test_the_page_is_self_contained(shipped: dict[str, Any]) -> None:
    html = report(str(shipped["root"] / "build")).html
    assert html.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=|https?://|@import|url\(""", html)
    payload = re.search(r'<script id="data" type="application/json">(.*?)</script>', html, re.S)
    assert payload is not None and json.loads(payload.group(1))["format"] == 1


def test_hostile_names_stay_data() -> None:
    html = render_report({"title": "<b>x</b>", "format": 1, "tools": ["</script><img onerror=x>"],
                          "agents": [], "gates": [], "bits": [], "providers": [],
                          "channels": [], "variants": [], "diff": None, "classes": 0})
    assert "</script><img" not in html and "<b>x</b>" not in html


def test_cli_report(tmp_path: Path) -> None:
    out = tmp_path / "access.html"
    result = CliRunner().invoke(main, ["report", str(ROOT / "definitions"), "-o", str(out),
                                       "--title", "Access"])
    assert result.exit_code == 0, result.output
    assert re.search(r"\d+ agents x \d+ tools, [\d,]+ bytes", result.output)
    assert "<title>Access</title>" in out.read_text()
