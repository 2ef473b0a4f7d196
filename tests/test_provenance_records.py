"""Provenance records: the text a record is interned under (and that a shard writes inline)
is written from its parts (``ProvenanceBuilder.record_of``); it must be the record's JSON,
exactly, for every record a build makes (strings that JSON escapes, positions, plugin tools a
deny entry unloads, witnesses)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from toolc.builds import resolve_definitions
from toolc.pipeline.provenance import _RECORD, ProvenanceBuilder, record_both

from tests.helpers import ROOT

TRICKY = """version: 1
channels:
  signal:
    groups:
      'grüße "q" \\\\ ✓':
        tools:
          allow: [read, "group:messaging"]
          deny: [browser, "exec", "tab\\there", "ünï"]
        toolsBySender:
          'name:Bø "b"':
            alsoAllow: [exec]
            deny: [browser]
          'id:7':
            allow: [apply_patch]
      '*':
        tools:
          deny: ["group:web", memory_search]
"""


@pytest.mark.parametrize("openclaw", ["2026.9", "2026.3"])
def test_every_record_text_is_the_records_json(tmp_path: Path, openclaw: str) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(ROOT / "definitions", defs)
    agents = defs / "deployment" / "agents.yaml"
    agents.write_text(agents.read_text(encoding="utf-8").replace(
        'openclaw: "2026.9"', f'openclaw: "{openclaw}"'), encoding="utf-8")
    (defs / "deployment" / "tricky.yaml").write_text(TRICKY, encoding="utf-8")
    resolved = resolve_definitions(defs)
    builder = ProvenanceBuilder(resolved)
    data = builder.provenance()  # agents, providers, subagents, senders
    for ch in resolved.defs.channels:
        builder.channel(ch)  # the whole-build path: every record kept with its text
        # the unit path (one pass with the tables) keeps the same texts alone
        _, (tape, _, _) = record_both(ProvenanceBuilder(resolved), ch)
        assert all(text in builder._record_ids for text, _ in tape)
    texts = list(builder._record_ids)
    assert [_RECORD.encode(rec) for rec in builder.records] == texts
    assert data["records"] is builder.records
    assert any("ü" in t and '\\"' in t for t in texts)  # escaped and unescaped strings
    assert any(len(item) == 4 for rec in builder.records for item in rec["deny"]) == (
        openclaw == "2026.9")  # a deny entry that unloads a plugin's tools (2026.9)
    assert any(rec["w"] is not None for rec in builder.records) == (openclaw == "2026.3")
