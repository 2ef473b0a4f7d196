"""What the test server serves: implementations and a hook (``--impl``, ``--hooks``)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any


def echo(args: dict[str, Any], call: Any) -> str:
    return str(args["text"])


async def aecho(args: dict[str, Any], call: Any) -> dict[str, Any]:
    await asyncio.sleep(0)
    return {"echo": args["text"], "agent": call.context.agent_id}


def admin(args: dict[str, Any], call: Any) -> str:
    return "administered"


def secret(args: dict[str, Any], call: Any) -> str:
    return "the secret"


def sleepy(args: dict[str, Any], call: Any) -> str:
    """Say it started (``<path>.started``), wait (in serve-mcp's worker thread) until the call
    is aborted, and say so in ``path``."""
    Path(args["path"] + ".started").write_text("started")
    aborted = call.signal.wait(20)
    Path(args["path"]).write_text(f"aborted: {call.signal.reason}" if aborted else "not")
    return "woke up"


def gate(args: dict[str, Any], call: Any) -> str:
    """Say it started (``started``, a file), then wait until ``path`` exists (at most 20 s)."""
    Path(args["started"]).write_text(str(call.tool_call_id))
    deadline = time.monotonic() + 20
    while not Path(args["path"]).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return f"released {args.get('tag', '')}"


def exec_(args: dict[str, Any], call: Any) -> str:
    """Never runs anything: records the command (TOOLC_TEST_EXEC_LOG) for the test to count."""
    log = os.environ.get("TOOLC_TEST_EXEC_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(str(args["command"]) + "\n")
    return f"ran {args['command']}"


def fresh(args: dict[str, Any], call: Any) -> str:
    return "fresh"


# "shout" is a tool of the proxied upstream "up": serve-mcp ignores this implementation;
# "fresh" is in the builds the tests swap in later
IMPLEMENTATIONS = {"echo": echo, "aecho": aecho, "admin": admin, "secret": secret,
                   "sleepy": sleepy, "shout": echo, "fresh": fresh, "gate": gate,
                   "exec": exec_}


def hooks(rt: ModuleType) -> Any:
    """A before_tool_call hook that blocks any text saying "block me"."""
    runner = rt.HookRunner()

    def guard(event: Any, ctx: Any) -> Any:
        if "block me" in str(event.params.get("text", "")):
            return rt.BeforeToolCallResult(block=True, block_reason="blocked by the test hook")
        return None

    def record(event: Any, ctx: Any) -> None:
        """With TOOLC_TEST_AFTER_LOG set: one JSON line per ended call, with its params."""
        log = os.environ.get("TOOLC_TEST_AFTER_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": event.tool_name, "params": dict(event.params)})
                          + "\n")

    runner.before_tool_call(guard)
    runner.after_tool_call(record)
    return runner
