"""toolc inside a LangChain agent, offline: ``GenericFakeChatModel`` plays the model.

    make build && .venv/bin/python examples/integrations/langchain_agent.py

One agent serves every request: the middleware registers toolc's tools and narrows each
model request to the tools of the request the invocation's ``context`` stands for (the
message the gateway received, ``rt.Request``, routed as OpenClaw routes it, the ops group's
binding gives the coder; or resolve's keywords, the viewer), so the coder in the ops group
sees ``exec`` and a viewer does not. An allowlisted command runs at
once; one that needs approval interrupts the graph with ``HumanInTheLoopMiddleware``'s
request shape, and ``Command(resume={"decisions": [...]})`` goes on.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(
    0, os.environ.get("TOOLC_BUILD", str(Path(__file__).resolve().parents[2] / "build"))
)
import toolc_runtime as rt
from langchain.agents import create_agent
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from toolc_runtime.integrations import langchain as toolc_langchain


class ScriptedChatModel(GenericFakeChatModel):
    """The fake chat model, with the ``bind_tools`` an agent needs: it prints what it is
    shown and answers from its script."""

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        names = [t.name if isinstance(t, BaseTool) else str(t) for t in tools]
        print(f"  model sees: {', '.join(names)}")
        return self


def read(args: dict[str, Any], call: rt.ToolCall) -> str:
    return f"contents of {args.get('path') or args.get('file_path')}"


def exec_(args: dict[str, Any], call: rt.ToolCall) -> dict[str, Any]:
    print(f"  [exec] {args['command']} (in {args['workdir']})")
    return {"status": "ok", "stdout": f"(would run: {args['command']})", "exitCode": 0}


approvals = rt.ApprovalManager(timeout_s=600)
toolc = toolc_langchain.middleware(
    {"read": read, "exec": exec_},
    context=lambda runtime: runtime.context,
    approvals=approvals,
    workspace=str(Path.cwd()),
)
# a message in the Telegram ops group from sender 42, the owner
OPS = rt.Request(
    channel="telegram", peer=("group", "-100123"), sender_id="42", sender_is_owner=True
)
VIEWER = {"agent_id": "viewer"}


def agent_for(*turns: AIMessage) -> Any:
    model = ScriptedChatModel(messages=iter([*turns, AIMessage("Done.")]))
    return create_agent(model, middleware=[toolc], checkpointer=InMemorySaver())


def main() -> None:
    config: RunnableConfig = {"configurable": {"thread_id": "viewer"}}
    print("viewer:")
    out = agent_for().invoke({"messages": [("user", "Read the notes.")]}, config, context=VIEWER)
    print(f"  -> {out['messages'][-1].content}")

    print("coder in the ops group:")
    agent = agent_for(
        AIMessage("", tool_calls=[{"name": "exec", "args": {"command": "ls"}, "id": "call_1"}]),
        AIMessage(
            "", tool_calls=[{"name": "exec", "args": {"command": "rm -r build"}, "id": "call_2"}]
        ),
    )
    config = {"configurable": {"thread_id": "ops"}}
    out = agent.invoke({"messages": [("user", "Clean up.")]}, config, context=OPS)
    for pause in out["__interrupt__"]:
        for action in pause.value["action_requests"]:
            request = action["toolc"]
            print(
                f"  [approval] {request['command']!r}: {request['reason']} (cwd {request['cwd']})"
            )
    resume: Command[Any] = Command(resume={"decisions": [{"type": "approve"}]})
    out = agent.invoke(resume, config, context=OPS)
    print(f"  -> {out['messages'][-1].content}")


if __name__ == "__main__":
    main()
