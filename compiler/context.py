"""The request context: the keywords every engine takes; session-key parsing (7.1, 9)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

CONTEXT_KEYS = ("agent_id", "session_key", "model_provider", "model_id", "message_provider",
                "account_id", "group_id", "sender_id", "sender_e164", "sender_username",
                "sender_name", "sender_is_owner", "sandboxed", "spawn_depth")


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    agent_id: str | None = None
    session_key: str | None = None
    model_provider: str | None = None
    model_id: str | None = None
    message_provider: str | None = None
    account_id: str | None = None
    group_id: str | None = None
    sender_id: str | None = None
    sender_e164: str | None = None
    sender_username: str | None = None
    sender_name: str | None = None
    sender_is_owner: bool | None = None
    sandboxed: bool | None = None
    spawn_depth: int | None = None

    @classmethod
    def of(cls, **kwargs: Any) -> Context:
        unknown = set(kwargs) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(f"unknown context keyword(s): {', '.join(sorted(unknown))}")
        return cls(**kwargs)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    agent: str | None
    channel: str | None
    group: str | None
    is_subagent: bool
    depth: int


def parse_session_key(key: str | None) -> SessionInfo:
    """``agent:ID:CHANNEL:group:GID[:topic:T]`` and ``:subagent:`` markers."""
    raw = (key or "").strip()
    lower = raw.lower()
    parts = raw.split(":")
    agent = None
    rest = parts
    if len(parts) >= 3 and parts[0].lower() == "agent":
        agent = parts[1]
        rest = parts[2:]
    is_sub = lower.startswith("subagent:") or (
        agent is not None and ":".join(rest).lower().startswith("subagent:"))
    return SessionInfo(agent=agent, is_subagent=is_sub, depth=lower.count(":subagent:"),
                       **_group_of(raw))


def _group_of(raw: str) -> dict[str, str | None]:
    lower = raw.lower()
    cut = max(lower.rfind(":thread:"), lower.rfind(":topic:"))
    base = raw[:cut] if cut >= 0 else raw
    parts = base.split(":")
    if len(parts) >= 2 and parts[0].lower() == "agent":
        parts = parts[2:]
    if parts and parts[0].lower() == "subagent":
        parts = parts[1:]
    if len(parts) < 3 or parts[1].lower() not in ("group", "channel"):
        return {"channel": None, "group": None}
    return {"channel": parts[0].strip().lower() or None, "group": ":".join(parts[2:]) or None}
