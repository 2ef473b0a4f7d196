"""before_tool_call and after_tool_call hooks (OpenClaw semantics sections 16-17, D2).

before_tool_call handlers run one after another, higher ``priority`` first (ties in
registration order). A block is final: the chain stops and no later handler can lift it. The
latest ``params`` a handler returns wins and is shallow-merged onto the call's params. A
handler that raises, returns something other than ``BeforeToolCallResult`` or None, or
returns params that are not a mapping blocks the call (fail-closed, D2).

after_tool_call handlers are fired without being awaited, on success and on error: from a
sync call in one worker thread (in call order), from an async call as a task. Their failures
are logged, never raised. Handlers may be plain functions or coroutine functions.

Handlers of both kinds see the params as a read-only deep copy (``frozen``): a change in
place, at any depth, raises TypeError (for a before_tool_call handler: a failed hook, which
blocks the call), and whatever a handler reaches by other means is a copy nothing runs with.
A handler changes params only by returning them; they are copied (``plain``) and validated
again, and the implementation gets exactly what was validated.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import queue
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, NoReturn

from . import PACKAGE_NAME
from ._errors import printable
from ._results import ToolResult
from ._steps import run_sync

BLOCKED_BY_HOOK: Final = "Tool call blocked by plugin hook"
HOOK_FAILED: Final = "Tool call blocked because before_tool_call hook failed"
ADJUSTED_PARAMS_LIMIT: Final = 1024


READ_ONLY: Final = (
    "tool call params are read-only: return BeforeToolCallResult(params=...) to change them"
)


class FrozenMap(Mapping[str, Any]):
    """A read-only copy of an object of params (``copy.deepcopy`` gives a plain dict)."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def copy(self) -> dict[str, Any]:
        """A shallow dict copy (as ``MappingProxyType.copy``; nested values stay read-only)."""
        return dict(self._data)

    def __or__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return {**self._data, **other}

    def __ror__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return {**other, **self._data}

    __copy__ = copy

    def __deepcopy__(self, memo: object) -> Any:
        return plain(self)


class FrozenList(list[Any]):
    """A read-only copy of an array of params (still a list; ``copy.deepcopy`` gives a plain
    one)."""

    __slots__ = ()

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(READ_ONLY)

    append = extend = insert = pop = remove = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: object) -> Any:
        return plain(self)


def frozen(value: object) -> Any:
    """A read-only deep copy of params: objects as FrozenMap, arrays as FrozenList, strings
    and numbers as their plain types (a subclass can answer differently each time)."""
    if isinstance(value, Mapping):
        return FrozenMap({_scalar(k): frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        frozen_list = FrozenList()
        list.extend(frozen_list, (frozen(v) for v in value))
        return frozen_list
    return _scalar(value)


def plain(value: object) -> Any:
    """A mutable deep copy of params in JSON's own types (dict, list, str, int, float, bool,
    None); other values, which only ``validate=False`` lets through, are kept as they are."""
    if isinstance(value, Mapping):
        return {_scalar(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return _scalar(value)


def _scalar(value: object) -> Any:
    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class HookContext:
    """Which call a hook runs for (OpenClaw's tool hook context)."""

    tool_name: str
    tool_call_id: str | None = None
    run_id: str | None = None
    agent_id: str | None = None
    session_key: str | None = None
    session_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BeforeToolCallEvent:
    """A call about to run: its validated params (read-only)."""

    tool_name: str
    params: Mapping[str, Any]
    tool_call_id: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BeforeToolCallResult:
    """What a before_tool_call handler may return (or None for "no opinion")."""

    params: Mapping[str, Any] | None = None
    block: bool = False
    block_reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AfterToolCallEvent:
    """A call that ended: the params it ran with (adjusted by hooks), its result or the
    error message, and how long it took (``duration_ms``, OpenClaw's ``durationMs``)."""

    tool_name: str
    params: Mapping[str, Any]
    tool_call_id: str | None
    run_id: str | None
    result: ToolResult | None
    error: str | None
    duration_ms: float


BeforeHandler = Callable[[BeforeToolCallEvent, HookContext], object]
AfterHandler = Callable[[AfterToolCallEvent, HookContext], object]


class HookOutcome(NamedTuple):
    """The before_tool_call verdict: blocked (with the reason), or the params to run with."""

    blocked: bool
    reason: str | None
    params: Mapping[str, Any]
    changed: bool  # some handler returned params


class _Handler(NamedTuple):
    priority: int
    order: int
    plugin_id: str
    fn: Callable[..., object]


class AdjustedParams:
    """The params each call ran with, by ``run_id:tool_call_id`` (``tool_call_id`` when the
    run id is blank), for whoever reports the call's end; at most ``limit`` entries, the
    oldest evicted first. Thread-safe."""

    def __init__(self, limit: int = ADJUSTED_PARAMS_LIMIT) -> None:
        self._limit = limit
        self._items: dict[str, Mapping[str, Any]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(tool_call_id: str, run_id: str | None = None) -> str:
        return f"{run_id}:{tool_call_id}" if run_id and run_id.strip() else tool_call_id

    def put(self, key: str, params: Mapping[str, Any]) -> None:
        with self._lock:
            self._items[key] = params  # an existing key keeps its place, as in OpenClaw
            while len(self._items) > self._limit:
                del self._items[next(iter(self._items))]

    def consume(self, key: str) -> Mapping[str, Any] | None:
        """The entry for ``key``, removed (None when there is none)."""
        with self._lock:
            return self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items


class _Chain:
    """Merges handler results: a block stops the chain, the latest params win."""

    __slots__ = ("params", "reason")

    def __init__(self) -> None:
        self.params: Mapping[str, Any] | None = None
        self.reason: str | None = None

    def take(self, result: object) -> bool:
        """Fold one handler's result in; True when it blocks. Malformed results raise."""
        if result is None:
            return False
        if not isinstance(result, BeforeToolCallResult):
            raise TypeError(f"returned {type(result).__name__}, not BeforeToolCallResult or None")
        if result.block is not False:  # anything but an exact False blocks
            reason = result.block_reason
            self.reason = reason if isinstance(reason, str) and reason.strip() else BLOCKED_BY_HOOK
            return True
        if result.params is not None:
            if not isinstance(result.params, Mapping):
                raise TypeError(f"returned params of type {type(result.params).__name__}")
            self.params = result.params
        return False

    def outcome(self, original: Mapping[str, Any]) -> HookOutcome:
        if self.reason is not None:
            return HookOutcome(True, self.reason, original, False)
        if self.params is None:
            return HookOutcome(False, None, original, False)
        return HookOutcome(False, None, {**original, **self.params}, True)


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _run_to_completion(awaitable: Awaitable[Any]) -> Any:
    """An async handler's result in a sync call: run on a private event loop, which is
    impossible inside a running loop (then the handler counts as failed)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(awaitable))
    if inspect.iscoroutine(awaitable):
        awaitable.close()
    raise RuntimeError("an async handler cannot run in a sync call inside an event loop")


class HookRunner:
    """The hooks of a gateway: register handlers, then hand the runner to ``wrap``."""

    def __init__(self, *, logger: logging.Logger | None = None) -> None:
        self._before: tuple[_Handler, ...] = ()
        self._after: tuple[_Handler, ...] = ()
        self._lock = threading.Lock()
        self._order = itertools.count()
        self._logger = logger or logging.getLogger(f"{PACKAGE_NAME}.hooks")
        # after_tool_call work from sync calls: one worker thread with its own queue, started
        # on first use (and again after close)
        self._worker: tuple[threading.Thread, queue.SimpleQueue[_AfterJob | None]] | None = None
        self._pending = 0
        self._idle = threading.Condition(self._lock)
        self._tasks: set[asyncio.Task[None]] = set()
        self.adjusted_params = AdjustedParams()

    def before_tool_call(
        self, handler: BeforeHandler, *, priority: int = 0, plugin_id: str = ""
    ) -> None:
        """Register a before_tool_call handler (higher ``priority`` runs first)."""
        with self._lock:
            entry = _Handler(priority, next(self._order), plugin_id, handler)
            self._before = tuple(sorted((*self._before, entry), key=_run_order))

    def after_tool_call(
        self, handler: AfterHandler, *, priority: int = 0, plugin_id: str = ""
    ) -> None:
        """Register an after_tool_call handler (fired, never awaited by the call)."""
        with self._lock:
            entry = _Handler(priority, next(self._order), plugin_id, handler)
            self._after = tuple(sorted((*self._after, entry), key=_run_order))

    @property
    def has_before(self) -> bool:
        """Some before_tool_call handler is registered."""
        return bool(self._before)

    @property
    def has_after(self) -> bool:
        """Some after_tool_call handler is registered."""
        return bool(self._after)

    # -- before_tool_call ----------------------------------------------------------------------
    def run_before(self, event: BeforeToolCallEvent, ctx: HookContext) -> HookOutcome:
        """Run the chain in this thread (async handlers on a private loop)."""
        return run_sync(self._before_chain(event, ctx, in_loop=False))

    async def arun_before(self, event: BeforeToolCallEvent, ctx: HookContext) -> HookOutcome:
        """Run the chain in the running event loop (async handlers awaited)."""
        return await self._before_chain(event, ctx, in_loop=True)

    async def _before_chain(
        self, event: BeforeToolCallEvent, ctx: HookContext, *, in_loop: bool
    ) -> HookOutcome:
        """The chain, for both kinds of caller (``_steps``): an async handler's awaitable is
        awaited in the running loop, or run on a private loop for a sync caller."""
        chain = _Chain()
        for handler in self._before:
            try:
                result = handler.fn(event, ctx)
                if inspect.isawaitable(result):
                    result = await result if in_loop else _run_to_completion(result)
                if chain.take(result):
                    break
            except Exception as exc:
                return self._failed(event, handler, exc)
        return chain.outcome(event.params)

    def _failed(self, event: BeforeToolCallEvent, handler: _Handler, exc: Exception) -> HookOutcome:
        call = f" toolCallId={event.tool_call_id}" if event.tool_call_id else ""
        plugin = f" plugin={handler.plugin_id}" if handler.plugin_id else ""
        self._logger.warning(
            "before_tool_call hook failed: tool=%s%s%s error=%s",
            event.tool_name,
            printable(call),
            plugin,
            type(exc).__name__,  # its message can quote the params: never logged
        )
        return HookOutcome(True, HOOK_FAILED, event.params, False)

    # -- after_tool_call -----------------------------------------------------------------------
    def fire_after(self, event: AfterToolCallEvent, ctx: HookContext) -> None:
        """Queue the handlers for the worker thread; the caller does not wait."""
        handlers = self._after
        if not handlers:
            return
        with self._lock:
            if self._worker is None:
                jobs: queue.SimpleQueue[_AfterJob | None] = queue.SimpleQueue()
                thread = threading.Thread(
                    target=self._work, args=(jobs,), name=f"{PACKAGE_NAME}-after-hooks", daemon=True
                )
                thread.start()
                self._worker = (thread, jobs)
            self._pending += 1
            self._worker[1].put((handlers, event, ctx))

    def afire_after(self, event: AfterToolCallEvent, ctx: HookContext) -> None:
        """Fire the handlers as a task of the running loop; the caller does not await it."""
        handlers = self._after
        if not handlers:
            return
        task = asyncio.get_running_loop().create_task(self._after_async(handlers, event, ctx))
        with self._lock:
            self._tasks.add(task)
        task.add_done_callback(self._forget_task)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for the after_tool_call work fired from sync calls; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    async def aidle(self) -> None:
        """Await the after_tool_call tasks fired from async calls."""
        with self._lock:
            pending = list(self._tasks)
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    def close(self) -> None:
        """Finish the queued after_tool_call work and stop the worker thread."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            thread, jobs = worker
            jobs.put(None)  # after every job queued before this close
            thread.join()

    def _work(self, jobs: queue.SimpleQueue[_AfterJob | None]) -> None:
        """The worker thread: run queued after_tool_call jobs in order, until ``None``."""
        while (job := jobs.get()) is not None:
            try:
                self._after_in_thread(*job)
            except Exception as exc:  # a bug here must not stop later jobs
                self._logger.warning("after_tool_call hooks failed: %s", type(exc).__name__)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def _after_in_thread(
        self, handlers: tuple[_Handler, ...], event: AfterToolCallEvent, ctx: HookContext
    ) -> None:
        pending = self._call_after(handlers, event, ctx)
        if pending:
            asyncio.run(self._gather_after(pending, event))

    async def _after_async(
        self, handlers: tuple[_Handler, ...], event: AfterToolCallEvent, ctx: HookContext
    ) -> None:
        pending = self._call_after(handlers, event, ctx)
        if pending:
            await self._gather_after(pending, event)

    def _call_after(
        self, handlers: tuple[_Handler, ...], event: AfterToolCallEvent, ctx: HookContext
    ) -> list[Awaitable[Any]]:
        pending: list[Awaitable[Any]] = []
        for handler in handlers:
            try:
                result = handler.fn(event, ctx)
            except Exception as exc:
                self._after_failed(event, exc)
                continue
            if inspect.isawaitable(result):
                pending.append(result)
        return pending

    async def _gather_after(self, pending: list[Awaitable[Any]], event: AfterToolCallEvent) -> None:
        results = await asyncio.gather(*(_awaited(a) for a in pending), return_exceptions=True)
        for result in results:
            if isinstance(result, Exception):
                self._after_failed(event, result)

    def _after_failed(self, event: AfterToolCallEvent, exc: BaseException) -> None:
        self._logger.warning(
            "after_tool_call hook failed: tool=%s error=%s", event.tool_name, type(exc).__name__
        )

    def _forget_task(self, task: asyncio.Task[None]) -> None:
        with self._lock:
            self._tasks.discard(task)


_AfterJob = tuple[tuple[_Handler, ...], AfterToolCallEvent, HookContext]


def _run_order(handler: _Handler) -> tuple[int, int]:
    return (-handler.priority, handler.order)
