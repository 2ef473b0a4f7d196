"""The loader against the one it replaced (tests/yaml_oracle.py): the same values (types too),
the same positions in the same order, the same diagnostics, for good and bad input."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolc.diagnostics import Diagnostics, Pos
from toolc.pipeline import yamlsrc

from bench.generate import SIZES, generate
from tests import yaml_oracle
from tests.helpers import ROOT


def typed(value: Any) -> Any:
    """``value`` with every scalar's type beside it (``1``, ``1.0`` and ``True`` differ)."""
    if isinstance(value, dict):
        return ("dict", [(k, typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    return (type(value).__name__, value)


def loaded(module: Any, raw: bytes) -> tuple[Any, ...]:
    diags = Diagnostics()
    src = module.load_yaml(raw, "defs/f.yaml", diags)
    items = [(d.pos, d.code, d.severity, d.message, d.hint) for d in diags.items]
    if src is None:
        return None, items
    return (src.path, typed(src.data), list(src.value_pos.items()), list(src.key_pos.items()),
            items)


def assert_same(raw: bytes) -> None:
    try:
        want = loaded(yaml_oracle, raw)
    except LookupError:
        # the old loader crashed on PyYAML's own errors for some tagged scalars
        # (`!!bool 0x1F`, `!!int ""`); they are TC009 now
        items = loaded(yamlsrc, raw)[-1]
        assert any(i[1] == "TC009" and "cannot read this value" in i[3] for i in items)
        return
    assert loaded(yamlsrc, raw) == want


def fast_path_reads(raw: bytes) -> bool:
    """Whether the event reader (not the node-graph fallback) reads ``raw``."""
    return yamlsrc._read_events(raw.decode("utf-8").removeprefix("\ufeff"), "f") is not None


def yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


SHIPPED = yaml_files(ROOT / "definitions") + yaml_files(ROOT / "tests" / "fixtures")
CASES = [p for p in yaml_files(ROOT / "tests" / "cases") if "/expected/" not in p.as_posix()]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_shipped_definitions(path: Path) -> None:
    raw = path.read_bytes()
    assert_same(raw)
    assert fast_path_reads(raw)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_case_inputs(path: Path) -> None:
    assert_same(path.read_bytes())


def test_generated_medium_deployment(tmp_path: Path) -> None:
    generate(tmp_path, seed=3, **SIZES["medium"])
    files = yaml_files(tmp_path)
    assert len(files) > 5
    for path in files:
        raw = path.read_bytes()
        assert_same(raw)
        assert fast_path_reads(raw)


def test_the_corpora_reach_both_readers() -> None:
    """The case inputs include files the event reader declines (else the fallback would go
    untested here) and files it reads."""
    reads = [fast_path_reads(p.read_bytes()) for p in CASES if _utf8(p)]
    assert any(reads) and not all(reads)


def _utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# Plain scalars YAML 1.1 reads as something other than a string, and strings near them.
ODD_SCALARS = [
    "yes", "no", "on", "off", "y", "n", "Y", "N", "Yes", "NO", "On", "OFF", "true", "False",
    "TRUE", "tRUE", "0x1F", "0x1f", "0o17", "017", "09", "0b101", "1_000", "1__0", "_1", "1:20",
    "-1:20:30", "190:20:30", "1.5", "1e3", "1.0e+3", "6.8523015e+5", ".5", "-.5", "+12",
    "-0", "0", "00", "-", ".", ".inf", "-.inf", "+.Inf", ".INF", ".nan", ".NaN", ".NAN", "~",
    "null", "Null", "NULL", "nULL", "", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10 -5", "2002-1-1", "2001-13-40", "<<", "=", "!", "&", "*",
    "1" * 5000, "-" + "9" * 4301, "9" * 4300, "12e", "0x", "0xZZ", "0b2", "+", "1,000",
    "1.2.3", "tool_0295", "group:web", "id:701209", "é", "ключ", "名前", "a b", "日本: x",
]
KEYS = ["a", "b", "on", "yes", "1", "0x1F", "~", "null", "<<", "-100123", "'q'", '"dq"',
        '"é"', "ключ", "'<<'", "!!str x", "&k a", "''", "? c", "[x]", "{k: v}", "a"]
# Keys the event reader reads (distinct, plain or quoted strings, no tag or anchor).
CLEAN_KEYS = ["a", "b", "on", "yes", "1", "0x1F", "~", "null", "-100123", "'q'", '"dq"',
              '"é"', "ключ", "'<<'", "''", "1:20", ".inf", "2001-12-14", "名前", "Y", "id:7"]
TAGS = ["", "", "", "", "!!str ", "!!int ", "!!float ", "!!bool ", "!!null ", "!!binary ",
        "!!timestamp ", "!custom ", "! ", "!!set ", "!!map ", "!!seq ", "!!omap "]


def _quoted(text: str, style: str) -> str:
    if style == "'":
        return "'" + text.replace("'", "''") + "'"
    if style == '"':
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


class Shape:
    """What a generated document may hold: ``clean`` ones only what the event reader reads
    (most odd scalars are then read by it, not by the node-graph fallback)."""

    def __init__(self, clean: bool) -> None:
        self.clean = clean
        self.anchors: list[str] = []
        self.keys = CLEAN_KEYS if clean else KEYS

    def anchor(self, draw: st.DrawFn) -> str:
        if self.clean or draw(st.integers(0, 7)):
            return ""
        self.anchors.append(f"a{len(self.anchors)}")
        return f"&{self.anchors[-1]} "

    def mapping_keys(self, draw: st.DrawFn, least: int, most: int) -> list[str]:
        return draw(st.lists(st.sampled_from(self.keys), min_size=least, max_size=most,
                             unique=self.clean))


@st.composite
def scalars(draw: st.DrawFn, shape: Shape) -> str:
    if shape.anchors and draw(st.integers(0, 9)) == 0:
        return "*" + draw(st.sampled_from([*shape.anchors, "nope"]))
    letters = st.characters(categories=("L", "N")) if shape.clean else st.characters(
        codec="utf-8", exclude_categories=("Cs",))
    text = draw(st.sampled_from(ODD_SCALARS) | st.text(letters, max_size=6))
    style = draw(st.sampled_from(["", "", "'", '"']))
    tag = "" if shape.clean else draw(st.sampled_from(TAGS))
    return tag + _quoted(text, style)


@st.composite
def flow(draw: st.DrawFn, depth: int, shape: Shape) -> str:
    kind = draw(st.sampled_from(["scalar", "scalar", "list", "map"]) if depth else st.just("s"))
    anchor = shape.anchor(draw)
    if kind == "list":
        items = draw(st.lists(flow(depth - 1, shape), max_size=3))
        return anchor + "[" + ", ".join(items) + "]"
    if kind == "map":
        keys = shape.mapping_keys(draw, 0, 3)
        return anchor + "{" + ", ".join(f"{k}: {draw(flow(depth - 1, shape))}"
                                        for k in keys) + "}"
    return anchor + draw(scalars(shape))


@st.composite
def block(draw: st.DrawFn, depth: int, indent: int, shape: Shape) -> str:
    """A block mapping or sequence at ``indent`` (its lines end with newlines)."""
    pad = " " * indent
    count = draw(st.integers(1, 4))
    heads = ([f"{pad}{k}:" for k in shape.mapping_keys(draw, 1, 4)] if draw(st.booleans())
             else [f"{pad}-"] * count)
    out = []
    for head in heads:
        if depth and draw(st.integers(0, 2)) == 0:
            out.append(head + "\n" + draw(block(depth - 1, indent + 2, shape)))
        else:
            out.append(f"{head} {draw(flow(2, shape))}\n")
    return "".join(out)


@st.composite
def documents(draw: st.DrawFn, clean: bool = False) -> bytes:
    body = draw(block(3, 0, Shape(clean)))
    prefix = draw(st.sampled_from(["", "", "version: 1\n", "---\n", "\ufeff",
                                   "%YAML 1.1\n---\n"]))
    suffix = draw(st.sampled_from(["", "", "", "# comment\n", "---\nb: 1\n", "...\n", "\t"]))
    if clean:
        prefix, suffix = prefix.replace("version: 1\n", ""), ""
    return (prefix + body + suffix).encode("utf-8")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_hypothesis_documents(raw: bytes) -> None:
    assert_same(raw)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(clean=True))
def test_hypothesis_clean_documents(raw: bytes) -> None:
    """Documents with odd scalars and keys but nothing the event reader declines by shape."""
    assert_same(raw)


def test_clean_documents_reach_the_event_reader() -> None:
    """Most clean documents are read by the event reader (else the test above would test the
    fallback again)."""
    reads: list[bool] = []

    @settings(max_examples=200, deadline=None, database=None, derandomize=True)
    @given(documents(clean=True))
    def sample(raw: bytes) -> None:
        reads.append(fast_path_reads(raw))

    sample()
    assert sum(reads) > len(reads) // 2


@pytest.mark.parametrize("text", ODD_SCALARS)
def test_odd_scalar_values_and_keys(text: str) -> None:
    for doc in (f"k: {text}\n", f"- {text}\n", f"{{a: [{text}]}}\n", f"{text}: 1\n",
                f"{text}\n", f"k: [{text}, {text}]\n"):
        assert_same(doc.encode("utf-8"))


@pytest.mark.parametrize("doc", [
    "", "\n", "# only a comment\n", "---\n", "---\n...\n", "~\n", "[]\n", "{}\n",
    "a: 1\na: 2\n", "a: 1\nb: {a: 1, a: 2}\n", "a: &x [1, 2]\nb: *x\n", "a: *x\n",
    "a: &x 1\nb: &x 2\n", "<<: {a: 1}\n", "a:\n  <<: {b: 1}\n  c: 2\n", "'<<': 1\n",
    "? [a]\n: 1\n", "? {a: 1}\n: 1\n", "!!int a: 1\n", "!!merge <<: 1\n", "a: !!binary aGk=\n",
    "a: !!set {x}\n", "a: !!omap [{x: 1}]\n", "a: !!float 1\n", "a: !!str 1\n", "a: !foo x\n",
    "a: [1, 2\n", "a: 'x\n", "a:\n\tb: 1\n", "a: 1\n---\nb: 2\n", "- a\nb: 1\n",
    "a: " + "[" * 64 + "]" * 64 + "\n", "a: " + "[" * 65 + "]" * 65 + "\n",
    "a: " + "[" * 200 + "]" * 200 + "\n", "a: &r [*r]\n", "a: &r {b: *r}\n",
    "a: |\n  x\n  y\nb: >\n  z\n  w\n", "a: \"\\u00e9\\n\"\n", "é: ü\n", "a: 1\r\nb: 2\r\n",
    "a: 1\u2028b: 2\n", "a: x\u0085b: 2\n", "\ufeffa: 1\n", "a: 2001-12-14\n",
    "a: [x, &y {b: 1}, *y, *y]\n", "? a\n", "a: {b, c}\n", "a: =\n", "= : 1\n",
])
def test_hand_written_documents(doc: str) -> None:
    assert_same(doc.encode("utf-8"))


@pytest.mark.parametrize("raw", [b"a: \xff\n", b"\xfe\xff", b"a: 1\nb: \xc3\n", b"\x00"])
def test_bytes_that_are_not_utf8(raw: bytes) -> None:
    assert_same(raw)


def test_alias_bomb() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    assert_same(("\n".join(lines) + "\n").encode())


def test_declined_files_keep_the_fallback_positions() -> None:
    """A file the event reader declines is read by the node graph, positions and all."""
    raw = b"a: &x {b: [1, 2]}\nc: *x\n"
    assert not fast_path_reads(raw)
    src = yamlsrc.load_yaml(raw, "f.yaml", Diagnostics())
    assert src is not None
    assert src.pos(("c", "b", 1)) == Pos(file="f.yaml", line=1, col=15)


def test_a_source_file_pickles_whole(tmp_path: Path) -> None:
    """Positions travel as columns (worker processes, the incremental cache) and come back
    equal, in order, as Pos; a file whose positions name another file keeps its dict."""
    src = yamlsrc.load_yaml(b"a: [x, {b: 1}]\nc: 'd'\n", "defs/f.yaml", Diagnostics())
    assert src is not None
    back = pickle.loads(pickle.dumps(src))
    assert back == src
    assert list(back.value_pos.items()) == list(src.value_pos.items())
    assert list(back.key_pos.items()) == list(src.key_pos.items())
    assert all(type(p) is Pos for p in [*back.value_pos.values(), *back.key_pos.values()])
    mixed = yamlsrc.SourceFile(path="f", data={}, value_pos={(): Pos(file="g", line=1, col=1)},
                               key_pos={})
    assert pickle.loads(pickle.dumps(mixed)) == mixed


def test_pos_keeps_its_api() -> None:
    pos = Pos(file="defs/a.yaml", line=3, col=7)
    assert (pos.file, pos.line, pos.col, str(pos)) == ("defs/a.yaml", 3, 7, "defs/a.yaml:3:7")
    assert repr(pos) == "Pos(file='defs/a.yaml', line=3, col=7)"
    assert pos == Pos(file="defs/a.yaml", line=3, col=7) != Pos(file="defs/a.yaml", line=3, col=8)
    assert hash(pos) == hash(Pos(file="defs/a.yaml", line=3, col=7))
    assert pickle.loads(pickle.dumps(pos)) == pos
    with pytest.raises(AttributeError):
        pos.line = 4  # type: ignore[misc]
