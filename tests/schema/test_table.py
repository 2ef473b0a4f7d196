"""The documentation's keyword x dialect table (docs/reference/provider-schemas.md) is the one
the cleaner produces."""

from __future__ import annotations

from pathlib import Path

from toolc.schema.table import keyword_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "provider-schemas.md"


def test_docs_keyword_table_is_current() -> None:
    text = PAGE.read_text("utf-8")
    start = text.index("<!-- keyword-table -->\n") + len("<!-- keyword-table -->\n")
    end = text.index("<!-- /keyword-table -->")
    assert text[start:end] == keyword_table(), "run: python -m toolc.schema.table"
