"""Agent-framework integrations: the part the three share (``pydantic_ai``, ``openai_agents``,
``langchain`` beside this file, each imported by name and importing its framework only then).

An integration asks the application's ``context`` callable, on every step, for the request the
framework's own run context stands for (the message-level ``Request``, or ``resolve``'s
keywords), routes and resolves it, narrows it to the tools that have an implementation and wraps
them (``wrap``): the model is shown exactly those tools, with the names, descriptions and
parameter schemas the build holds for the model's provider, and every call goes through
``wrap``'s whole path. A tool outside the resolved set is refused with toolc's message, whatever
the framework lets through. An exec call that needs approval pauses the run through the
framework's own human-in-the-loop mechanism and is decided there (``Approver``,
``ApprovalManager.defer`` / ``submit``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypedDict, Unpack

from .._abort import AbortSignal
from .._approvals import DECISIONS, ApprovalManager, ApprovalRecord, Decision
from .._bundles import dialect_for
from .._context import CallContext
from .._errors import UnknownToolError
from .._hooks import HookRunner
from .._policy import resolve
from .._route import ROUTING_KEYS, Request
from .._tables import TOOL_NAMES, ToolSet, _toolset, catalog
from .._wrap import Implementation, WrappedTools, wrap

ContextFn = Callable[[Any], Request | Mapping[str, Any]]
"""The framework's run context -> the request it stands for: the message-level ``Request``
(the message the gateway received: routed first, as OpenClaw routes it), a mapping of its
fields (``channel``, ``peer`` as ``(kind, id)`` or ``"kind:id"``, ``sender_id``, ...), or
``resolve``'s keywords (``agent_id``, ``session_key``, ``sender_is_owner``,
``model_provider``, ...). A mapping may add ``session_id`` and ``run_id`` if the application
has them (hooks see them; neither routing nor ``resolve`` takes them)."""


class WrapOptions(TypedDict, total=False):
    """``wrap``'s keywords that every integration's entry point passes on unchanged (each
    absent one takes ``wrap``'s default)."""

    hooks: HookRunner | None
    approvals: ApprovalManager | None
    signal: AbortSignal | None
    workspace: str | None
    validate: bool


_CALL_ONLY: Final = ("session_id", "run_id")
_CACHE_LIMIT: Final = 256
_EMPTY_SCHEMA: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool as the model is shown it: the build's definition for the dialect."""

    name: str  # the wire name the model uses
    tool: str  # toolc's name
    description: str
    parameters: Mapping[str, Any]
    strict: bool | None


def spec_of(tool: str, definition: Mapping[str, Any]) -> ToolSpec:
    """A ready-to-send definition of any dialect (OpenAI chat or Responses, Anthropic,
    Gemini, MCP) as name, description and JSON schema."""
    inner = definition.get("function", definition)
    schema = next(
        (
            inner[key]
            for key in ("parameters", "input_schema", "parametersJsonSchema", "inputSchema")
            if isinstance(inner.get(key), Mapping)
        ),
        _EMPTY_SCHEMA,
    )
    strict = inner.get("strict")
    return ToolSpec(
        name=str(inner["name"]),
        tool=tool,
        description=str(inner.get("description") or ""),
        parameters=schema,
        strict=strict if isinstance(strict, bool) else None,
    )


def approval_payload(record: ApprovalRecord) -> dict[str, Any]:
    """What a person is shown about a paused exec call (JSON): toolc's approval request
    (``allow_always`` says what allow-always would trust), the call it belongs to and the
    digest its decision is bound to."""
    request = record.request
    return {
        "call_id": record.id,
        "digest": record.digest,
        "command": request.command,
        "executable": request.resolved_path,
        "cwd": request.cwd,
        "reason": request.reason,
        "allow_always": request.allow_always,
        "host": request.host,
        "security": request.security,
        "ask": request.ask,
        "agent_id": request.agent_id,
        "session_key": request.session_key,
        "env_keys": list(request.env_keys),
        "expires_at_ms": record.expires_at_ms,
    }


class Binding:
    """Implementations bound to the build for one framework object: per step, the run
    context -> the wrapped tools of that request (memoized per context, bounded).
    ``dialect``: the one the framework's tool objects are made in once (None: each
    request's model provider chooses)."""

    def __init__(
        self,
        implementations: Mapping[str, Implementation],
        *,
        context: ContextFn,
        dialect: str | None = None,
        **options: Unpack[WrapOptions],
    ) -> None:
        if not callable(context):
            raise TypeError("context must be a callable from the framework's run context")
        unknown = sorted(options.keys() - WrapOptions.__optional_keys__)
        if unknown:  # as a signature that spells the keywords out would refuse them
            raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
        every = catalog()
        for name in implementations:
            if name not in every:
                raise UnknownToolError(f"no tool {name!r} in this build", tool=name)
        self.implementations: Final = dict(implementations)
        self.context: Final = context
        self.dialect: Final = dialect
        self.options: Final = options
        self._cache: dict[Hashable, WrappedTools] = {}

    @property
    def approvals(self) -> ApprovalManager | None:
        """The manager exec approvals are handed to (None: a call that needs one is refused)."""
        return self.options.get("approvals")

    def tools(self, run_context: Any) -> WrappedTools:
        """The wrapped tools of the request ``run_context`` stands for."""
        request, keywords, call = _request_of(self.context(run_context))
        key: Hashable | None = (request or tuple(sorted(keywords.items())), call)
        try:
            cached = self._cache.get(key)
        except TypeError:  # a value that cannot be hashed: the checks name it, nothing cached
            key = cached = None
        if cached is not None:
            return cached
        tools = wrap(
            request if request is not None else resolve(**keywords),
            self.implementations,
            context=call,
            dialect=self.dialect,
            **self.options,
        )
        if key is not None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[key] = tools
        return tools

    def specs(self, tools: WrappedTools, *, api: str = "chat") -> list[ToolSpec]:
        """The model's tool list for ``tools``: the build's definitions in catalog order."""
        definitions = tools.definitions(api=api)
        return [spec_of(n, d) for n, d in zip(tools.toolset.names, definitions, strict=True)]

    def every_spec(self, *, api: str = "chat") -> list[ToolSpec]:
        """Every implemented tool of the build in the binding's dialect, for frameworks
        whose tool objects are made once (then enabled per request)."""
        if self.dialect is None:
            raise ValueError("every_spec needs a binding made for one dialect")
        tools = wrap(
            _everything(self.implementations),
            self.implementations,
            dialect=self.dialect,
            validate=False,
        )
        return self.specs(tools, api=api)


def _request_of(
    given: Request | Mapping[str, Any],
) -> tuple[Request | None, dict[str, Any], CallContext | None]:
    """What a context callable returned: (the message-level request or None, ``resolve``'s
    keywords when it is not one, the CallContext of the call path)."""
    if isinstance(given, Request):
        return given, {}, None
    if not isinstance(given, Mapping):
        raise TypeError(
            f"the context callable must return a Request or a mapping, got {type(given).__name__}"
        )
    keywords = dict(given)
    extra = {name: keywords.pop(name) for name in _CALL_ONLY if name in keywords}
    if ROUTING_KEYS & keywords.keys():  # the message's fields: routed first
        return Request.of(keywords), {}, CallContext(**extra) if extra else None
    call = CallContext(
        agent_id=keywords.get("agent_id"),
        session_key=keywords.get("session_key"),
        sender_is_owner=keywords.get("sender_is_owner"),
        model_provider=keywords.get("model_provider"),
        model_id=keywords.get("model_id"),
        **extra,
    )
    return None, keywords, call


def _everything(implementations: Mapping[str, Implementation]) -> ToolSet:
    """A toolset holding every implemented tool of the build (no request's answer)."""
    bits = sum(1 << i for i, name in enumerate(TOOL_NAMES) if name in implementations)
    return _toolset(bits)


def provider_dialect(provider: str | None, model: str | None = None) -> str:
    """The build's dialect for a provider (``dialect_for``)."""
    return dialect_for(provider, model)


class Paused(Exception):
    """An approver's way out of a probe (``WrappedTools.probe``): the call needs a person's
    decision, which the framework's pause collects."""


def pause(record: ApprovalRecord, fresh: bool) -> Decision:
    """The approver of a probe: every call the policy asks about pauses."""
    raise Paused(record.id)


def check_decision(decision: object) -> None:
    """ValueError naming ``DECISIONS`` when ``decision`` is none of them."""
    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")


def submit(
    approvals: ApprovalManager, call_id: str, decision: Decision, *, digest: str, framework: str
) -> None:
    """Hand a decision the framework collected to ``approvals``, bound to ``digest`` (the
    request the person was shown); ValueError when toolc holds no pending approval of that
    request (its digest differs, it was decided or it expired)."""
    if not approvals.submit(call_id, decision, digest=digest, resolved_by=framework):
        raise ValueError(f"approval {call_id}: no pending approval of this request")


def denial(command: str) -> str:
    """What the model is told of an exec call a person denied (OpenClaw's words)."""
    return f"Exec denied (user-denied): {command}"
