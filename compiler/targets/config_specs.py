"""What of an OpenClaw config carries tool policy, as ``toolc import-openclaw`` keeps it: the
spec vocabulary, the shapes every release reads, and :class:`ConfigSpecs`, the specs one
release's importer reads (each release module builds its own from these pieces).

A spec is a type name ("list", "str", "bool", "int"), a dict of key -> spec (other keys are
left out), ``("map", spec)``: any key, each value by spec, or ``("list_of", spec)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Spec = Any
LIST, STR, BOOL, INT = "list", "str", "bool", "int"


def map_of(spec: Spec) -> tuple[str, Spec]:
    """Any key, each value by ``spec``."""
    return ("map", spec)


POLICY: Spec = {"allow": LIST, "alsoAllow": LIST, "deny": LIST}
PROVIDER_POLICY: Spec = {**POLICY, "profile": STR}
EXEC: Spec = {"applyPatch": {"enabled": BOOL, "allowModels": LIST},
              "host": STR, "security": STR, "ask": STR}
AGENT_TOOLS: Spec = {**PROVIDER_POLICY, "byProvider": map_of(PROVIDER_POLICY),
                     "sandbox": {"tools": {"allow": LIST, "deny": LIST}}, "exec": EXEC}
# `sandbox.mode` decides which sessions are sandboxed (the sandbox tool policy applies);
# `default` which agent a session key without one belongs to (for that mode).
SANDBOX: Spec = {"mode": STR}
# `session.scope: global` makes "global" the main session (sandbox mode non-main); dmScope,
# and identityLinks shape the session key a message is routed to (openclaw_routing checks
# their values)
SESSION: Spec = {"scope": STR, "dmScope": STR, "identityLinks": map_of(LIST)}


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigSpecs:
    """The importer's specs of one release: the global ``tools``, ``agents`` and ``session``."""

    global_tools: Spec
    agents: Spec
    session: Spec
