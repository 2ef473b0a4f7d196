"""toolc inside a pydantic-ai agent, offline: a ``FunctionModel`` plays the model.

    make build && .venv/bin/python examples/integrations/pydantic_ai_agent.py

One agent serves every request: the toolset asks ``context`` for the request on every step
(here it travels in ``deps``): the message the gateway received (``rt.Request``: routed as
OpenClaw routes it, the ops group's binding gives the coder) or resolve's keywords (the
viewer). So the coder in the ops group sees ``exec`` and a viewer does not. An allowlisted
command runs at once; one that needs approval ends the run with ``DeferredToolRequests``
carrying toolc's request, and the next run resumes with the operator's decision.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(
    0, os.environ.get("TOOLC_BUILD", str(Path(__file__).resolve().parents[2] / "build"))
)
import toolc_runtime as rt
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests
from toolc_runtime.integrations import pydantic_ai as toolc_pydantic_ai

# -- the application's tools (stand-ins: nothing is read or run) --------------------------------


def read(args: dict[str, Any], call: rt.ToolCall) -> str:
    return f"contents of {args.get('path') or args.get('file_path')}"


def exec_(args: dict[str, Any], call: rt.ToolCall) -> dict[str, Any]:
    print(f"  [exec] {args['command']} (in {args['workdir']})")
    return {"status": "ok", "stdout": f"(would run: {args['command']})", "exitCode": 0}


# -- a scripted model: each turn, the calls to make and what the request listed ------------------
SCRIPT: list[list[tuple[str, dict[str, Any]]]] = []


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    print(f"  model sees: {', '.join(t.name for t in info.function_tools)}")
    if not SCRIPT:
        return ModelResponse(parts=[TextPart("Done.")])
    calls = SCRIPT.pop(0)
    return ModelResponse(
        parts=[ToolCallPart(n, a, tool_call_id=f"call_{n}_{len(SCRIPT)}") for n, a in calls]
    )


approvals = rt.ApprovalManager(timeout_s=600)
toolset = toolc_pydantic_ai.toolset(
    {"read": read, "exec": exec_},
    context=lambda ctx: ctx.deps,
    approvals=approvals,
    workspace=str(Path.cwd()),
)
agent = Agent(FunctionModel(model), toolsets=[toolset], output_type=[str, DeferredToolRequests])

# a message in the Telegram ops group from sender 42, the owner
OPS = rt.Request(
    channel="telegram",
    peer=("group", "-100123"),
    sender_id="42",
    sender_is_owner=True,
    model_provider="openai",
)
VIEWER = {"agent_id": "viewer", "model_provider": "openai"}


def main() -> None:
    print("viewer:")
    print(f"  -> {agent.run_sync('Read the notes.', deps=VIEWER).output}")

    print("coder in the ops group:")
    SCRIPT.extend([[("exec", {"command": "ls"})], [("exec", {"command": "rm -r build"})]])
    result = agent.run_sync("Clean up.", deps=OPS)
    paused = result.output
    assert isinstance(paused, DeferredToolRequests)
    for part in paused.approvals:
        request = paused.metadata[part.tool_call_id]
        print(f"  [approval] {request['command']!r}: {request['reason']} (cwd {request['cwd']})")
    decisions: dict[str, rt.Decision] = {p.tool_call_id: "allow-once" for p in paused.approvals}
    results = toolc_pydantic_ai.results(paused, decisions, approvals=approvals)
    resumed = agent.run_sync(
        message_history=result.all_messages(), deferred_tool_results=results, deps=OPS
    )
    print(f"  -> {resumed.output}")


if __name__ == "__main__":
    main()
