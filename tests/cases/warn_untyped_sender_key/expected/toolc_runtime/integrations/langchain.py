"""LangChain 1.x (LangGraph): an ``AgentMiddleware`` that registers the tools itself, shows
each model request the tools its request may call and runs every call through ``wrap``
(``pip install 'toolc[langchain]'``; LangChain is imported with this module, never with the
runtime).

    agent = create_agent(model, middleware=[middleware(impls, context=lambda rt: rt.context)],
                         checkpointer=InMemorySaver())

The tools carry the build's names, descriptions and parameter schemas for ``provider`` (default
OpenAI). ``wrap_model_call`` asks ``context(runtime)`` for the request (the message-level
``Request``, routed first, or ``resolve``'s keywords) on every model call (``runtime``:
LangGraph's ``Runtime``, whose ``context`` is what the agent was invoked with) and narrows the
request's tools to the resolved ones; ``wrap_tool_call`` resolves again and answers a tool
outside the set with toolc's message as an error ``ToolMessage``, since the tool node runs any
registered tool the model names. Error results are ``ToolMessage(status="error")``.

Exec approvals pause as ``HumanInTheLoopMiddleware`` does by default: ``after_model``
evaluates every exec call of the model's turn (hooks and policy, nothing run) and raises
one ``langgraph.types.interrupt`` for all that need approval, with its value
(``{"action_requests": [...], "review_configs": [...]}``, one action request per call in
the turn's order, each carrying toolc's request under ``"toolc"``). Resume with its answer,
one decision per action request in order: ``Command(resume={"decisions": [{"type":
"approve"}, {"type": "reject", "message": "..."}]})``; ``"always": true`` in an approve
decision is toolc's allow-always, a reject's ``message`` reaches the model with the
refusal. An edit (or a respond) is refused: the approval is for exactly the request that
was evaluated. The interrupt's ``response_schema`` checks the answer before LangGraph keeps
it, so a refused answer raises ``pydantic.ValidationError`` and the pause can be answered
again. Needs a checkpointer, and the same ``ApprovalManager`` across the pause and the
resume.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, NotRequired, Unpack

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import BaseModel, BeforeValidator, Field, create_model
from typing_extensions import TypedDict

from .._approvals import ApprovalRecord, Decision
from .._results import ToolResult, error_result
from .._wrap import Approver, Implementation, WrappedTools
from . import (
    Binding,
    ContextFn,
    Paused,
    ToolSpec,
    WrapOptions,
    approval_payload,
    provider_dialect,
)

REJECTED: Final = "toolc_rejected"
"""State key: tool call id -> the reviewer's message, for the calls rejected after a turn."""
EDIT_REFUSED: Final = (
    "toolc does not take edit decisions for exec: an approval covers exactly the request "
    "that was evaluated (its command, directory and environment). Reject the call with a "
    "message saying what to run instead; the model's next call is evaluated, and asked "
    "about, on its own"
)


class ApproveDecision(TypedDict):
    """``HumanInTheLoopMiddleware``'s approve; ``always: true`` is toolc's allow-always."""

    type: Literal["approve"]
    always: NotRequired[bool]


class RejectDecision(TypedDict):
    """``HumanInTheLoopMiddleware``'s reject; ``message`` reaches the model."""

    type: Literal["reject"]
    message: NotRequired[str]


def _approve_or_reject(value: object) -> object:
    """Say why an edit or a respond is refused (before the union names the tags it takes)."""
    kind = value.get("type") if isinstance(value, Mapping) else None
    if kind == "edit":
        raise ValueError(EDIT_REFUSED)
    if kind == "respond":
        raise ValueError("toolc does not take respond decisions for exec: approve or reject")
    return value


ExecDecision = Annotated[
    ApproveDecision | RejectDecision,
    Field(discriminator="type"),
    BeforeValidator(_approve_or_reject),
]


@functools.lru_cache(maxsize=32)
def response_schema(count: int) -> type[BaseModel]:
    """The answer an exec pause takes (``HITLResponse`` narrowed to what toolc accepts): one
    approve or reject per action request. LangGraph checks a resume against it before it
    keeps the value, so a wrong answer can be corrected."""
    decisions = Annotated[list[ExecDecision], Field(min_length=count, max_length=count)]
    model: type[BaseModel] = create_model("ExecApprovalResponse", decisions=(decisions, ...))
    return model


def middleware(
    implementations: Mapping[str, Implementation],
    *,
    context: ContextFn,
    provider: str = "openai",
    model: str | None = None,
    **options: Unpack[WrapOptions],
) -> AgentMiddleware[Any, Any]:
    """An ``AgentMiddleware`` holding one tool per entry of ``implementations`` (tool name ->
    ``fn(args, call)``, as for ``wrap``), shown as the build defines it for ``provider`` /
    ``model``. ``context`` maps LangGraph's ``Runtime`` to the request (a ``Request``, a mapping
    of its fields, or ``resolve``'s keywords: ``ContextFn``); ``options`` are ``wrap``'s
    keywords (``hooks``, ``approvals``, ``signal``, ``workspace``, ``validate``)."""
    dialect = provider_dialect(provider, model)
    binding = Binding(implementations, context=context, dialect=dialect, **options)
    return ToolcMiddleware(binding, binding.every_spec())


def interrupt_value(asked: Sequence[tuple[ApprovalRecord, str]]) -> dict[str, Any]:
    """The interrupt of paused exec calls (record, the tool's name as the model called it):
    ``HumanInTheLoopMiddleware``'s ``HITLRequest``, one action request per call, toolc's
    approval request under ``"toolc"``."""
    return {
        "action_requests": [_action(record, name) for record, name in asked],
        "review_configs": [
            {"action_name": name, "allowed_decisions": ["approve", "reject"]} for _, name in asked
        ],
    }


def _action(record: ApprovalRecord, name: str) -> dict[str, Any]:
    payload = approval_payload(record)
    return {
        "name": name,
        "args": dict(record.params or {}),
        "description": (
            f"Exec approval needed: {payload['command']}\n"
            f"executable: {payload['executable']}\ncwd: {payload['cwd']}\n"
            f"reason: {payload['reason']}\n{payload['allow_always']}"
        ),
        "toolc": payload,
    }


def _ask(asked: Sequence[tuple[ApprovalRecord, str]]) -> list[tuple[Decision, str | None]]:
    """One interrupt for ``asked``: raises the pause; resumed, each call's decision and the
    reviewer's message, in order."""
    answer = interrupt(interrupt_value(asked), response_schema=response_schema(len(asked)))
    return [_decision(given) for given in answer.model_dump()["decisions"]]


def _decision(given: Mapping[str, Any]) -> tuple[Decision, str | None]:
    if given["type"] == "approve":
        return ("allow-always" if given.get("always") is True else "allow-once"), None
    message = given.get("message")
    return "deny", message if isinstance(message, str) and message else None


@dataclass(frozen=True, slots=True)
class _Asked:
    """An exec call of the model's turn whose approval was asked for."""

    record: ApprovalRecord
    name: str  # the tool's name as the model called it
    fresh: bool  # registered by this pass (on a resumed pass: not the one the person saw)


def _recorder(found: list[_Asked], name: str) -> Approver:
    def pause(record: ApprovalRecord, fresh: bool) -> Decision:
        found.append(_Asked(record, name, fresh))
        raise Paused(record.id)

    return pause


def _turn_calls(state: Mapping[str, Any], names: Mapping[str, ToolSpec]) -> list[Any]:
    """toolc's tool calls of the model's last message."""
    messages = state.get("messages") or []
    last = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if last is None:
        return []
    return [call for call in last.tool_calls if call["name"] in names and call.get("id")]


class ToolcState(AgentState[Any]):
    """The agent's state with the reviewer's messages of rejected calls (``REJECTED``)."""

    toolc_rejected: NotRequired[Annotated[dict[str, str], PrivateStateAttr]]


def _message(result: ToolResult, call: Mapping[str, Any], reason: str | None) -> ToolMessage:
    if reason is not None and result.is_error:
        # the reviewer's message, as HumanInTheLoopMiddleware passes it on
        error = result.details.get("error") if isinstance(result.details, Mapping) else None
        result = error_result(str(call.get("name") or ""), f"{error}\nReason: {reason}")
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
    """toolc's tools, filtered per model request, asked about per model turn and wrapped
    per call."""

    state_schema = ToolcState

    def __init__(self, binding: Binding, specs: list[ToolSpec]) -> None:
        super().__init__()
        self._binding = binding
        self._names = {spec.name: spec for spec in specs}
        self.tools = [_tool(spec) for spec in specs]

    @property
    def name(self) -> str:
        return "toolc"

    # -- the model's request -------------------------------------------------------------------
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

    # -- the model's turn: one pause for every exec call that needs approval -------------------
    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        found: list[_Asked] = []
        for tools, call in self._turn(state, runtime):
            approver = _recorder(found, call["name"])
            tools.probe_sync(call["name"], call["args"], tool_call_id=call["id"], approver=approver)
        return self._decided(state, found)

    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        found: list[_Asked] = []
        for tools, call in self._turn(state, runtime):
            approver = _recorder(found, call["name"])
            await tools.probe(
                call["name"], call["args"], tool_call_id=call["id"], approver=approver
            )
        return self._decided(state, found)

    def _turn(self, state: Any, runtime: Runtime[Any]) -> list[tuple[WrappedTools, Any]]:
        """toolc's calls of the model's last message, each with its request's tools; none
        without a manager (no call can pause: one that needs approval is refused)."""
        calls = _turn_calls(state, self._names)
        if not calls or self._binding.approvals is None:
            return []
        tools = self._binding.tools(runtime)
        return [(tools, call) for call in calls]

    def _decided(self, state: Any, found: list[_Asked]) -> dict[str, Any] | None:
        """Ask about ``found`` with one interrupt; resumed, hand each decision to the
        manager, bound to the request the person saw. The rejected calls' messages go to
        the state for the tool calls."""
        if not found:
            return {REJECTED: {}} if state.get(REJECTED) else None
        decisions = _ask([(a.record, a.name) for a in found])
        approvals = self._binding.approvals
        assert approvals is not None  # without a manager no call pauses
        if any(a.fresh for a in found):
            # resumed, yet an approval was registered only now (the one shown expired or
            # this process lost it): the decisions cannot be matched to what was shown
            for asked in found:
                approvals.expire(asked.record.id, resolved_by="langchain: not the request shown")
            return {REJECTED: {}}
        rejected: dict[str, str] = {}
        for asked, (decision, message) in zip(found, decisions, strict=True):
            record = asked.record
            approvals.submit(record.id, decision, digest=record.digest, resolved_by="langchain")
            if decision == "deny":
                rejected[record.id] = message or ""
        return {REJECTED: rejected}

    # -- each call -----------------------------------------------------------------------------
    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        call = request.tool_call
        if call["name"] not in self._names:
            return handler(request)  # not toolc's tool
        tools, reason = self._for_call(request)
        result = tools.call(
            call["name"],
            call.get("args") or {},
            tool_call_id=call.get("id"),
            approver=_approver(call["name"], reason),
        )
        return _message(result, call, reason or None)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[..., Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        if call["name"] not in self._names:
            return await handler(request)
        tools, reason = self._for_call(request)
        result = await tools.acall(
            call["name"],
            call.get("args") or {},
            tool_call_id=call.get("id"),
            approver=_approver(call["name"], reason),
        )
        return _message(result, call, reason or None)

    def _for_call(self, request: ToolCallRequest) -> tuple[WrappedTools, str | None]:
        """The call's wrapped tools, and the reviewer's message ("" for none) when it was
        rejected after the model's turn (None: it was not)."""
        state = request.state if isinstance(request.state, Mapping) else {}
        rejected = state.get(REJECTED)
        reason = (
            rejected.get(request.tool_call.get("id")) if isinstance(rejected, Mapping) else None
        )
        return self._binding.tools(request.runtime), reason


def _approver(spec_name: str, rejected: str | None) -> Approver:
    """The decision a call runs on: the one handed to the manager after the model's turn;
    a call whose approval was not asked for then (the policy asks only now) pauses alone."""

    def decide(record: ApprovalRecord, fresh: bool) -> Decision:
        if rejected is not None:
            return "deny"  # the framework's "no" holds, whatever the manager says
        if not fresh and record.decision is not None:
            return record.decision
        [(decision, _)] = _ask([(record, spec_name)])
        return decision

    return decide
