"""One value of one dimension of the class space (:class:`Klass`), and the owner dimension."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .tables_view import TablesView


# Not frozen (a frozen dataclass sets each field through ``object.__setattr__``: a diff at
# 100,000 groups makes 430,000 channel classes, and making them took 0.4 s more); hashed by
# its fields all the same, and never changed once made.
@dataclass(slots=True, kw_only=True, unsafe_hash=True)
class Klass:
    """One value of one dimension: its words, and the request flags that reproduce it."""

    label: str
    flags: tuple[tuple[str, Any], ...] = ()
    key: tuple[Any, ...] = ()  # what the dimension's engine needs (agent id, provider, ...)
    group: tuple[str, ...] = ()  # hierarchy used to fold labels (channel, account, group)
    fallback: tuple[str, ...] | None = None  # channel classes reaching the "*" group entry
    stacks: tuple[int | None, ...] = ()  # channel classes: the group-layer stack per side


def owner_classes(views: Sequence[TablesView]) -> list[Klass]:
    """The owner dimension: the default request first, the owner second. 2026.3.2 tells
    only the owner (``sender_is_owner=True``) from everyone else; when a side follows
    2026.9.6, where only a known non-owner (``False``) loses owner-only tools, unset is its
    own class and ``False`` a third."""
    owner = Klass(label="owner", flags=(("sender_is_owner", True),), key=(True,))
    if not any(v.owner_unknown_keeps for v in views):
        return [Klass(label="non-owner", key=(False,)), owner]
    return [Klass(label="owner unknown", key=(None,)), owner,
            Klass(label="known non-owner", flags=(("sender_is_owner", False),), key=(False,))]


def owner_index(classes: Sequence[Klass], value: bool | None) -> int:
    """The owner class of a request's ``sender_is_owner``."""
    if len(classes) == 2:
        return int(value is True)
    return next(i for i, k in enumerate(classes) if k.key[0] is value)


def owner_removes(view: TablesView, value: bool | None) -> bool:
    """Whether a side removes owner-only tools for this ``sender_is_owner`` (its target)."""
    return value is False if view.owner_unknown_keeps else value is not True

