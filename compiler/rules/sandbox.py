"""Whether a session is sandboxed, as OpenClaw 2026.3.2 decides it from the sandbox mode.

A port of ``resolveSandboxRuntimeStatus`` (``dist/pi-embedded-helpers-*.js``, from
``src/agents/sandbox/runtime-status.ts``) with the helpers it calls:

* the agent is ``resolveSessionAgentId({sessionKey})``: the agent of an ``agent:ID:REST`` key
  (``parseAgentSessionKey``, lowercased), else the *default* agent (``resolveDefaultAgentId``:
  the first ``agents.list`` entry with ``default: true``, else the first entry, else
  ``main``). Not the request's ``agent_id``: OpenClaw reads only the session key here.
* its mode is ``resolveSandboxConfigForAgent(cfg, agentId).mode``: the agent entry's
  ``sandbox.mode``, else ``agents.defaults.sandbox.mode``, else ``off``;
* ``shouldSandboxSession``: ``off`` never, ``all`` always, ``non-main`` when the comparable
  key (``canonicalizeMainSessionAlias``: ``main`` and ``agent:ID:main`` are the main session,
  read as ``global`` under ``session.scope: global``) differs from the main key
  (``resolveMainSessionKeyForSandbox``: ``global`` under that scope, else ``agent:ID:main``;
  OpenClaw's loader forces ``session.mainKey`` to ``main``, ``applySessionDefaults``);
* no session key (absent or blank): not sandboxed.

Comparisons are case-sensitive and trim as JavaScript's ``String.prototype.trim`` does, as
OpenClaw's do. The generated runtime carries its own copy (``runtime/_sessions.py``); the
differential tests hold the two to each other and ``make conformance`` both to OpenClaw.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..targets.grammar import js_trim
from .names import normalize_agent_id

SandboxMode = Literal["off", "non-main", "all"]
MODES: tuple[SandboxMode, ...] = ("off", "non-main", "all")

@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxModes:
    """What the derivation reads from the definitions (the ``sandbox`` entry of tables.json)."""

    default_mode: SandboxMode = "off"
    agents: Mapping[str, SandboxMode] = field(default_factory=dict)  # normalized id -> mode
    default_agent: str = "main"
    scope_global: bool = False

    @property
    def inert(self) -> bool:
        """No session is ever sandboxed by derivation."""
        return self.default_mode == "off" and all(m == "off" for m in self.agents.values())

    def to_json(self) -> dict[str, Any]:
        return {"default_mode": self.default_mode, "agents": dict(sorted(self.agents.items())),
                "default_agent": self.default_agent, "scope_global": self.scope_global}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> SandboxModes:
        if data is None:  # tables of a build before sandbox modes: nothing derived
            return cls()
        return cls(default_mode=data["default_mode"], agents=dict(data["agents"]),
                   default_agent=data["default_agent"], scope_global=bool(data["scope_global"]))


def session_agent(key: str) -> str | None:
    """``parseAgentSessionKey``'s agent of a trimmed key, normalized; None when it names none."""
    parts = [p for p in js_trim(key.lower()).split(":") if p]
    if len(parts) < 3 or parts[0] != "agent":
        return None
    agent = js_trim(parts[1])
    return normalize_agent_id(agent) if agent else None


def derive_sandboxed(modes: SandboxModes, session_key: str | None,
                     selected: str | None = None) -> bool:
    """``resolveSandboxRuntimeStatus(...).sandboxed`` for one session key; ``selected``: the
    agent a key without one belongs to (2026.9 resolveSessionAgentId: the request's agent)."""
    if modes.inert or session_key is None:
        return False
    raw = js_trim(session_key)
    if not raw:
        return False
    agent = session_agent(raw) or selected or modes.default_agent
    mode = modes.agents.get(agent, modes.default_mode)
    if mode == "off":
        return False
    if mode == "all":
        return True
    if raw in ("main", f"agent:{agent}:main"):
        return False  # a main alias: canonical key == main key (both "global" under that scope)
    return not (modes.scope_global and raw == "global")
