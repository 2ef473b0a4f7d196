"""pydantic-ai: a toolset that shows each step the tools its request may call and runs every
call through ``wrap`` (``pip install 'toolc[pydantic-ai]'``; pydantic-ai is imported with
this module, never with the runtime).

    agent = Agent(model, toolsets=[toolset(impls, context=lambda ctx: ctx.deps.toolc)],
                  output_type=[str, DeferredToolRequests])

``get_tools(ctx)`` is asked every step: ``context(ctx)`` gives the request (the message-level
``Request``, routed first, or ``resolve``'s keywords), and the step lists exactly the resolved
tools that have an implementation, as the build defines them for the context's model provider.
``call_tool`` resolves again and refuses a tool outside the set (pydantic-ai itself refuses a
name its step did not list). Error results reach the model as ``ToolFailed`` (a failed tool
return; no retry budget spent). An exec call that needs approval raises ``ApprovalRequired``
with toolc's request as its metadata: the run ends with ``DeferredToolRequests``; build the next
run's ``DeferredToolResults`` with ``results(requests, decisions, approvals=...)``, which hands
each decision to the ``ApprovalManager`` bound to the evaluated request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolDefinition, ToolDenied
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from .._approvals import DECISIONS, ApprovalManager, ApprovalRecord, Decision
from .._wrap import Approver, Implementation
from . import (
    Binding,
    ContextFn,
    WrapOptions,
    approval_payload,
    check_decision,
    denial,
    submit,
)

METADATA_KEY = "toolc"  # DeferredToolResults.metadata[call_id][METADATA_KEY]: the binding


def toolset(
    implementations: Mapping[str, Implementation],
    *,
    context: ContextFn,
    id: str = "toolc",
    **options: Unpack[WrapOptions],
) -> AbstractToolset[Any]:
    """A pydantic-ai toolset of ``implementations`` (tool name -> ``fn(args, call)``, as for
    ``wrap``). ``context`` maps pydantic-ai's ``RunContext`` to the request (a ``Request``, a
    mapping of its fields, or ``resolve``'s keywords: ``ContextFn``) and is asked on every step,
    so one agent serves every sender, channel and group; ``options`` are ``wrap``'s keywords
    (``hooks``, ``approvals``, ``signal``, ``workspace``, ``validate``)."""
    return ToolcToolset(Binding(implementations, context=context, **options), id)


def results(
    requests: DeferredToolRequests,
    decisions: Mapping[str, Decision],
    *,
    approvals: ApprovalManager,
) -> DeferredToolResults:
    """The next run's ``DeferredToolResults`` for the approvals a run paused on: each
    ``decisions[call_id]`` (``allow-once``, ``allow-always``, ``deny``) is handed to
    ``approvals`` bound to the digest toolc's request carried, and pydantic-ai is told to run
    or deny the call. A call without a decision is left out (it stays paused). ValueError
    when toolc holds no pending approval of that request (its digest differs, it was
    decided or it expired)."""
    out = DeferredToolResults()
    for part in requests.approvals:
        call_id = part.tool_call_id
        decision = decisions.get(call_id)
        meta = requests.metadata.get(call_id, {})
        if decision is None:
            continue
        check_decision(decision)
        digest = str(meta.get("digest", ""))
        submit(approvals, call_id, decision, digest=digest, framework="pydantic-ai")
        out.metadata[call_id] = {METADATA_KEY: {"digest": digest, "decision": decision}}
        if decision == "deny":
            out.approvals[call_id] = ToolDenied(denial(meta.get("command", "")))
        else:
            out.approvals[call_id] = True
    return out


def _approver(ctx: RunContext[Any]) -> Approver:
    """The pause and the resume of one call."""

    def decide(record: ApprovalRecord, fresh: bool) -> Decision:
        if not ctx.tool_call_approved:
            raise ApprovalRequired(metadata=approval_payload(record))
        if fresh:
            return "deny"  # approved, but never asked for here: nobody saw this request
        binding = ctx.tool_call_metadata
        given = binding.get(METADATA_KEY) if isinstance(binding, Mapping) else None
        if isinstance(given, Mapping):
            if given.get("digest") != record.digest:
                return "deny"  # a decision about another request
            decision = given.get("decision")
            return decision if decision in DECISIONS else "deny"
        return "allow-once"

    return decide


# toolc validates (strictly, with the build's models): the framework passes arguments through
_ANY_OBJECT = SchemaValidator(core_schema.dict_schema())


class ToolcToolset(AbstractToolset[Any]):
    """The tools each step's request may call, wrapped by toolc."""

    def __init__(self, binding: Binding, toolset_id: str) -> None:
        self._binding = binding
        self._id = toolset_id

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = self._binding.tools(ctx)
        return {
            spec.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=spec.name,
                    description=spec.description,
                    parameters_json_schema=dict(spec.parameters),
                    strict=spec.strict,
                ),
                max_retries=1,
                args_validator=_ANY_OBJECT,
            )
            for spec in self._binding.specs(tools)
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: Any
    ) -> Any:
        tools = self._binding.tools(ctx)  # this step's request, asked again
        result = await tools.acall(
            name, tool_args, tool_call_id=ctx.tool_call_id, approver=_approver(ctx)
        )
        if result.is_error:
            raise ToolFailed(result.text)
        return result.text
