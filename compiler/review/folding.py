"""``audit.words.Words`` for class spaces of hundreds of thousands of channel classes.

``Words`` folds a set of classes by holding, per prefix of the classes' ``group`` (channel,
account, group), the bitset of every class under it. A bitset reaching class 400,000 is 50 KB,
and a 100,000-group build has a prefix per group: gigabytes, and seconds to build. Whether a
prefix folds needs less: its classes are all in the set exactly when as many of the set's
classes have it as the whole dimension has, so ``CountedWords`` keeps one count per prefix
and groups only the set's own classes. The phrases are the same, in the same order.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from functools import partial

from ..audit.words import Words, _prefix_label
from ..semantics.access import DIMS, ClassSpace, Klass
from ..semantics.factored import bit_indices

_CHANNEL = DIMS.index("channel")
_DEPTH = 3  # the deepest fold (``Words.dim``: channel, account, group)
Key = tuple[str, ...]


class CountedWords(Words):
    """``Words`` whose folding reads counts per prefix instead of class bitsets."""

    def __init__(self, space: ClassSpace, *, limit: int = 6) -> None:
        super().__init__(space, limit=limit)
        self._totals: dict[tuple[int, str, int], Counter[Key]] = {}

    def _fold(self, d: int, chosen: int, depth: int) -> list[str]:
        values = self.space.dims()[d]
        members = bit_indices(chosen)
        out: list[str] = []
        done: set[int] = set()
        for level in range(1, depth + 1):
            totals = self._counts(d, "level", level)
            groups = _group(members, values, partial(_prefix, level=level))
            for prefix in sorted(groups):
                found = groups[prefix]
                if len(found) != totals[prefix] or len(found) < 2 or done.intersection(found):
                    continue
                out.append(_prefix_label(values[found[0]], prefix, level))
                done.update(found)
        if d == _CHANNEL:
            out += self._fold_fallbacks(values, [i for i in members if i not in done], done)
        out += [values[i].label for i in members if i not in done]
        return out

    def _fold_fallbacks(self, values: Sequence[Klass], members: list[int], done: set[int]
                        ) -> list[str]:
        """Channel classes that reach the ``*`` entry on every side, folded per phrase."""
        totals = self._counts(_CHANNEL, "fallback", 0)
        groups = _group(members, values, lambda k: k.fallback)
        out = []
        for key in sorted(groups):
            found = groups[key]
            if len(found) != totals[key] or len(found) < 2:
                continue
            channel, account, sender = key
            words = [channel, account, 'every group without its own entry (the "*" group)',
                     sender]
            out.append(", ".join(w for w in words if w))
            done.update(found)
        return out

    def _counts(self, d: int, what: str, level: int) -> Counter[Key]:
        """How many classes of dimension ``d`` have each prefix of ``level`` items (``what``
        "level") or each fallback phrase ("fallback"), counted once for every level."""
        found = self._totals.get((d, what, level))
        if found is None:
            values = self.space.dims()[d]
            # a channel left unread holds no prefix nor fallback: its classes are not visited
            indices = self.space.read_classes() if d == _CHANNEL else range(len(values))
            levels: list[Counter[Key]] = [Counter() for _ in range(_DEPTH + 1)]
            for i in indices:
                k = values[i]
                if k.fallback is not None:
                    levels[0][k.fallback] += 1
                group = k.group
                for n in range(1, min(len(group), _DEPTH) + 1):
                    levels[n][group[:n]] += 1
            self._totals[(d, "fallback", 0)] = levels[0]
            for n in range(1, _DEPTH + 1):
                self._totals[(d, "level", n)] = levels[n]
            found = self._totals[(d, what, level)]
        return found


def _prefix(k: Klass, level: int) -> Key | None:
    return k.group[:level] if k.group and len(k.group) >= level else None


def _group(members: list[int], values: Sequence[Klass],
           key: Callable[[Klass], Key | None]) -> dict[Key, list[int]]:
    """The members by key (those with none left out), each list ascending."""
    out: dict[Key, list[int]] = defaultdict(list)
    for i in members:
        k = key(values[i])
        if k is not None:
            out[k].append(i)
    return out
