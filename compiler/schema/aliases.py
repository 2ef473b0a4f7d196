"""Claude-Code-compatible parameter aliases (OpenClaw semantics section 15.1).

Schema time: each alias gets the canonical property's schema and neither is required, so a
model trained on either spelling can call the tool. Call time: `normalize_call_args` maps the
alias back and enforces "one of these keys" groups instead.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .keywords import dict_at, list_at

RequiredGroup = tuple[str, tuple[str, ...]]


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


def normalize_call_args(
    args: object,
    aliases: Mapping[str, str],
    groups: Sequence[tuple[str, tuple[str, ...]]],
    tool_name: str,
    *,
    allow_empty: Collection[str] = (),
) -> dict[str, Any]:
    """Map alias keys to their canonical key (when the canonical is missing or null), then
    check the required groups. Raises ValueError with OpenClaw's messages.

    Self-contained (stdlib only, no module globals) so it can be copied into a generated
    runtime. `allow_empty` names groups (label or canonical key) that accept an empty string
    (an edit may replace text with nothing); otherwise a blank string satisfies no group.
    """
    if not isinstance(args, dict):
        raise ValueError(f"Missing parameters for {tool_name}")
    out = dict(args)
    for alias, canonical in aliases.items():
        if alias in out and out.get(canonical) is None:
            out[canonical] = out.pop(alias)
    missing = []
    for label, keys in groups:
        values = [out[k] for k in keys if out.get(k) is not None]
        blank_ok = label in allow_empty or keys[0] in allow_empty
        if not any(not isinstance(v, str) or blank_ok or v.strip() for v in values):
            missing.append(label)
    if len(missing) == 1:
        raise ValueError(
            f"Missing required parameter: {missing[0]}. Supply correct parameters before retrying."
        )
    if missing:
        raise ValueError(
            f"Missing required parameters: {', '.join(missing)}. "
            "Supply correct parameters before retrying."
        )
    return out
