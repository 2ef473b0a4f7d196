"""Call-time half of the Claude-Code parameter aliases (OpenClaw semantics section 15.1).

The build gives each alias the canonical property's schema and takes both out of
``required`` (``toolc.schema.aliases``); at call time ``normalize_call_args`` maps the alias
back and checks the "one of these keys" groups instead. One implementation for the compiler
and the generated runtime.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._errors import InvalidArgumentsError


def normalize_call_args(
    args: object,
    aliases: Mapping[str, str],
    groups: Sequence[tuple[str, tuple[str, ...]]],
    tool_name: str,
    *,
    allow_empty: Collection[str] = (),
) -> dict[str, Any]:
    """Map alias keys to their canonical key (when the canonical is missing or null), then
    check the required groups. Raises InvalidArgumentsError (a ValueError) with OpenClaw's
    messages.

    ``allow_empty`` names groups (label or canonical key) that accept an empty string (an
    edit may replace text with nothing); otherwise a blank string satisfies no group.
    """
    if not isinstance(args, dict):
        raise InvalidArgumentsError(f"Missing parameters for {tool_name}", tool=tool_name)
    out = dict(args)
    for alias, canonical in aliases.items():
        if alias in out and out.get(canonical) is None:
            out[canonical] = out.pop(alias)
    missing = [
        label
        for label, keys in groups
        if not _satisfied(out, keys, label in allow_empty or keys[0] in allow_empty)
    ]
    if len(missing) == 1:
        raise InvalidArgumentsError(
            f"Missing required parameter: {missing[0]}. Supply correct parameters before retrying.",
            tool=tool_name,
        )
    if missing:
        raise InvalidArgumentsError(
            f"Missing required parameters: {', '.join(missing)}. "
            "Supply correct parameters before retrying.",
            tool=tool_name,
        )
    return out


def _satisfied(args: Mapping[str, Any], keys: tuple[str, ...], blank_ok: bool) -> bool:
    """Some key of the group holds a value: not null, and a string only when it is not blank
    (or blanks are allowed)."""
    for key in keys:
        value = args.get(key)
        if value is not None and (blank_ok or not isinstance(value, str) or value.strip()):
            return True
    return False
