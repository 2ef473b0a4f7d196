"""The OpenAI Agents SDK: one ``FunctionTool`` per implemented tool, enabled per run for the
tools its request may call, every call through ``wrap`` (``pip install
'toolc[openai-agents]'``; the SDK is imported with this module, never with the runtime).

    agent = Agent(name="ops", model=model, tools=function_tools(impls, context=lambda c: c.context))
    Runner.run(agent, text, context=request, run_config=run_config())

The tools carry the build's names, descriptions and parameter schemas for ``provider`` (default
OpenAI; the Responses form). ``is_enabled(ctx, agent)`` asks ``context(ctx)`` for the request
(the message-level ``Request``, routed first, or ``resolve``'s keywords) on every run, so one
agent serves every sender, channel and group; ``on_invoke_tool`` resolves again and refuses a
tool outside the set with toolc's message. The SDK itself refuses a call to a disabled tool
before it reaches the tool: ``run_config()`` is a ``RunConfig`` whose
``tool_not_found_behavior="return_error_to_model"`` lets the run go on and whose
``tool_error_formatter`` gives such a refusal toolc's message, about the name the model used in
the dialect the run's tools were listed in. Error results reach the model as the SDK's error
shape for function tools, the error text as the output.

Exec approvals: ``needs_approval(ctx, params, call_id)`` runs the call's path up to the
policy (its before_tool_call hooks included, once: the call that follows reuses what was
evaluated); when the policy asks, the run returns ``interruptions``. ``approval_request(item,
approvals)`` is toolc's request behind an interruption; ``decide(state, item, decision,
approvals=...)`` hands the decision to the ``ApprovalManager`` bound to that request and
approves or rejects the item in the run state (never the SDK's ``always_approve``: toolc's
allow-always adds exactly the executable to the allowlist).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from typing import Any, Unpack

from agents import RunConfig, RunContextWrapper, RunState, ToolApprovalItem
from agents.run_config import ToolErrorFormatterArgs
from agents.tool import FunctionTool, Tool
from agents.tool_context import ToolContext

from .._approvals import ApprovalManager, ApprovalRecord, Decision
from .._bundles import refusal
from .._errors import UnknownToolError
from .._results import error_result
from .._wrap import Implementation
from . import (
    Binding,
    ContextFn,
    ToolSpec,
    WrapOptions,
    approval_payload,
    check_decision,
    denial,
    pause,
    provider_dialect,
    submit,
)

# The dialect each run's toolc tools were last listed in (is_enabled), by run context: the
# SDK tells tool_error_formatter only the run's context and the name the model used, whose
# meaning depends on the dialect (``read`` is a tool for OpenAI, no tool's name where
# Anthropic is shown ``Read``). Keyed by id, as the context is not hashable; an entry goes
# with its context.
_LISTED: dict[int, tuple[weakref.ref[Any], str]] = {}


def _note_listed(run_context: Any, dialect: str) -> None:
    key = id(run_context)
    entry = _LISTED.get(key)
    if entry is None or entry[0]() is not run_context:
        ref = weakref.ref(run_context, lambda _: _LISTED.pop(key, None))
        _LISTED[key] = (ref, dialect)
    elif entry[1] != dialect:  # a handoff to an agent of another provider
        _LISTED[key] = (entry[0], dialect)


def _listed_dialect(run_context: Any) -> str | None:
    entry = _LISTED.get(id(run_context))
    return entry[1] if entry is not None and entry[0]() is run_context else None


def function_tools(
    implementations: Mapping[str, Implementation],
    *,
    context: ContextFn,
    provider: str = "openai",
    model: str | None = None,
    **options: Unpack[WrapOptions],
) -> list[Tool]:
    """One ``FunctionTool`` per tool of ``implementations`` (tool name -> ``fn(args, call)``, as
    for ``wrap``), shown as the build defines it for ``provider`` / ``model``. ``context`` maps
    the SDK's ``RunContextWrapper`` to the request (a ``Request``, a mapping of its fields, or
    ``resolve``'s keywords: ``ContextFn``); ``options`` are ``wrap``'s keywords (``hooks``,
    ``approvals``, ``signal``, ``workspace``, ``validate``)."""
    dialect = provider_dialect(provider, model)
    binding = Binding(implementations, context=context, dialect=dialect, **options)
    api = "responses" if dialect.startswith("openai") else "chat"
    return [
        FunctionTool(
            name=spec.name,
            description=spec.description,
            params_json_schema=dict(spec.parameters),
            on_invoke_tool=_invoker(binding, spec),
            strict_json_schema=spec.strict is True,
            is_enabled=_enabled(binding, spec, dialect),
            needs_approval=_needs_approval(binding, spec),
        )
        for spec in binding.every_spec(api=api)
    ]


def run_config(**options: Any) -> RunConfig:
    """A ``RunConfig`` for agents with toolc's tools: a call to a tool the request may not
    use goes back to the model with toolc's message and the run goes on (``options``: any
    other ``RunConfig`` field)."""
    options.setdefault("tool_not_found_behavior", "return_error_to_model")
    options.setdefault("tool_error_formatter", tool_error_formatter)
    return RunConfig(**options)


def tool_error_formatter(args: ToolErrorFormatterArgs[Any]) -> str | None:
    """``RunConfig.tool_error_formatter``: toolc's standard error for a call to a tool of
    the build that the run did not enable, named as the model called it; the SDK's own
    message for anything else (a name that is no tool's in the dialect the run's tools were
    listed in, or a run that listed none of toolc's)."""
    if args.kind != "tool_not_found":
        return None
    dialect = _listed_dialect(args.run_context)
    if dialect is None:
        return None
    refused = refusal(args.tool_name, dialect)
    if isinstance(refused, UnknownToolError):
        return None
    return error_result(args.tool_name, refused.message).text


def approval_request(item: ToolApprovalItem, approvals: ApprovalManager) -> dict[str, Any] | None:
    """toolc's approval request behind an interruption (command, resolved executable, cwd,
    reason, the digest a decision is bound to), or None when toolc holds none for it."""
    call_id = _call_id(item)
    record = approvals.snapshot(call_id) if call_id else None
    return approval_payload(record) if record is not None else None


def decide(
    state: RunState[Any],
    item: ToolApprovalItem,
    decision: Decision,
    *,
    approvals: ApprovalManager,
    digest: str | None = None,
) -> None:
    """Decide one interruption: the decision goes to ``approvals`` bound to the request
    (``digest``: the one shown, default the one toolc holds for the call), then the item is
    approved (``allow-once``, ``allow-always``) or rejected (``deny``) in ``state``.
    ValueError, and nothing decided, when toolc holds the call's approval for another
    request or no longer holds it pending."""
    check_decision(decision)
    call_id = _call_id(item)
    record = approvals.snapshot(call_id) if call_id else None
    if record is not None:
        bound = digest if digest is not None else record.digest
        submit(approvals, call_id, decision, digest=bound, framework="openai-agents")
    if decision == "deny":
        command = record.request.command if record else ""
        state.reject(item, rejection_message=denial(command))
    else:
        state.approve(item)


def _call_id(item: ToolApprovalItem) -> str:
    raw = item.raw_item
    value = raw.get("call_id") if isinstance(raw, Mapping) else getattr(raw, "call_id", None)
    return value if isinstance(value, str) else ""


def _enabled(binding: Binding, spec: ToolSpec, dialect: str) -> Any:
    def is_enabled(ctx: RunContextWrapper[Any], agent: Any) -> bool:
        _note_listed(ctx, dialect)
        return spec.tool in binding.tools(ctx)

    return is_enabled


def _invoker(binding: Binding, spec: ToolSpec) -> Any:
    async def on_invoke_tool(ctx: ToolContext[Any], arguments: str) -> str:
        tools = binding.tools(ctx)  # this run's request, asked again
        call_id = ctx.tool_call_id

        def approved(record: ApprovalRecord, fresh: bool) -> Decision:
            # the SDK runs an asked-about call only once a person approved it
            if fresh or ctx.is_tool_approved(spec.name, call_id) is not True:
                return "deny"
            return "allow-once"

        result = await tools.acall(
            spec.name, arguments or "{}", tool_call_id=call_id, approver=approved
        )
        return result.text

    return on_invoke_tool


def _needs_approval(binding: Binding, spec: ToolSpec) -> Any:
    if spec.tool != "exec":
        return False

    async def needs_approval(ctx: RunContextWrapper[Any], params: Any, call_id: str) -> bool:
        tools = binding.tools(ctx)
        arguments = params if isinstance(params, Mapping) else json.loads(str(params or "{}"))
        return await tools.probe(spec.name, arguments, tool_call_id=call_id, approver=pause)

    return needs_approval
