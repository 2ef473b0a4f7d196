"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests import wrapping
from tests.helpers import ROOT, snapshot_checkout


@pytest.fixture(scope="session")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The request-path test build (tests/wrapping.py), with parameter models."""
    return wrapping.build(tmp_path_factory.mktemp("wrap"))


@pytest.fixture(scope="session")
def checkout_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(path, commit): this checkout's working tree committed into a fresh repository."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    repo = tmp_path_factory.mktemp("checkout") / "toolc"
    return repo, snapshot_checkout(repo)


@pytest.fixture(scope="session")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The shipped definitions built into a tmp dir (the framework integration tests)."""
    from tests.integrations_support import build_shipped  # noqa: PLC0415 - only these tests

    return build_shipped(tmp_path_factory.mktemp("shipped"))
