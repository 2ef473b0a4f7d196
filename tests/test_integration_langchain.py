"""toolc_runtime.integrations.langchain end to end: a real LangChain agent (create_agent on
LangGraph) driven by its offline GenericFakeChatModel over contexts of the shipped
definitions, sync (invoke) and async (ainvoke)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import Field, ValidationError

from tests.integrations_support import (
    CONTEXTS,
    EXAMPLE_LINES,
    MESSAGE,
    OPS,
    OPS_KEY,
    OTHER,
    Contexts,
    Recorder,
    Shipped,
    expected_tools,
    hook_log,
    message_request,
    outside_tool,
    run_example,
)

MODES = ["sync", "async"]
_threads = itertools.count()


class FakeModel(GenericFakeChatModel):
    """The offline model with the bind_tools an agent needs: it records what it is shown."""

    bound: list[list[dict[str, Any]]] = Field(default_factory=list)

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        self.bound.append([convert_to_openai_tool(t)["function"] for t in tools])
        return self


def model_for(*turns: list[tuple[str, dict[str, Any], str]]) -> FakeModel:
    messages = [AIMessage("", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in t])
                for t in turns]
    return FakeModel(messages=iter([*messages, AIMessage("done")]))


class Session:
    """One agent thread: invoke or ainvoke, then resume with a decision."""

    def __init__(self, shipped: Shipped, model: FakeModel, impls: dict[str, Any], mode: str,
                 context: dict[str, Any], **keywords: Any) -> None:
        middleware = shipped.integration("langchain").middleware(
            impls, context=lambda runtime: runtime.context, **keywords)
        self.agent = create_agent(model, middleware=[middleware], checkpointer=InMemorySaver())
        self.mode = mode
        self.context = context
        self.config: Any = {"configurable": {"thread_id": f"t{next(_threads)}"}}

    def send(self, value: Any) -> dict[str, Any]:
        if self.mode == "sync":
            out: dict[str, Any] = self.agent.invoke(value, self.config, context=self.context)
        else:
            out = asyncio.run(self.agent.ainvoke(value, self.config, context=self.context))
        return out

    def start(self) -> dict[str, Any]:
        return self.send({"messages": [("user", "go")]})


def tool_messages(out: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def shown(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": t["name"], "description": t["description"], "parameters": t["parameters"]}
            for t in tools]


# -- 1 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CONTEXTS))
def test_each_model_request_lists_the_resolved_tools(shipped: Shipped, name: str,
                                                     mode: str) -> None:
    model = model_for()
    Session(shipped, model, Recorder().implementations(), mode, CONTEXTS[name]).start()
    assert [shown(b) for b in model.bound] == [expected_tools(shipped, CONTEXTS[name], "openai")]


# -- messages in: the invocation's context may be the message; it is routed first ---------------
@pytest.mark.parametrize("form", ["Request", "mapping"])
def test_a_message_is_routed_first(shipped: Shipped, form: str) -> None:
    context = message_request(shipped) if form == "Request" else {**MESSAGE, "run_id": "r1"}
    seen = Contexts()
    model = model_for([("read", {"path": "notes.md"}, "c1")])
    Session(shipped, model, seen.implementations(), "sync", context).start()
    assert shown(model.bound[0]) == expected_tools(shipped, OPS, "openai")
    [(name, call)] = seen.seen  # the call path's context: the route's agent and session
    assert (name, call.agent_id, call.session_key, call.sender_is_owner) == (
        "read", "coder", OPS_KEY, True)
    assert call.run_id == (None if form == "Request" else "r1")


def test_a_group_no_session_key_names_is_refused(shipped: Shipped) -> None:
    # resolve's keywords with the group but not the session key that names it: OpenClaw 2026.9
    # would ignore the group (and its restrictions); the integration refuses the request
    alone = {k: v for k, v in OPS.items() if k != "session_key"}
    with pytest.raises(shipped.rt.UntrustedGroupError, match="group_id='-100123'"):
        Session(shipped, model_for(), Recorder().implementations(), "sync", alone).start()


# -- 2 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_a_tool_outside_the_set_is_refused(shipped: Shipped, mode: str) -> None:
    # the tool node runs any registered tool the model names: the middleware refuses it
    recorder = Recorder()
    outside = outside_tool(shipped)
    model = model_for([("exec", {"command": "ls"}, "c1"), (outside, {}, "c2")])
    impls = recorder.implementations(asynchronous=mode == "async")
    out = Session(shipped, model, impls, mode, OTHER).start()
    assert out["messages"][-1].content == "done" and recorder.ran == []
    refused = tool_messages(out)
    assert [m.status for m in refused] == ["error", "error"]
    assert "Tool exec is not available to this request" in str(refused[0].content)
    assert f"Tool {outside} is not available to this request" in str(refused[1].content)


# -- 3 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_bad_arguments_never_reach_the_implementation(shipped: Shipped, mode: str) -> None:
    recorder = Recorder()
    model = model_for([("read", {"path": 5}, "c1"), ("exec", {"command": ["ls"]}, "c2"),
                       ("read", {"path": "notes.md"}, "c3")])
    impls = recorder.implementations(asynchronous=mode == "async")
    out = Session(shipped, model, impls, mode, OPS).start()
    assert recorder.names() == ["read"]
    assert [m.status for m in tool_messages(out)] == ["error", "error", "success"]


@pytest.mark.parametrize("mode", MODES)
def test_hooks_block_and_abort_stops(shipped: Shipped, mode: str) -> None:
    rt = shipped.rt
    recorder = Recorder()
    hooks = rt.HookRunner()
    hooks.before_tool_call(lambda e, c: rt.BeforeToolCallResult(block=True, block_reason="no")
                           if e.tool_name == "write" else None)
    model = model_for([("write", {"path": "a", "content": "b"}, "c1")])
    impls = recorder.implementations(asynchronous=mode == "async")
    out = Session(shipped, model, impls, mode, OPS, hooks=hooks).start()
    [blocked] = tool_messages(out)
    assert recorder.ran == [] and blocked.status == "error" and '"error": "no"' in blocked.content

    signal = rt.AbortSignal()
    signal.abort("stop")
    model = model_for([("read", {"path": "a"}, "c1")])
    with pytest.raises(rt.AbortError):
        Session(shipped, model, impls, mode, OPS, signal=signal).start()
    assert recorder.ran == []


# -- 4, 5 -----------------------------------------------------------------------------------------
DECISIONS = {"allow-once": {"type": "approve"}, "allow-always": {"type": "approve", "always": True},
             "deny": {"type": "reject", "message": "not now"}}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("decision", sorted(DECISIONS))
def test_exec_approval_pauses_and_resumes(shipped: Shipped, tmp_path: Any, mode: str,
                                          decision: str) -> None:
    rt = shipped.rt
    recorder = Recorder()
    approvals = rt.ApprovalManager(timeout_s=600)
    hooks, seen = hook_log(rt)
    model = model_for([("exec", {"command": "rm -r build"}, "c1")])
    session = Session(shipped, model, recorder.implementations(asynchronous=mode == "async"),
                      mode, OPS, approvals=approvals, hooks=hooks, workspace=str(tmp_path))
    out = session.start()
    [pause] = out["__interrupt__"]
    assert recorder.ran == [] and seen == ["rm -r build"]  # the hook ran before the pause
    # HumanInTheLoopMiddleware's shape, with toolc's request
    [action] = pause.value["action_requests"]
    assert pause.value["review_configs"] == [{"action_name": "exec",
                                              "allowed_decisions": ["approve", "reject"]}]
    evaluated = {"command": "rm -r build", "timeoutSeconds": 5, "workdir": str(tmp_path.resolve())}
    assert action["name"] == "exec" and action["args"] == evaluated
    request = action["toolc"]
    assert request["command"] == "rm -r build" and request["executable"] == "/usr/bin/rm"
    assert request["cwd"] == str(tmp_path.resolve())
    assert request["reason"] == "allowlist miss: no pattern matches /usr/bin/rm"

    out = session.send(Command(resume={"decisions": [DECISIONS[decision]]}))
    assert out["messages"][-1].content == "done"
    [result] = tool_messages(out)
    if decision == "deny":
        assert recorder.ran == [] and result.status == "error"
        assert "Exec denied (user-denied): rm -r build" in result.content
    else:
        assert recorder.ran == [("exec", evaluated)] and result.status == "success"
    assert seen == ["rm -r build"]  # not again on the resumed pass
    assert approvals.allowlist("coder") == (
        ("/usr/bin/rm",) if decision == "allow-always" else ())


def test_an_edit_is_refused(shipped: Shipped, tmp_path: Any) -> None:
    # the approval is for the request that was evaluated, not for another one: the answer is
    # refused before LangGraph keeps it, and the pause takes another
    recorder = Recorder()
    model = model_for([("exec", {"command": "rm -r build"}, "c1")])
    session = Session(shipped, model, recorder.implementations(), "sync", OPS,
                      approvals=shipped.rt.ApprovalManager(), workspace=str(tmp_path))
    session.start()
    edit = {"type": "edit", "edited_action": {"name": "exec", "args": {"command": "rm -rf /"}}}
    with pytest.raises(ValidationError, match="toolc does not take edit decisions"):
        session.send(Command(resume={"decisions": [edit]}))
    assert recorder.ran == []
    out = session.send(Command(resume={"decisions": [{"type": "reject"}]}))
    assert recorder.ran == [] and tool_messages(out)[0].status == "error"


@pytest.mark.parametrize("mode", MODES)
def test_an_allowlisted_command_runs_at_once(shipped: Shipped, tmp_path: Any, mode: str) -> None:
    recorder = Recorder()
    model = model_for([("exec", {"command": "ls -la"}, "c1")])
    out = Session(shipped, model, recorder.implementations(asynchronous=mode == "async"), mode,
                  OPS, approvals=shipped.rt.ApprovalManager(), workspace=str(tmp_path)).start()
    assert "__interrupt__" not in out and recorder.names() == ["exec"]


def test_the_example_runs(shipped: Shipped) -> None:
    out = run_example(shipped, "langchain_agent")
    assert all(line in out for line in EXAMPLE_LINES)
    assert out.count("[exec] ") == 2 and out.rstrip().endswith("-> Done.")
