"""LangChain 1.x (LangGraph): an ``AgentMiddleware`` that registers the tools itself, shows
each model request the tools its request may call and runs every call through ``wrap``
(``pip install 'toolc[langchain]'``; LangChain is imported with this module, never with the
runtime).

    agent = create_agent(model, middleware=[middleware(impls, context=lambda rt: rt.context)],
                         checkpointer=InMemorySaver())

The tools carry the build's names, descriptions and parameter schemas for ``provider``
(default OpenAI). ``wrap_model_call`` asks ``context(runtime)`` for ``resolve``'s keywords
on every model call (``runtime``: LangGraph's ``Runtime``, whose ``context`` is what the
agent was invoked with) and narrows the request's tools to the resolved ones;
``wrap_tool_call`` resolves again and answers a tool outside the set with toolc's message
as an error ``ToolMessage``, since the tool node runs any registered tool the model names.
Error results are ``ToolMessage(status="error")``.

Exec approvals pause through ``langgraph.types.interrupt`` with the value
``HumanInTheLoopMiddleware`` uses (``{"action_requests": [...], "review_configs": [...]}``;
each action request also carries toolc's request under ``"toolc"``) and resume with its
shape: ``Command(resume={"decisions": [{"type": "approve"}]})`` (``"always": true`` in an
approve decision is toolc's allow-always), ``{"type": "reject", "message": ...}``. An edit
is refused: the approval is for exactly the request that was evaluated. Needs a
checkpointer, and the same ``ApprovalManager`` across the pause and the resume.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import interrupt

from .._abort import AbortSignal
from .._approvals import ApprovalManager, ApprovalRecord, Decision
from .._hooks import HookRunner
from .._results import ToolResult
from .._wrap import Approver, Implementation
from . import Binding, ContextFn, ToolSpec, approval_payload, provider_dialect


def middleware(  # noqa: PLR0913 - wrap()'s keywords
    implementations: Mapping[str, Implementation],
    *,
    context: ContextFn,
    hooks: HookRunner | None = None,
    approvals: ApprovalManager | None = None,
    signal: AbortSignal | None = None,
    workspace: str | None = None,
    validate: bool = True,
    provider: str = "openai",
    model: str | None = None,
) -> AgentMiddleware[Any, Any]:
    """An ``AgentMiddleware`` holding one tool per entry of ``implementations`` (tool name ->
    ``fn(args, call)``, as for ``wrap``), shown as the build defines it for ``provider`` /
    ``model``. ``context`` maps LangGraph's ``Runtime`` to ``resolve``'s keywords; the other
    keywords are ``wrap``'s."""
    dialect = provider_dialect(provider, model)
    binding = Binding(
        implementations,
        context=context,
        hooks=hooks,
        approvals=approvals,
        signal=signal,
        workspace=workspace,
        validate=validate,
        dialect=dialect,
    )
    return ToolcMiddleware(binding, binding.every_spec(dialect))


def interrupt_value(record: ApprovalRecord, spec_name: str) -> dict[str, Any]:
    """The interrupt of a paused exec call: ``HumanInTheLoopMiddleware``'s request shape,
    toolc's approval request under ``"toolc"``."""
    payload = approval_payload(record)
    params = dict(record.params or {})
    return {
        "action_requests": [
            {
                "name": spec_name,
                "args": params,
                "description": (
                    f"Exec approval needed: {payload['command']}\n"
                    f"executable: {payload['executable']}\ncwd: {payload['cwd']}\n"
                    f"reason: {payload['reason']}\n{payload['allow_always']}"
                ),
                "toolc": payload,
            }
        ],
        "review_configs": [{"action_name": spec_name, "allowed_decisions": ["approve", "reject"]}],
    }


def _decision(resumed: object) -> Decision:
    """A resume value in ``HumanInTheLoopMiddleware``'s shape -> toolc's decision; anything
    else (an edit, a response, a malformed value) is a denial."""
    decisions = resumed.get("decisions") if isinstance(resumed, Mapping) else None
    first = decisions[0] if isinstance(decisions, list) and len(decisions) == 1 else None
    kind = first.get("type") if isinstance(first, Mapping) else None
    if kind == "approve":
        assert isinstance(first, Mapping)
        return "allow-always" if first.get("always") is True else "allow-once"
    return "deny"


def _approver(spec_name: str) -> Approver:
    def decide(record: ApprovalRecord, fresh: bool) -> Decision:
        # the first pass pauses here; the resumed pass gets the person's answer back
        return _decision(interrupt(interrupt_value(record, spec_name)))

    return decide


def _message(result: ToolResult, call: Mapping[str, Any]) -> ToolMessage:
    return ToolMessage(
        content=result.text,
        tool_call_id=str(call.get("id") or ""),
        name=str(call.get("name") or ""),
        status="error" if result.is_error else "success",
    )


def _tool(spec: ToolSpec) -> Any:
    """A registered tool: the build's name, description and schema; it only ever runs
    through the middleware's wrap_tool_call."""

    def refuse(**kwargs: Any) -> str:
        raise RuntimeError(f"{spec.name} runs only through toolc's middleware")

    return StructuredTool.from_function(
        func=refuse,
        name=spec.name,
        description=spec.description,
        args_schema=dict(spec.parameters),
    )


class ToolcMiddleware(AgentMiddleware[Any, Any]):
    """toolc's tools, filtered per model request and wrapped per call."""

    def __init__(self, binding: Binding, specs: list[ToolSpec]) -> None:
        super().__init__()
        self._binding = binding
        self._names = {spec.name: spec for spec in specs}
        self.tools = [_tool(spec) for spec in specs]

    @property
    def name(self) -> str:
        return "toolc"

    def _narrowed(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        allowed = {s.name for s in self._binding.specs(self._binding.tools(request.runtime))}
        kept = [
            t
            for t in request.tools
            if isinstance(t, Mapping) or t.name not in self._names or t.name in allowed
        ]
        return request.override(tools=kept)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(self._narrowed(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self._narrowed(request))

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        call = request.tool_call
        if call["name"] not in self._names:
            return handler(request)  # not toolc's tool
        tools = self._binding.tools(request.runtime)
        result = tools.call(
            call["name"],
            call.get("args") or {},
            tool_call_id=call.get("id"),
            approver=_approver(call["name"]),
        )
        return _message(result, call)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[..., Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        if call["name"] not in self._names:
            return await handler(request)
        tools = self._binding.tools(request.runtime)
        result = await tools.acall(
            call["name"],
            call.get("args") or {},
            tool_call_id=call.get("id"),
            approver=_approver(call["name"]),
        )
        return _message(result, call)
