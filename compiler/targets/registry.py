"""The registry of releases: each release's module and data file, the data read once per
release, and its :class:`~.model.Target` built once. ``toolc.targets`` registers the shipped
releases; a test may register a stub."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .model import Target


class ReleaseModule(Protocol):
    """What a release module declares: its key and how its target is built from its data."""

    KEY: str

    def build(self, data: Mapping[str, Any]) -> Target: ...


# key -> (the release's module, its data file)
_RELEASES: dict[str, tuple[ReleaseModule, Traversable | Path]] = {}


@functools.cache
def release_data(key: str) -> Mapping[str, Any]:
    """A registered release's own data (its data file, read once)."""
    data: Mapping[str, Any] = json.loads(_RELEASES[key][1].read_text(encoding="utf-8"))
    return data


@functools.cache
def load(key: str) -> Target:
    """A registered release's target (built once)."""
    return _RELEASES[key][0].build(release_data(key))


def register(module: ReleaseModule, data_file: Traversable | Path | None = None) -> None:
    """Adds a release (its data file defaults to this package's ``data/openclaw-<key>.json``)."""
    key = module.KEY
    _RELEASES[key] = (module, data_file if data_file is not None else
                      resources.files(__package__).joinpath(f"data/openclaw-{key}.json"))
    release_data.cache_clear()
    load.cache_clear()


def unregister(key: str) -> None:
    """Removes a release :func:`register` added (a test's stub)."""
    del _RELEASES[key]
    release_data.cache_clear()
    load.cache_clear()


def keys() -> tuple[str, ...]:
    """Every registered release (the shipped ones, and any a test registered)."""
    return tuple(_RELEASES)
