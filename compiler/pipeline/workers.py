"""Independent tasks in forked worker processes: the load stage's files (``frontend``) and the
build's channel files (``toolc.builds.stream``), one worker per core."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

# Worker processes (None: one per core, at most MAX_WORKERS).
WORKERS: int | None = None
MAX_WORKERS = 8


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
