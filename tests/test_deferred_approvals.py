"""Exec approvals decided outside the call (a framework's human-in-the-loop pause):
``ApprovalManager.defer`` / ``submit`` / ``claim`` / ``resumable`` and ``wrap``'s
``approver``, on the request-path test build (tests/wrapping.py)."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest

REQUEST: dict[str, Any] = {"command": "rm x", "cwd": "/w", "resolved_path": "/usr/bin/rm",
                           "agent_id": "ops"}


class Paused(Exception):
    """A framework's pause, as an approver raises it."""


def test_a_decision_is_bound_to_the_call_and_the_request(rt: ModuleType) -> None:
    approvals = rt.ApprovalManager()
    request = rt.ExecApprovalRequest(**REQUEST)
    digest = rt.request_digest(request, {"command": "rm x"})
    record, fresh = approvals.defer(request, call_id="c1", digest=digest)
    assert fresh and record.id == "c1" and record.digest == digest
    assert approvals.defer(request, call_id="c1", digest=digest) == (record, False)
    assert approvals.claim("c1", digest=digest) is None  # pending
    assert not approvals.submit("c1", "allow-always", digest="0" * 64)  # another request
    assert approvals.submit("c1", "allow-always", digest=digest)
    assert approvals.allowlist("ops") == ("/usr/bin/rm",)
    assert approvals.claim("c1", digest="0" * 64) is None
    assert approvals.claim("c1", digest=digest) == "allow-always"
    assert approvals.claim("c1", digest=digest) is None  # once
    with pytest.raises(rt.ExecDeniedError, match="approval-used"):
        approvals.defer(request, call_id="c1", digest=digest)


def test_a_decision_waits_for_its_call(rt: ModuleType) -> None:
    # decided now, resumed later: kept past the grace period until claimed or expired
    approvals = rt.ApprovalManager(grace_s=0)
    request = rt.ExecApprovalRequest(**REQUEST)
    approvals.defer(request, call_id="c1", digest="a" * 64)
    assert approvals.submit("c1", "allow-once", digest="a" * 64)
    assert approvals.snapshot("c1") is not None
    assert approvals.claim("c1", digest="a" * 64) == "allow-once"


def test_a_changed_request_voids_the_pending_approval(rt: ModuleType) -> None:
    approvals = rt.ApprovalManager()
    request = rt.ExecApprovalRequest(**REQUEST)
    approvals.defer(request, call_id="c1", digest="a" * 64)
    with pytest.raises(rt.ExecDeniedError, match="approval-mismatch"):
        approvals.defer(request, call_id="c1", digest="b" * 64)
    assert approvals.snapshot("c1").resolved_by == "superseded"
    assert not approvals.submit("c1", "allow-once", digest="a" * 64)


def test_the_in_process_wait_is_unchanged(rt: ModuleType) -> None:
    approvals = rt.ApprovalManager()
    waiter = approvals.request(rt.ExecApprovalRequest(**REQUEST))
    assert approvals.resolve(waiter.id, "allow-once")
    assert waiter.wait() == "allow-once"


def _exec_tools(rt: ModuleType, approvals: Any, hooks: Any = None) -> tuple[Any, list[Any]]:
    ran: list[Any] = []
    tools = rt.wrap(rt.resolve(agent_id="strict"), {"exec": lambda a, c: ran.append(a) or "ok"},
                    context=rt.CallContext(agent_id="strict"), approvals=approvals,
                    hooks=hooks, workspace="/tmp")
    return tools, ran


def test_an_approver_pauses_and_the_resumed_call_runs_once(rt: ModuleType) -> None:
    approvals = rt.ApprovalManager()
    hooks = rt.HookRunner()
    seen: list[str] = []
    hooks.before_tool_call(lambda e, c: seen.append(e.params["command"]))
    tools, ran = _exec_tools(rt, approvals, hooks)
    asked: list[tuple[str, bool]] = []

    def pause(record: Any, fresh: bool) -> str:
        asked.append((record.id, fresh))
        raise Paused(record.digest)

    with pytest.raises(Paused):  # the pause leaves the call: not an error result
        tools.call("exec", {"command": "true"}, tool_call_id="c1", approver=pause)
    assert ran == [] and seen == ["true"] and asked == [("c1", True)]
    assert [r.request.reason for r in approvals.pending()] == [
        "ask=always: every command is asked about"]

    result = tools.call("exec", {"command": "true"}, tool_call_id="c1",
                        approver=lambda record, fresh: "allow-once")
    assert result.text == "ok" and ran == [{"command": "true", "workdir": "/tmp"}]
    assert seen == ["true"]  # the hooks ran before the pause, not again
    again = tools.call("exec", {"command": "true"}, tool_call_id="c1",
                       approver=lambda record, fresh: "allow-once")
    assert again.is_error and "approval-used" in again.text and len(ran) == 1


def test_other_arguments_under_the_same_call_id_are_refused(rt: ModuleType) -> None:
    approvals = rt.ApprovalManager()
    tools, ran = _exec_tools(rt, approvals)

    def pause(record: Any, fresh: bool) -> str:
        raise Paused

    with pytest.raises(Paused):
        tools.call("exec", {"command": "true"}, tool_call_id="c1", approver=pause)
    result = asyncio.run(tools.acall("exec", {"command": "rm -rf /"}, tool_call_id="c1",
                                     approver=lambda record, fresh: "allow-once"))
    assert result.is_error and "approval-mismatch" in result.text and ran == []


def test_the_frameworks_no_wins(rt: ModuleType) -> None:
    approvals = rt.ApprovalManager()
    tools, ran = _exec_tools(rt, approvals)
    with pytest.raises(Paused):
        tools.call("exec", {"command": "true"}, tool_call_id="c1",
                   approver=lambda record, fresh: (_ for _ in ()).throw(Paused()))
    [record] = approvals.pending()
    assert approvals.submit("c1", "allow-always", digest=record.digest)
    result = tools.call("exec", {"command": "true"}, tool_call_id="c1",
                        approver=lambda record, fresh: "deny")
    assert result.is_error and "user-denied" in result.text and ran == []


def test_probe_evaluates_once_for_the_call_that_follows(rt: ModuleType) -> None:
    approvals = rt.ApprovalManager()
    hooks = rt.HookRunner()
    seen: list[str] = []
    hooks.before_tool_call(lambda e, c: seen.append(e.params["command"]))
    ran: list[Any] = []
    tools = rt.wrap(rt.resolve(agent_id="open"), {"exec": lambda a, c: ran.append(a) or "ok"},
                    context=rt.CallContext(agent_id="open"), approvals=approvals, hooks=hooks,
                    workspace="/tmp")

    def pause(record: Any, fresh: bool) -> str:
        raise Paused

    assert not asyncio.run(tools.probe("exec", {"command": "true"}, tool_call_id="c1",
                                       approver=pause))
    assert tools.call("exec", {"command": "true"}, tool_call_id="c1", approver=pause).text == "ok"
    assert seen == ["true"] and len(ran) == 1
