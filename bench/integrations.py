"""Framework integrations: the per-call overhead of each integration's call entry point
(pydantic-ai's ``call_tool``, the Agents SDK's ``on_invoke_tool``, LangChain's
``awrap_tool_call``) against calling ``wrap``'s ``acall`` directly, for a no-op async tool of
the shipped definitions with argument validation on.

Each entry point gets the framework's own run-context object (``RunContext``,
``ToolContext``, ``ToolCallRequest`` with a ``ToolRuntime``), built once outside the timed
loop; what is timed is what the integration adds per call (resolving the request from that
context, its memo, the approver, the result in the framework's shape) on top of ``wrap``.
The frameworks' own scheduling around a call is theirs and not measured.

Run as a worker of ``bench.run`` in its own interpreter: ``python -m bench.run --worker
integrations OUT CALLS SAMPLES``. It prints one JSON line: per integration the median and
best time per call and the ratios of the median and of the best to ``wrap``'s in the same
process (the variants take turns in every timing round); an integration whose framework is
not installed is reported as an error, not measured.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

TOOL = "read"
ARGS: dict[str, Any] = {"path": "/workspace/notes.md"}
CONTEXT: dict[str, Any] = {"agent_id": "coder", "model_provider": "openai"}


async def _anoop(args: dict[str, Any], call: Any) -> str:
    return "ok"


def _time_rounds(
    variants: dict[str, Callable[[], Awaitable[object]]], calls: int, samples: int
) -> dict[str, list[float]]:
    """Per variant, ``samples`` loops of ``calls`` back-to-back calls; the variants take turns
    within each round, so a busy machine slows them alike and the ratios hold."""

    async def loop() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(samples):
            for name, fn in variants.items():
                start = time.perf_counter_ns()
                for _ in range(calls):
                    await fn()
                out[name].append((time.perf_counter_ns() - start) / calls)
        return out

    return asyncio.run(loop())


def _stats(per_call: list[float], base: list[float]) -> dict[str, Any]:
    median, base_median = statistics.median(per_call), statistics.median(base)
    return {"median_ns": round(median, 1), "best_ns": round(min(per_call), 1),
            "ratio": round(median / base_median, 2),
            "best_ratio": round(min(per_call) / min(base), 2)}


def _pydantic_ai(rt: Any) -> Callable[[], Awaitable[object]]:
    from pydantic_ai import RunContext  # noqa: PLC0415 - optional: reported when missing
    from pydantic_ai.models.test import TestModel  # noqa: PLC0415
    from pydantic_ai.usage import RunUsage  # noqa: PLC0415

    integration = importlib.import_module(f"{rt.__name__}.integrations.pydantic_ai")
    toolset = integration.toolset({TOOL: _anoop}, context=lambda ctx: ctx.deps)
    ctx = RunContext(deps=CONTEXT, model=TestModel(), usage=RunUsage(), tool_call_id="c")
    tool = asyncio.run(toolset.get_tools(ctx))[TOOL]
    return lambda: toolset.call_tool(TOOL, ARGS, ctx, tool)


def _openai_agents(rt: Any) -> Callable[[], Awaitable[object]]:
    from agents.tool_context import ToolContext  # noqa: PLC0415 - optional

    integration = importlib.import_module(f"{rt.__name__}.integrations.openai_agents")
    tools = integration.function_tools({TOOL: _anoop}, context=lambda ctx: ctx.context)
    [tool] = tools
    arguments = json.dumps(ARGS)
    ctx = ToolContext(context=CONTEXT, tool_name=TOOL, tool_call_id="c",
                      tool_arguments=arguments)
    return lambda: tool.on_invoke_tool(ctx, arguments)


def _langchain(rt: Any) -> Callable[[], Awaitable[object]]:
    from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime  # noqa: PLC0415

    integration = importlib.import_module(f"{rt.__name__}.integrations.langchain")
    middleware = integration.middleware({TOOL: _anoop}, context=lambda runtime: runtime.context)
    runtime = ToolRuntime(state={}, context=CONTEXT, config={}, stream_writer=lambda _: None,
                          tool_call_id="c", store=None)
    request = ToolCallRequest(tool_call={"name": TOOL, "args": ARGS, "id": "c"},
                              tool=middleware.tools[0], state={}, runtime=runtime)

    async def handler(_: Any) -> Any:
        raise AssertionError("toolc's own tools never reach the tool node's handler")

    return lambda: middleware.awrap_tool_call(request, handler)


INTEGRATIONS: dict[str, Callable[[Any], Callable[[], Awaitable[object]]]] = {
    "pydantic_ai": _pydantic_ai,
    "openai_agents": _openai_agents,
    "langchain": _langchain,
}


def measure(rt: Any, calls: int, samples: int) -> dict[str, Any]:
    """``wrap``'s acall and each integration's entry point, timed in turns in this process."""
    tools = rt.wrap(rt.resolve(**CONTEXT), {TOOL: _anoop},
                    context=rt.CallContext(agent_id="coder", model_provider="openai"))
    variants: dict[str, Callable[[], Awaitable[object]]] = {
        "wrap_async": lambda: tools.acall(TOOL, ARGS, tool_call_id="c")}
    out: dict[str, Any] = {"tool": TOOL, "calls": calls, "samples": samples}
    for name, make in INTEGRATIONS.items():
        try:
            variants[name] = make(rt)
        except ImportError as exc:  # the framework's extra is not installed
            out[name] = {"error": f"not installed: {exc.name}"}
    for call in variants.values():
        asyncio.run(_first(call))  # first use: models, the frameworks' lazy parts, the memo
    gc.collect()
    timed = _time_rounds(variants, calls, samples)
    base = timed.pop("wrap_async")
    out["wrap_async"] = {"median_ns": round(statistics.median(base), 1),
                         "best_ns": round(min(base), 1)}
    for name, per_call in timed.items():
        out[name] = _stats(per_call, base)
    return out


async def _first(call: Callable[[], Awaitable[object]]) -> None:
    await call()


def worker(out: Path, calls: int, samples: int) -> None:
    sys.path.insert(0, str(out))
    rt = importlib.import_module("toolc_runtime")
    print(json.dumps(measure(rt, calls, samples), sort_keys=True))
