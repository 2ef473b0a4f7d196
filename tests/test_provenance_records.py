"""Provenance records: the text a record is interned under (and that a shard writes inline)
is written from its parts (``ProvenanceBuilder.record_of``); it must be the record's JSON,
exactly, for every record a build makes (strings that JSON escapes, positions, plugin tools a
deny entry unloads, witnesses)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import toolc
from toolc.pipeline.provenance import _RECORD, ProvenanceBuilder
from toolc.pipeline.units import Recorder

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
def test_every_record_text_is_the_records_json(tmp_path: Path, monkeypatch: Any,
                                               openclaw: str) -> None:
    defs = tmp_path / "defs"
    shutil.copytree(ROOT / "definitions", defs)
    agents = defs / "deployment" / "agents.yaml"
    agents.write_text(agents.read_text(encoding="utf-8").replace(
        'openclaw: "2026.9"', f'openclaw: "{openclaw}"'), encoding="utf-8")
    (defs / "deployment" / "tricky.yaml").write_text(TRICKY, encoding="utf-8")
    seen: list[tuple[str, dict[str, Any]]] = []
    record, intern = Recorder.record, ProvenanceBuilder.intern_record

    def recorded(self: Recorder, key: str, rec: dict[str, Any]) -> int:
        seen.append((key, rec))
        return record(self, key, rec)

    def interned(self: ProvenanceBuilder, key: str, rec: dict[str, Any]) -> int:
        seen.append((key, rec))
        return intern(self, key, rec)

    monkeypatch.setattr(Recorder, "record", recorded)
    monkeypatch.setattr(ProvenanceBuilder, "intern_record", interned)
    toolc.build(defs, tmp_path / "out", cache=False, force=True)
    texts = [key for key, _ in seen]
    assert any("ü" in t and '\\"' in t for t in texts)  # escaped and unescaped strings
    assert any(len(item) == 4 for _, rec in seen for item in rec["deny"]) == (
        openclaw == "2026.9")  # a deny entry that unloads a plugin's tools (2026.9)
    assert any(rec["w"] is not None for _, rec in seen) == (openclaw == "2026.3")
    assert [_RECORD.encode(rec) for _, rec in seen] == texts
