"""The one exception hierarchy for what the runtime refuses about a tool call.

Every message is written to be shown to the model as it is (the wrapper turns these errors,
except an abort, into the standard error result); ``str(error)`` is that message, also for the
``KeyError`` subclass, whose own ``str`` would add quotes.
"""

from __future__ import annotations


class ToolError(Exception):
    """A tool call the runtime refused; ``message`` is fit to show the model."""

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool = tool

    def __str__(self) -> str:
        return self.message


class UnknownToolError(ToolError, KeyError):
    """A tool call names no tool of this build (for the dialect it was sent to)."""


class InvalidArgumentsError(ToolError, ValueError):
    """The arguments of a call are not what the tool accepts (not JSON, not an object,
    missing required parameters, or refused by the tool's parameter model)."""


class ToolNotPermittedError(ToolError, PermissionError):
    """The tool exists but this call may not use it (not in the request's tool set, owner
    only, refused by the exec policy)."""


class ExecDeniedError(ToolNotPermittedError):
    """The exec policy refused a command (``security: deny``, a host it may not use, an
    approval that was denied, timed out or had no one to ask)."""


class ToolBlockedError(ToolError):
    """A before_tool_call hook blocked the call (or failed, which blocks it: D2)."""


class AbortError(ToolError):
    """The call was aborted (its own signal or the run's). Never turned into a result."""


class AgentSelectionRequiredError(ValueError):
    """The request names no agent and the definitions cannot choose one (OpenClaw 2026.9:
    ``resolveConversationCapabilityProfile`` throws ``AgentSelectionRequiredError`` and
    builds no tools). An input problem of the request, never an empty or a global tool set:
    pass ``agent_id`` (one of ``agent_ids``) or an agent-scoped session key
    (``agent:<id>:...``). Not a ToolError: it refuses the whole request, not one call.

    ``code`` says which refusal: ``AGENT_SELECTION_REQUIRED`` (OpenClaw's own error: no agent
    chosen among several, or an ``agent_id`` other than the session key's) or
    ``MALFORMED_AGENT_SESSION_KEY`` (a key starting with ``agent:`` that names none; OpenClaw
    refuses it with a plain Error)."""

    def __init__(
        self,
        reason: str,
        *,
        agent_ids: tuple[str, ...] = (),
        code: str = "AGENT_SELECTION_REQUIRED",
    ) -> None:
        ids = f" (one of: {', '.join(agent_ids)})" if agent_ids else ""
        message = (
            f"agent selection required: {reason}; pass agent_id{ids} or an "
            "agent-scoped session key (agent:<id>:...)"
        )
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.agent_ids = agent_ids
        self.code = code

    def __str__(self) -> str:
        return self.message
