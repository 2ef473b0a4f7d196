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
from typing import Any, Final

from .._abort import AbortSignal
from .._approvals import ApprovalManager, ApprovalRecord
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
    context -> the wrapped tools of that request (memoized per context, bounded)."""

    def __init__(  # noqa: PLR0913 - wrap()'s keywords
        self,
        implementations: Mapping[str, Implementation],
        *,
        context: ContextFn,
        hooks: HookRunner | None = None,
        approvals: ApprovalManager | None = None,
        signal: AbortSignal | None = None,
        workspace: str | None = None,
        validate: bool = True,
        dialect: str | None = None,
    ) -> None:
        if not callable(context):
            raise TypeError("context must be a callable from the framework's run context")
        every = catalog()
        for name in implementations:
            if name not in every:
                raise UnknownToolError(f"no tool {name!r} in this build", tool=name)
        self.implementations: Final = dict(implementations)
        self.context: Final = context
        self.hooks: Final = hooks
        self.approvals: Final = approvals
        self.signal: Final = signal
        self.workspace: Final = workspace
        self.validate: Final = validate
        self.dialect: Final = dialect
        self._cache: dict[Hashable, WrappedTools] = {}

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
            hooks=self.hooks,
            signal=self.signal,
            approvals=self.approvals,
            dialect=self.dialect,
            validate=self.validate,
            workspace=self.workspace,
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

    def every_spec(self, dialect: str, *, api: str = "chat") -> list[ToolSpec]:
        """Every implemented tool of the build, for frameworks whose tool objects are made
        once (then enabled per request)."""
        tools = wrap(
            _everything(self.implementations),
            self.implementations,
            dialect=dialect,
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
