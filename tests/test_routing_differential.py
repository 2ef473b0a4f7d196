"""The generated router must agree with the reference router (``rules/routing.py``, a plain
port of OpenClaw's ``resolveAgentRoute``) on every message, per target: random bindings
(every tier, written any case, blank and wildcard peers), session settings and rosters, and
random messages. ``route`` gives the same agent, session key, main key, ``matched_by``,
channel, account and deciding binding; ``resolve_message`` the same route and tools; a
refusal the same error (AgentSelectionRequiredError with its code, or the type of a
malformed input's error).

Budget: ``TOOLC_HYPOTHESIS_ROUTING`` (160) definitions in all, split between the targets,
each with up to 24 messages.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.helpers import engines_for
from tests.strategies import ROUTE_KEYWORDS, TARGETS, routing_cases, split_files

EXAMPLES = int(os.environ.get("TOOLC_HYPOTHESIS_ROUTING", "160"))
PER_TARGET = max(1, EXAMPLES // len(TARGETS))


def answer(call: Any, *args: Any, tools: bool = False, **kwargs: Any) -> tuple[Any, ...]:
    """A call's result as a comparable value: the route's fields (and the tool names), or
    the error: its type, and for a refused agent selection its code and the roster named."""
    try:
        found = call(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        return ("!", type(exc).__name__, getattr(exc, "code", None),
                tuple(getattr(exc, "agent_ids", ())))
    routed, toolset = found if tools else (found, None)  # resolve_message: (route, tools)
    fields = (routed.agent_id, routed.session_key, routed.main_session_key, routed.matched_by,
              routed.channel, routed.account_id, routed.binding)
    return fields if toolset is None else (*fields, tuple(toolset.names))


@pytest.mark.parametrize("target", TARGETS)
def test_router_agrees_with_reference(target: str) -> None:
    @settings(max_examples=PER_TARGET, deadline=None, derandomize=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(case=routing_cases(target))
    def check(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
        data, msgs = case
        with tempfile.TemporaryDirectory() as tmp:
            engines = engines_for(Path(tmp), split_files(data, []))
            rt, ref = engines.runtime, engines.reference
            for msg in msgs:
                routing = {k: v for k, v in msg.items() if k in ROUTE_KEYWORDS}
                compiled = answer(rt.route, msg["channel"], **routing)
                oracle = answer(ref.route, msg["channel"], **routing)
                assert compiled == oracle, f"route {msg}: runtime {compiled} != reference {oracle}"
                compiled = answer(rt.resolve_message, tools=True, **msg)
                oracle = answer(ref.resolve_message, tools=True, **msg)
                assert compiled == oracle, (f"resolve_message {msg}: runtime {compiled} != "
                                            f"reference {oracle}")

    check()
