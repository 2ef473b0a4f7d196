"""Compile one channel's tables through the incremental cache (``toolc.pipeline.cache``).

A channel's compiled entry names interned stacks by id, and ids are handed out in the order
the whole build first meets each stack, so a cached entry cannot hold final ids. It holds a
tape instead: the distinct stacks the channel interns, in the order it first interns them,
and the entry with each stack id replaced by its place on the tape (``StackRef``). Replaying
the tape into the build's interner makes exactly the calls a clean build makes (a repeated
stack is a no-op there), so every id, and so every byte of ``build/``, is the clean build's.
The warnings compiling the channel gave are stored with it and reported again on a hit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, Diagnostics
from .cache import BuildCache
from .model import ChannelDef

if TYPE_CHECKING:
    from .tables import Layer

StackArgs = tuple[int, tuple["Layer", ...], int, int, int]


class StackRef(int):
    """A stack's place on a channel's tape (not yet its id in the build)."""

    __slots__ = ()


class _Recorder:
    """Stands in for the build's interner while one channel compiles."""

    def __init__(self) -> None:
        self.tape: list[StackArgs] = []
        self._seen: dict[StackArgs, StackRef] = {}

    def stack(self, mention: int, layers: Iterable[Layer], all_bits: int, flags: int = 0,
              preserve: int = 0) -> int:
        args: StackArgs = (mention, tuple(layers), all_bits, flags, preserve)
        ref = self._seen.get(args)
        if ref is None:
            ref = self._seen[args] = StackRef(len(self.tape))
            self.tape.append(args)
        return ref


# (tape, entry with StackRefs, warnings)
ChannelUnit = tuple[list[StackArgs], dict[str, Any], tuple[Diagnostic, ...]]


def record_channel(builder: Any, compile_channel: Callable[[ChannelDef], dict[str, Any]],
                   ch: ChannelDef) -> ChannelUnit:
    """Compile ``ch`` with ``builder``'s interner and diagnostics swapped for a recorder."""
    intern, diags = builder.intern, builder.diags
    recorder, local = _Recorder(), Diagnostics()
    builder.intern, builder.diags = recorder, local
    try:
        entry = compile_channel(ch)
    finally:
        builder.intern, builder.diags = intern, diags
    return recorder.tape, entry, tuple(local.items)


def replay_channel(builder: Any, unit: ChannelUnit) -> dict[str, Any]:
    """Intern a recorded channel's stacks into the build and give its entry real ids."""
    tape, entry, warnings = unit
    ids = [builder.intern.stack(mention, layers, all_bits, flags, preserve)
           for mention, layers, all_bits, flags, preserve in tape]
    builder.diags.extend(warnings)
    result: dict[str, Any] = _resolve(entry, ids)
    return result


def _resolve(value: Any, ids: list[int]) -> Any:
    if type(value) is StackRef:
        return ids[value]
    if isinstance(value, dict):
        return {k: _resolve(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, ids) for v in value]
    return value


def cached_channel(builder: Any, compile_channel: Callable[[ChannelDef], dict[str, Any]],
                   ch: ChannelDef, cache: BuildCache) -> dict[str, Any]:
    """``compile_channel(ch)`` for ``builder``, from the cache when the channel's file and
    everything outside the channels sections are unchanged."""
    defs = builder.r.defs
    digest = defs.file_digests.get(ch.pos.file)
    if not defs.unit_base or digest is None:
        return compile_channel(ch)  # definitions not read from files: nothing to key on
    unit = cache.unit("channel", [defs.unit_base, ch.pos.file, digest, str(ch.pos), ch.name],
                      lambda: record_channel(builder, compile_channel, ch))
    return replay_channel(builder, unit)
