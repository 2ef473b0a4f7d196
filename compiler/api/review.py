"""Compare two revisions of a policy: who gains or loses which tool (``toolc diff``)."""

from __future__ import annotations

from pathlib import Path

from ..review.diff import DiffResult, compute_diff, load_side, side_from_revision
from ..review.report import Report, build_report


def diff(base: str | None = None, head: str | None = None, *, base_rev: str | None = None,
         definitions: Path = Path("definitions")) -> DiffResult:
    """The access delta from ``base`` to ``head`` (``head`` defaults to ``definitions``), as
    ``toolc diff``. Each side is a build directory, a definitions directory or a git revision
    of the repository around ``definitions``; ``base_rev`` compiles BASE from the definitions
    at that revision instead of ``base``. DiffInputError or BuildError when a side cannot be
    read; ``toolc.review.diff.render_diff`` prints the result (text, markdown or json)."""
    if (base is None) == (base_rev is None):
        raise ValueError("give exactly one of base and base_rev")
    first = side_from_revision(base_rev, definitions) if base_rev is not None else None
    if first is None:
        assert base is not None
        first = load_side(base, definitions=definitions)
    second = load_side(head if head is not None else str(definitions), definitions=definitions)
    return compute_diff(first, second)


def report(build: str, base: str | None = None, *, definitions: Path = Path("definitions"),
           title: str | None = None) -> Report:
    """The access report of ``build`` (``toolc report``): one self-contained HTML page, the
    agents x tools matrix with filters, and with ``base`` the exact delta from it marked. Each
    side is what ``diff`` takes (a build directory, a definitions directory or a revision)."""
    head = load_side(build, definitions=definitions)
    if base is None:
        return build_report(head.tables, title=title or f"toolc access report: {head.label}",
                            routes=head.routes)
    first = load_side(base, definitions=definitions)
    return build_report(head.tables, first.tables, title=title or (
        f"toolc access report: {head.label} (against {first.label})"), routes=head.routes)
