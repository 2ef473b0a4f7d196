"""Session keys and the request's agent: OpenClaw's two readings of a session key (the loose
one, ``_Session``, and the shape-classifying one, ``_ShapedSession``, whose scoped group ids
and delivery channel the trusted-group and sender layers read), agent selection, sandbox modes,
the exec approval policy of the request's agent, and request channel names.

Every parse is cached (bounded; entries are immutable and recomputable). Standard library only.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from ._errors import AgentSelectionRequiredError
from ._tables import (
    _AGENT_IDS,
    _AGENTS,
    _CACHE_LIMIT,
    _DEFAULT_AGENT,
    _EXEC_VARIANTS,
    _NO_AGENT,
    _SB_ANY,
    _SB_DEFAULT_AGENT,
    _SB_DEFAULT_MODE,
    _SB_MODES,
    _SB_SCOPE_GLOBAL,
    RULES,
    AgentRecord,
    ExecVariant,
    _agent_at,
)

# -- parsing ----------------------------------------------------------------------------------
_ID_OK: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_ID_BAD_RUN: Final = re.compile(r"[^a-z0-9_-]+")
_SUBAGENT_MARK: Final = re.compile(r"(?:^|:)subagent:")
_CHANNEL_ALIASES: Final = {
    "imsg": "imessage",
    "internet-relay-chat": "irc",
    "google-chat": "googlechat",
    "gchat": "googlechat",
}


def _text(value: str | None) -> str | None:
    """A context string, or None when it is absent or blank."""
    return value if value is not None and value.strip() else None


# JavaScript's String.prototype.trim (OpenClaw trims session keys with it): Python's strip
# differs (strips \x1c-\x1f and \x85, keeps \ufeff).
_JS_SPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM: Final = re.compile(f"^[{_JS_SPACE}]+|[{_JS_SPACE}]+$")
_JS_SPACES: Final = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
) | frozenset(chr(c) for c in range(0x2000, 0x200B))


def _js_trim(value: str) -> str:
    """``_JS_TRIM.sub("", value)``; a value with no space at either end is returned as is."""
    if value and value[0] not in _JS_SPACES and value[-1] not in _JS_SPACES:
        return value
    return _JS_TRIM.sub("", value)


_SANDBOXED: dict[tuple[str, str | None], bool] = {}


def _sandboxed_by_mode(session_key: str | None, selected: str | None = None) -> bool:
    """OpenClaw's ``resolveSandboxRuntimeStatus(...).sandboxed`` for a session key (cached):
    the mode of the key's agent (else ``selected``, 2026.9's selected agent: resolveSessionAgentId
    takes the request's agent id for a key without one; else the default agent's), ``off``
    never, ``all`` always, ``non-main`` unless the key is the agent's main session; no session
    key: False."""
    if not _SB_ANY or session_key is None:
        return False
    cached = _SANDBOXED.get((session_key, selected))
    if cached is None:
        raw = _JS_TRIM.sub("", session_key)
        parts = [p for p in _JS_TRIM.sub("", raw.lower()).split(":") if p]
        agent = _JS_TRIM.sub("", parts[1]) if len(parts) >= 3 and parts[0] == "agent" else ""
        agent = (_normalize_id(agent) or "main") if agent else selected or _SB_DEFAULT_AGENT
        mode = _SB_MODES.get(agent, _SB_DEFAULT_MODE)
        if not raw or mode == "off":
            cached = False
        elif mode == "all":
            cached = True
        else:  # non-main: a main alias is the main session ("global" under that scope)
            main = raw in ("main", f"agent:{agent}:main")
            cached = not main and not (_SB_SCOPE_GLOBAL and raw == "global")
        if len(_SANDBOXED) >= _CACHE_LIMIT:
            _SANDBOXED.clear()
        _SANDBOXED[(session_key, selected)] = cached
    return cached


class _Session(NamedTuple):
    agent: str | None  # the agent id of an ``agent:ID:...`` key, normalized
    channel: str | None
    group: str | None
    is_subagent: bool
    depth: int  # ``:subagent:`` markers (2026.9: ``(^|:)subagent:`` after ``agent:ID:``)
    cron: bool = False  # an ``agent:ID:cron:...`` key (2026.9 isCronSessionKey)


_NO_SESSION: Final = _Session(None, None, None, False, 0)
_SESSIONS: dict[str, _Session] = {}
_AGENT_CACHE: dict[str, AgentRecord] = {}


_NORMALIZED: dict[str, str] = {}


def _normalize_id(raw: str) -> str:
    value = _NORMALIZED.get(raw)
    if value is None:
        value = raw.strip().lower()
        if not _ID_OK.fullmatch(value):
            value = _ID_BAD_RUN.sub("-", value).strip("-")[:64]
        if len(_NORMALIZED) >= _CACHE_LIMIT:
            _NORMALIZED.clear()
        _NORMALIZED[raw] = value
    return value


def _agent_record(raw: str) -> AgentRecord:
    """The declared agent a normalized id names, else the no-agent record."""
    record = _AGENT_CACHE.get(raw)
    if record is None:
        index = _AGENTS.get(_normalize_id(raw) or "main")
        record = _NO_AGENT if index is None else _agent_at(index)
        if len(_AGENT_CACHE) >= _CACHE_LIMIT:
            _AGENT_CACHE.clear()
        _AGENT_CACHE[raw] = record
    return record


def _request_agent(agent_id: str | None, session_key: str | None, session: _Session) -> str | None:
    """The raw id of the request's agent: ``agent_id``, else the session key's agent (``main``
    when the key names none); None without either."""
    if agent_id is not None:
        return agent_id
    if session_key is not None:
        return session.agent or "main"
    return None


# (agent_id, session key) -> the request's agent record and whether the definitions' sandbox
# modes sandbox its session (bounded; an agent selection that raises is not kept)
_PICKED: dict[tuple[str | None, str | None], tuple[AgentRecord, bool]] = {}


def _pick_agent(
    agent_id: str | None, session_key: str | None, session: _Session
) -> tuple[AgentRecord, bool]:
    """The request's agent record (2026.9: AgentSelectionRequiredError where OpenClaw
    refuses to build tools) and whether its session is sandboxed by mode, cached;
    ``session_key`` is None or not blank, ``session`` its parse."""
    key = (agent_id, session_key)
    if agent_id is not None and not agent_id.strip():
        agent_id = None
    if RULES.agent_selection:
        raw: str | None = _select_agent(agent_id, session_key)
        by_mode = _sandboxed_by_mode(session_key, raw)
    else:
        raw = _request_agent(agent_id, session_key, session)
        by_mode = _sandboxed_by_mode(session_key)
    picked = (_NO_AGENT if raw is None else _agent_record(raw), by_mode)
    if len(_PICKED) >= _CACHE_LIMIT:
        _PICKED.clear()
    _PICKED[key] = picked
    return picked


class _ShapedSession(NamedTuple):
    """What OpenClaw 2026.9.6 reads from a session key (toolc.rules.context)."""

    shape: str  # missing, agent, malformed_agent, legacy_or_alias
    agent: str | None  # the normalized agent id of an agent key
    channel: str | None  # resolveGroupContextFromSessionKey: the channel naming groups
    group_ids: tuple[str, ...]  # ... and the group ids, in the order they are tried
    delivery: str | None  # parseSessionDeliveryRoute(key)?.channel
    is_subagent: bool  # isSubagentSessionKey
    depth: int  # getSubagentDepth


_NO_SHAPED_SESSION: Final = _ShapedSession("missing", None, None, (), None, False, 0)
_SHAPED_SESSIONS: dict[str, _ShapedSession] = {}
_TOPIC_SENDER: Final = re.compile(r"^(.+):topic:([^:]+):sender:([^:]+)$", re.I | re.S)
_TOPIC: Final = re.compile(r"^(.+):topic:([^:]+)$", re.I | re.S)
_SENDER: Final = re.compile(r"^(.+):sender:([^:]+)$", re.I | re.S)
_DELIVERY_KINDS: Final = frozenset({"channel", "direct", "dm", "group"})


def _unique(values: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        v = _JS_TRIM.sub("", value)
        if v and v not in out:
            out.append(v)
    return tuple(out)


_SCOPED: dict[str, tuple[str, ...]] = {}


def _scoped_ids(group_id: str | None) -> tuple[str, ...]:
    """``buildScopedGroupIdCandidates`` (toolc.rules.context.scoped_group_ids), cached."""
    if not group_id:
        return ()
    ids = _SCOPED.get(group_id)
    if ids is None:
        ids = _scoped(group_id)
        if len(_SCOPED) >= _CACHE_LIMIT:
            _SCOPED.clear()
        _SCOPED[group_id] = ids
    return ids


def _scoped(group_id: str) -> tuple[str, ...]:
    raw = _JS_TRIM.sub("", group_id)
    if not raw:
        return ()
    m = _TOPIC_SENDER.match(raw)
    if m:
        return _unique([raw, f"{m.group(1)}:topic:{m.group(2)}", m.group(1)])
    m = _TOPIC.match(raw)
    if m:
        return _unique([f"{m.group(1)}:topic:{m.group(2)}", m.group(1)])
    m = _SENDER.match(raw)
    if m:
        return _unique([raw, m.group(1)])
    return (raw,)


def _agent_shape(key: str) -> tuple[str, str | None]:
    """``classifySessionKeyShape`` + ``parseAgentSessionKey`` (toolc.rules.context)."""
    raw = _JS_TRIM.sub("", key)  # JavaScript's trim: a BOM goes, \x1f stays
    if not raw:
        return "missing", None
    if raw[:6].lower() == "agent:":
        end = raw.find(":", 6)
        if end >= 0:
            agent = _JS_TRIM.sub("", raw[6:end])
            rest = raw[end + 1 :]
            if agent and rest and not rest.startswith(":"):
                return "agent", agent
        return "malformed_agent", None
    return "legacy_or_alias", None


def _session_group_ids(key: str) -> tuple[str | None, tuple[str, ...]]:
    """``resolveGroupContextFromSessionKey`` (toolc.rules.context.session_group_ids)."""
    raw = _JS_TRIM.sub("", key)
    if not raw:
        return None, ()
    cut = raw.lower().rfind(":thread:")
    if cut >= 0 and _JS_TRIM.sub("", raw[cut + 8 :]):
        raw = raw[:cut]
    parts = raw.split(":")
    wrapped = _JS_TRIM.sub("", parts[0]).lower() == "agent"
    second = _JS_TRIM.sub("", parts[1]) if len(parts) > 1 else ""
    if not (wrapped and (not second or len(parts) < 3)):
        body = parts[2:] if wrapped else parts
        if (
            body
            and _JS_TRIM.sub("", body[0]).lower() != "agent"
            and len(body) >= 3
            and _JS_TRIM.sub("", body[2])
            and _JS_TRIM.sub("", body[0])
            and _JS_TRIM.sub("", body[1]).lower() in ("group", "channel")
        ):
            rid = _JS_TRIM.sub("", ":".join(body[2:]))
            if rid:
                return _JS_TRIM.sub("", body[0]).lower(), _scoped_ids(rid)
    split = [p for p in raw.split(":") if p]
    body = split[2:] if split and split[0] == "agent" else split
    if body and body[0] == "subagent":
        body = body[1:]
    if len(body) < 3 or body[1] not in ("group", "channel"):
        return None, ()
    gid = _JS_TRIM.sub("", ":".join(body[2:]))
    if not gid:
        return None, ()
    return body[0].strip().lower() or None, _scoped_ids(gid)


def _delivery(key: str) -> str | None:
    """``parseSessionDeliveryRoute(key)?.channel`` (toolc.rules.context.delivery_channel)."""
    raw = _JS_TRIM.sub("", key)
    cut = raw.lower().rfind(":thread:")
    if cut >= 0:
        raw = raw[:cut]
    if _agent_shape(raw)[0] != "agent":
        return None
    raw = _JS_TRIM.sub("", raw)
    parts = raw[raw.find(":", 6) + 1 :].lower().split(":")
    if parts[0] == "agent" or len(parts) < 3:
        return None
    channel = parts[0].strip()
    if not channel:
        return None
    if len(parts) >= 4 and parts[2] in ("direct", "dm"):
        ok = parts[1].strip() and parts[3].strip() and ":".join(parts[3:]).strip()
        return channel if ok else None
    if parts[1] not in _DELIVERY_KINDS or not parts[2].strip():
        return None
    return channel


def _shaped_session(key: str | None) -> _ShapedSession:
    if key is None:
        return _NO_SHAPED_SESSION
    session = _SHAPED_SESSIONS.get(key)
    if session is None:
        shape, agent = _agent_shape(key)
        channel, ids = _session_group_ids(key)
        lower = _JS_TRIM.sub("", key).lower()
        rest = lower[lower.find(":", 6) + 1 :] if shape == "agent" else None
        session = _ShapedSession(
            shape,
            (_normalize_id(agent.lower()) or "main") if agent is not None else None,
            channel,
            ids,
            _delivery(key),
            # isSubagentSessionKey trims REST (`agent:a: subagent:x` is one); the depth does not
            lower.startswith("subagent:")
            or (rest is not None and _JS_TRIM.sub("", rest).startswith("subagent:")),
            len(_SUBAGENT_MARK.findall(rest if rest is not None else lower)),
        )
        if len(_SHAPED_SESSIONS) >= _CACHE_LIMIT:
            _SHAPED_SESSIONS.clear()
        _SHAPED_SESSIONS[key] = session
    return session


def _select_agent(agent_id: str | None, session_key: str | None) -> str:
    """2026.9.6 agent selection (toolc.pipeline.policy.select_agent): the session key's
    agent, else the explicit one, else the default; AgentSelectionRequiredError where
    OpenClaw refuses to build tools."""
    explicit = (_normalize_id(agent_id) or "main") if agent_id is not None else None
    session = _shaped_session(session_key)
    if session.shape == "malformed_agent":
        raise AgentSelectionRequiredError(
            f"session key {session_key!r} starts with agent: but names no agent "
            "(OpenClaw: malformed agent session key)",
            code="MALFORMED_AGENT_SESSION_KEY",
            agent_ids=_AGENT_IDS,
        )
    if session.agent is not None and explicit is not None and session.agent != explicit:
        raise AgentSelectionRequiredError(
            f"the session key belongs to agent {session.agent!r}, not {explicit!r}",
            agent_ids=_AGENT_IDS,
        )
    if session.agent is None and session.is_subagent and _DEFAULT_AGENT is None:
        # resolveStoredSubagentCapabilities: an agentless subagent key ignores agent_id
        raise AgentSelectionRequiredError(
            f"session key {session_key!r} is a subagent key without an agent, and no default "
            "agent can be chosen (OpenClaw ignores agent_id there)",
            agent_ids=_AGENT_IDS,
        )
    chosen = session.agent or explicit or _DEFAULT_AGENT
    if chosen is None:
        raise AgentSelectionRequiredError(
            "several agents are declared, none is marked default: true, and the request names none",
            agent_ids=_AGENT_IDS,
        )
    return chosen


def exec_config(agent_id: str | None, session_key: str | None) -> tuple[str | None, ExecVariant]:
    """The request agent's ``tools.exec`` approval policy (the global one without a declared
    agent): (the agent's normalized id or None, (host, security, ask, allowlist))."""
    if agent_id is not None and not isinstance(agent_id, str):
        raise TypeError(f"agent_id must be a str or None, got {type(agent_id).__name__}")
    if session_key is not None and not isinstance(session_key, str):
        raise TypeError(f"session_key must be a str or None, got {type(session_key).__name__}")
    key = _text(session_key)
    if RULES.agent_selection:
        raw: str | None = _select_agent(_text(agent_id), key)
    else:
        raw = _request_agent(_text(agent_id), key, _session(key) if key else _NO_SESSION)
    if raw is None:
        return None, _EXEC_VARIANTS[_NO_AGENT.exec_policy]
    agent = _normalize_id(raw) or "main"
    return (agent if agent in _AGENTS else None), _EXEC_VARIANTS[_agent_record(raw).exec_policy]


def _group_context(raw: str) -> tuple[str | None, str | None]:
    """(channel, group id) of a group session key (OpenClaw's case rules)."""
    lower = raw.lower()
    cut = max(lower.rfind(":thread:"), lower.rfind(":topic:"))
    if cut > 0:
        raw = _JS_TRIM.sub("", raw[:cut]) or raw
    parts = [p for p in raw.split(":") if p]
    body = parts[2:] if parts and parts[0] == "agent" else parts
    if body and body[0] == "subagent":
        body = body[1:]
    if len(body) < 3 or body[1] not in ("group", "channel"):
        return None, None
    group = _JS_TRIM.sub("", ":".join(body[2:]))
    if not group:
        return None, None
    return _JS_TRIM.sub("", body[0]).lower(), group


def _parse_session(key: str) -> _Session:
    raw = _JS_TRIM.sub("", key)
    lower = raw.lower()
    parts = [p for p in lower.split(":") if p]
    agent = rest = None
    if len(parts) >= 3 and parts[0] == "agent" and _JS_TRIM.sub("", parts[1]):
        agent, rest = _JS_TRIM.sub("", parts[1]), ":".join(parts[2:])
    is_sub = lower.startswith("subagent:") or (rest is not None and rest.startswith("subagent:"))
    channel, group = _group_context(raw)
    if RULES.subagent_depth_counts_leading:
        depth = len(_SUBAGENT_MARK.findall(rest if rest is not None else lower))
    else:
        depth = lower.count(":subagent:")
    return _Session(agent, channel, group, is_sub, depth, bool(rest and rest.startswith("cron:")))


def _session(key: str) -> _Session:
    session = _SESSIONS.get(key)
    if session is None:
        session = _parse_session(key)
        if len(_SESSIONS) >= _CACHE_LIMIT:
            _SESSIONS.clear()
        _SESSIONS[key] = session
    return session


_CHANNELS_OF: dict[str | None, str | None] = {}


def channel_of(raw: str | None) -> str | None:
    """A request channel as the target normalizes it: trimmed, lowercased, aliases resolved
    (2026.9 adds its own: ``normalizeMessageChannel``); cached."""
    try:
        return _CHANNELS_OF[raw]
    except KeyError:
        pass
    value = (raw or "").strip().lower()
    value = _CHANNEL_ALIASES.get(value, value)
    channel = RULES.request_channel_aliases.get(value, value) or None
    if len(_CHANNELS_OF) >= _CACHE_LIMIT:
        _CHANNELS_OF.clear()
    _CHANNELS_OF[raw] = channel
    return channel
