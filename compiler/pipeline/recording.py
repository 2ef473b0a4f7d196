"""Record one channel's tables (and its provenance) apart from the rest of the build.

A channel compiled on its own (``toolc.builds.stream``) cannot intern its stacks into the
build's lists: it records them instead, on a tape (the distinct values it interns, in the
order it first interns them), and its entry names each by its place on the tape
(``StackRef``). The shards write every stack inline (``toolc.pipeline.shards``), so a tape
turns into shard texts that depend on the channel alone (``tables.channel_shards``,
``provenance.channel_provenance``). The warnings compiling the channel gave are kept with
it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..diagnostics import Diagnostic, Diagnostics
from .model import ChannelDef

# a compiled layer (witness, allow_pass, deny_pass): ``toolc.pipeline.tables.Layer``, which
# imports this module
Layer = tuple[int, int, int]
StackArgs = tuple[int, tuple[Layer, ...], int, int, int]


class StackRef(int):
    """A stack's place on a channel's tape (not yet its id in the build)."""

    __slots__ = ()


class Recorder:
    """Stands in for the build's interner while one channel compiles: ``stack`` for the
    tables' stacks, ``record`` for the provenance's records (keyed by their JSON)."""

    def __init__(self) -> None:
        self.tape: list[Any] = []
        self._seen: dict[Any, StackRef] = {}

    def _ref(self, key: Any, value: Any) -> StackRef:
        ref = self._seen.get(key)
        if ref is None:
            ref = self._seen[key] = StackRef(len(self.tape))
            self.tape.append(value)
        return ref

    def stack(self, mention: int, layers: Iterable[Layer], all_bits: int, flags: int = 0,
              preserve: int = 0) -> int:
        args: StackArgs = (mention, tuple(layers), all_bits, flags, preserve)
        return self._ref(args, args)

    def record(self, key: str, rec: dict[str, Any] | None = None) -> int:
        """A record by its text (None: the text alone is kept)."""
        return self._ref(key, (key, rec))


# (tape, entry with StackRefs, warnings)
ChannelUnit = tuple[list[Any], dict[str, Any], tuple[Diagnostic, ...]]


def record_channel(builder: Any, compile_channel: Callable[[ChannelDef], dict[str, Any]],
                   ch: ChannelDef) -> ChannelUnit:
    """Compile ``ch`` with ``builder``'s interner and diagnostics swapped for a recorder
    (``builder.recording(recorder)``: the builder's one interning point)."""
    diags, local, recorder = builder.diags, Diagnostics(), Recorder()
    builder.diags = local
    try:
        with builder.recording(recorder):
            entry = compile_channel(ch)
    finally:
        builder.diags = diags
    return recorder.tape, entry, tuple(local.items)


def resolve_refs(entry: dict[str, Any], ids: list[int]) -> dict[str, Any]:
    """``entry`` with each ``StackRef`` r replaced by ``ids[r]``."""
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
