"""Stand-in tool implementations and a hook for ``toolc serve-mcp`` (see the README):

    toolc serve-mcp --agent coder --impl examples.mcp_tools:IMPLEMENTATIONS \
        --hooks examples.mcp_tools:hooks

An implementation is ``fn(args, call)``, sync or async: ``args`` are the checked arguments,
``call`` says which call it is (``call.context.agent_id``, ``call.tool_call_id``, its abort
signal). Nothing is read, run or fetched here.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def read(args: dict[str, Any], call: Any) -> str:
    return f"1\tcontents of {args['path']}"


def exec_(args: dict[str, Any], call: Any) -> dict[str, Any]:
    return {"status": "ok", "stdout": f"(would run: {args['command']})", "exitCode": 0}


async def web_fetch(args: dict[str, Any], call: Any) -> str:
    return f"<html>the page at {args['url']}</html>"


IMPLEMENTATIONS = {"read": read, "exec": exec_, "web_fetch": web_fetch}


def hooks(rt: ModuleType) -> Any:
    """The hooks of one build (serve-mcp calls this with each build's runtime package)."""
    runner = rt.HookRunner()

    def no_rm(event: Any, ctx: Any) -> Any:
        if event.tool_name == "exec" and "rm " in str(event.params.get("command")):
            return rt.BeforeToolCallResult(block=True, block_reason="rm is not allowed here")
        return None

    runner.before_tool_call(no_rm)
    return runner
