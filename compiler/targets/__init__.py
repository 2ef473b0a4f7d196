"""Targets: the OpenClaw release whose semantics a project's definitions follow.

A project names its release with a top-level ``openclaw: "2026.9"`` (or ``"2026.3"``) in any
definitions file; without the key it keeps the default release's semantics (note TC106).
Everything that differs between releases is here, one module per release
(the packages ``openclaw_2026_3``, ``openclaw_2026_9``): each builds its :class:`Target` from its
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

from collections.abc import Mapping
from typing import Any

from . import openclaw_2026_3, openclaw_2026_9
from .model import ApplyPatchRule, Target
from .registry import ReleaseModule, keys, load, register, unregister
from .rules import RequestRules

__all__ = ["DEFAULT_KEY", "KEYS", "NEWEST_KEY", "ApplyPatchRule", "ReleaseModule",
           "RequestRules", "Target", "keys", "register", "request_rules", "target",
           "unregister"]


register(openclaw_2026_3)
register(openclaw_2026_9)

DEFAULT_KEY = openclaw_2026_3.KEY  # definitions without `openclaw:`
NEWEST_KEY = openclaw_2026_9.KEY  # what init, import-openclaw and migrate write
KEYS = keys()  # the shipped releases


def target(key: str | None) -> Target:
    """The target a definitions' ``openclaw`` key names (None: the default release)."""
    key = key or DEFAULT_KEY
    if key not in keys():
        raise KeyError(key)
    return load(key)


def request_rules(tables: Mapping[str, Any]) -> RequestRules:
    """The request-time rules a build's ``tables.json`` (or its one-dictionary form) carries;
    a build without them follows the default release."""
    default = target(None).request_rules()
    raw = tables.get("target")
    return default if not raw else RequestRules.from_json(raw, default)
