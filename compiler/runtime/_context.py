"""Who is calling a tool, and what an implementation gets besides its arguments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ._abort import AbortSignal


@dataclass(frozen=True, slots=True, kw_only=True)
class CallContext:
    """The request a set of wrapped tools serves: the owner guard reads ``sender_is_owner``
    (2026.3: only an exact ``True`` is an owner; 2026.9: only ``False`` is not), hooks see
    the ids, exec approvals use the agent (as ``resolve`` chooses it), and ``model_provider`` /
    ``model_id`` choose the dialect of wire names and decoding unless ``wrap`` gets one."""

    agent_id: str | None = None
    session_key: str | None = None
    session_id: str | None = None
    run_id: str | None = None
    sender_is_owner: bool | None = None
    model_provider: str | None = None
    model_id: str | None = None


class ToolCall(NamedTuple):
    """The second argument of every implementation: which call this is, its abort signal
    (the call's combined with the run's; None when neither was given) and the context."""

    tool: str
    tool_call_id: str | None
    signal: AbortSignal | None
    context: CallContext


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One tool call of a model turn, as the SDK adapters extract it: the provider's call
    id, the name the model used (the dialect's wire name) and the arguments (an object or
    its JSON text)."""

    id: str | None
    name: str
    arguments: Mapping[str, Any] | str | bytes
