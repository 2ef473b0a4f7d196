"""The channels' group maps: ``tables.json``'s channel index with its shards (files of the
build, ``toolc.pipeline.shards``) read, checked against this runtime's digests and split into
lines when a request first reaches them. Standard library only; thread-safe (one lock: a
shard is never read twice).
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from typing import Any, Final

from . import read_verified
from ._tables import _CACHE_LIMIT, _MISSING, _RAW_CHANNELS

# channel -> its index in tables.json: {"rule": the channel's row of ``toolc.rules.channels``
# (kind, key generators, ...), "topics": bool (Telegram chat:topic ids), "e164": bool (e164
# sender keys apply), "groups": shard | None, "spaces": shard | None, "accounts": {id: shard |
# None}, "accounts_folded": {lowercased id: shard | None}}; a shard (toolc.pipeline.shards) is
# a file of this build holding one GROUP_MAP (and, for the channel's own, Discord's spaces:
# {"order": [outer keys], "entries": {key: [ENTRY, slug, GROUP_MAP | None]}}).
# GROUP_MAP = {"exact": {id: ENTRY}, "folded": {lowercased id: ENTRY}} where "folded" is
# filled only for channels whose groups ignore case (IRC); ENTRY = [tools stack] or
# [tools stack, id bucket, e164 bucket, username bucket, name bucket, wildcard stack].
# The channel's dict below holds lazy maps: a shard is read, checked against this runtime's
# digests and split into lines when a request first reaches it; a shard whose bytes do not
# match raises DataMismatchError from that request (and every later one reaching it), while
# requests that never reach it keep working.
_CHANNELS: Final[dict[str, dict[str, Any]]] = {}
_SHARDS: Final[dict[str, _Shard]] = {}
_SHARD_LOCK: Final = threading.Lock()


class _Lines(Mapping[str, Any]):
    """One section of a shard: sorted lines ``<key as JSON>\t<value as JSON>``, found by
    bisection and parsed on first use (lookups, hits and misses, are kept, bounded)."""

    def __init__(self, lines: list[str], lo: int, hi: int) -> None:
        self._lines = lines
        self._lo = lo
        self._hi = hi
        self._found: dict[object, Any] = {}

    def _find(self, key: object) -> Any:
        found = self._found.get(key, _MISSING)
        if found is _MISSING:
            found = None
            if key.__class__ is str:
                prefix = json.dumps(key, ensure_ascii=False) + "\t"
                i = bisect_left(self._lines, prefix, self._lo, self._hi)
                if i < self._hi and self._lines[i].startswith(prefix):
                    found = json.loads(self._lines[i][len(prefix) :])
            if len(self._found) >= _CACHE_LIMIT:
                self._found.clear()
            self._found[key] = found
        return found

    def __getitem__(self, key: str) -> Any:
        found = self._find(key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        found = self._find(key)
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return self._find(key) is not None

    def __len__(self) -> int:
        return self._hi - self._lo

    def __iter__(self) -> Iterator[str]:
        return (json.loads(line.partition("\t")[0]) for line in self._lines[self._lo : self._hi])


class _Folded(_Lines):
    """The case-folded ids of a shard: each names the exact id whose entry it reaches."""

    def __init__(self, lines: list[str], lo: int, hi: int, exact: _Lines) -> None:
        super().__init__(lines, lo, hi)
        self._exact = exact

    def _find(self, key: object) -> Any:
        target = super()._find(key)
        return None if target is None else self._exact.get(target)


class _Shard:
    """A shard's maps, from bytes checked against this runtime's digests."""

    __slots__ = ("gmap", "spaces")

    def __init__(self, raw: bytes) -> None:
        lines = raw.decode("utf-8").split("\n")
        head = json.loads(lines[0])
        n, m = int(head["exact"]), int(head["folded"])
        exact = _Lines(lines, 1, 1 + n)
        folded = _Folded(lines, 1 + n, 1 + n + m, exact)
        self.gmap = {"exact": exact, "folded": folded} if head["groups"] else None
        self.spaces: dict[str, Any] | None = head["spaces"]


def _shard(name: str) -> _Shard:
    """A shard, read and checked once (one lock: two threads never read it twice)."""
    shard = _SHARDS.get(name)
    if shard is None:
        with _SHARD_LOCK:
            shard = _SHARDS.get(name)
            if shard is None:
                shard = _SHARDS[name] = _Shard(read_verified(name))
    return shard


def _load_shards() -> None:
    """Read and check every shard now (a server that loads a build as a whole, so that a
    build replaced on disk later cannot fail its requests)."""
    for raw in _RAW_CHANNELS.values():
        for name in (raw["groups"], raw["spaces"], *raw["accounts"].values()):
            if name is not None:
                _shard(name)


class _Lazy(Mapping[str, Any]):
    """A shard's group map (``part`` "gmap") or spaces, read when first looked into."""

    __slots__ = ("_name", "_part", "_value")

    def __init__(self, name: str, part: str) -> None:
        self._name = name
        self._part = part
        self._value: Mapping[str, Any] | None = None

    def _get(self) -> Mapping[str, Any]:
        value = self._value
        if value is None:
            value = self._value = getattr(_shard(self._name), self._part) or {}
        return value

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())


def _lazy(name: str | None, part: str = "gmap") -> _Lazy | None:
    return None if name is None else _Lazy(name, part)


def _channel(name: str) -> dict[str, Any] | None:
    channel = _CHANNELS.get(name)
    if channel is None:
        raw = _RAW_CHANNELS.get(name)
        if raw is None:
            return None
        channel = _CHANNELS[name] = _lazy_channel(raw)
    return channel


def _lazy_channel(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A channel's index entry with its shards (tables or provenance) read when first used."""
    lazy = {a: _lazy(s) for a, s in raw["accounts"].items()}
    return {
        **raw,
        "groups": _lazy(raw["groups"]),
        "spaces": _lazy(raw["spaces"], "spaces"),
        "accounts": lazy,
        "accounts_folded": {
            k: next((lazy[a] for a, s in raw["accounts"].items() if s == v and v), None)
            for k, v in raw["accounts_folded"].items()
        },
    }
