"""Compile one channel's tables (and its provenance) through the incremental cache
(``toolc.pipeline.cache``), and the units keyed on everything outside the channels.

A channel's compiled entry names interned stacks by id (its provenance: interned records),
and ids are handed out in the order the whole build first meets each one, so a cached entry
cannot hold final ids. It holds a tape instead: the distinct values the channel interns, in
the order it first interns them, and the entry with each id replaced by its place on the tape
(``StackRef``). Replaying the tape into the build's interner makes exactly the calls a clean
build makes (a repeated value is a no-op there), so every id, and so every byte of
``build/``, is the clean build's. The warnings compiling the channel gave are stored with it
and reported again on a hit.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from ..diagnostics import Diagnostic, Diagnostics
from .cache import BuildCache
from .model import ChannelDef, Definitions

# a compiled layer (witness, allow_pass, deny_pass): ``toolc.pipeline.tables.Layer``, which
# imports this module
Layer = tuple[int, int, int]
T = TypeVar("T")
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

    def record(self, key: str, rec: dict[str, Any]) -> int:
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


def replay_channel(builder: Any, unit: ChannelUnit) -> dict[str, Any]:
    """Intern a recorded channel's values into the build and give its entry real ids."""
    tape, entry, warnings = unit
    ids = [builder.replay(item) for item in tape]
    builder.diags.extend(warnings)
    return resolve_refs(entry, ids)


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


def _channel_key(builder: Any, cache: BuildCache, ch: ChannelDef) -> str | None:
    defs = builder.r.defs
    digest = defs.file_digests.get(ch.pos.file)
    if not defs.unit_base or digest is None:
        return None  # definitions not read from files: nothing to key on
    # the provenance names positions relative to the list of files (longest match first)
    return cache.key(builder.unit_kind, [defs.unit_base, ch.pos.file, digest, str(ch.pos),
                                         ch.name, "\0".join(defs.files)])


# Channels are compiled in worker processes (both cores) when there are at least this many
# groups to compile; fewer are not worth starting the processes. Tests lower it.
PARALLEL_MIN_GROUPS = 20_000
# Worker processes (None: one per core, at most MAX_WORKERS).
WORKERS: int | None = None
MAX_WORKERS = 8

# The builder and its channel compiler, inherited by forked workers (never pickled).
_FORKED: list[tuple[Any, Callable[[ChannelDef], dict[str, Any]]]] = []


def _work(index: int) -> ChannelUnit:
    builder, compile_channel = _FORKED[0]
    return record_channel(builder, compile_channel, builder.r.defs.channels[index])


def _groups(ch: ChannelDef) -> int:
    return sum(len(m) for m in ch.entry_maps())


def _workers(pending: list[int], channels: tuple[ChannelDef, ...]) -> int:
    if sum(_groups(channels[i]) for i in pending) < PARALLEL_MIN_GROUPS:
        return 1
    return worker_count(len(pending))


def worker_count(tasks: int) -> int:
    """Worker processes for ``tasks`` independent tasks: one per core (``WORKERS``), never
    more than tasks; 1 (in this process) where processes cannot be forked."""
    if tasks < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    cores = WORKERS or min(os.cpu_count() or 1, MAX_WORKERS)
    return max(1, min(cores, tasks))


def map_in_workers(fn: Callable[[Any], T], items: list[Any], workers: int) -> list[T]:
    """``[fn(item) for item in items]``, in ``workers`` forked processes when more than one;
    results in the order of ``items`` whatever order the workers finish in."""
    if workers <= 1:
        return [fn(item) for item in items]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(fn, items))


def compile_channels(builder: Any, compile_channel: Callable[[ChannelDef], dict[str, Any]],
                     cache: BuildCache | None) -> list[dict[str, Any]]:
    """Every channel's entry, in definition order: unchanged ones from ``cache``, the others
    recorded (in forked worker processes, one channel per task, when there are many
    groups), then all replayed in definition order, so neither the number of workers nor
    the order they finish in can change a byte."""
    channels: tuple[ChannelDef, ...] = builder.r.defs.channels
    keys = [None if cache is None else _channel_key(builder, cache, ch) for ch in channels]
    units: list[ChannelUnit | None] = [None] * len(channels)
    if cache is not None:
        for i, key in enumerate(keys):
            if key is not None:
                hit, value = cache.get(key)
                cache.stats.count(builder.unit_kind, hit)
                units[i] = value if hit else None
    pending = [i for i, unit in enumerate(units) if unit is None]
    computed = set(pending)
    workers = _workers(pending, channels)
    if workers > 1:
        # largest first, so one big channel does not run alone at the end
        order = sorted(pending, key=lambda i: -_groups(channels[i]))
        _FORKED.append((builder, compile_channel))
        try:
            for i, unit in zip(order, map_in_workers(_work, order, workers), strict=True):
                units[i] = unit
        finally:
            _FORKED.clear()
    else:
        for i in pending:
            units[i] = record_channel(builder, compile_channel, channels[i])
    out = []
    for i, found in enumerate(units):
        assert found is not None
        key = keys[i]
        if cache is not None and key is not None and i in computed:
            cache.put(key, found)
        out.append(replay_channel(builder, found))
    return out


def outside_channels(cache: BuildCache | None, kind: str, defs: Definitions,
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
