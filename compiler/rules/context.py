"""The request context: the keywords every engine takes, checked; session-key parsing (5.4, 7.1, 9).

Parsing follows OpenClaw 2026.3.2's own functions (``parseAgentSessionKey``,
``resolveGroupContextFromSessionKey``, ``isSubagentSessionKey``, ``getSubagentDepth``), including
their case rules. The generated runtime carries its own copy of the same rules; the differential
tests hold the two to each other and ``make conformance`` holds both to OpenClaw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any

from .sandbox import js_trim

CONTEXT_KEYS = ("agent_id", "session_key", "spawned_by", "model_provider", "model_id",
                "message_provider", "account_id", "group_id", "group_space", "group_channel",
                "sender_id", "sender_e164",
                "sender_username", "sender_name", "sender_is_owner", "sandboxed", "spawn_depth")
# ``toolc resolve`` / ``explain`` option of each keyword (booleans are flags)
CLI_OPTIONS = {"agent_id": "--agent", "session_key": "--session-key",
               "spawned_by": "--spawned-by", "model_provider": "--provider",
               "model_id": "--model", "message_provider": "--channel",
               "account_id": "--account", "group_id": "--group",
               "group_space": "--group-space", "group_channel": "--group-channel",
               "sender_id": "--sender-id", "sender_e164": "--sender-e164",
               "sender_username": "--sender-username", "sender_name": "--sender-name",
               "sender_is_owner": "--owner", "sandboxed": "--sandboxed",
               "spawn_depth": "--spawn-depth"}
STRING_KEYS = frozenset(CONTEXT_KEYS) - {"sender_is_owner", "sandboxed", "spawn_depth"}
_THREAD_MARKERS = (":thread:", ":topic:")


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    """One request. Strings that are empty after trimming are absent (``None``)."""

    agent_id: str | None = None
    session_key: str | None = None
    spawned_by: str | None = None
    model_provider: str | None = None
    model_id: str | None = None
    message_provider: str | None = None
    account_id: str | None = None
    group_id: str | None = None
    # OpenClaw's groupSpace (a Discord guild id or name) and groupChannel (a channel's name,
    # e.g. "#general"), which Discord's and Slack's resolvers read beside the group id
    group_space: str | None = None
    group_channel: str | None = None
    sender_id: str | None = None
    sender_e164: str | None = None
    sender_username: str | None = None
    sender_name: str | None = None
    sender_is_owner: bool | None = None
    sandboxed: bool | None = None
    spawn_depth: int | None = None

    @classmethod
    def of(cls, **kwargs: Any) -> Context:
        """Check every keyword (TypeError naming the keyword); blank strings become None."""
        unknown = set(kwargs) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(f"unknown context keyword(s): {', '.join(sorted(unknown))}")
        return cls(**{k: check_value(k, v) for k, v in kwargs.items()})


def check_value(key: str, value: Any) -> Any:
    """One context value, checked. A malformed value is refused, never read as "allow more"."""
    if value is None:
        return None
    if key in STRING_KEYS:
        if not isinstance(value, str):
            raise TypeError(f"{key} must be a str or None, got {type(value).__name__}")
        return value if value.strip() else None
    if key == "spawn_depth":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TypeError(f"spawn_depth must be a non-negative int or None, got {value!r}")
        return value
    if not isinstance(value, bool):
        raise TypeError(f"{key} must be a bool or None, got {type(value).__name__}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    agent: str | None  # the raw agent id of an ``agent:ID:...`` key
    channel: str | None
    group: str | None
    is_subagent: bool
    depth: int


_NO_SESSION = SessionInfo(agent=None, channel=None, group=None, is_subagent=False, depth=0)


def parse_session_key(key: str | None) -> SessionInfo:
    """``agent:ID:CHANNEL:group:GID[:topic:T]`` and ``:subagent:`` markers (OpenClaw's rules)."""
    raw = js_trim(key or "")
    if not raw:
        return _NO_SESSION
    lower = raw.lower()
    agent, rest = _agent_part(lower)
    channel, group = group_context(raw)
    return SessionInfo(agent=agent, channel=channel, group=group,
                       is_subagent=lower.startswith("subagent:") or rest.startswith("subagent:"),
                       depth=lower.count(":subagent:"))


_SUBAGENT_MARK = re.compile(r"(?:^|:)subagent:")


def subagent_depth(key: str | None) -> int:
    """2026.9 ``getSubagentDepth``: ``(^|:)subagent:`` counted in the part after
    ``agent:<id>:`` (the whole key when it is not an agent key), lowercased."""
    lower = js_trim(key or "").lower()
    if not lower:
        return 0
    agent, rest = _agent_part(lower)
    return len(_SUBAGENT_MARK.findall(rest if agent is not None else lower))


def is_cron_session(key: str | None) -> bool:
    """2026.9 ``isCronSessionKey``: an agent key whose rest starts with ``cron:``."""
    agent, rest = _agent_part(js_trim(key or "").lower())
    return agent is not None and rest.startswith("cron:")


def _agent_part(lower: str) -> tuple[str | None, str]:
    """``parseAgentSessionKey``: empty segments dropped, at least ``agent:ID:REST``."""
    parts = [p for p in lower.split(":") if p]
    if len(parts) < 3 or parts[0] != "agent" or not js_trim(parts[1]):
        return None, ""
    return js_trim(parts[1]), ":".join(parts[2:])


def group_context(raw_key: str | None) -> tuple[str | None, str | None]:
    """``resolveGroupContextFromSessionKey``: (channel, group id) of a group session key."""
    raw = js_trim(raw_key or "")
    if not raw:
        return None, None
    lower = raw.lower()
    cut = max(lower.rfind(m) for m in _THREAD_MARKERS)
    if cut > 0:
        raw = js_trim(raw[:cut]) or raw
    parts = [p for p in raw.split(":") if p]
    body = parts[2:] if parts and parts[0] == "agent" else parts
    if body and body[0] == "subagent":
        body = body[1:]
    if len(body) < 3 or body[1] not in ("group", "channel"):
        return None, None
    group = js_trim(":".join(body[2:]))
    if not group:
        return None, None
    return js_trim(body[0]).lower(), group
