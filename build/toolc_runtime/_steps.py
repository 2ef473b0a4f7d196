"""One path for sync and async callers: written once as a coroutine, run either way.

A path that both kinds of caller take (a tool call, the before_tool_call chain, an exec
approval's wait) is an ``async def`` told which side runs it (``in_loop``). Where the two
differ (a handler's awaitable, an approval's wait, an implementation's awaitable) it reads
``await wait_async() if in_loop else wait()``: an async caller awaits the path in its event
loop; for a sync caller the path awaits nothing that suspends (only its own coroutines), so
``run_sync`` finishes it with one ``send``, in this thread. Exceptions, ``try`` blocks and the
order of every step are the path's own, the same for both.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(path: Coroutine[Any, Any, T]) -> T:
    """Run ``path`` (made for a sync caller: ``in_loop`` False) to its end in this thread."""
    try:
        path.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    path.close()
    raise RuntimeError("a path made for a sync caller waited on an event loop")
