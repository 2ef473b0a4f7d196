"""Adversarial tests of the review outputs that embed names from the definitions: the access
report's page (``toolc report``) carries them as JSON inside a ``<script>`` element, where the
HTML tokenizer, not a JSON parser, decides where the element ends.

Names that are markup: ``<!--`` then ``<script`` with no ``-->`` after them put the tokenizer in
the script's double-escaped state, where the data element's own ``</script>`` no longer ends it
(the page's code becomes data and never runs: a blank page); ``</script>`` would end the
element early and run what follows; ``<img onerror>`` would run through an ``innerHTML``. The
page in Chromium: tests/test_report_browser.py::test_names_that_are_markup_render_as_text
(``make test-ship``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from toolc.api import build, report
from toolc.builds import read_tables
from toolc.pipeline.render import script_json
from toolc.review.report import report_data

from tests.helpers import write_definitions

COMMENT = "<!--<script>"
BREAK = "</script><script>window.pwned = 1</script>"
IMG = "<img src=x onerror=window.pwned=2>"
# The keys that reach the page as written (agent ids and tool names cannot be markup: they
# are normalized or validated), each with more than one way to break out.
HOSTILE = {"provider": f"p{COMMENT}]]>&amp;\u2028x", "group": f"g{COMMENT}{IMG}",
           "sender": f"id:{BREAK}{COMMENT}]]>"}
TITLE = f"access {COMMENT}{BREAK}"
MARKUP = ("<", ">", "&", "\u2028", "\u2029")  # what the HTML tokenizer (or old JS) reads
DATA = re.compile(r'<script id="data" type="application/json">(.*?)</script>', re.S)


def hostile_definitions(root: Path, sender_denies: str) -> Path:
    """Three tools, two agents; the provider, group and sender keys are markup, and so is
    every tool's description (which the page does not show) and the group a binding routes
    (the page's routing table)."""
    return write_definitions(root, {"d.yaml": {
        "catalog": [{"name": name, "description": f"{name}. {BREAK}",
                     "parameters": {"type": "object"}} for name in ("read", "exec", "write")],
        "tools": {"byProvider": {HOSTILE["provider"]: {"deny": ["exec"]}}},
        "channels": {"whatsapp": {"groups": {HOSTILE["group"]: {"toolsBySender": {
            HOSTILE["sender"]: {"deny": [sender_denies]}, "*": {"deny": ["exec"]}}}}}},
        "agents": {"list": [{"id": "main"}, {"id": "helper"}]},
        "bindings": [{"agentId": "helper", "match": {
            "channel": "whatsapp", "peer": {"kind": "group", "id": HOSTILE["group"]}}}]}})


def hostile_builds(root: Path) -> tuple[Path, Path]:
    """(head, base): the hostile sender loses write and gains read against the base, so the
    diff's words (the page's hover text) name the group and the sender too."""
    build(hostile_definitions(root / "base-defs", "read"), root / "base")
    build(hostile_definitions(root / "head-defs", "write"), root / "head")
    return root / "head", root / "base"


def test_the_report_json_holds_no_markup(tmp_path: Path) -> None:
    head, base = hostile_builds(tmp_path)
    html = report(str(head), str(base), title=TITLE).html
    found = DATA.search(html)
    assert found is not None
    payload = found.group(1)  # up to the first "</script>", as the tokenizer reads it
    assert not [c for c in MARKUP if c in payload]
    routes = json.loads((head / "toolc_runtime" / "routes.json").read_text("utf-8"))
    data = report_data(read_tables(head), read_tables(base), title=TITLE, routes=routes)
    assert json.loads(payload) == data  # the whole value, every name as written
    assert {HOSTILE["group"], HOSTILE["sender"]} <= {c for ch in data["channels"] for c in ch}
    assert any(HOSTILE["group"] in words for _, words, _ in data["routes"]["rows"])
    assert any(HOSTILE["sender"] in words for *_, words in data["diff"])
    assert html.count("<script") == 2 and html.count("</script>") == 2  # data, the page's code


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@given(JSON)
def test_script_json_is_inert_and_round_trips(value: Any) -> None:
    text = script_json(value)
    assert text.isascii() and not [c for c in MARKUP if c in text]
    assert json.loads(text) == value


def test_script_json_escapes_as_json_does() -> None:
    assert script_json({"b": "</script>", "a": "<!--&\u2028"}) == \
        '{"a":"\\u003c!--\\u0026\\u2028","b":"\\u003c/script\\u003e"}'
