"""The key grammars releases differ in: session keys (which agent and which subagent depth a
key names) and ``toolsBySender`` keys (which sender, and which channel, a rule names).

Each grammar is a small protocol with one implementation per way OpenClaw has read such keys,
named for how it reads them; a release module (``openclaw_<key>.py``) says which one it uses,
and the engines ask the target (``target.sessions.subagent_of(key)``), never a release
string. The grammars are plain string functions: every floor above ``toolc.targets`` may use
them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol

# ECMAScript WhiteSpace and LineTerminator: what String.prototype.trim strips. Python's
# str.strip differs (it strips \x1c-\x1f and \x85, keeps \ufeff), which would let
# "agent:a:main\x1f" count as the main session.
JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM = re.compile(f"^[{JS_SPACE}]+|[{JS_SPACE}]+$")


def js_trim(text: str) -> str:
    return _JS_TRIM.sub("", text)


# -- session keys ----------------------------------------------------------------------------
# classifySessionKeyShape's answers
SessionShape = Literal["missing", "agent", "malformed_agent", "legacy_or_alias"]


class SessionKeyGrammar(Protocol):
    """How a release reads a session key's agent and subagent role."""

    def subagent_of(self, key: str | None) -> tuple[bool, int]:
        """(whether the key is a subagent's, its depth)."""
        ...

    def agent_of(self, key: str | None) -> tuple[SessionShape, str | None]:
        """(the key's shape, the raw agent id of an agent key)."""
        ...


def collapsed_agent_part(lower: str) -> tuple[str | None, str]:
    """``parseAgentSessionKey`` (2026.3.2): empty segments dropped, at least ``agent:ID:REST``;
    (the agent id, REST) of a lowercased key, else (None, "")."""
    parts = [p for p in lower.split(":") if p]
    if len(parts) < 3 or parts[0] != "agent" or not js_trim(parts[1]):
        return None, ""
    return js_trim(parts[1]), ":".join(parts[2:])


@dataclass(frozen=True, slots=True)
class CollapsedSessionKeys:
    """Session keys with empty segments collapsed (OpenClaw 2026.3.2): a subagent key starts
    with ``subagent:`` or its agent key's REST does; its depth counts ``:subagent:`` in the
    whole key."""

    def subagent_of(self, key: str | None) -> tuple[bool, int]:
        lower = js_trim(key or "").lower()
        if not lower:
            return False, 0
        rest = collapsed_agent_part(lower)[1]
        return (lower.startswith("subagent:") or rest.startswith("subagent:"),
                lower.count(":subagent:"))

    def agent_of(self, key: str | None) -> tuple[SessionShape, str | None]:
        raw = js_trim(key or "")
        if not raw:
            return "missing", None
        agent = collapsed_agent_part(raw.lower())[0]
        if agent is not None:
            return "agent", agent
        return ("malformed_agent" if raw[:6].lower() == "agent:" else "legacy_or_alias"), None


_SUBAGENT_MARK = re.compile(r"(?:^|:)subagent:")


def agent_rest(raw: str) -> tuple[str, str] | None:
    """``parseAgentSessionKeyParts`` (2026.9.6) of a JS-trimmed key: (agent id as written,
    REST) when the key is ``agent:ID:REST`` with ID not blank after a JS trim and REST neither
    empty nor starting with ``:``; segments are kept as written (2026.3.2 collapsed empty
    ones)."""
    if raw[:6].lower() != "agent:":
        return None
    end = raw.find(":", 6)
    if end < 0:
        return None
    agent, rest = js_trim(raw[6:end]), raw[end + 1:]
    return (agent, rest) if agent and rest and not rest.startswith(":") else None


@dataclass(frozen=True, slots=True)
class SegmentedSessionKeys:
    """Session keys with their segments kept as written (OpenClaw 2026.9.6)."""

    def subagent_of(self, key: str | None) -> tuple[bool, int]:
        """``isSubagentSessionKey`` and ``getSubagentDepth``, the one parser of such a key's
        subagent role (the engines, the access analysis and the tests use it): a subagent key
        starts with ``subagent:`` or is an agent key whose REST, JS-trimmed, does; its depth
        counts ``(^|:)subagent:`` in the REST as written (the whole key when it is not an
        agent key), lowercased. Keys are JS-trimmed first (a BOM goes, ``\\x1f`` stays)."""
        raw = js_trim(key or "")
        if not raw:
            return False, 0
        lower = raw.lower()
        parts = agent_rest(lower)
        rest = parts[1] if parts is not None else None
        is_sub = lower.startswith("subagent:") or (
            rest is not None and js_trim(rest).lower().startswith("subagent:"))
        return is_sub, len(_SUBAGENT_MARK.findall(rest if rest is not None else lower))

    def agent_of(self, key: str | None) -> tuple[SessionShape, str | None]:
        """``classifySessionKeyShape`` + ``parseAgentSessionKey``: an agent key is
        ``agent:ID:REST`` with ID not blank and REST neither empty nor starting with ``:``
        (segments are not collapsed); the key is JS-trimmed."""
        raw = js_trim(key or "")
        if not raw:
            return "missing", None
        parts = agent_rest(raw)
        if parts is not None:
            return "agent", parts[0]
        return ("malformed_agent" if raw[:6].lower() == "agent:" else "legacy_or_alias"), None


COLLAPSED_SESSION_KEYS = CollapsedSessionKeys()
SEGMENTED_SESSION_KEYS = SegmentedSessionKeys()


# -- toolsBySender keys ----------------------------------------------------------------------
SenderKind = Literal["channel", "id", "e164", "username", "name", "*"]
SENDER_PREFIXES: tuple[SenderKind, ...] = ("id", "e164", "username", "name")


@dataclass(frozen=True, slots=True)
class SenderKey:
    """What a ``toolsBySender`` key names: the sender's kind and value, and for a typed
    ``channel:<channel>:<id>`` key the channel as written (trimmed, lowercased: the caller
    resolves channel aliases)."""

    kind: SenderKind
    value: str
    channel: str | None = None


class SenderKeyGrammar(Protocol):
    """How a release reads a ``toolsBySender`` key."""

    def parse(self, key: str) -> SenderKey: ...


@dataclass(frozen=True, slots=True)
class LooseSenderKeys:
    """``id:X`` / ``e164:X`` / ``username:@X`` / ``name:X`` / ``*``, the prefix trimmed and
    case-folded; untyped keys are ids (D1). OpenClaw 2026.3.2."""

    def parse(self, key: str) -> SenderKey:
        stripped = key.strip()
        if stripped == "*":
            return SenderKey("*", "*")
        prefix, sep, rest = stripped.partition(":")
        kind = prefix.strip().lower()
        for prefix_kind in SENDER_PREFIXES:
            if sep and kind == prefix_kind:
                value = rest.strip().lower()
                if kind == "username":
                    value = value.removeprefix("@")
                return SenderKey(prefix_kind, value)
        return SenderKey("id", stripped.removeprefix("@").lower())


# TOOLS_BY_SENDER_KEY_TYPES, in the order 2026.9.6's parser tries them
_TYPED: tuple[SenderKind, ...] = ("channel", "id", "e164", "username", "name")


@dataclass(frozen=True, slots=True)
class TypedSenderKeys:
    """``parseSenderPolicyKey`` (OpenClaw 2026.9.6): a prefix counts only right at the start
    of the trimmed key (``"id:"``, not ``" id :"``); ``channel:<channel>:<id>`` names the
    channel and the sender id; untyped keys are ids. A key whose value is empty gives an
    empty value (OpenClaw ignores it; TC132 reports it)."""

    def parse(self, key: str) -> SenderKey:
        stripped = key.strip()
        if stripped == "*":
            return SenderKey("*", "*")
        lowered = stripped.lower()
        for kind in _TYPED:
            if not lowered.startswith(f"{kind}:"):
                continue
            rest = stripped[len(kind) + 1:]
            if kind == "channel":
                channel, sep, sender = rest.strip().partition(":")
                channel, sender = channel.strip().lower(), sender.strip().lower()
                if not sep or not channel or not sender:
                    return SenderKey("channel", "")
                return SenderKey("channel", sender, channel)
            value = rest.strip()
            value = value.removeprefix("@") if kind == "username" else value
            return SenderKey(kind, value.lower())
        return SenderKey("id", stripped.removeprefix("@").lower())


LOOSE_SENDER_KEYS = LooseSenderKeys()
TYPED_SENDER_KEYS = TypedSenderKeys()
