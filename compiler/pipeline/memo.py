"""What the stages ask of the incremental build cache, and the units keyed on everything
outside the channels.

The cache itself (its entries, their HMAC, what an entry may unpickle) is
``toolc.builds.cache.BuildCache``, above the stages: a stage takes any ``UnitCache`` (None:
everything is computed), so the pipeline knows what it stores, never how or where.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from ..diagnostics import Diagnostic, Diagnostics
from .model import Definitions

T = TypeVar("T")


class HitCounts(Protocol):
    """Hits and misses per unit kind (``toolc.builds.cache.CacheStats``)."""

    def count(self, kind: str, hit: bool) -> None: ...


class UnitCache(Protocol):
    """Content-addressed unit results: a key from a kind and its parts, an entry read
    (``(False, None)``: a miss) or written, and a unit computed on a miss."""

    @property
    def stats(self) -> HitCounts: ...

    def key(self, kind: str, parts: Iterable[bytes | str]) -> str: ...

    def get(self, key: str) -> tuple[bool, Any]: ...

    def put(self, key: str, value: Any) -> None: ...

    def unit(self, kind: str, parts: Iterable[bytes | str], compute: Callable[[], T]) -> T: ...


def outside_channels(cache: UnitCache | None, kind: str, defs: Definitions,
                     compute: Callable[[Diagnostics], T], diags: Diagnostics) -> T:
    """``compute(diags)`` for a unit that reads nothing inside the channels sections but
    their names (the tool catalog's provider bundles, parameter models, count lints): keyed
    on ``unit_base``, with the warnings it gave."""
    if cache is None or not defs.unit_base:
        return compute(diags)

    def run() -> tuple[T, tuple[Diagnostic, ...]]:
        local = Diagnostics()
        return compute(local), tuple(local.items)

    value, found = cache.unit(kind, [defs.unit_base], run)
    diags.extend(found)
    return value
