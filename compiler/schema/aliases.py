"""Claude-Code-compatible parameter aliases (OpenClaw semantics section 15.1).

Schema time: each alias gets the canonical property's schema and neither is required, so a
model trained on either spelling can call the tool. Call time: `normalize_call_args` (the
runtime's `_params` module, one implementation for both) maps the alias back and enforces
"one of these keys" groups instead.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..runtime._params import normalize_call_args
from .keywords import dict_at, list_at

RequiredGroup = tuple[str, tuple[str, ...]]
__all__ = ["apply_param_aliases", "normalize_call_args", "required_groups"]


def apply_param_aliases(parameters: dict[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """Return `parameters` with an alias property per `aliases` entry (alias -> canonical)
    whose canonical property exists; canonicals with an alias leave `required`."""
    out = copy.deepcopy(parameters)
    props = out.get("properties")
    if not isinstance(props, dict):
        return out
    changed = False
    for alias in sorted(aliases):
        canonical = aliases[alias]
        if canonical in props and alias not in props:
            props[alias] = copy.deepcopy(props[canonical])
            changed = True
    aliased = {aliases[a] for a in aliases if aliases[a] in props}
    required = list_at(out, "required")
    kept = [n for n in required if n not in aliased]
    if changed or kept != required:
        out["required"] = kept
    return out


def required_groups(
    parameters: dict[str, Any], aliases: Mapping[str, str]
) -> tuple[RequiredGroup, ...]:
    """(label, accepted keys) for each required canonical property that has aliases, in
    `required` order; labels read like OpenClaw's, e.g. `path (path or file_path)`."""
    props = dict_at(parameters, "properties")
    required = list_at(parameters, "required")
    groups = []
    for name in required:
        names = sorted(a for a, c in aliases.items() if c == name)
        if names and name in props:
            keys = (name, *names)
            groups.append((f"{name} ({' or '.join(keys)})", keys))
    return tuple(groups)
