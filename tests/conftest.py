"""Fixtures shared by the tests that need a git repository of this checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT, snapshot_checkout


@pytest.fixture(scope="session")
def checkout_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(path, commit): this checkout's working tree committed into a fresh repository."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    repo = tmp_path_factory.mktemp("checkout") / "toolc"
    return repo, snapshot_checkout(repo)
