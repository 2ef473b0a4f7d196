"""toolc inside an OpenAI Agents SDK agent, offline: a ``ScriptedModel`` plays the model.

    make build && .venv/bin/python examples/integrations/openai_agents_agent.py

One agent serves every request: each tool is enabled per run for the request its context
stands for (here the run's ``context`` is that request: the message the gateway received,
``rt.Request``, routed as OpenClaw routes it, the ops group's binding gives the coder; or
resolve's keywords, the viewer), so the coder in the ops group sees ``exec`` and a viewer
does not. An allowlisted command runs at once; one that
needs approval interrupts the run with toolc's request, and the run resumes once the
operator decided.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(
    0, os.environ.get("TOOLC_BUILD", str(Path(__file__).resolve().parents[2] / "build"))
)
import toolc_runtime as rt
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from toolc_runtime.integrations import openai_agents as toolc_agents

set_tracing_disabled(True)  # offline: no trace export


def read(args: dict[str, Any], call: rt.ToolCall) -> str:
    return f"contents of {args.get('path') or args.get('file_path')}"


def exec_(args: dict[str, Any], call: rt.ToolCall) -> dict[str, Any]:
    print(f"  [exec] {args['command']} (in {args['workdir']})")
    return {"status": "ok", "stdout": f"(would run: {args['command']})", "exitCode": 0}


approvals = rt.ApprovalManager(timeout_s=600)
tools = toolc_agents.function_tools(
    {"read": read, "exec": exec_},
    context=lambda ctx: ctx.context,
    approvals=approvals,
    workspace=str(Path.cwd()),
)
# a message in the Telegram ops group from sender 42, the owner
OPS = rt.Request(
    channel="telegram", peer=("group", "-100123"), sender_id="42", sender_is_owner=True
)
VIEWER = {"agent_id": "viewer"}


def listed(model: ScriptedModel) -> str:
    first = model.first_call
    return ", ".join(t.name for t in first.tools) if first is not None else ""


async def main() -> None:
    config = toolc_agents.run_config()
    model = ScriptedModel([[assistant_message("Done.")]])
    result = await Runner.run(
        Agent(name="viewer", model=model, tools=tools),
        "Read the notes.",
        context=VIEWER,
        run_config=config,
    )
    print(f"viewer:\n  model sees: {listed(model)}\n  -> {result.final_output}")

    model = ScriptedModel(
        [
            [function_call("exec", {"command": "ls"}, call_id="call_1")],
            [function_call("exec", {"command": "rm -r build"}, call_id="call_2")],
            [assistant_message("Done.")],
        ]
    )
    agent = Agent(name="coder", model=model, tools=tools)
    print("coder in the ops group:")
    result = await Runner.run(agent, "Clean up.", context=OPS, run_config=config)
    print(f"  model sees: {listed(model)}")
    state = result.to_state()
    for item in result.interruptions:
        request = toolc_agents.approval_request(item, approvals) or {}
        print(f"  [approval] {request['command']!r}: {request['reason']} (cwd {request['cwd']})")
        toolc_agents.decide(state, item, "allow-once", approvals=approvals)
    result = await Runner.run(agent, state, run_config=config)
    print(f"  -> {result.final_output}")


if __name__ == "__main__":
    asyncio.run(main())
