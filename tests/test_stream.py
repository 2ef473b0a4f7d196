"""Channel files compiled on their own (toolc.builds.stream): the scan that guesses a
channel file's shape before it is loaded is never wrong where it answers (a wrong guess
would only cost a second pass, but the guesses must hold for plain files), and answers for
the files toolc and its users write."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from toolc.builds.stream import Shape, scan_shape, shape_of
from toolc.diagnostics import Diagnostics
from toolc.pipeline.yamlsrc import load_yaml

PLAIN = b"""version: 1
openclaw: "2026.9"
channels:
  telegram:
    groups:
      '*':
        tools: {deny: [exec]}
  # a comment between channels
  slack:

    accounts: {}
"""


def _loaded(raw: bytes) -> Any:
    src = load_yaml(raw, "f.yaml", Diagnostics())
    return None if src is None else src.data


def test_a_plain_channel_file_is_read_without_loading_it() -> None:
    shape = scan_shape(PLAIN)
    assert shape == Shape(rest=json.dumps({"openclaw": "2026.9", "version": 1}, sort_keys=True),
                          channels=("telegram", "slack"))
    assert shape == shape_of(_loaded(PLAIN))
    assert shape.openclaw == "2026.9"


@pytest.mark.parametrize("raw", [
    b"\xef\xbb\xbfversion: 1\nchannels:\n  irc:\n    groups: {}\n",  # a byte-order mark
    b"version: 1\r\nchannels:\r\n    irc:\r\n        groups: {}\r\n",  # CRLF, indent 4
    b"# head\nversion: 1  # one\nchannels:  # the channels\n  'x y':\n    groups: {}\n",
    b'version: 1\nchannels:\n  "-100":\n    groups: {}\n  on:\n    groups: {}\n',
])
def test_plainly_written_variants_are_read(raw: bytes) -> None:
    shape = scan_shape(raw)
    assert shape is not None and shape == shape_of(_loaded(raw))


@pytest.mark.parametrize("raw", [
    b"version: 1\ncatalog: []\nchannels:\n  irc: {}\n",  # not only channels
    b"version: 1\nchannels: {irc: {groups: {}}}\n",  # flow style
    b"version: 1\nchannels:\n  irc: {groups: {}}\n",  # a channel's value on its key's line
    b"version: 1\nchannels:\n    irc:\n      groups: {}\n  slack:\n    groups: {}\n",
    b"version: 1\nchannels:\n\tirc:\n  groups: {}\n",  # a tab
    b"---\nversion: 1\nchannels:\n  irc:\n    groups: {}\n",  # a document marker
    b"version: 1\nchannels:\n  irc: &a\n    groups: {}\n  x: *a\n",  # an alias
    b"version:\n  1\nchannels:\n  irc:\n    groups: {}\n",  # a value on the next line
    b"version: 1\nversion: 1\nchannels:\n  irc:\n    groups: {}\n",  # a key twice
    b"version: 1\n",  # no channels
    b"",
])
def test_anything_else_takes_the_in_memory_path(raw: bytes) -> None:
    assert scan_shape(raw) is None


KEYS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
               min_size=1, max_size=8)
CHANNELS = st.dictionaries(KEYS, st.one_of(st.none(), st.dictionaries(
    st.sampled_from(["groups", "accounts"]), st.dictionaries(KEYS, st.none(), max_size=2),
    max_size=2)), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(channels=CHANNELS, openclaw=st.sampled_from([None, "2026.3", "2026.9", 2026]),
       style=st.sampled_from([None, False, True]), indent=st.sampled_from([2, 4]),
       unicode=st.booleans(), comment=st.booleans())
def test_a_guess_is_never_wrong(channels: dict[str, Any], openclaw: Any, style: bool | None,
                                indent: int, unicode: bool, comment: bool) -> None:
    """Whatever the scan answers for a file is what loading the file gives."""
    doc: dict[str, Any] = {"version": 1}
    if openclaw is not None:
        doc["openclaw"] = openclaw
    doc["channels"] = channels
    text = yaml.safe_dump(doc, default_flow_style=style, indent=indent, allow_unicode=unicode,
                          sort_keys=False)
    if comment:
        text = text.replace("\n", "\n# note\n", 2)
    raw = text.encode("utf-8")
    guess = scan_shape(raw)
    if guess is not None:
        assert guess == shape_of(_loaded(raw))


def test_block_style_files_are_guessed() -> None:
    """The generator's and ``yaml.safe_dump``'s block style is read (else every channel file
    would take the in-memory path)."""
    doc = {"version": 1, "channels": {"chan01": {"groups": {"-1": {"tools": {"deny": ["x"]}}}},
                                      "chan 02": {"accounts": {"a": {"groups": {}}}}}}
    raw = yaml.safe_dump(doc, sort_keys=False).encode()
    assert scan_shape(raw) == shape_of(_loaded(raw)) != None  # noqa: E711
