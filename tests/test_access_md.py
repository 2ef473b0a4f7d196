"""``build/ACCESS.md``: exact (every row's tools equal the reference interpreter on every class
it covers), complete, and shipped with the build."""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import tempfile
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import HealthCheck, given, settings
from toolc.api import compile_files, resolve_definitions
from toolc.audit import access_md as review
from toolc.builds import read_tables
from toolc.diagnostics import DefinitionsError
from toolc.review.diff import side_from_definitions
from toolc.semantics.access import ClassSpace, TablesView
from toolc.semantics.factored import bit_indices
from toolc.semantics.reference import ReferenceInterpreter

from tests.helpers import ROOT, write_definitions
from tests.strategies import definitions, split_files
from tests.test_diff_bruteforce import _group_only_plugin_tools, _shrink

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
        try:
            _every_class_equals_the_reference(space, ref)
        except AssertionError:
            if _group_only_plugin_tools(defs):
                return  # the access analysis' documented approximation (TC142, 2026.9)
            raise


def _every_class_equals_the_reference(space: ClassSpace, ref: ReferenceInterpreter) -> None:
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
                            assert ref.resolve(**flags, strict=False).names == names, flags
            # none where no request falls (a subagent at depth 0 its sandbox class excludes)
            held = space.holds((a, 0, 0, *key))
            assert len(seen) == len(space.providers) * len(space.channels) * held


def test_shipped_build_has_access_md() -> None:
    build = ROOT / "build"
    tables = read_tables(build)
    text = (build / "ACCESS.md").read_text()
    routes = json.loads((build / "toolc_runtime" / "routes.json").read_text())
    assert text == review.access_markdown(tables, routes)
    assert "## Routing" in text and "`coder`" in text.split("## Routing")[1]
    assert "## agent `viewer`" in text and "## no declared agent" in text
    viewer = text.split("## agent `viewer`")[1]
    ref = ReferenceInterpreter(resolve_definitions(ROOT / "definitions"))
    names = ref.resolve(agent_id="viewer").names
    # "Most contexts ... see" or, where no set holds a majority (2026.9's session-named
    # group classes), "The largest class of contexts ... sees"
    assert f" {len(names)} tools: " + ", ".join(f"`{n}`" for n in names) in viewer
    main = text.split("## agent `main`")[1].split("## ")[0]
    # 2026.9: the default request (owner unknown) keeps owner-only tools; a known non-owner
    # loses GATEWAY_OWNER_ONLY_CORE_TOOLS (cron is automations)
    # the owner on webchat gets no sender policy (isOwnerInternalSession): in a group the
    # session key names, the owner keeps what a toolsBySender rule takes from others
    owner = next(line for line in main.splitlines() if line.startswith("- owner: "))
    assert owner.startswith("- owner: + ") and owner.endswith("(in some contexts)")
    assert ("- known non-owner (sender_is_owner=False): - `sessions`, `conversations_list`, "
            "`conversations_send`, `conversations_turn`, `screen`, `terminal`, `portal`, "
            "`automations`, `gateway`, `plugins`, `whatsapp_login` (in some contexts)") in main


def test_very_large_deployments_get_a_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    tables = read_tables(ROOT / "build")
    monkeypatch.setattr(review, "MAX_CLASSES", 10)
    text = review.access_markdown(tables)
    assert "an upper bound), too many to list (this file lists at most 10)" in text
    assert "## agent" not in text and "5 agents, 65 tools and 2 channels" in text
    # an exact count above the limit is stated as exact
    view = TablesView(tables, list(tables["tools"]))
    monkeypatch.setattr(review, "MAX_CLASSES", review._estimate(view) // 50 + 1)
    exact = 6 * 10 * 40  # agent, provider and channel classes
    assert review.MAX_CLASSES < exact
    text = review.access_markdown(tables)
    assert (f"{exact:,} context classes (agent x provider x channel), more than the "
            f"{review.MAX_CLASSES:,} this file lists") in text


# -- hostile names: every name is inert in Markdown (ACCESS.md and diff's PR comment) -----------
HOSTILE = {
    "provider": "evil`](http://x.y)![i](http://z/p.png)@octocat<script>|x\n```",
    "channel": "tg`@user[link](http://a.example)",
    "group": "g```\n# h1\n<img src=x onerror=alert(1)>|@admin #123 www.evil.example",
    "sender": "id:``x``![](z)@org/team\n- item\u202e",
    "account": "acct@someone`",
    "denied": "nosuch`[click](http://c.example)@ghost",
}
HOSTILE_DEFS = {"d.yaml": {
    "catalog": [{"name": "read", "description": "Read.", "parameters": {"type": "object"}},
                {"name": "exec", "description": "Exec.", "parameters": {"type": "object"}}],
    "tools": {"byProvider": {HOSTILE["provider"]: {"deny": ["exec"]}}},
    "channels": {HOSTILE["channel"]: {
        "groups": {HOSTILE["group"]: {"toolsBySender": {
            HOSTILE["sender"]: {"deny": ["read", HOSTILE["denied"]]}, "*": {"deny": ["exec"]}}}},
        "accounts": {HOSTILE["account"]: {"groups": {"*": {"tools": {"deny": ["read"]}}}}}}},
    "agents": {"list": [{"id": "main", "tools": {"deny": ["read"]}}]}}}
ALLOWED_TAGS = {"h1", "h2", "h3", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "ul",
                "li", "strong", "details", "summary"}


def visible(name: str) -> str:
    """How a name must read in Markdown: line breaks and invisible characters as escapes."""
    escapes = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(escapes.get(ch, f"\\u{ord(ch):04x}") if unicodedata.category(ch)[0] == "C"
                   or unicodedata.category(ch) in ("Zl", "Zp") else ch for ch in name)


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.stack: list[str] = []
        self.code: list[str] = []
        self.text: list[str] = []
        self.rows: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.stack.append(tag)
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th"):
            self.rows[-1] += 1
        if tag == "code":
            self.code.append("")

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        if "code" in self.stack:
            self.code[-1] += data
        else:
            self.text.append(data)


def assert_inert(markdown_text: str, names: list[str]) -> None:
    """Rendered by GitHub's parser: only the tags toolc writes (no link, image or HTML from
    a name), table rows of one width, no @-mention, reference or URL outside code, and every
    name shown literally (control characters as escapes) inside one code span."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown_text,
                                                      options=Options.CMARK_OPT_UNSAFE)
    parsed = _Html()
    parsed.feed(html)
    assert set(parsed.tags) <= ALLOWED_TAGS, set(parsed.tags) - ALLOWED_TAGS
    widths = {n for n in parsed.rows}
    assert len(widths) <= 2 and (not widths or max(widths) in (2, 3)), parsed.rows
    prose = "".join(parsed.text)
    for marker in ("@", "://", "www.", "#1", "<", "`"):
        assert marker not in prose, (marker, prose)
    for name in names:
        shown = visible(name)
        assert any(shown in c for c in parsed.code), (shown, parsed.code)


def test_hostile_names_are_inert_in_access_md(tmp_path: Path) -> None:
    defs = write_definitions(tmp_path / "d", HOSTILE_DEFS)
    files, _, _ = compile_files(defs)
    text = files["ACCESS.md"]
    # (a byProvider key "a/b" is provider a, model b; the account's class folds away here)
    model = HOSTILE["provider"].split("/", 1)[1]
    assert_inert(text, [HOSTILE["channel"], HOSTILE["group"], HOSTILE["sender"], model])
    assert "## agent `main`" in text


# -- every sentence true: computed against the access sets ------------------------------------
def _classes(space: ClassSpace) -> dict[str, int]:
    return {"agent": len(space.agents), "provider": len(space.providers),
            "channel": len(space.channels), "owner": len(space.owner),
            "sandbox": len(space.sandbox), "subagent": len(space.subagent)}


def _the_largest_sentence(text: str, agent: str) -> str:
    section = text.split(f"## {agent}\n\n")[1]
    return section.split("\n")[0]


@pytest.mark.parametrize("case", ["shipped", "one-agent", "all-equal", "plurality"])
def test_every_sentence_of_access_md_is_true(tmp_path: Path, case: str) -> None:
    catalog = [{"name": n, "description": "A tool.", "parameters": {"type": "object"}}
               for n in ("read", "exec", "write")]
    data: dict[str, dict[str, Any]] = {
        "one-agent": {"d.yaml": {"catalog": catalog[:1],
                                 "agents": {"list": [{"id": "solo"}]}}},
        "all-equal": {"d.yaml": {"catalog": catalog}},
        # four provider classes, three tool sets: the largest is a plurality, not a majority
        "plurality": {"d.yaml": {"catalog": catalog, "tools": {"byProvider": {
            "p1": {"deny": ["exec"]}, "p2": {"deny": ["write"]}}}}},
    }.get(case, {})
    defs = ROOT / "definitions" if case == "shipped" else write_definitions(tmp_path / "d",
                                                                             data)
    side = side_from_definitions(defs)
    text = review.access_markdown(side.tables)
    space = ClassSpace([TablesView(side.tables, side.tables["tools"])])
    assert not re.search(r"\b1 [a-z]+s\b|\b1 [a-z ]+classes\b|\(s\)", text), text
    counts = _classes(space)
    parts = [f"{n:,} {dim} class{'' if n == 1 else 'es'}" for dim, n in counts.items()]
    assert (f"Context classes: {space.size():,}, the product of {', '.join(parts[:-1])} and "
            f"{parts[-1]}.") in text
    assert space.size() == math.prod(counts.values())
    sets = review.access_sets(space)
    tools = space.tool_names
    for a, klass in enumerate(space.agents):
        default = sets[a][(0, 0, 0)]
        sizes = {bits: sum(p.bit_count() * c.bit_count() for p, c in cubes)
                 for bits, cubes in default.items()}
        total = sum(sizes.values())
        assert total == len(space.providers) * len(space.channels)
        largest = max(sizes.values())
        bits = min((b for b, n in sizes.items() if n == largest),
                   key=lambda b: [t for i, t in enumerate(tools) if b >> i & 1])
        names = [t for i, t in enumerate(tools) if bits >> i & 1]
        heading = klass.label if klass.key[0] is None else f"agent `{klass.key[0]}`"
        sentence = _the_largest_sentence(text, heading)
        combos = f"{total:,} provider and channel combination{'' if total == 1 else 's'}"
        if largest == total:
            assert sentence.startswith(f"Every context ({combos}) sees ")
        elif 2 * largest > total:
            assert sentence.startswith(f"Most contexts ({largest:,} of {combos}) see ")
        else:
            assert sentence.startswith(
                f"The largest class of contexts ({largest:,} of {combos}) sees ")
        tail = (f"{len(names)} tool{'' if len(names) == 1 else 's'}: "
                + ", ".join(f"`{n}`" for n in names)) if names else "no tools."
        assert sentence.endswith(tail), (sentence, tail)
    if case == "plurality":
        assert "The largest class of contexts" in text
