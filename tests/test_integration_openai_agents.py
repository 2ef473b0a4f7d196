"""toolc_runtime.integrations.openai_agents end to end: a real Agents SDK agent driven by its
offline ScriptedModel over contexts of the shipped definitions, sync and async."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.exceptions import UserError
from agents.testing import ScriptedModel, assistant_message, function_call

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
set_tracing_disabled(True)


def model_for(*turns: list[tuple[str, dict[str, Any], str]]) -> ScriptedModel:
    return ScriptedModel([*([function_call(n, a, call_id=i) for n, a, i in t] for t in turns),
                          [assistant_message("done")]])


def agent_for(shipped: Shipped, model: ScriptedModel, impls: dict[str, Any],
              **keywords: Any) -> Agent[Any]:
    tools = shipped.integration("openai_agents").function_tools(
        impls, context=lambda ctx: ctx.context, **keywords)
    return Agent(name="toolc", model=model, tools=tools)


def run(shipped: Shipped, agent: Agent[Any], mode: str, start: Any,
        context: dict[str, Any] | None = None) -> Any:
    config = shipped.integration("openai_agents").run_config()
    if mode == "sync":
        return Runner.run_sync(agent, start, context=context, run_config=config)
    return asyncio.run(Runner.run(agent, start, context=context, run_config=config))


def listed(model: ScriptedModel) -> list[list[dict[str, Any]]]:
    return [[{"name": t.name, "description": t.description,
              "parameters": t.params_json_schema} for t in call.tools] for call in model.calls]


def outputs(model: ScriptedModel) -> list[str]:
    last = model.calls[-1].input
    return [str(i["output"]) for i in last
            if isinstance(i, dict) and i.get("type") == "function_call_output"]


# -- 1 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CONTEXTS))
def test_each_run_lists_the_resolved_tools(shipped: Shipped, name: str, mode: str) -> None:
    model = model_for()
    run(shipped, agent_for(shipped, model, Recorder().implementations()), mode, "go",
        CONTEXTS[name])
    assert listed(model) == [expected_tools(shipped, CONTEXTS[name], "openai", "responses")]


# -- messages in: the run's context may be the message; it is routed first -----------------------
@pytest.mark.parametrize("form", ["Request", "mapping"])
def test_a_message_is_routed_first(shipped: Shipped, form: str) -> None:
    context = message_request(shipped) if form == "Request" else {**MESSAGE, "run_id": "r1"}
    seen = Contexts()
    model = model_for([("read", {"path": "notes.md"}, "c1")])
    run(shipped, agent_for(shipped, model, seen.implementations()), "sync", "go", context)
    assert listed(model)[0] == expected_tools(shipped, OPS, "openai", "responses")
    [(name, call)] = seen.seen  # the call path's context: the route's agent and session
    assert (name, call.agent_id, call.session_key, call.sender_is_owner) == (
        "read", "coder", OPS_KEY, True)
    assert call.run_id == (None if form == "Request" else "r1")


def test_a_group_no_session_key_names_is_refused(shipped: Shipped) -> None:
    # resolve's keywords with the group but not the session key that names it: OpenClaw 2026.9
    # would ignore the group (and its restrictions); the integration refuses the request
    alone = {k: v for k, v in OPS.items() if k != "session_key"}
    with pytest.raises(shipped.rt.UntrustedGroupError, match="group_id='-100123'"):
        run(shipped, agent_for(shipped, model_for(), Recorder().implementations()), "sync",
            "go", alone)


# -- 2 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_a_tool_outside_the_set_is_refused(shipped: Shipped, mode: str) -> None:
    recorder = Recorder()
    outside = outside_tool(shipped)
    model = model_for([("exec", {"command": "ls"}, "c1"), (outside, {}, "c2")])
    impls = recorder.implementations(asynchronous=mode == "async")
    out = run(shipped, agent_for(shipped, model, impls), mode, "go", OTHER)
    assert out.final_output == "done" and recorder.ran == []
    assert [o.split('"error": ')[1] for o in outputs(model)] == [
        '"Tool exec is not available to this request"\n}',
        f'"Tool {outside} is not available to this request"\n}}']


def test_the_tool_itself_refuses_outside_the_set(shipped: Shipped) -> None:
    # the SDK's is_enabled is not the only guard: on_invoke_tool resolves again
    from agents.tool_context import ToolContext  # noqa: PLC0415 - only this test

    recorder = Recorder()
    tools = shipped.integration("openai_agents").function_tools(
        recorder.implementations(), context=lambda ctx: ctx.context)
    [exec_tool] = [t for t in tools if t.name == "exec"]
    ctx = ToolContext(context=OTHER, tool_name="exec", tool_call_id="c1",
                      tool_arguments='{"command": "ls"}')
    text = asyncio.run(exec_tool.on_invoke_tool(ctx, '{"command": "ls"}'))
    assert "Tool exec is not available to this request" in text and recorder.ran == []


# -- 3 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_bad_arguments_never_reach_the_implementation(shipped: Shipped, mode: str) -> None:
    recorder = Recorder()
    model = model_for([("read", {"path": 5}, "c1"), ("exec", {"command": ["ls"]}, "c2"),
                       ("read", {"path": "notes.md"}, "c3")])
    impls = recorder.implementations(asynchronous=mode == "async")
    run(shipped, agent_for(shipped, model, impls), mode, "go", OPS)
    assert recorder.names() == ["read"]
    first, second, _ = outputs(model)
    assert '"status": "error"' in first and '"tool": "read"' in first
    assert '"tool": "exec"' in second


@pytest.mark.parametrize("mode", MODES)
def test_hooks_block_and_abort_stops(shipped: Shipped, mode: str) -> None:
    rt = shipped.rt
    recorder = Recorder()
    hooks = rt.HookRunner()
    hooks.before_tool_call(lambda e, c: rt.BeforeToolCallResult(block=True, block_reason="no")
                           if e.tool_name == "write" else None)
    model = model_for([("write", {"path": "a", "content": "b"}, "c1")])
    impls = recorder.implementations(asynchronous=mode == "async")
    run(shipped, agent_for(shipped, model, impls, hooks=hooks), mode, "go", OPS)
    assert recorder.ran == [] and '"error": "no"' in outputs(model)[0]

    signal = rt.AbortSignal()
    signal.abort("stop")
    model = model_for([("read", {"path": "a"}, "c1")])
    with pytest.raises(UserError) as raised:  # the SDK ends the run, toolc's abort the cause
        run(shipped, agent_for(shipped, model, impls, signal=signal), mode, "go", OPS)
    assert isinstance(raised.value.__cause__, rt.AbortError) and recorder.ran == []


# -- 4, 5 -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("decision", ["allow-once", "allow-always", "deny"])
def test_exec_approval_pauses_and_resumes(shipped: Shipped, tmp_path: Any, mode: str,
                                          decision: str) -> None:
    rt, oa = shipped.rt, shipped.integration("openai_agents")
    recorder = Recorder()
    approvals = rt.ApprovalManager(timeout_s=600)
    hooks, seen = hook_log(rt)
    model = model_for([("exec", {"command": "rm -r build"}, "c1")])
    agent = agent_for(shipped, model, recorder.implementations(asynchronous=mode == "async"),
                      approvals=approvals, hooks=hooks, workspace=str(tmp_path))
    first = run(shipped, agent, mode, "go", OPS)
    [item] = first.interruptions
    assert recorder.ran == [] and seen == ["rm -r build"]  # the hook ran before the pause
    request = oa.approval_request(item, approvals)
    assert request["command"] == "rm -r build" and request["executable"] == "/usr/bin/rm"
    assert request["cwd"] == str(tmp_path.resolve())
    assert request["reason"] == "allowlist miss: no pattern matches /usr/bin/rm"

    state = first.to_state()
    oa.decide(state, item, decision, approvals=approvals)
    second = run(shipped, agent, mode, state)
    assert second.final_output == "done"
    if decision == "deny":
        assert recorder.ran == []
        assert "Exec denied (user-denied): rm -r build" in outputs(model)[0]
    else:
        assert recorder.ran == [("exec", {"command": "rm -r build", "timeoutSeconds": 5,
                                          "workdir": str(tmp_path.resolve())})]
    assert seen == ["rm -r build"]
    assert approvals.allowlist("coder") == (
        ("/usr/bin/rm",) if decision == "allow-always" else ())


def test_a_decision_for_another_request_approves_nothing(shipped: Shipped, tmp_path: Any) -> None:
    rt, oa = shipped.rt, shipped.integration("openai_agents")
    recorder = Recorder()
    approvals = rt.ApprovalManager(timeout_s=600)
    model = model_for([("exec", {"command": "rm -r build"}, "c1")])
    agent = agent_for(shipped, model, recorder.implementations(), approvals=approvals,
                      workspace=str(tmp_path))
    first = run(shipped, agent, "sync", "go", OPS)
    [item] = first.interruptions
    state = first.to_state()
    with pytest.raises(ValueError, match="no pending approval of this request"):
        oa.decide(state, item, "allow-always", approvals=approvals, digest="0" * 64)
    assert approvals.allowlist("coder") == () and recorder.ran == []
    assert [r.id for r in approvals.pending()] == ["c1"]


@pytest.mark.parametrize("mode", MODES)
def test_an_allowlisted_command_runs_at_once(shipped: Shipped, tmp_path: Any, mode: str) -> None:
    recorder = Recorder()
    hooks, seen = hook_log(shipped.rt)
    model = model_for([("exec", {"command": "ls -la"}, "c1")])
    agent = agent_for(shipped, model, recorder.implementations(asynchronous=mode == "async"),
                      approvals=shipped.rt.ApprovalManager(), hooks=hooks,
                      workspace=str(tmp_path))
    out = run(shipped, agent, mode, "go", OPS)
    assert out.final_output == "done" and out.interruptions == []
    assert recorder.names() == ["exec"]
    assert seen == ["ls -la"]  # needs_approval evaluated it once; the call reused that


def test_the_example_runs(shipped: Shipped) -> None:
    out = run_example(shipped, "openai_agents_agent")
    assert all(line in out for line in EXAMPLE_LINES)
    assert out.count("[exec] ") == 2 and out.rstrip().endswith("-> Done.")
