"""The one exception hierarchy for what the runtime refuses about a tool call.

Every message is written to be shown to the model as it is (the wrapper turns these errors,
except an abort, into the standard error result); ``str(error)`` is that message, also for the
``KeyError`` subclass, whose own ``str`` would add quotes.

A message may quote the call's arguments (the command of a denied exec call, a key the
parameter model refuses, a hook's reason). What leaves the process says why with ``code``
instead: one of ``REASONS``, each with a fixed text, never anything a call chose. Operator
log lines that carry request data pass it through ``printable`` first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

# Why a call failed, as a decision log says it without its arguments: code -> fixed text.
REASONS: Final[Mapping[str, str]] = {
    "refused": "the call was refused",
    "unknown-tool": "no tool of this name in the build for the dialect",
    "not-available": "the tool is not in this request's tool set",
    "not-served": "the tool has no implementation here",
    "upstream-refused": "the upstream's tool is not what toolc import-mcp pinned (changed, "
    "unpinned or not offered)",
    "owner-only": "the tool is restricted to owner senders",
    "invalid-arguments": "the arguments are not what the tool accepts",
    "hook-blocked": "a before_tool_call hook blocked the call",
    "hook-failed": "a before_tool_call hook failed, which blocks the call",
    "exec-denied": "the exec policy refused the command",
    "host-not-allowed": "exec asked for a host this agent does not run exec on",
    "env-not-allowed": "the exec env sets a variable the host refuses, or is no object of strings",
    "security-deny": "exec security is deny for this agent",
    "allowlist-miss": "the command matches no allowlist pattern and may not be asked about",
    "no-approver": "the command needs an approval and no one can be asked",
    "no-call-id": "the command needs an approval and the call has no id",
    "user-denied": "the exec approval was denied",
    "approval-timeout": "the exec approval was not answered in time",
    "approval-used": "the exec approval was already used by this call",
    "approval-mismatch": "the request changed after its approval was asked for",
    "aborted": "the call was aborted",
    "tool-error": "the tool raised",
}


class ToolError(Exception):
    """A tool call the runtime refused; ``message`` is fit to show the model, ``code`` (a
    key of ``REASONS``, the class's own unless given) is what a log may say of it."""

    code: str = "refused"

    def __init__(self, message: str, *, tool: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool = tool
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.message


class UnknownToolError(ToolError, KeyError):
    """A tool call names no tool of this build (for the dialect it was sent to)."""

    code = "unknown-tool"


class InvalidArgumentsError(ToolError, ValueError):
    """The arguments of a call are not what the tool accepts (not JSON, not an object,
    missing required parameters, or refused by the tool's parameter model)."""

    code = "invalid-arguments"


class ToolNotPermittedError(ToolError, PermissionError):
    """The tool exists but this call may not use it (not in the request's tool set, owner
    only, refused by the exec policy)."""

    code = "not-available"


class ExecDeniedError(ToolNotPermittedError):
    """The exec policy refused a command (``security: deny``, a host it may not use, an
    approval that was denied, timed out or had no one to ask)."""

    code = "exec-denied"


class ToolBlockedError(ToolError):
    """A before_tool_call hook blocked the call (or failed, which blocks it: D2)."""

    code = "hook-blocked"


class AbortError(ToolError):
    """The call was aborted (its own signal or the run's). Never turned into a result."""

    code = "aborted"


def logged_reason(failure: BaseException, *, detailed: bool = False) -> tuple[str, str]:
    """Why a call failed, for a log: ``(code, text)``. ``text`` is the code's fixed text,
    or with ``detailed`` the message the model was told (which may quote the arguments);
    an exception that is no ToolError (the implementation's own) is ``tool-error``, named
    by its type."""
    code = failure.code if isinstance(failure, ToolError) else "tool-error"
    if code not in REASONS:  # a code of the embedder's own: the nearest known class's
        known = (vars(c).get("code") for c in type(failure).__mro__)
        code = next(str(c) for c in known if c in REASONS)
    if detailed:
        return code, str(failure) or type(failure).__name__
    if code == "tool-error":
        return code, f"{REASONS[code]} {type(failure).__name__}"
    return code, REASONS[code]


# C0 and C1 controls, DEL, the Unicode line and paragraph separators and the bidirectional
# formatting characters: each can end, rewrite or reorder a line of a plain-text log.
_CONTROL: Final = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """``str(value)`` for one line of a plain-text log: control characters escaped
    (``\\n``, ``\\x1b``, ``\\u2028``), so request data (a tool name, a call id, an error
    quoting arguments) can never end the line and forge the next one."""
    text = str(value)
    return text if _CONTROL.search(text) is None else _CONTROL.sub(_escape, text)


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
        hint: str | None = None,
    ) -> None:
        ids = f" (one of: {', '.join(agent_ids)})" if agent_ids else ""
        advice = hint or f"pass agent_id{ids} or an agent-scoped session key (agent:<id>:...)"
        message = f"agent selection required: {reason}; {advice}"
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.agent_ids = agent_ids
        self.code = code

    def __str__(self) -> str:
        return self.message


class UntrustedGroupError(ValueError):
    """The request names a group the target would ignore: OpenClaw 2026.9 trusts a group id
    (and the ``group_space`` / ``group_channel`` beside it) only when the session key, or
    ``spawned_by``, names that group, and otherwise resolves the request as if no group were
    given, without the group's or its senders' restrictions. toolc refuses such a request
    unless the caller asks for OpenClaw's silent behaviour (``strict=False``): pass the message
    the gateway received (``resolve_message`` routes it and builds the session key) or the
    session key that names the group. ``field`` is the keyword, ``value`` what it held."""

    def __init__(self, field: str, value: str, *, session_key: str | None) -> None:
        where = (
            f"the session key {session_key!r} does not name it"
            if session_key
            else "no session key names it"
        )
        message = (
            f"{field}={value!r} would be ignored: OpenClaw 2026.9 applies a group's policy only "
            f"when the session key names the group, and {where}; pass the message instead "
            "(resolve_message(channel, peer=('group', <id>), ...), or `--peer group:<id>` on the "
            "command line) or the session key that names the group "
            "(agent:<agent>:<channel>:group:<id>); strict=False ignores it as OpenClaw does"
        )
        super().__init__(message)
        self.message = message
        self.field = field
        self.value = value

    def __str__(self) -> str:
        return self.message
