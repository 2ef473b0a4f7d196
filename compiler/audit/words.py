"""Sets of context classes in the user's words: "agent viewer, provider openai, channel
telegram group -100123 (any sender)". Used by ``toolc diff``, assertion failures and
``ACCESS.md``. Dimensions a set covers entirely are left out; a whole channel, account or
group (or every group that falls back to the ``*`` entry) folds into one phrase."""

from __future__ import annotations

from collections.abc import Sequence

from ..semantics.access import DIMS, ClassSpace, Klass
from ..semantics.factored import Cube, bit_indices, full_cube


def plural(count: int, singular: str, many: str | None = None) -> str:
    """``1 tool``, ``2 tools``, ``1,000 classes`` (``many`` for irregular plurals)."""
    word = singular if count == 1 else (many or f"{singular}s")
    return f"{count:,} {word}"


_LEVEL_TAIL = {1: "any account, group or sender", 2: "any group or sender", 3: "any sender"}


class Words:
    """Describes cubes of one class space (the fold indices are built once)."""

    def __init__(self, space: ClassSpace, *, limit: int = 6) -> None:
        self.space = space
        self.full = full_cube(space)
        self.limit = limit
        self._index: dict[tuple[int, int], dict[tuple[str, ...], int]] = {}
        self._fallback: dict[tuple[str, ...], int] | None = None

    def cube(self, cube: Cube) -> str:
        parts = self.parts(cube)
        return ", ".join(parts) if parts else "every context"

    def parts(self, cube: Cube) -> list[str]:
        """One phrase per dimension the cube does not cover entirely (none: every context)."""
        return [self.dim(d, bits) for d, bits in enumerate(cube) if bits != self.full[d]]

    def dim(self, d: int, bits: int) -> str:
        values = self.space.dims()[d]
        name = DIMS[d]
        if name in ("agent", "owner", "sandbox", "subagent"):
            labels = [values[i].label for i in bit_indices(bits)]
            if name == "agent" and len(labels) > 1:
                return "agents " + self.join([lb.removeprefix("agent ") for lb in labels])
            return " or ".join(labels)
        return self.join(self._fold(d, bits, depth=1 if name == "provider" else 3))

    def labels(self, d: int, bits: int) -> list[str]:
        """Every class of a dimension in ``bits``, folded but not truncated."""
        return self._fold(d, bits, depth=1 if DIMS[d] == "provider" else 3)

    def join(self, items: Sequence[str]) -> str:
        if len(items) > self.limit:
            return "; ".join(items[:self.limit]) + f"; and {len(items) - self.limit} more"
        return "; ".join(items)

    # folding --------------------------------------------------------------------------------
    def _prefixes(self, d: int, level: int) -> dict[tuple[str, ...], int]:
        key = (d, level)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = {}
            for i, k in enumerate(self.space.dims()[d]):
                if k.group and len(k.group) >= level:
                    prefix = k.group[:level]
                    index[prefix] = index.get(prefix, 0) | 1 << i
        return index

    def _fallbacks(self) -> dict[tuple[str, ...], int]:
        if self._fallback is None:
            self._fallback = {}
            for i, k in enumerate(self.space.channels):
                if k.fallback is not None:
                    self._fallback[k.fallback] = self._fallback.get(k.fallback, 0) | 1 << i
        return self._fallback

    def _fold(self, d: int, chosen: int, depth: int) -> list[str]:
        values = self.space.dims()[d]
        members = bit_indices(chosen)
        out: list[str] = []
        done = 0
        for level in range(1, depth + 1):
            index = self._prefixes(d, level)
            candidates = sorted({values[i].group[:level] for i in members
                                 if values[i].group and len(values[i].group) >= level})
            for prefix in candidates:
                bits = index[prefix]
                if bits & ~chosen or bits & done or bits.bit_count() < 2:
                    continue
                out.append(_prefix_label(values[bit_indices(bits)[0]], prefix, level))
                done |= bits
        if d == DIMS.index("channel"):
            fallbacks = self._fallbacks()
            keys: set[tuple[str, ...]] = set()
            for i in members:
                fallback = values[i].fallback
                if fallback is not None and not done >> i & 1:
                    keys.add(fallback)
            for key in sorted(keys):
                bits = fallbacks[key]
                if bits & ~chosen or bits & done or bits.bit_count() < 2:
                    continue
                channel, account, sender = key
                words = [channel, account, 'every group without its own entry (the "*" group)',
                         sender]
                out.append(", ".join(w for w in words if w))
                done |= bits
        out += [values[i].label for i in members if not done >> i & 1]
        return out


def _prefix_label(k: Klass, prefix: tuple[str, ...], level: int) -> str:
    if len(k.group) == 1:  # a provider, or a channel's no-group class
        return prefix[0] if not prefix[0].startswith("provider ") else f"{prefix[0]} (any model)"
    label = ", ".join(p for p in prefix if p)
    return f"{label} ({_LEVEL_TAIL[level]})"
