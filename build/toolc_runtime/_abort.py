"""Abort signals (OpenClaw semantics section 18): a per-call signal combined with a run-level
one. Sync tools get a cancellable event they can poll or wait on; async tools are cancelled
(asyncio) when the combined signal fires. An aborted call raises AbortError, which the wrapper
never turns into a result.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Awaitable, Callable
from typing import Final, TypeVar

from ._errors import AbortError

T = TypeVar("T")
_KEYS: Final = itertools.count()


def _nothing() -> None:
    return None


class AbortSignal:
    """A cancellable event, shared by the gateway and the tools of a run or of one call.

    ``abort()`` may be called from any thread; callbacks registered with ``on_abort`` run once,
    in the aborting thread (or at once when the signal has already fired).
    """

    __slots__ = ("_callbacks", "_event", "_lock", "_reason")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: dict[int, Callable[[], object]] = {}
        self._reason: str | None = None

    @property
    def aborted(self) -> bool:
        """True once ``abort()`` was called."""
        return self._event.is_set()

    @property
    def reason(self) -> str | None:
        """What the first ``abort()`` said (None when it said nothing)."""
        return self._reason

    def abort(self, reason: str | None = None) -> bool:
        """Fire the signal; False when it had fired already (the first reason stays)."""
        with self._lock:
            if self._event.is_set():
                return False
            self._reason = reason
            self._event.set()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
        for callback in callbacks:
            callback()
        return True

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the signal fires (True) or ``timeout`` seconds pass (False)."""
        return self._event.wait(timeout)

    def raise_if_aborted(self) -> None:
        """Raise AbortError when the signal has fired."""
        if self._event.is_set():
            raise AbortError(abort_message(self))

    def on_abort(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` when the signal fires; returns a function that unregisters it."""
        with self._lock:
            if not self._event.is_set():
                key = next(_KEYS)
                self._callbacks[key] = callback
                return lambda: self._forget(key)
        callback()
        return _nothing

    def _forget(self, key: int) -> None:
        with self._lock:
            self._callbacks.pop(key, None)

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self.aborted}, reason={self._reason!r})"


def abort_message(signal: AbortSignal | None) -> str:
    reason = signal.reason if signal is not None else None
    return f"Aborted: {reason}" if reason else "Aborted"


def combine_signals(
    call: AbortSignal | None, run: AbortSignal | None
) -> tuple[AbortSignal | None, Callable[[], None]]:
    """OpenClaw's combination: neither gives none, one gives that one, an already fired one
    is taken as it is (the call's first); else a new signal that fires with either. Returns
    the signal and a function that detaches it from its parents (call it when the call ends,
    so a long-lived run signal does not collect callbacks)."""
    if call is None or run is None:
        return (call or run), _nothing
    if call.aborted:
        return call, _nothing
    if run.aborted:
        return run, _nothing
    combined = AbortSignal()
    detach_call = call.on_abort(lambda: combined.abort(call.reason))
    detach_run = run.on_abort(lambda: combined.abort(run.reason))

    def detach() -> None:
        detach_call()
        detach_run()

    return combined, detach


async def run_cancellable(work: Awaitable[T], signal: AbortSignal | None) -> T:
    """Await ``work`` as a task that ``signal`` cancels; its cancellation by the signal comes
    out as AbortError, a cancellation of the caller stays a CancelledError."""
    if signal is None:
        return await work
    loop = asyncio.get_running_loop()
    task: asyncio.Future[T] = asyncio.ensure_future(work)

    def cancel() -> None:
        try:
            loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # the loop is closed: nothing left to cancel
            pass

    detach = signal.on_abort(cancel)
    try:
        return await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if signal.aborted and (current is None or current.cancelling() == 0):
            raise AbortError(abort_message(signal)) from None
        raise
    finally:
        detach()


def is_abort(error: BaseException, signal: AbortSignal | None) -> bool:
    """An error that ends an aborted call: AbortError, or anything raised once the signal
    fired (the tool gave up because of the abort)."""
    return isinstance(error, AbortError) or (signal is not None and signal.aborted)
