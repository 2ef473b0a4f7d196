"""A model's view of the framework integrations and serve-mcp, tried where the name it is
shown for a tool is not toolc's name (Anthropic is shown ``Read`` for ``read``; an MCP
client an upstream's own name).

Real frameworks driven by their offline models over the shipped definitions (the Agents SDK's
``ScriptedModel``, pydantic-ai's ``FunctionModel``, LangChain's fake chat model) and a real
``toolc serve-mcp`` with the MCP SDK's stdio client. What they hold: every message about a
call names the tool as the model called it (its wire name in the request's dialect), never
toolc's name for it, and a tool the model is shown is never said to be unavailable: a name
that is no tool's in the dialect is "not found" (or the framework's own word for it), a tool
outside the request's set "not available to this request".
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic_ai.exceptions import ToolFailed
from toolc.api import build

from tests.helpers import ROOT, write_definitions
from tests.integrations_support import CONTEXTS, OPS, Recorder, Shipped
from tests.test_integration_langchain import FakeModel

set_tracing_disabled(True)
MODES = ["sync", "async"]
# read is in OPS's set and not in the announcements group's; Anthropic is shown it as Read
HIDDEN = CONTEXTS["announcements"]
NOT_AVAILABLE = "is not available to this request"


def _error(text: str) -> str:
    """The "error" of a standard error result's text (its JSON), else the whole text."""
    try:
        return str(json.loads(text)["error"])
    except (ValueError, KeyError, TypeError):
        return text


# -- decode_call, the adapters' way in -----------------------------------------------------------
def test_decode_call_names_a_refused_tool_by_its_wire_name(shipped: Shipped) -> None:
    rt = shipped.rt
    hidden = rt.resolve(**HIDDEN)
    with pytest.raises(rt.ToolNotPermittedError) as refused:
        rt.decode_call("Read", {"file_path": "a"}, dialect="anthropic", toolset=hidden)
    assert str(refused.value) == f"Tool Read {NOT_AVAILABLE}"
    with pytest.raises(rt.UnknownToolError) as unknown:
        rt.decode_call("read", {"path": "a"}, dialect="anthropic", toolset=rt.resolve(**OPS))
    assert str(unknown.value) == "Tool read not found (dialect anthropic)"
    with pytest.raises(rt.InvalidArgumentsError, match=r"^Read: arguments are not valid JSON"):
        rt.decode_call("Read", "{", dialect="anthropic")


# -- OpenAI Agents SDK, tools listed for Anthropic ------------------------------------------------
def _agents_run(shipped: Shipped, mode: str, context: dict[str, Any],
                *calls: tuple[str, dict[str, Any], str]) -> tuple[list[str], Recorder]:
    oa = shipped.integration("openai_agents")
    recorder = Recorder()
    tools = oa.function_tools(recorder.implementations(asynchronous=mode == "async"),
                              context=lambda ctx: ctx.context, provider="anthropic")
    model = ScriptedModel([[function_call(n, a, call_id=i)] for n, a, i in calls]
                          + [[assistant_message("done")]])
    agent = Agent(name="claude", model=model, tools=tools)
    if mode == "sync":
        out = Runner.run_sync(agent, "go", context=context, run_config=oa.run_config())
    else:
        out = asyncio.run(Runner.run(agent, "go", context=context, run_config=oa.run_config()))
    assert out.final_output == "done"
    last = model.calls[-1].input
    texts = [str(i["output"]) for i in last
             if isinstance(i, dict) and i.get("type") == "function_call_output"]
    return texts, recorder


@pytest.mark.parametrize("mode", MODES)
def test_agents_sdk_never_calls_a_shown_tool_unavailable(shipped: Shipped, mode: str) -> None:
    # OPS may use read, shown as Read: "read" is no tool's name here, not an unavailable tool
    texts, recorder = _agents_run(shipped, mode, OPS, ("read", {"path": "a"}, "c1"),
                                  ("Read", {"file_path": "a"}, "c2"))
    assert NOT_AVAILABLE not in texts[0] and "not found" in texts[0]
    assert "read" in texts[0]
    assert recorder.ran == [("read", {"path": "a"})]


@pytest.mark.parametrize("mode", MODES)
def test_agents_sdk_names_a_refused_tool_by_its_wire_name(shipped: Shipped, mode: str) -> None:
    texts, recorder = _agents_run(shipped, mode, HIDDEN, ("Read", {"file_path": "a"}, "c1"))
    assert _error(texts[0]) == f"Tool Read {NOT_AVAILABLE}" and recorder.ran == []


def test_agents_sdk_tool_itself_refuses_by_its_wire_name(shipped: Shipped) -> None:
    # on_invoke_tool resolves again (not only is_enabled): its refusal names Read too
    recorder = Recorder()
    tools = shipped.integration("openai_agents").function_tools(
        recorder.implementations(), context=lambda ctx: ctx.context, provider="anthropic")
    [read] = [t for t in tools if t.name == "Read"]
    ctx = ToolContext(context=HIDDEN, tool_name="Read", tool_call_id="c1",
                      tool_arguments='{"path": "a"}')
    text = asyncio.run(read.on_invoke_tool(ctx, '{"path": "a"}'))
    assert _error(text) == f"Tool Read {NOT_AVAILABLE}" and recorder.ran == []
    bad = asyncio.run(read.on_invoke_tool(
        ToolContext(context=OPS, tool_name="Read", tool_call_id="c2", tool_arguments="{"),
        "{"))
    assert '"tool": "Read"' in bad and _error(bad).startswith("Read: arguments are not valid")


# -- pydantic-ai, a context whose model provider is Anthropic ----------------------------------
class _Ctx:
    def __init__(self, deps: dict[str, Any], call_id: str) -> None:
        self.deps = deps
        self.tool_call_id = call_id
        self.tool_call_approved = False
        self.tool_call_metadata = None


def test_pydantic_ai_names_tools_as_the_model_calls_them(shipped: Shipped) -> None:
    recorder = Recorder()
    toolset = shipped.integration("pydantic_ai").toolset(
        recorder.implementations(), context=lambda ctx: ctx.deps)
    hidden = {**HIDDEN, "model_provider": "anthropic"}
    ops = {**OPS, "model_provider": "anthropic"}
    with pytest.raises(ToolFailed) as refused:
        asyncio.run(toolset.call_tool("Read", {"file_path": "a"}, _Ctx(hidden, "c1"), None))
    assert _error(refused.value.message) == f"Tool Read {NOT_AVAILABLE}"
    with pytest.raises(ToolFailed) as unknown:
        asyncio.run(toolset.call_tool("read", {"path": "a"}, _Ctx(ops, "c2"), None))
    assert _error(unknown.value.message) == "Tool read not found (dialect anthropic)"
    with pytest.raises(ToolFailed) as invalid:
        asyncio.run(toolset.call_tool("Read", {"path": 5}, _Ctx(ops, "c3"), None))
    assert '"tool": "Read"' in invalid.value.message
    assert _error(invalid.value.message).startswith("Invalid arguments for Read: path:")
    assert recorder.ran == []


# -- LangChain, tools registered for Anthropic ---------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_langchain_names_a_refused_tool_by_its_wire_name(shipped: Shipped, mode: str) -> None:
    recorder = Recorder()
    middleware = shipped.integration("langchain").middleware(
        recorder.implementations(asynchronous=mode == "async"),
        context=lambda runtime: runtime.context, provider="anthropic")
    calls = [{"name": "Read", "args": {"file_path": "a"}, "id": "c1"}]
    model = FakeModel(messages=iter([AIMessage("", tool_calls=calls), AIMessage("done")]))
    agent = create_agent(model, middleware=[middleware], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": f"names-{mode}"}}
    start = {"messages": [("user", "go")]}
    if mode == "sync":
        out = agent.invoke(start, config, context=HIDDEN)
    else:
        out = asyncio.run(agent.ainvoke(start, config, context=HIDDEN))
    [message] = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert message.status == "error" and recorder.ran == []
    assert _error(str(message.content)) == f"Tool Read {NOT_AVAILABLE}"


# -- serve-mcp: a tool whose MCP name is not toolc's (an imported upstream's own name) -----------
def test_serve_mcp_names_tools_as_the_client_calls_them(tmp_path: Path) -> None:
    nothing = {"type": "object", "properties": {}}
    defs = write_definitions(tmp_path / "defs", {"tools.yaml": {
        "catalog": [
            {"name": "echo", "description": "Echo.", "parameters": nothing},
            {"name": "get_weather", "description": "Weather.", "parameters": nothing,
             "wireNames": {"mcp": "getWeather"}}],
        "agents": {"list": [{"id": "a"}, {"id": "b", "tools": {"deny": ["get_weather"]}}]}}})
    out = tmp_path / "build"
    build(defs, out)

    async def call(agent: str) -> str:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "toolc.cli", "serve-mcp", "--build", str(out), "--agent", agent,
                  "--impl", "tests.mcp_support.served:IMPLEMENTATIONS"],
            cwd=str(ROOT), env={"PYTHONPATH": os.pathsep.join(sys.path)})
        with (tmp_path / f"{agent}.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("getWeather", {})
        assert isinstance(result, types.CallToolResult) and result.is_error
        [block] = result.content
        assert isinstance(block, types.TextContent)
        return block.text

    served = asyncio.run(call("a"))  # in a's set, no implementation in this process
    assert _error(served) == "Tool getWeather has no implementation on this server"
    assert '"tool": "getWeather"' in served
    denied = asyncio.run(call("b"))
    assert _error(denied) == f"Tool getWeather {NOT_AVAILABLE}"
    assert '"tool": "getWeather"' in denied
