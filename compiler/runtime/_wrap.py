"""Request-time wrapping: the whole path of a tool call (OpenClaw semantics sections 15-18, D2).

``wrap(toolset, implementations, context=...)`` returns the tools a request may call. A call
does, in order:

1. owner guard: an owner-only tool refuses a caller that is not an owner (2026.3: not exactly
   an owner; 2026.9: known not to be one, ``sender_is_owner=False``);
2. arguments: JSON text or an object; dialect renames undone, parameter aliases mapped, the
   required groups checked, then strict validation with the generated models (a fresh copy
   either way: nothing the caller holds is what runs);
3. before_tool_call hooks, on a read-only copy (params they return are copied and re-checked
   as in 2, at every depth; a block, a failure or a change in place stops the call); the
   adjusted params are kept per tool-call id;
   (exec: the compiled approval policy over the final params, the environment and the
   directory the command runs in included; an approval is awaited when it asks for one, or,
   for a call made with an ``approver``, decided outside: see ``Approver``)
4. abort: the call's signal combined with the run's;
5. the implementation (sync, or async as a cancellable task);
6. after_tool_call hooks, fired and not awaited;
7. any exception but an abort (and a broken build) becomes the standard error result.
"""

from __future__ import annotations

import inspect
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from . import PACKAGE_NAME, DataMismatchError
from ._abort import AbortSignal, abort_message, combine_signals, is_abort, run_cancellable
from ._approvals import (
    EXEC_TOOL,
    ApprovalManager,
    ApprovalRecord,
    ApprovalWaiter,
    Decision,
    ExecApprovalRequest,
    arguments_digest,
    ask_reason,
    decided,
    evaluate_exec,
    exec_workdir,
    request_digest,
)
from ._bundles import (
    alias_shim,
    apply_aliases,
    decode_arguments,
    decoder,
    dialect_for,
    parse_arguments,
    refusal,
    tool_definitions,
    wire_names,
)
from ._context import CallContext, ModelCall, ToolCall
from ._decisions import RequestLog
from ._errors import (
    AbortError,
    ExecDeniedError,
    InvalidArgumentsError,
    ToolBlockedError,
    ToolNotPermittedError,
    UnknownToolError,
    logged_reason,
    printable,
)
from ._hooks import (
    HOOK_FAILED,
    AdjustedParams,
    AfterToolCallEvent,
    BeforeToolCallEvent,
    HookContext,
    HookOutcome,
    HookRunner,
    frozen,
    plain,
)
from ._results import TextContent, ToolResult, coerce_result, error_result, mark_untrusted
from ._route import Request, Route, resolve_request
from ._steps import run_sync
from ._tables import ToolDefinition, ToolSet, catalog, owner_refuses, subset
from ._validate import args_checker, checked_args, require_models

_PROBED_LIMIT: Final = 1024
OWNER_ONLY: Final = "Tool restricted to owner senders."
Implementation = Callable[[dict[str, Any], ToolCall], Any]
Approver = Callable[[ApprovalRecord, bool], Decision]
"""How an agent framework decides an exec approval outside this process's wait (its
human-in-the-loop pause): called with the call's deferred approval (``ApprovalManager.defer``:
the record, whose ``digest`` binds the decision to the evaluated request, and whether it was
registered just now), it raises the framework's pause, or returns the decision the run was
resumed with. The call runs only when that decision and any decision handed to the manager
for the same request (``submit``) allow it, and only once."""
_LOG: Final = logging.getLogger(f"{PACKAGE_NAME}.tools")
_new_tuple: Final = tuple.__new__


class _Paused(Exception):
    """An approver's pause on its way out of the call's path (never an error result)."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


@dataclass(slots=True)
class _Trace:
    """One call's bookkeeping for after_tool_call."""

    name: str
    tool_call_id: str | None
    started: float = field(default_factory=time.perf_counter)
    params: Mapping[str, Any] = field(default_factory=dict)
    arguments: str = ""  # with an approver: the digest of the model's validated arguments


def describe(error: BaseException) -> str:
    """The message of an error, as the standard error result carries it."""
    text = str(error)
    return text if text.strip() else type(error).__name__


class WrappedTool:
    """One tool of a wrapped set. ``call`` runs a sync implementation, ``acall`` either kind
    (a sync one runs in the event loop's thread). ``name`` is toolc's name (hooks, logs),
    ``wire`` the one the model calls it by in the set's dialect: what the model is told
    about its call (error messages, results) names the tool that way."""

    __slots__ = (
        "_args",
        "_impl",
        "_is_exec",
        "_owner_refused",
        "_plain",
        "_tools",
        "definition",
        "external",
        "is_async",
        "name",
        "wire",
    )

    def __init__(
        self, tools: WrappedTools, definition: ToolDefinition, impl: Implementation, wire: str
    ) -> None:
        self._tools = tools
        self._impl = impl
        self._is_exec = definition.name == EXEC_TOOL
        self.definition = definition
        self.name = definition.name
        self.wire = wire
        self.external = definition.external_content
        self.is_async = _is_async(impl)
        # Fixed for the wrapped set (its context is frozen): decided once, not per call.
        self._owner_refused = owner_refuses(definition.name, tools.context.sender_is_owner)
        # No hooks, no run signal and not exec: a call without its own signal or approver
        # takes _run_plain, the same steps without the bookkeeping those need.
        self._plain = tools.hooks is None and tools.signal is None and not self._is_exec
        self._args: Callable[[object], dict[str, Any]] | None = None  # step 2, on first use

    def call(
        self,
        arguments: Mapping[str, Any] | str | bytes,
        *,
        tool_call_id: str | None = None,
        signal: AbortSignal | None = None,
        approver: Approver | None = None,
    ) -> ToolResult:
        """Run the call's whole path in this thread; the result, or AbortError (or the
        ``approver``'s pause)."""
        if self.is_async:
            raise TypeError(f"{self.name} has an async implementation: use acall()")
        if self._plain and signal is None and approver is None:
            return self._tools._run_plain(self, arguments, tool_call_id)
        return run_sync(
            self._tools._path(self, arguments, tool_call_id, signal, approver, in_loop=False)
        )

    async def acall(
        self,
        arguments: Mapping[str, Any] | str | bytes,
        *,
        tool_call_id: str | None = None,
        signal: AbortSignal | None = None,
        approver: Approver | None = None,
    ) -> ToolResult:
        """Run the call's whole path in the running event loop; the result, or AbortError
        (a cancellation of the caller stays a CancelledError; the ``approver``'s pause)."""
        return await self._tools._path(
            self, arguments, tool_call_id, signal, approver, in_loop=True
        )

    def __repr__(self) -> str:
        return f"WrappedTool({self.name!r}, async={self.is_async})"


class WrappedTools(Mapping[str, WrappedTool]):
    """The tools one request may call, wrapped (a mapping of tool name to WrappedTool).

    ``toolset`` is the resolved set narrowed to the tools that have an implementation: send
    ``definitions()`` (or ``tool_definitions(tools.toolset, ...)``) and list
    ``system_prompt_tools(tools.toolset)``, so the model sees exactly what it can call.
    ``call`` / ``acall`` / ``run`` / ``arun`` take the model's wire names. ``route`` is the
    route of the message-level request it was wrapped for (None for a ToolSet)."""

    def __init__(  # noqa: PLR0913 - wrap()'s keywords
        self,
        toolset: ToolSet,
        implementations: Mapping[str, Implementation],
        *,
        context: CallContext,
        hooks: HookRunner | None,
        signal: AbortSignal | None,
        approvals: ApprovalManager | None,
        dialect: str,
        validate: bool,
        workspace: str | None = None,
        decisions: RequestLog | None = None,
        route: Route | None = None,
    ) -> None:
        every = catalog()
        names = [n for n in toolset.names if n in implementations]
        self.toolset: Final = subset(toolset, names)
        self.context: Final = context
        self.route: Final = route
        self.hooks: Final = hooks
        self.signal: Final = signal
        self.approvals: Final = approvals
        self.dialect: Final = dialect
        self.validate: Final = validate
        self.workspace: Final = workspace
        self.decisions: Final = decisions
        wire = wire_names(dialect)
        self._tools = {
            n: WrappedTool(self, every[n], implementations[n], wire.get(n, n)) for n in names
        }
        # probe(): exec calls evaluated before they run (call id -> arguments digest, params)
        self._probed: dict[str, tuple[str, dict[str, Any]]] = {}
        self._by_wire = {tool.wire: tool for tool in self._tools.values()}

    # -- the mapping -----------------------------------------------------------------------------
    def __getitem__(self, name: str) -> WrappedTool:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"WrappedTools({tuple(self._tools)!r}, dialect={self.dialect!r})"

    def definitions(self, *, api: str = "chat") -> list[Mapping[str, Any]]:
        """The ready-to-send tool list for this set's dialect (``tool_definitions``)."""
        return tool_definitions(self.toolset, dialect=self.dialect, api=api)

    # -- calls by wire name ----------------------------------------------------------------------
    def call(
        self,
        wire_name: str,
        arguments: Mapping[str, Any] | str | bytes,
        *,
        tool_call_id: str | None = None,
        signal: AbortSignal | None = None,
        approver: Approver | None = None,
    ) -> ToolResult:
        """A model's call by the name it used; a name outside this set is an error result."""
        tool = self._lookup(wire_name, tool_call_id)
        if isinstance(tool, ToolResult):
            return tool
        return tool.call(arguments, tool_call_id=tool_call_id, signal=signal, approver=approver)

    async def acall(
        self,
        wire_name: str,
        arguments: Mapping[str, Any] | str | bytes,
        *,
        tool_call_id: str | None = None,
        signal: AbortSignal | None = None,
        approver: Approver | None = None,
    ) -> ToolResult:
        """``call`` for async code (any implementation)."""
        tool = self._lookup(wire_name, tool_call_id)
        if isinstance(tool, ToolResult):
            return tool
        return await tool.acall(
            arguments, tool_call_id=tool_call_id, signal=signal, approver=approver
        )

    def run(
        self, calls: Iterable[ModelCall], *, signal: AbortSignal | None = None
    ) -> list[ToolResult]:
        """Run a model turn's calls in order (see the SDK adapters for ``calls``)."""
        return [self.call(c.name, c.arguments, tool_call_id=c.id, signal=signal) for c in calls]

    async def arun(
        self, calls: Iterable[ModelCall], *, signal: AbortSignal | None = None
    ) -> list[ToolResult]:
        """``run`` for async code: the calls one after another, in order."""
        return [
            await self.acall(c.name, c.arguments, tool_call_id=c.id, signal=signal) for c in calls
        ]

    def _lookup(self, wire_name: str, tool_call_id: str | None = None) -> WrappedTool | ToolResult:
        tool = self._by_wire.get(wire_name)
        if tool is not None:
            return tool
        refused = refusal(wire_name, self.dialect)
        _LOG.warning("[tools] %s", printable(refused.message))
        if self.decisions is not None:
            self.decisions.refused(
                refused.tool or wire_name, tool_call_id, refused.message, code=refused.code
            )
        return error_result(wire_name, refused.message)

    # -- the path of one call --------------------------------------------------------------------
    def _run_plain(
        self, tool: WrappedTool, arguments: object, tool_call_id: str | None
    ) -> ToolResult:
        """``_path`` for a sync call without hooks, abort signals, an approver or the exec
        policy (``WrappedTool._plain``): steps 1, 2, 5 and 7, each as _path takes it."""
        decisions = self.decisions
        started = time.perf_counter() if decisions is not None else 0.0
        failure: Exception | None = None
        try:
            if tool._owner_refused:  # 1
                raise ToolNotPermittedError(OWNER_ONLY, tool=tool.name, code="owner-only")
            check = tool._args
            if check is None:
                check = tool._args = self._arguments(tool)
            params = check(arguments)  # 2
            # ToolCall(...) without NamedTuple's Python-level __new__
            call = _new_tuple(ToolCall, (tool.name, tool_call_id, None, self.context))
            value = tool._impl(params, call)
            if type(value) is str and not tool.external:  # coerce_result's first case
                result = ToolResult((TextContent(value),), value)
            else:
                if _awaitable(value):
                    _discard(value)
                    raise TypeError(f"{tool.name} returned an awaitable: call it with acall()")
                result = self._finish(tool, value)
        except Exception as exc:
            failure = exc
            trace = _Trace(tool.name, tool_call_id)
            result = self._recover(tool, exc, None, trace, self._fire_sync)  # 7
        finally:
            if decisions is not None:
                decisions.call(tool.name, tool_call_id, failure, started, arguments)
        return result

    def _arguments(self, tool: WrappedTool) -> Callable[[object], dict[str, Any]]:
        """Step 2 for one tool of this set, its lookups done once: parse, undo the dialect,
        map aliases and check required groups, then validate (or copy) as _prepare does."""
        name, wire = tool.name, tool.wire
        decode = decoder(name, self.dialect)
        aliases = alias_shim(name)
        check = args_checker(name, label=wire) if self.validate else plain

        def arguments(raw: object) -> dict[str, Any]:
            # parse_arguments' first case inline: an object is copied
            args = dict(raw) if type(raw) is dict else parse_arguments(wire, raw)
            if decode is not None:
                args = decode(args)
            if aliases is not None:
                args = aliases(args)
            result: dict[str, Any] = check(args)
            return result

        return arguments

    async def _path(  # noqa: PLR0913 - the call, and which side runs it
        self,
        tool: WrappedTool,
        arguments: object,
        tool_call_id: str | None,
        call_signal: AbortSignal | None,
        approver: Approver | None,
        *,
        in_loop: bool,
    ) -> ToolResult:
        """Steps 1-7 of one call, for both kinds of caller (``_steps``): awaited in the
        running loop (``in_loop``), where an async implementation is awaited as a task the
        signal cancels, after_tool_call is fired as a task and a cancelled caller is
        reported before it goes through; else run by ``run_sync``, where waits happen in
        this thread and an awaitable result is refused."""
        trace = _Trace(tool.name, tool_call_id)
        signal, detach = combine_signals(call_signal, self.signal)
        fire = self._fire_async if in_loop else self._fire_sync
        failure: BaseException | None = None
        try:
            params = self._prepare(tool, arguments, signal, trace)  # 1, 2
            resumed = self._resumed(tool, params, trace, approver)
            if resumed is None:
                if self.hooks is not None:
                    params = await self._hooked(tool, params, trace, in_loop=in_loop)  # 3
                if tool._is_exec:  # exec approvals
                    params = await self._approved(
                        tool, params, signal, trace, approver, in_loop=in_loop
                    )
            else:  # evaluated by an earlier pass (hooks included): decided now
                params = self._reapproved(tool, *resumed, trace, approver)
            if signal is not None:
                _check(signal)  # 4
            value = tool._impl(params, ToolCall(tool.name, tool_call_id, signal, self.context))
            if _awaitable(value):
                if not in_loop:
                    _discard(value)
                    raise TypeError(f"{tool.name} returned an awaitable: call it with acall()")
                value = await run_cancellable(value, signal)
            if signal is not None:
                _check(signal)  # aborted while it ran: its result does not count
            result = self._finish(tool, value)
        except _Paused as paused:  # the call goes on when the run is resumed
            raise paused.cause from paused.cause.__cause__
        except Exception as exc:
            failure = exc
            result = self._recover(tool, exc, signal, trace, fire)  # 7
        except BaseException:
            if in_loop:  # a cancelled caller: report the end, then let it through
                failure = AbortError(abort_message(None), tool=tool.name)
                fire(trace, None, abort_message(None))
            raise
        finally:
            detach()
            if self.decisions is not None:
                self.decisions.call(tool.name, tool_call_id, failure, trace.started, arguments)
        if self.hooks is not None:
            fire(trace, result, None)  # 6
        return result

    async def probe(
        self,
        wire_name: str,
        arguments: Mapping[str, Any] | str | bytes,
        *,
        tool_call_id: str,
        approver: Approver,
    ) -> bool:
        """For a framework that asks whether a call needs approval before it runs it: steps
        1-3 and the exec policy, nothing run. True when the approver paused the call (the
        approval was registered); False when it may run or is refused (the call reports
        that). The call that follows with the same id and arguments does not evaluate them
        again: the hooks ran here, once. Nor does a probe again of the same call: the
        approval asked for then goes to the approver again (not fresh)."""
        return await self._probe(wire_name, arguments, tool_call_id, approver, in_loop=True)

    def probe_sync(
        self,
        wire_name: str,
        arguments: Mapping[str, Any] | str | bytes,
        *,
        tool_call_id: str,
        approver: Approver,
    ) -> bool:
        """``probe`` in this thread (async hook handlers on a private loop)."""
        return run_sync(self._probe(wire_name, arguments, tool_call_id, approver, in_loop=False))

    async def _probe(
        self,
        wire_name: str,
        arguments: Mapping[str, Any] | str | bytes,
        tool_call_id: str,
        approver: Approver,
        *,
        in_loop: bool,
    ) -> bool:
        """A probe's path, for both kinds of caller."""
        start = self._probe_start(wire_name, arguments, tool_call_id, approver)
        if isinstance(start, bool):
            return start
        tool, params, trace = start
        try:
            params = await self._hooked(tool, params, trace, in_loop=in_loop)
            params = await self._approved(tool, params, None, trace, approver, in_loop=in_loop)
        except _Paused:
            return True
        except Exception:
            return False  # refused: the call itself says why
        self._probed_now(tool_call_id, trace, params)
        return False

    def _probe_start(
        self,
        wire_name: str,
        arguments: Mapping[str, Any] | str | bytes,
        tool_call_id: str,
        approver: Approver,
    ) -> bool | tuple[WrappedTool, dict[str, Any], _Trace]:
        """A probe's steps 1-2, or its answer when there is nothing to evaluate: not exec,
        refused, or evaluated by an earlier probe of the same call (then its approval, if
        one was asked for, goes to the approver again)."""
        tool = self._lookup(wire_name)
        if isinstance(tool, ToolResult) or not tool._is_exec:
            return False
        trace = _Trace(tool.name, tool_call_id)
        try:
            params = self._prepare(tool, arguments, None, trace)
        except Exception:
            return False  # refused: the call itself says why
        trace.arguments = arguments_digest(params)
        probed = self._probed.get(tool_call_id)
        if probed is not None and probed[0] == trace.arguments:
            return False
        approvals = self.approvals
        asked = approvals.asked(tool_call_id, arguments=trace.arguments) if approvals else None
        if asked is None:
            return tool, params, trace
        try:
            self._answer(approver, asked, False)
        except _Paused:
            return True
        return False

    def _probed_now(self, tool_call_id: str, trace: _Trace, params: dict[str, Any]) -> None:
        if len(self._probed) >= _PROBED_LIMIT:
            self._probed.clear()
        self._probed[tool_call_id] = (trace.arguments, params)

    def _resumed(
        self, tool: WrappedTool, params: dict[str, Any], trace: _Trace, approver: Approver | None
    ) -> tuple[dict[str, Any], ApprovalRecord | None] | None:
        """An exec call that an earlier pass evaluated, its hooks included (a probe, or the
        pass that paused for approval), with the same model arguments: the params it was
        evaluated with and its deferred approval (None after a probe that needed none)."""
        call_id = trace.tool_call_id
        if approver is None or not tool._is_exec or not call_id:
            return None
        trace.arguments = arguments_digest(params)
        probed = self._probed.pop(call_id, None)
        if probed is not None and probed[0] == trace.arguments:
            return probed[1], None
        if self.approvals is None:
            return None
        record = self.approvals.resumable(call_id, arguments=trace.arguments)
        if record is None or record.params is None:
            return None
        return plain(record.params), record

    def _reapproved(
        self,
        tool: WrappedTool,
        params: dict[str, Any],
        record: ApprovalRecord | None,
        trace: _Trace,
        approver: Approver | None,
    ) -> dict[str, Any]:
        """The exec policy again on params evaluated earlier (no hooks: they ran then); a
        deferred approval is decided by the approver, and the framework's "no" holds even
        when the policy no longer asks."""
        assert approver is not None  # _resumed answers only calls made with one
        trace.params = frozen(params)
        params, request = self._gate(tool, params)
        if request is not None:
            decided(params, self._deferred(request, params, trace, approver))
        elif record is not None and self._answer(approver, record, False) == "deny":
            decided(params, "deny")
        return params

    async def _hooked(
        self, tool: WrappedTool, params: dict[str, Any], trace: _Trace, *, in_loop: bool
    ) -> dict[str, Any]:
        """Step 3 (``HookRunner._before_chain``)."""
        hooks = self.hooks
        if hooks is None:
            return params
        if not hooks.has_before:
            return self._adjusted(tool, params, HookOutcome(False, None, params, False), trace)
        event = self._before_event(tool, params, trace)
        outcome = await hooks._before_chain(event, self._ctx(trace), in_loop=in_loop)
        return self._adjusted(tool, params, outcome, trace)

    async def _approved(  # noqa: PLR0913 - the call's parts, and which side runs it
        self,
        tool: WrappedTool,
        params: dict[str, Any],
        signal: AbortSignal | None,
        trace: _Trace,
        approver: Approver | None,
        *,
        in_loop: bool,
    ) -> dict[str, Any]:
        """The exec policy; a pending approval is waited for (a step: in this thread, or
        awaited in the loop) or decided by the approver. The params to run with (the
        workdir the command was evaluated in)."""
        if not tool._is_exec:
            return params
        params, request = self._gate(tool, params)
        if request is not None and approver is not None:
            decided(params, self._deferred(request, params, trace, approver))
        elif request is not None:
            waiter = self._waiter(request)
            self._log_asked(trace, waiter.id)
            detach = self._abort_ends_wait(waiter, signal)
            try:
                decision = await waiter.wait_async() if in_loop else waiter.wait()
            finally:
                detach()
            self._log_approval(trace, waiter.id, decision)
            decided(params, decision)
        return params

    def _log_asked(self, trace: _Trace, approval_id: str) -> None:
        if self.decisions is not None:
            self.decisions.approval("asked", trace.name, trace.tool_call_id, approval_id)

    def _log_approval(self, trace: _Trace, approval_id: str, decision: Decision | None) -> None:
        if self.decisions is not None:
            granted = decision in ("allow-once", "allow-always")
            self.decisions.approval(
                "granted" if granted else "denied",
                trace.name,
                trace.tool_call_id,
                approval_id,
                decision,
            )

    def _prepare(
        self, tool: WrappedTool, arguments: object, signal: AbortSignal | None, trace: _Trace
    ) -> dict[str, Any]:
        """Steps 1 and 2 (an aborted signal stops the call before anything runs)."""
        if signal is not None:
            _check(signal)
        if owner_refuses(tool.definition.name, self.context.sender_is_owner):
            raise ToolNotPermittedError(OWNER_ONLY, tool=tool.name, code="owner-only")
        args = parse_arguments(tool.wire, arguments)
        if self.hooks is not None:  # after_tool_call reports these if the call stops here
            trace.params = frozen(args)
        args = decode_arguments(tool.name, args, self.dialect)
        # a fresh copy in either case: nothing the caller holds is what runs
        return checked_args(tool.name, args, label=tool.wire) if self.validate else plain(args)

    def _before_event(
        self, tool: WrappedTool, params: dict[str, Any], trace: _Trace
    ) -> BeforeToolCallEvent:
        trace.params = frozen(params)
        return BeforeToolCallEvent(
            tool_name=tool.name,
            params=frozen(params),  # a copy of its own: what handlers dig out changes nothing
            tool_call_id=trace.tool_call_id,
            run_id=self.context.run_id,
        )

    def _ctx(self, trace: _Trace) -> HookContext:
        c = self.context
        return HookContext(
            tool_name=trace.name,
            tool_call_id=trace.tool_call_id,
            run_id=c.run_id,
            agent_id=c.agent_id,
            session_key=c.session_key,
            session_id=c.session_id,
        )

    def _adjusted(
        self, tool: WrappedTool, own: dict[str, Any], outcome: HookOutcome, trace: _Trace
    ) -> dict[str, Any]:
        """Step 3's verdict: blocked, or the params to run with. Unless a handler returned
        params, they are the call's own (handlers only saw a copy); returned ones are
        copied, then checked as in step 2 at every depth: the implementation gets exactly
        the checked copy, which no handler holds."""
        if outcome.blocked:
            code = "hook-failed" if outcome.reason == HOOK_FAILED else "hook-blocked"
            raise ToolBlockedError(outcome.reason or "", tool=tool.name, code=code)
        params = own
        if outcome.changed:
            params = apply_aliases(tool.name, plain(outcome.params))
            params = checked_args(tool.name, params, label=tool.wire) if self.validate else params
        trace.params = frozen(params)
        if self.hooks is not None and trace.tool_call_id is not None:
            key = AdjustedParams.key(trace.tool_call_id, self.context.run_id)
            self.hooks.adjusted_params.put(key, trace.params)
        return params

    def _gate(
        self, tool: WrappedTool, params: dict[str, Any]
    ) -> tuple[dict[str, Any], ExecApprovalRequest | None]:
        """The exec policy on the params the implementation gets: refuse, or the params to
        run with and the approval to ask for (None: none needed). The environment is part
        of the request; a relative workdir is the workspace's, and the implementation is
        told the directory the command was evaluated in."""
        command = params.get("command")
        if not isinstance(command, str):
            raise InvalidArgumentsError(f"{tool.wire}: command must be a string", tool=tool.name)
        cwd = exec_workdir(params.get("workdir"), self.workspace)
        if cwd is not None:
            params = {**params, "workdir": cwd}
        verdict = evaluate_exec(
            command,
            self.context,
            # elevated runs the command on the gateway (OpenClaw); toolc does not model
            # tools.elevated, so it is evaluated as a request for that host, approvals kept
            host="gateway" if params.get("elevated") not in (None, False) else params.get("host"),
            security=params.get("security"),
            ask=params.get("ask"),
            cwd=cwd,
            env=params.get("env"),
            approvals=self.approvals,
        )
        if verdict.denied is not None:
            raise ExecDeniedError(verdict.denied, tool=tool.name, code=verdict.denied_code)
        if not verdict.requires_approval:
            return params, None
        if self.approvals is None:
            raise ExecDeniedError(
                "exec denied: approval required, and no approver is set up",
                tool=tool.name,
                code="no-approver",
            )
        request = ExecApprovalRequest(
            command=command,
            cwd=cwd,
            host=verdict.host,
            security=verdict.security,
            ask=verdict.ask,
            agent_id=verdict.agent_key,
            session_key=self.context.session_key,
            resolved_path=verdict.executable if verdict.analysis.ok else None,
            env_keys=tuple(sorted(map(str, env)))
            if isinstance(env := params.get("env"), dict)
            else (),
            reason=ask_reason(verdict),
        )
        return params, request

    def _waiter(self, request: ExecApprovalRequest) -> ApprovalWaiter:
        assert self.approvals is not None  # _gate refuses without one
        return self.approvals.request(request)

    def _deferred(
        self,
        request: ExecApprovalRequest,
        params: dict[str, Any],
        trace: _Trace,
        approver: Approver,
    ) -> Decision | None:
        """An approval decided outside (``Approver``): bound to the call id and the digest of
        the evaluated request; the framework's "no" wins over any other answer."""
        approvals = self.approvals
        assert approvals is not None  # _gate refuses without one
        if not trace.tool_call_id:
            raise ExecDeniedError(
                "exec denied: an approval needs the tool call's id",
                tool=EXEC_TOOL,
                code="no-call-id",
            )
        digest = request_digest(request, params)
        record, fresh = approvals.defer(
            request,
            call_id=trace.tool_call_id,
            digest=digest,
            params=frozen(params),
            arguments=trace.arguments,
        )
        if fresh:
            self._log_asked(trace, record.id)
        answer = self._answer(approver, record, fresh)
        approvals.submit(record.id, answer, digest=digest, resolved_by="framework")
        decision = approvals.claim(record.id, digest=digest)
        final: Decision | None = "deny" if answer == "deny" else decision
        self._log_approval(trace, record.id, final)
        return final

    @staticmethod
    def _answer(approver: Approver, record: ApprovalRecord, fresh: bool) -> Decision:
        """The approver's decision; its pause leaves the call's path as ``_Paused``."""
        try:
            return approver(record, fresh)
        except Exception as exc:
            raise _Paused(exc) from None

    def _abort_ends_wait(
        self, waiter: ApprovalWaiter, signal: AbortSignal | None
    ) -> Callable[[], None]:
        """An abort expires the pending approval, which wakes the wait (step 4 then raises)."""
        approvals = self.approvals
        if signal is None or approvals is None:
            return _nothing
        return signal.on_abort(lambda: approvals.expire(waiter.id, "aborted"))

    def _finish(self, tool: WrappedTool, value: object) -> ToolResult:
        result = coerce_result(tool.wire, value)
        return mark_untrusted(result, source=tool.definition.label) if tool.external else result

    def _recover(
        self,
        tool: WrappedTool,
        exc: Exception,
        signal: AbortSignal | None,
        trace: _Trace,
        fire: Callable[[_Trace, ToolResult | None, str | None], None],
    ) -> ToolResult:
        """Step 7: the standard error result, except for an abort or a broken build."""
        if isinstance(exc, DataMismatchError):
            raise exc
        if is_abort(exc, signal):
            abort = (
                exc
                if isinstance(exc, AbortError)
                else AbortError(abort_message(signal), tool=tool.name)
            )
            fire(trace, None, abort.message)
            raise abort from (None if abort is exc else exc)
        # the operator log says what the decision log says: a code and its fixed text (the
        # message can quote the arguments), the message itself only with log_arguments
        detailed = self.decisions is not None and self.decisions.log.log_arguments
        code, text = logged_reason(exc, detailed=detailed)
        _LOG.error("[tools] %s failed: %s: %s", tool.name, code, printable(text))
        return error_result(tool.wire, describe(exc))

    # -- after_tool_call ---------------------------------------------------------------------------
    def _after_event(
        self, trace: _Trace, result: ToolResult | None, error: str | None
    ) -> AfterToolCallEvent | None:
        hooks = self.hooks
        if hooks is None:
            return None
        params = trace.params
        if trace.tool_call_id is not None:  # OpenClaw's consumer of the adjusted params
            key = AdjustedParams.key(trace.tool_call_id, self.context.run_id)
            adjusted = hooks.adjusted_params.consume(key)
            params = adjusted if adjusted is not None else params
        if not hooks.has_after:
            return None
        if error is None and result is not None and result.is_error:
            error = str(result.details.get("error", ""))
        return AfterToolCallEvent(
            tool_name=trace.name,
            params=params,
            tool_call_id=trace.tool_call_id,
            run_id=self.context.run_id,
            result=result,
            error=error,
            duration_ms=(time.perf_counter() - trace.started) * 1000,
        )

    def _fire_sync(self, trace: _Trace, result: ToolResult | None, error: str | None) -> None:
        event = self._after_event(trace, result, error)
        if event is not None and self.hooks is not None:
            self.hooks.fire_after(event, self._ctx(trace))

    def _fire_async(self, trace: _Trace, result: ToolResult | None, error: str | None) -> None:
        event = self._after_event(trace, result, error)
        if event is not None and self.hooks is not None:
            self.hooks.afire_after(event, self._ctx(trace))


def _nothing() -> None:
    return None


def _check_context(ctx: CallContext) -> None:
    """Refuse ill-typed context values (TypeError naming the field): a malformed owner flag
    or id is never read as anything."""
    if not isinstance(ctx, CallContext):
        raise TypeError(f"context must be a CallContext, got {type(ctx).__name__}")
    if ctx.sender_is_owner is not None and not isinstance(ctx.sender_is_owner, bool):
        raise TypeError(f"sender_is_owner must be a bool or None, got {ctx.sender_is_owner!r}")
    for name in ("agent_id", "session_key", "session_id", "run_id", "model_provider", "model_id"):
        value = getattr(ctx, name)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name} must be a str or None, got {type(value).__name__}")


def _awaitable(value: object) -> Any:
    """``inspect.isawaitable`` for the values tools return, without its ABC check."""
    return inspect.iscoroutine(value) or hasattr(type(value), "__await__")


def _is_async(impl: object) -> bool:
    """A coroutine function, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(impl) or inspect.iscoroutinefunction(type(impl).__call__)


def _check(signal: AbortSignal | None) -> None:
    if signal is not None and signal.aborted:
        raise AbortError(abort_message(signal))


def _discard(value: object) -> None:
    close = getattr(value, "close", None)
    if callable(close):
        close()


# CallContext's fields a message-level request decides (session_id and run_id it has not)
_ROUTED_FIELDS: Final = ("agent_id", "session_key", "sender_is_owner", "model_provider", "model_id")


def _routed_context(request: Request, routed: Route, given: CallContext | None) -> CallContext:
    """The CallContext of a message-level request: the route's agent and session key, the
    request's owner flag and model; ``given`` may add the run's ``session_id`` and
    ``run_id`` (and repeat the rest; a value that disagrees is a ValueError)."""
    derived = CallContext(
        agent_id=routed.agent_id,
        session_key=routed.session_key,
        sender_is_owner=request.sender_is_owner,
        model_provider=request.model_provider,
        model_id=request.model_id,
    )
    if given is None:
        return derived
    _check_context(given)
    for name in _ROUTED_FIELDS:
        value, decided = getattr(given, name), getattr(derived, name)
        if value is not None and value != decided:
            raise ValueError(
                f"context {name}={value!r} disagrees with the request's {decided!r}: with a "
                "Request, the route decides the agent and session key and the request holds "
                "the owner flag and the model; give the context session_id and run_id only"
            )
    return replace(derived, session_id=given.session_id, run_id=given.run_id)


def wrap(  # noqa: PLR0913 - one keyword per part of the request path
    toolset: ToolSet | Request,
    implementations: Mapping[str, Implementation],
    *,
    context: CallContext | None = None,
    hooks: HookRunner | None = None,
    signal: AbortSignal | None = None,
    approvals: ApprovalManager | None = None,
    dialect: str | None = None,
    validate: bool = True,
    workspace: str | os.PathLike[str] | None = None,
    decisions: RequestLog | None = None,
) -> WrappedTools:
    """Wrap the gateway's implementations (tool name -> ``fn(args, call)``, sync or async)
    for the tools ``toolset`` holds; tools without an implementation are left out.

    ``toolset`` is ``resolve``'s answer, or the message-level ``Request`` itself: it is then
    routed and resolved (``resolve_request``), and the context is the route's agent and
    session key with the request's owner flag and model (``context`` may add the run's
    ``session_id`` and ``run_id``); ``.route`` holds the route.

    ``context`` says who calls (owner guard, hooks, exec approvals; its model provider and
    model choose the dialect unless ``dialect`` is given), ``hooks`` runs before/after
    handlers, ``signal`` is the run's abort signal, ``approvals`` decides exec calls the
    policy asks about (without it they are refused). ``validate=False`` skips the model
    validation of step 2 (then nothing outside the standard library is used); with it,
    pydantic v2 must be installed (ImportError saying so). ``workspace`` is the directory exec
    commands run in when a call names no workdir (OpenClaw's agent workspace, an absolute
    path): relative workdirs, executables and PATH entries are resolved against the
    directory the command runs in, never this process's cwd, and the exec implementation
    gets that directory, absolute, as ``workdir``; without a workspace, a call that needs it
    asks for approval. ``decisions`` (``DecisionLog.request(...)`` for the same request)
    logs every call, refusal and exec approval as one line each. An implementation for a name
    that is no tool of this build is an UnknownToolError.
    """
    routed: Route | None = None
    if isinstance(toolset, Request):
        routed, resolved = resolve_request(toolset)
        ctx = _routed_context(toolset, routed, context)
        toolset = resolved
    elif not isinstance(toolset, ToolSet):
        raise TypeError(
            f"toolset must be a ToolSet from resolve() or a Request, got {type(toolset).__name__}"
        )
    else:
        ctx = context if context is not None else CallContext()
        _check_context(ctx)
    every = catalog()
    for name, impl in implementations.items():
        if name not in every:
            raise UnknownToolError(f"no tool {name!r} in this build", tool=name)
        if not callable(impl):
            raise TypeError(f"the implementation of {name} is not callable")
    if validate:
        require_models()
    root = os.fspath(workspace) if workspace is not None else None
    if root is not None and not os.path.isabs(root):
        raise ValueError(f"workspace must be an absolute path, got {root!r}")
    return WrappedTools(
        toolset,
        implementations,
        context=ctx,
        hooks=hooks,
        signal=signal,
        approvals=approvals,
        dialect=dialect or dialect_for(ctx.model_provider, ctx.model_id),
        validate=validate,
        workspace=root,
        decisions=decisions,
        route=routed,
    )
