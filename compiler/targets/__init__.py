"""Targets: the OpenClaw release whose semantics a project's definitions follow.

A project names its release with a top-level ``openclaw: "2026.9"`` (or ``"2026.3"``) in any
definitions file; without the key it keeps the default release's semantics (note TC106).
Everything that differs between releases is here, one module per release
(``openclaw_2026_3.py``, ``openclaw_2026_9.py``): each builds its :class:`Target` from its
data file (read from the release's code by ``python -m conformance.extract`` into
``data/openclaw-<key>.json``: catalog names and groups, profiles, owner-only set, subagent
deny lists, sandbox defaults) with its named rule switches, its key grammars
(:mod:`.grammar`) and its importer's specs (:mod:`.config_specs`). No other module compares
release strings or names a release; the registry below is the one list of releases.

The runtime's modules are the same static code in every build, so the switches a request needs
travel in the build as data (:class:`~.rules.RequestRules`, written into ``tables.json`` and
read back by :func:`request_rules`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any, Protocol

from . import openclaw_2026_3, openclaw_2026_9
from .model import ApplyPatchRule, Target
from .rules import RequestRules

__all__ = ["DEFAULT_KEY", "KEYS", "NEWEST_KEY", "ApplyPatchRule", "ReleaseModule",
           "RequestRules", "Target", "keys", "register", "request_rules", "target",
           "unregister"]


class ReleaseModule(Protocol):
    """What a release module declares: its key and how its target is built from its data."""

    KEY: str

    def build(self, data: Mapping[str, Any]) -> Target: ...


# key -> (the release's module, its data file)
_RELEASES: dict[str, tuple[ReleaseModule, Traversable | Path]] = {}


@functools.cache
def _load(key: str) -> Target:
    module, data_file = _RELEASES[key]
    data: Mapping[str, Any] = json.loads(data_file.read_text(encoding="utf-8"))
    return module.build(data)


def register(module: ReleaseModule, data_file: Traversable | Path | None = None) -> None:
    """Adds a release (its data file defaults to this package's ``data/openclaw-<key>.json``).
    The shipped releases are registered on import; a test may add a stub."""
    key = module.KEY
    _RELEASES[key] = (module, data_file if data_file is not None else
                      resources.files(__name__).joinpath(f"data/openclaw-{key}.json"))
    _load.cache_clear()


def unregister(key: str) -> None:
    """Removes a release :func:`register` added (a test's stub)."""
    del _RELEASES[key]
    _load.cache_clear()


register(openclaw_2026_3)
register(openclaw_2026_9)

DEFAULT_KEY = openclaw_2026_3.KEY  # definitions without `openclaw:`
NEWEST_KEY = openclaw_2026_9.KEY  # what init, import-openclaw and migrate write
KEYS = tuple(_RELEASES)  # the shipped releases


def keys() -> tuple[str, ...]:
    """Every registered release (the shipped ones, and any a test registered)."""
    return tuple(_RELEASES)


def target(key: str | None) -> Target:
    """The target a definitions' ``openclaw`` key names (None: the default release)."""
    key = key or DEFAULT_KEY
    if key not in _RELEASES:
        raise KeyError(key)
    return _load(key)


def request_rules(tables: Mapping[str, Any]) -> RequestRules:
    """The request-time rules a build's ``tables.json`` (or its one-dictionary form) carries;
    a build without them follows the default release."""
    default = target(None).request_rules()
    raw = tables.get("target")
    return default if not raw else RequestRules.from_json(raw, default)
