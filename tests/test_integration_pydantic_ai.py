"""toolc_runtime.integrations.pydantic_ai end to end: a real pydantic-ai Agent driven by its
offline FunctionModel over contexts of the shipped definitions, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults

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
Step = list[tuple[str, dict[str, Any], str]]


class Script:
    """A FunctionModel script: each turn's calls; what each request listed; what came back."""

    def __init__(self, *turns: Step) -> None:
        self.turns = list(turns)
        self.listed: list[list[dict[str, Any]]] = []
        self.returned: list[Any] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.listed.append([{"name": t.name, "description": t.description,
                             "parameters": t.parameters_json_schema}
                            for t in info.function_tools])
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.returned += [p for p in last.parts
                              if isinstance(p, (ToolReturnPart, RetryPromptPart))]
        if not self.turns:
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(n, a, tool_call_id=i)
                                    for n, a, i in self.turns.pop(0)])


def agent_for(shipped: Shipped, script: Script, impls: dict[str, Any],
              **keywords: Any) -> Agent[dict[str, Any], Any]:
    toolset = shipped.integration("pydantic_ai").toolset(
        impls, context=lambda ctx: ctx.deps, **keywords)
    return Agent(FunctionModel(script), toolsets=[toolset],
                 output_type=[str, DeferredToolRequests])


def run(agent: Agent[dict[str, Any], Any], mode: str, deps: dict[str, Any],
        **keywords: Any) -> Any:
    prompt = None if "message_history" in keywords else "go"
    if mode == "sync":
        return agent.run_sync(prompt, deps=deps, **keywords)
    return asyncio.run(agent.run(prompt, deps=deps, **keywords))


def texts(script: Script) -> list[str]:
    return [p.model_response() if isinstance(p, RetryPromptPart) else str(p.content)
            for p in script.returned]


# -- 1: the model's request lists exactly the resolved tools, as the build defines them ------------
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("name", sorted(CONTEXTS))
def test_each_step_lists_the_resolved_tools(shipped: Shipped, name: str, provider: str) -> None:
    context = {**CONTEXTS[name], "model_provider": provider}
    script = Script()
    mode = "sync" if provider == "openai" else "async"
    run(agent_for(shipped, script, Recorder().implementations()), mode, context)
    dialect = shipped.rt.dialect_for(provider)
    assert script.listed == [expected_tools(shipped, context, dialect)]


def test_one_agent_serves_every_context(shipped: Shipped) -> None:
    script = Script()
    agent = agent_for(shipped, script, Recorder().implementations())
    for context in CONTEXTS.values():
        run(agent, "sync", context)
    assert [[t["name"] for t in listed] for listed in script.listed] == [
        [t["name"] for t in expected_tools(shipped, c, "openai")] for c in CONTEXTS.values()]


# -- messages in: the context callable may give the message; it is routed first ------------------
@pytest.mark.parametrize("form", ["Request", "mapping"])
def test_a_message_is_routed_first(shipped: Shipped, form: str) -> None:
    deps = message_request(shipped) if form == "Request" else {**MESSAGE, "run_id": "r1"}
    seen = Contexts()
    script = Script([("read", {"path": "notes.md"}, "c1")])
    run(agent_for(shipped, script, seen.implementations()), "sync", deps)
    assert script.listed[0] == expected_tools(shipped, OPS, "openai")
    [(name, context)] = seen.seen  # the call path's context: the route's agent and session
    assert (name, context.agent_id, context.session_key, context.sender_is_owner) == (
        "read", "coder", OPS_KEY, True)
    assert context.run_id == (None if form == "Request" else "r1")


def test_a_group_no_session_key_names_is_refused(shipped: Shipped) -> None:
    # resolve's keywords with the group but not the session key that names it: OpenClaw 2026.9
    # would ignore the group (and its restrictions); the integration refuses the request
    alone = {k: v for k, v in OPS.items() if k != "session_key"}
    with pytest.raises(shipped.rt.UntrustedGroupError, match="group_id='-100123'"):
        run(agent_for(shipped, Script(), Recorder().implementations()), "sync", alone)


# -- 2: a call outside the resolved set never runs; the run goes on ------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_a_tool_outside_the_set_is_refused(shipped: Shipped, mode: str) -> None:
    recorder = Recorder()
    outside = outside_tool(shipped)
    script = Script([("exec", {"command": "ls"}, "c1"), (outside, {}, "c2")])
    out = run(agent_for(shipped, script, recorder.implementations(asynchronous=mode == "async")),
              mode, OTHER)
    assert out.output == "done"
    assert recorder.ran == []
    # pydantic-ai refuses a name the step did not list before the toolset sees the call
    assert all("Unknown tool name: 'exec'" in t or f"Unknown tool name: '{outside}'" in t
               for t in texts(script))


def test_the_toolset_itself_refuses_outside_the_set(shipped: Shipped) -> None:
    # the framework's own listing is not the only guard: call_tool resolves again
    recorder = Recorder()
    toolset = shipped.integration("pydantic_ai").toolset(
        recorder.implementations(), context=lambda ctx: ctx.deps)

    class Ctx:
        deps = OTHER
        tool_call_id = "c1"
        tool_call_approved = True
        tool_call_metadata = None

    with pytest.raises(ToolFailed, match="Tool exec is not available to this request"):
        asyncio.run(toolset.call_tool("exec", {"command": "ls"}, Ctx(), None))
    assert recorder.ran == []


# -- 3: wrap's chain: arguments, hooks, abort, error results --------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_bad_arguments_never_reach_the_implementation(shipped: Shipped, mode: str) -> None:
    recorder = Recorder()
    script = Script([("read", {"path": 5}, "c1"), ("exec", {"command": ["ls"]}, "c2"),
                     ("read", {"path": "notes.md"}, "c3")])
    impls = recorder.implementations(asynchronous=mode == "async")
    out = run(agent_for(shipped, script, impls), mode, OPS)
    assert out.output == "done"
    assert recorder.names() == ["read"]
    returned = texts(script)
    assert '"status": "error"' in returned[0] and '"tool": "read"' in returned[0]
    assert '"tool": "exec"' in returned[1]


@pytest.mark.parametrize("mode", MODES)
def test_hooks_block_and_abort_stops(shipped: Shipped, mode: str) -> None:
    rt = shipped.rt
    recorder = Recorder()
    hooks = rt.HookRunner()
    hooks.before_tool_call(lambda e, c: rt.BeforeToolCallResult(block=True, block_reason="no")
                           if e.tool_name == "write" else None)
    script = Script([("write", {"path": "a", "content": "b"}, "c1")])
    impls = recorder.implementations(asynchronous=mode == "async")
    run(agent_for(shipped, script, impls, hooks=hooks), mode, OPS)
    assert recorder.ran == [] and "no" in texts(script)[0]

    signal = rt.AbortSignal()
    signal.abort("stop")
    script = Script([("read", {"path": "a"}, "c1")])
    with pytest.raises(rt.AbortError):
        run(agent_for(shipped, script, impls, signal=signal), mode, OPS)
    assert recorder.ran == []


# -- 4, 5: exec approvals --------------------------------------------------------------------------
def approval_agent(shipped: Shipped, recorder: Recorder, mode: str, **keywords: Any
                   ) -> tuple[Callable[..., Any], Any, list[str]]:
    rt = shipped.rt
    approvals = rt.ApprovalManager(timeout_s=600)
    hooks, seen = hook_log(rt)
    script = Script([("exec", {"command": "rm -r build"}, "c1")])
    agent = agent_for(shipped, script, recorder.implementations(asynchronous=mode == "async"),
                      approvals=approvals, hooks=hooks, **keywords)
    return (lambda **kw: run(agent, mode, OPS, **kw)), approvals, seen


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("decision", ["allow-once", "allow-always", "deny"])
def test_exec_approval_pauses_and_resumes(shipped: Shipped, tmp_path: Any, mode: str,
                                          decision: str) -> None:
    recorder = Recorder()
    go, approvals, seen = approval_agent(shipped, recorder, mode, workspace=str(tmp_path))
    first = go()
    paused = first.output
    assert isinstance(paused, DeferredToolRequests) and recorder.ran == []
    request = paused.metadata["c1"]
    assert request["command"] == "rm -r build" and request["executable"] == "/usr/bin/rm"
    assert request["cwd"] == str(tmp_path.resolve())
    assert request["reason"] == "allowlist miss: no pattern matches /usr/bin/rm"
    assert seen == ["rm -r build"]  # the hook ran before the pause

    results = shipped.integration("pydantic_ai").results(paused, {"c1": decision},
                                                         approvals=approvals)
    second = go(message_history=first.all_messages(), deferred_tool_results=results)
    assert second.output == "done"
    if decision == "deny":
        assert recorder.ran == []
    else:  # once, with exactly the evaluated request (the hook's timeout included)
        assert recorder.ran == [("exec", {"command": "rm -r build", "timeoutSeconds": 5,
                                          "workdir": str(tmp_path.resolve())})]
    assert seen == ["rm -r build"]  # not again after the person decided
    learned = approvals.allowlist("coder")
    assert learned == (("/usr/bin/rm",) if decision == "allow-always" else ())


def test_an_approval_runs_once_and_only_for_its_request(shipped: Shipped, tmp_path: Any) -> None:
    recorder = Recorder()
    go, approvals, _ = approval_agent(shipped, recorder, "sync", workspace=str(tmp_path))
    first = go()
    pai = shipped.integration("pydantic_ai")
    results = pai.results(first.output, {"c1": "allow-once"}, approvals=approvals)
    go(message_history=first.all_messages(), deferred_tool_results=results)
    assert len(recorder.ran) == 1
    # the same approval handed in again runs nothing more
    again = go(message_history=first.all_messages(), deferred_tool_results=results)
    assert len(recorder.ran) == 1 and again.output == "done"

    # a decision bound to another request's digest approves nothing
    recorder.ran.clear()
    go, approvals, _ = approval_agent(shipped, recorder, "sync", workspace=str(tmp_path))
    first = go()
    with pytest.raises(ValueError, match="no pending approval of this request"):
        pai.results(replace(first.output, metadata={"c1": {"digest": "0" * 64}}),
                    {"c1": "allow-once"}, approvals=approvals)
    forged = DeferredToolResults(approvals={"c1": True},
                                 metadata={"c1": {"toolc": {"digest": "0" * 64,
                                                            "decision": "allow-always"}}})
    go(message_history=first.all_messages(), deferred_tool_results=forged)
    assert recorder.ran == [] and approvals.allowlist("coder") == ()


@pytest.mark.parametrize("mode", MODES)
def test_an_allowlisted_command_runs_at_once(shipped: Shipped, tmp_path: Any, mode: str) -> None:
    rt = shipped.rt
    recorder = Recorder()
    script = Script([("exec", {"command": "ls -la"}, "c1")])
    agent = agent_for(shipped, script, recorder.implementations(asynchronous=mode == "async"),
                      approvals=rt.ApprovalManager(), workspace=str(tmp_path))
    assert run(agent, mode, OPS).output == "done"
    assert recorder.names() == ["exec"]


def test_the_example_runs(shipped: Shipped) -> None:
    out = run_example(shipped, "pydantic_ai_agent")
    assert all(line in out for line in EXAMPLE_LINES)
    assert out.count("[exec] ") == 2 and out.rstrip().endswith("-> Done.")
