"""The registry of releases: each release's module and data file, the data read once per
release, and its :class:`~.model.Target` built once. ``toolc.targets`` registers the shipped
releases; a test may register a stub."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any, Protocol

from .model import Target
from .release_data import DATA_FILES, release_data


class ReleaseModule(Protocol):
    """What a release module declares: its key and how its target is built from its data."""

    KEY: str

    def build(self, data: Mapping[str, Any]) -> Target: ...


# key -> the release's module (its data file: release_data.DATA_FILES)
_RELEASES: dict[str, ReleaseModule] = {}


@functools.cache
def load(key: str) -> Target:
    """A registered release's target (built once)."""
    return _RELEASES[key].build(release_data(key))


def register(module: ReleaseModule, data_file: Traversable | Path | None = None) -> None:
    """Adds a release (its data file defaults to this package's ``data/openclaw-<key>.json``)."""
    key = module.KEY
    _RELEASES[key] = module
    DATA_FILES[key] = (data_file if data_file is not None else
                       resources.files(__package__).joinpath(f"data/openclaw-{key}.json"))
    release_data.cache_clear()
    load.cache_clear()


def unregister(key: str) -> None:
    """Removes a release :func:`register` added (a test's stub)."""
    del _RELEASES[key], DATA_FILES[key]
    release_data.cache_clear()
    load.cache_clear()


def keys() -> tuple[str, ...]:
    """Every registered release (the shipped ones, and any a test registered)."""
    return tuple(_RELEASES)
