"""Shared fixtures."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests import wrapping


@pytest.fixture(scope="session")
def rt(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """The request-path test build (tests/wrapping.py), with parameter models."""
    return wrapping.build(tmp_path_factory.mktemp("wrap"))
